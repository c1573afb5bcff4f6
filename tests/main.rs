//! All integration tests, one binary (modules per area).

mod fit;
mod friction;
mod material;
mod plot;
