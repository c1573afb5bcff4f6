//! Precompute shards: shard K of N samples chains ⌊(K−1)C/N⌋..⌊KC/N⌋ of C into a file; the
//! merge gathers all N in chain order and reduces them into the one-process model, byte for byte.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::atomic::write_atomic;
use crate::cloth::record::{Reader, Truncated};
use crate::scene::DynamicScene;

use super::model::{Orbit, ReducedModel};
use super::precompute::{build, PrecomputeOptions, PrecomputeStats, Sampled};
use super::sample::{plan, sample_chains, Chain};
use super::ReducedError;

/// First eight bytes of a shard file.
pub const SHARD_MAGIC: &[u8; 8] = b"KESTRELP";
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
    /// Sampled time \[s\], seed and chains of the whole sampling.
    pub duration: f64,
    pub seed: u64,
    pub chains: u32,
    /// This shard K (1-based) of N.
    pub shard: u32,
    pub shards: u32,
    /// Chains of this shard: `first_chain..first_chain + chain_count`.
    pub first_chain: u32,
    pub chain_count: u32,
    /// Coordinates per state (3v) and time between states \[s\].
    pub coordinates: u32,
    pub frame_dt: f64,
    /// Frames after the settled state of every chain of the whole sampling.
    pub frames: Vec<u64>,
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

/// Chains of shard `k` (1-based) of `n` among `chains`.
fn chain_range(k: u32, n: u32, chains: u32) -> std::ops::Range<usize> {
    let part = |i: u32| (u64::from(i) * u64::from(chains) / u64::from(n)) as usize;
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
    let chains = p.chains() as u32;
    if !(k >= 1 && k <= n && n <= chains) {
        return Err(ReducedError::Invalid(format!(
            "shard {k}/{n}: needs 1 <= K <= N <= chains = {chains} (raise `chains` in [reduced] or --chains)"
        )));
    }
    let range = chain_range(k, n, chains);
    let (sampled, simulate_s) = sample_chains(scene, &p, range.clone(), progress)?;
    Ok(Shard {
        header: ShardHeader {
            kestrel: env!("CARGO_PKG_VERSION").to_string(),
            scene: scene_path.to_string(),
            scene_sha256: scene_sha256.to_string(),
            duration: p.duration,
            seed: p.seed,
            chains,
            shard: k,
            shards: n,
            first_chain: range.start as u32,
            chain_count: range.len() as u32,
            coordinates: 3 * scene.world.len() as u32,
            frame_dt: p.frame_dt,
            frames: p.frames.clone(),
            simulate_s,
        },
        chains: sampled,
    })
}

impl Shard {
    /// The file's bytes: magic, u32 version, u32 JSON length, the JSON header, then per chain
    /// u32 IRFs, 3 × u32 per IRF (entry, first and last state), f64 states (docs/reduced.md).
    pub fn to_bytes(&self) -> Result<Vec<u8>, ReducedError> {
        let json = serde_json::to_vec(&self.header)
            .map_err(|e| ReducedError::Invalid(format!("cannot encode the header: {e}")))?;
        let floats: usize = self.chains.iter().map(|c| c.data.len()).sum();
        let mut out = Vec::with_capacity(16 + json.len() + 8 * floats);
        out.extend_from_slice(SHARD_MAGIC);
        out.extend_from_slice(&SHARD_VERSION.to_le_bytes());
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(&json);
        for c in &self.chains {
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
        Ok(out)
    }

    /// Parses a shard's bytes, checking every length and index; `path` names it in errors.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Self, ReducedError> {
        let bad = |message: String| ReducedError::Format {
            path: path.to_path_buf(),
            message: format!("shard: {message}"),
        };
        let cut = |t: Truncated| bad(t.into());
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
        let header: ShardHeader = serde_json::from_slice(r.take(json_len).map_err(cut)?)
            .map_err(|e| bad(format!("header: {e}")))?;
        let h = &header;
        let range = (h.first_chain as usize)..(h.first_chain as usize + h.chain_count as usize);
        if h.shards == 0
            || h.shard == 0
            || h.shard > h.shards
            || h.frames.len() != h.chains as usize
            || range.end > h.frames.len()
            || h.coordinates == 0
        {
            return Err(bad(format!(
                "shard {}/{} of chains {range:?} among {} ({} frame counts)",
                h.shard,
                h.shards,
                h.chains,
                h.frames.len()
            )));
        }
        let m = h.coordinates as usize;
        let mut chains = Vec::with_capacity(range.len());
        for c in range {
            let states = h.frames[c].saturating_add(1);
            let count = r.u32().map_err(cut)? as usize;
            let mut orbits = Vec::new();
            for _ in 0..count {
                let o = Orbit {
                    entry: r.u32().map_err(cut)?,
                    start: r.u32().map_err(cut)?,
                    end: r.u32().map_err(cut)?,
                };
                if o.start > o.end || u64::from(o.end) >= states {
                    return Err(bad(format!("chain {c}: IRF {o:?} out of range")));
                }
                orbits.push(o);
            }
            let floats = states
                .checked_mul(m as u64)
                .filter(|&f| f.saturating_mul(8) <= r.remaining() as u64)
                .ok_or_else(|| bad(format!("chain {c}: fewer than {states} states")))?;
            let data = r
                .take(8 * floats as usize)
                .map_err(cut)?
                .chunks_exact(8)
                .map(|b| f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
                .collect();
            chains.push(Chain { data, orbits });
        }
        if r.remaining() != 0 {
            return Err(bad(format!("{} bytes after the last chain", r.remaining())));
        }
        Ok(Self { header, chains })
    }

    /// Reads a shard file.
    pub fn read(path: &Path) -> Result<Self, ReducedError> {
        let bytes = crate::input::file_bytes(path, crate::input::BINARY_FILE_LIMIT)?;
        Self::from_bytes(&bytes, path)
    }

    /// Writes the shard atomically; refuses to overwrite unless `force`. Returns its size
    /// \[bytes\].
    pub fn write(&self, path: &Path, force: bool) -> Result<usize, ReducedError> {
        let bytes = self.to_bytes()?;
        write_atomic(path, &bytes, force)?;
        Ok(bytes.len())
    }
}

/// Merges the shards of one sampling of `scene` (SHA-256 `scene_sha256`) into its model:
/// refuses shards of another scene, kestrel, duration, seed or chain count, and an incomplete
/// or repeated set. `opts` gives the rank (ε or r); the sampling's own come from the shards.
pub fn merge(
    scene: &DynamicScene,
    scene_sha256: &str,
    mut shards: Vec<(PathBuf, Shard)>,
    opts: &PrecomputeOptions,
) -> Result<(ReducedModel, PrecomputeStats), ReducedError> {
    let invalid = |m: String| Err(ReducedError::Invalid(m));
    let Some((first_path, first)) = shards.first() else {
        return invalid("no shards to merge".into());
    };
    let h0 = first.header.clone();
    let first_path = first_path.clone();
    let same = |h: &ShardHeader| {
        h.kestrel == h0.kestrel
            && h.scene_sha256 == h0.scene_sha256
            && h.duration == h0.duration
            && h.seed == h0.seed
            && h.chains == h0.chains
            && h.shards == h0.shards
            && h.frames == h0.frames
    };
    for (p, s) in &shards {
        if !same(&s.header) {
            return invalid(format!(
                "{} and {} are shards of different samplings (scene, kestrel version, duration, seed or chains differ)",
                first_path.display(),
                p.display()
            ));
        }
    }
    if h0.scene_sha256 != scene_sha256 {
        return invalid(format!(
            "{} was sampled from another version of {} (SHA-256 {} against {scene_sha256})",
            first_path.display(),
            h0.scene,
            h0.scene_sha256
        ));
    }
    let sampling = PrecomputeOptions {
        duration: Some(h0.duration),
        seed: Some(h0.seed),
        chains: Some(h0.chains as usize),
        ..*opts
    };
    let p = plan(scene, &sampling)?;
    if p.frames != h0.frames || 3 * scene.world.len() != h0.coordinates as usize {
        return invalid(format!(
            "{}: its chains do not match the sampling of {}",
            first_path.display(),
            h0.scene
        ));
    }
    shards.sort_by_key(|(_, s)| s.header.shard);
    for w in shards.windows(2) {
        if w[0].1.header.shard == w[1].1.header.shard {
            return invalid(format!(
                "shard {}/{} given twice ({} and {})",
                w[0].1.header.shard,
                h0.shards,
                w[0].0.display(),
                w[1].0.display()
            ));
        }
    }
    let missing: Vec<String> = (1..=h0.shards)
        .filter(|k| !shards.iter().any(|(_, s)| s.header.shard == *k))
        .map(|k| format!("{k}/{}", h0.shards))
        .collect();
    if !missing.is_empty() {
        return invalid(format!(
            "incomplete set of shards: {} missing",
            missing.join(", ")
        ));
    }
    let mut chains = Vec::with_capacity(h0.chains as usize);
    let mut simulate_s = 0.0;
    for (path, s) in shards {
        let range = chain_range(s.header.shard, h0.shards, h0.chains);
        if s.header.first_chain as usize != range.start || s.chains.len() != range.len() {
            return invalid(format!(
                "{}: chains {}..{} where shard {}/{} holds {range:?}",
                path.display(),
                s.header.first_chain,
                s.header.first_chain as usize + s.chains.len(),
                s.header.shard,
                h0.shards
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
                "{}: IRF of palette entry {} among {entries}",
                path.display(),
                o.entry
            ));
        }
        simulate_s += s.header.simulate_s;
        chains.extend(s.chains);
    }
    let sampled = Sampled::of_chains(chains, h0.coordinates as usize, p.frame_dt, simulate_s);
    build(scene, sampled, opts)
}
