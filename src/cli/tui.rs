//! `kestrel` / `kestrel tui [FILE...]`: the terminal workbench.

#[cfg(feature = "tui")]
use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args as ClapArgs;

use super::CliError;

#[derive(Debug, ClapArgs)]
pub struct Args {
    /// KES curve files or folders to open (default: the sample fabric in kes_data/), and cloth
    /// scenes (*.toml) or reduced models (*.krd) to load in the Cloth tab.
    pub files: Vec<PathBuf>,
}

#[cfg(feature = "tui")]
pub fn run(args: Args) -> Result<(), CliError> {
    if !std::io::stdout().is_terminal() {
        return Err(CliError::input(
            "the workbench needs a terminal; see `kestrel --help` for the commands",
        ));
    }
    kestrel::tui::run(args.files).map_err(|e| CliError::failed(format!("terminal: {e}")))
}

#[cfg(not(feature = "tui"))]
pub fn run(_args: Args) -> Result<(), CliError> {
    Err(CliError::input(
        "kestrel was built without the tui feature: no workbench; see `kestrel --help` for the commands",
    ))
}
