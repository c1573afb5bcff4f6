//! kestrel: a terminal lab workbench for the mechanics of woven fabric.
//!
//! Layers, each importing only from the ones above it:
//!
//! ```text
//! physics   friction, material            (Dahl / Bliman–Sorine operators, connector laws)
//! data      kes, params                   (KES curves, protocols, values; parameter files)
//! numerics  fit, cloth, scene, reduced    (identification; cloth simulation, scene files; reduced dynamics)
//! output    plot, render                  (PNG plots; offline frames)
//! ui        tui                           (the terminal workbench)
//! main.rs                                 (command line → library calls)
//! ```
//!
//! Inside the library every quantity is SI (`f64`); Kawabata units appear only at the edges.

pub mod atomic;
pub mod cloth;
pub mod fit;
pub mod friction;
pub mod kes;
pub mod material;
pub mod params;
pub mod plot;
pub mod reduced;
#[cfg(feature = "render")]
pub mod render;
pub mod scene;
#[cfg(feature = "tui")]
pub mod tui;
