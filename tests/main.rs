//! All integration tests, one binary (modules per area).

mod fit;
mod friction;
mod kes;
mod material;
mod plot;
mod tui;
