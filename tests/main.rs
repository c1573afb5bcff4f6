//! All integration tests, one binary (modules per area).

mod cli;
mod cloth;
mod common;
mod fit;
mod friction;
mod kes;
mod kes_fb34;
mod kes_protocols;
mod kes_variants;
mod material;
mod outputs;
mod plot;
mod probe;
mod probe3;
mod reduced;
mod reliability;
#[cfg(feature = "render")]
mod render;
mod terzopoulos;
mod transfer;
#[cfg(feature = "tui")]
mod tui;
#[cfg(feature = "tui")]
mod tui_workflow;
mod validate;
