//! All integration tests, one binary (modules per area).

mod friction;
mod kes;
mod material;
