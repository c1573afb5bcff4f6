//! All integration tests, one binary (modules per area).

mod cloth;
mod friction;
mod material;
