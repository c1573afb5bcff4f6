//! Precompute shards: shard K of N samples units ⌊(K−1)U/N⌋..⌊KU/N⌋ of U into a file; the
//! merge gathers all N in unit order and reduces them into the one-process model, byte for byte.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::cloth::record::{Reader, Truncated};
use crate::scene::DynamicScene;

use super::model::{Orbit, ReducedModel};
use super::precompute::{build, PrecomputeOptions, PrecomputeStats, Sampled};
use super::sample::{plan, sample_chains, Chain};
use super::ReducedError;

/// First eight bytes of a shard file.
pub const SHARD_MAGIC: &[u8; 8] = b"KESTRELP";
/// The header key of the SHA-256 (hex) of the bytes after the header.
const BODY_SHA256: &str = "body_sha256";

/// SHA-256 of `bytes`, in hex.
fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Version of the shard format.
pub const SHARD_VERSION: u32 = 1;

/// The JSON block of a shard file: what the shard is a part of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardHeader {
    /// Version of kestrel that simulated it.
    pub kestrel: String,
    /// The scene file as given on the command line, and the SHA-256 of its bytes.
    pub scene: String,
    pub scene_sha256: String,
    /// Sampled time \[s\], seed, random chains and units (chains and tree IRFs) of the
    /// whole sampling.
    pub duration: f64,
    pub seed: u64,
    pub chains: u32,
    pub units: u32,
    /// This shard K (1-based) of N.
    pub shard: u32,
    pub shards: u32,
    /// Units of this shard: `first_unit..first_unit + unit_count`.
    pub first_unit: u32,
    pub unit_count: u32,
    /// Coordinates per state (3v) and time between states \[s\].
    pub coordinates: u32,
    pub frame_dt: f64,
    /// Wall time of this shard's simulation \[s\].
    pub simulate_s: f64,
}

/// One shard: its header and the states and IRFs of its chains.
#[derive(Debug, Clone, PartialEq)]
pub struct Shard {
    pub header: ShardHeader,
    pub(crate) chains: Vec<Chain>,
}

/// SHA-256 of a scene file's bytes, in hex.
pub fn scene_fingerprint(path: &Path) -> Result<String, ReducedError> {
    let bytes = crate::input::file_bytes(path, crate::input::SMALL_FILE_LIMIT)?;
    Ok(Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Units of shard `k` (1-based) of `n` among `units`.
fn unit_range(k: u32, n: u32, units: u32) -> std::ops::Range<usize> {
    let part = |i: u32| (u64::from(i) * u64::from(units) / u64::from(n)) as usize;
    part(k - 1)..part(k)
}

/// Samples shard `k` (1-based) of `n` of a scene's sampling; `scene_path` and `scene_sha256`
/// name the scene file in the header.
pub fn precompute_shard(
    scene: &DynamicScene,
    (scene_path, scene_sha256): (&str, &str),
    opts: &PrecomputeOptions,
    (k, n): (u32, u32),
    progress: &(dyn Fn(f64) + Sync),
) -> Result<Shard, ReducedError> {
    let p = plan(scene, opts)?;
    let units = p.units.len() as u32;
    if !(k >= 1 && k <= n && n <= units) {
        return Err(ReducedError::Invalid(format!(
            "shard {k}/{n}: needs 1 <= K <= N <= {units}, the units of this sampling (raise `chains` in [reduced] or --chains)"
        )));
    }
    let range = unit_range(k, n, units);
    let (sampled, simulate_s) = sample_chains(scene, &p, range.clone(), progress)?;
    Ok(Shard {
        header: ShardHeader {
            kestrel: env!("CARGO_PKG_VERSION").to_string(),
            scene: scene_path.to_string(),
            scene_sha256: scene_sha256.to_string(),
            duration: p.duration,
            seed: p.seed,
            chains: p.chains as u32,
            units,
            shard: k,
            shards: n,
            first_unit: range.start as u32,
            unit_count: range.len() as u32,
            coordinates: 3 * scene.world.len() as u32,
            frame_dt: p.frame_dt,
            simulate_s,
        },
        chains: sampled,
    })
}

impl Shard {
    /// The file's bytes: magic, u32 version, u32 JSON length, the JSON header, then per unit
    /// u32 states S, u32 rest states and their indices, u32 IRFs and 3 × u32 per IRF (entry,
    /// first and last state), 3v·S f32 positions (docs/reduced.md).
    pub fn to_bytes(&self) -> Result<Vec<u8>, ReducedError> {
        let body = self.body_bytes();
        // the header carries the SHA-256 of the units after it (`body_sha256`), checked on
        // reading: a shard changed after it was written is refused, not merged
        let encode =
            |e: serde_json::Error| ReducedError::Invalid(format!("cannot encode the header: {e}"));
        let mut header = serde_json::to_value(&self.header).map_err(encode)?;
        if let Some(map) = header.as_object_mut() {
            map.insert(BODY_SHA256.into(), sha256_hex(&body).into());
        }
        let json = serde_json::to_vec(&header).map_err(encode)?;
        let mut out = Vec::with_capacity(16 + json.len() + body.len());
        out.extend_from_slice(SHARD_MAGIC);
        out.extend_from_slice(&SHARD_VERSION.to_le_bytes());
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(&json);
        out.extend_from_slice(&body);
        Ok(out)
    }

    /// The units' bytes, as they follow the header.
    fn body_bytes(&self) -> Vec<u8> {
        let floats: usize = self.chains.iter().map(|c| c.data.len()).sum();
        let mut out = Vec::with_capacity(4 * floats + 64 * self.chains.len());
        let m = self.header.coordinates.max(1) as usize;
        for c in &self.chains {
            out.extend_from_slice(&((c.data.len() / m) as u32).to_le_bytes());
            out.extend_from_slice(&(c.rests.len() as u32).to_le_bytes());
            for j in &c.rests {
                out.extend_from_slice(&j.to_le_bytes());
            }
            out.extend_from_slice(&(c.orbits.len() as u32).to_le_bytes());
            for o in &c.orbits {
                for v in [o.entry, o.start, o.end] {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
            for x in &c.data {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        out
    }

    /// Parses a shard's bytes, checking every length and index; `path` names it in errors.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Self, ReducedError> {
        let bad = |message: String| ReducedError::ShardFormat {
            path: path.to_path_buf(),
            message,
        };
        let truncated = |need: String, where_: String| ReducedError::Truncated {
            path: path.to_path_buf(),
            what: "precompute shard",
            have: bytes.len() as u64,
            need,
            where_,
            fix: "sample this shard again",
        };
        let cut = |t: Truncated| {
            truncated(
                "more".into(),
                format!("it ends within its header: {}", String::from(t)),
            )
        };
        let mut r = Reader::new(bytes);
        if r.take(8).map_err(cut)? != SHARD_MAGIC {
            return Err(bad("bad magic (expected KESTRELP)".into()));
        }
        let version = r.u32().map_err(cut)?;
        if version != SHARD_VERSION {
            return Err(bad(format!(
                "version {version} (this kestrel reads {SHARD_VERSION})"
            )));
        }
        let json_len = r.u32().map_err(cut)? as usize;
        let mut header: serde_json::Value = serde_json::from_slice(r.take(json_len).map_err(cut)?)
            .map_err(|e| bad(format!("header: {e}")))?;
        // shards written before the checksum have none: read unchecked
        let sum = header
            .as_object_mut()
            .and_then(|m| m.remove(BODY_SHA256))
            .map(|v| v.as_str().map(str::to_string));
        let header: ShardHeader =
            serde_json::from_value(header).map_err(|e| bad(format!("header: {e}")))?;
        let checksum_ok = match sum {
            None => true,
            Some(Some(sum)) => sum == sha256_hex(&bytes[bytes.len() - r.remaining()..]),
            Some(None) => false,
        };
        let h = &header;
        let range = u64::from(h.first_unit)..u64::from(h.first_unit) + u64::from(h.unit_count);
        if h.shards == 0
            || h.shard == 0
            || h.shard > h.shards
            || range.end > u64::from(h.units)
            || h.coordinates == 0
        {
            return Err(bad(format!(
                "shard {}/{} of units {range:?} among {}",
                h.shard, h.shards, h.units
            )));
        }
        // a file cut short is said to be so (its checksum cannot match either); any other
        // fault of a file whose checksum does not match is the checksum's
        let body_start = (bytes.len() - r.remaining()) as u64;
        let chains =
            match read_units(&mut r, range, h.coordinates as usize) {
                Err(Fault::Short { at, need }) => {
                    return Err(truncated(
                        format!("at least {}", body_start + need),
                        format!("it ends in unit {at}"),
                    ))
                }
                _ if !checksum_ok => return Err(bad(
                    "its states and IRFs do not match the checksum in its header (the file was \
                     changed or damaged after it was written): sample this shard again"
                        .into(),
                )),
                Err(Fault::Bad(m)) => return Err(bad(m)),
                Ok(chains) => chains,
            };
        if r.remaining() != 0 {
            return Err(bad(format!("{} bytes after the last unit", r.remaining())));
        }
        Ok(Self { header, chains })
    }

    /// Reads a shard file.
    pub fn read(path: &Path) -> Result<Self, ReducedError> {
        super::read_file(path, Self::from_bytes)
    }

    /// Writes the shard atomically; refuses to overwrite unless `force`. Returns its size
    /// \[bytes\].
    pub fn write(&self, path: &Path, force: bool) -> Result<usize, ReducedError> {
        super::write_file(path, &self.to_bytes()?, force)
    }
}

/// What differs between two shards' samplings, in words (`seed 1 and 7`); empty when they are
/// of one sampling.
fn sampling_differences(a: &ShardHeader, b: &ShardHeader) -> Vec<String> {
    let mut out = Vec::new();
    let mut differ = |what: &str, x: String, y: String| {
        if x != y {
            out.push(format!("{what} {x} and {y}"));
        }
    };
    let short = |s: &str| s.chars().take(12).collect::<String>() + "…";
    differ(
        "scene SHA-256",
        short(&a.scene_sha256),
        short(&b.scene_sha256),
    );
    differ("kestrel", a.kestrel.clone(), b.kestrel.clone());
    differ(
        "duration [s]",
        a.duration.to_string(),
        b.duration.to_string(),
    );
    differ("seed", a.seed.to_string(), b.seed.to_string());
    differ("chains", a.chains.to_string(), b.chains.to_string());
    differ("units", a.units.to_string(), b.units.to_string());
    differ("shard count", a.shards.to_string(), b.shards.to_string());
    differ(
        "coordinates",
        a.coordinates.to_string(),
        b.coordinates.to_string(),
    );
    out
}

/// Why a shard's units could not be read.
enum Fault {
    /// The bytes end in unit `at`; `need`: the bytes the file needs at least.
    Short {
        at: u64,
        need: u64,
    },
    Bad(String),
}

/// The units `range` of a shard body (3v = `m` coordinates a state), every index checked.
fn read_units(r: &mut Reader, range: std::ops::Range<u64>, m: usize) -> Result<Vec<Chain>, Fault> {
    let total = r.remaining() as u64;
    let mut chains = Vec::new();
    for c in range {
        let read = |r: &Reader| total - r.remaining() as u64;
        let short = |r: &Reader, more: u64| Fault::Short {
            at: c,
            need: read(r).saturating_add(more),
        };
        let word = |r: &mut Reader| r.u32().map_err(|_| short(r, 4));
        let states = u64::from(word(r)?);
        let rest_count = word(r)? as usize;
        let mut rests = Vec::new();
        for _ in 0..rest_count {
            let j = word(r)?;
            if u64::from(j) >= states {
                return Err(Fault::Bad(format!("unit {c}: rest state {j} of {states}")));
            }
            rests.push(j);
        }
        let count = word(r)? as usize;
        let mut orbits = Vec::new();
        for _ in 0..count {
            let o = Orbit {
                entry: word(r)?,
                start: word(r)?,
                end: word(r)?,
            };
            if o.start > o.end || u64::from(o.end) >= states {
                return Err(Fault::Bad(format!(
                    "unit {c}: the IRF of palette entry {} runs from state {} to {}, outside \
                     the unit's {states} states or backwards",
                    o.entry, o.start, o.end
                )));
            }
            orbits.push(o);
        }
        let bytes = states.saturating_mul(m as u64).saturating_mul(4);
        if bytes > r.remaining() as u64 {
            return Err(short(r, bytes));
        }
        let data = r
            .take(bytes as usize)
            .map_err(|_| short(r, bytes))?
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        chains.push(Chain {
            data,
            orbits,
            rests,
        });
    }
    Ok(chains)
}

/// Merges the shards of one sampling of `scene` (SHA-256 `scene_sha256`) into its model:
/// refuses shards of another scene, kestrel, duration, seed or chain count, and an incomplete
/// or repeated set. `opts` gives the rank (ε or r); the sampling's own come from the shards.
pub fn merge(
    scene: &DynamicScene,
    scene_sha256: &str,
    shards: Vec<(PathBuf, Shard)>,
    opts: &PrecomputeOptions,
) -> Result<(ReducedModel, PrecomputeStats), ReducedError> {
    merge_reporting(scene, scene_sha256, shards, opts, &|_| {})
}

/// [`merge`], reporting the fraction of the transfer's states done (with `opts.transfer`).
pub fn merge_reporting(
    scene: &DynamicScene,
    scene_sha256: &str,
    mut shards: Vec<(PathBuf, Shard)>,
    opts: &PrecomputeOptions,
    transfer_progress: &(dyn Fn(f64) + Sync),
) -> Result<(ReducedModel, PrecomputeStats), ReducedError> {
    let invalid = |m: String| Err(ReducedError::Invalid(m));
    let Some((first_path, first)) = shards.first() else {
        return invalid("no shards to merge: give every shard file of one sampling".into());
    };
    let h0 = first.header.clone();
    let first_path = first_path.clone();
    for (p, s) in &shards {
        let differ = sampling_differences(&h0, &s.header);
        if !differ.is_empty() {
            return invalid(format!(
                "{} and {} are shards of different samplings ({}): merge only the shards of \
                 one `kestrel precompute SCENE --shard K/N` sampling (same scene, kestrel, \
                 duration, seed, chains and N)",
                first_path.display(),
                p.display(),
                differ.join("; ")
            ));
        }
    }
    if h0.scene_sha256 != scene_sha256 {
        return invalid(format!(
            "{} was sampled from another version of the scene {} (its SHA-256 is now {}…, the \
             shards recorded {}…): merge with the scene file they were sampled from (--scene \
             FILE), or sample every shard again from this one",
            first_path.display(),
            h0.scene,
            scene_sha256.chars().take(12).collect::<String>(),
            h0.scene_sha256.chars().take(12).collect::<String>()
        ));
    }
    let sampling = PrecomputeOptions {
        duration: Some(h0.duration),
        seed: Some(h0.seed),
        chains: Some(h0.chains as usize),
        ..*opts
    };
    let p = plan(scene, &sampling)?;
    if p.units.len() != h0.units as usize || 3 * scene.world.len() != h0.coordinates as usize {
        return invalid(format!(
            "{}: {} units of {} coordinates, where the scene {} samples {} units of {}: the \
             shards were sampled from another scene or kestrel (merge with their own scene, \
             --scene FILE, or sample them again)",
            first_path.display(),
            h0.units,
            h0.coordinates,
            h0.scene,
            p.units.len(),
            3 * scene.world.len()
        ));
    }
    shards.sort_by_key(|(_, s)| s.header.shard);
    for w in shards.windows(2) {
        if w[0].1.header.shard == w[1].1.header.shard {
            return invalid(format!(
                "{} and {} are both shard {}/{}: give each shard once",
                w[0].0.display(),
                w[1].0.display(),
                w[0].1.header.shard,
                h0.shards
            ));
        }
    }
    let missing: Vec<String> = (1..=h0.shards)
        .filter(|k| !shards.iter().any(|(_, s)| s.header.shard == *k))
        .map(|k| format!("{k}/{}", h0.shards))
        .collect();
    if !missing.is_empty() {
        return invalid(format!(
            "incomplete set of shards: shard {} missing (the sampling of {} has {} shards; \
             sample each missing K with `kestrel precompute {} --shard K/{} --seed {} \
             --duration {} --chains {} --out PART` and merge all {} together)",
            missing.join(", "),
            h0.scene,
            h0.shards,
            h0.scene,
            h0.shards,
            h0.seed,
            h0.duration,
            h0.chains,
            h0.shards
        ));
    }
    let mut chains = Vec::with_capacity(h0.units as usize);
    let mut simulate_s = 0.0;
    for (path, s) in shards {
        let range = unit_range(s.header.shard, h0.shards, h0.units);
        if s.header.first_unit as usize != range.start || s.chains.len() != range.len() {
            return invalid(format!(
                "{}: holds units {}..{} where shard {}/{} holds units {}..{}: the file is \
                 damaged or was not written by this kestrel (sample this shard again)",
                path.display(),
                s.header.first_unit,
                s.header.first_unit as usize + s.chains.len(),
                s.header.shard,
                h0.shards,
                range.start,
                range.end
            ));
        }
        let entries = scene.reduced.as_ref().map_or(0, |r| r.palette.len());
        if let Some(o) = s
            .chains
            .iter()
            .flat_map(|c| &c.orbits)
            .find(|o| o.entry as usize >= entries)
        {
            return invalid(format!(
                "{}: holds an IRF of palette entry {} (counted from 0), but the scene's \
                 palette has {entries} entries: it was sampled from another palette (merge \
                 with its own scene, --scene FILE, or sample it again)",
                path.display(),
                o.entry
            ));
        }
        simulate_s += s.header.simulate_s;
        chains.extend(s.chains);
    }
    let sampled = Sampled::of_chains(chains, h0.coordinates as usize, p.frame_dt, simulate_s);
    build(scene, sampled, opts, transfer_progress)
}
