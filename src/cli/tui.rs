//! `kestrel` / `kestrel tui [FILE...]`: the terminal workbench.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args as ClapArgs;

use super::CliError;

#[derive(Debug, ClapArgs)]
pub struct Args {
    /// KES curve files or folders to open (default: the sample fabric in kes_data/).
    pub files: Vec<PathBuf>,
}

pub fn run(args: Args) -> Result<(), CliError> {
    if !std::io::stdout().is_terminal() {
        return Err(CliError::input(
            "the workbench needs a terminal; see `kestrel --help` for the commands",
        ));
    }
    kestrel::tui::run(args.files).map_err(|e| CliError::failed(format!("terminal: {e}")))
}
