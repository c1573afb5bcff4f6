//! The model file's checksum (version 3): the SHA-256 of every byte before it (the shards'
//! hash), as the file's last 32 bytes. It covers the header too: the header's numbers
//! (`frame_dt`, β, the palette) change the playback as much as the arrays do.

use sha2::{Digest, Sha256};

/// Bytes of the checksum at the end of a version-3 file.
pub(super) const LEN: usize = 32;

/// Appends the checksum of `bytes` to them.
pub(super) fn seal(bytes: &mut Vec<u8>) {
    let sum = Sha256::digest(&bytes[..]);
    bytes.extend_from_slice(&sum);
}

/// Whether the last 32 bytes are the checksum of those before them.
pub(super) fn intact(bytes: &[u8]) -> bool {
    let Some(body) = bytes.len().checked_sub(LEN) else {
        return false;
    };
    Sha256::digest(&bytes[..body])[..] == bytes[body..]
}
