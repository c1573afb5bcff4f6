//! Command line → library calls. The only place that prints errors.

mod cli;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// kestrel: a terminal lab workbench for the mechanics of woven fabric (KES-FB curves,
/// connector laws with Dahl / Bliman–Sorine friction, identification, cloth simulation).
#[derive(Debug, Parser)]
#[command(name = "kestrel", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a scene: a cloth simulation or a virtual KES test (docs/cloth.md).
    Run(cli::run::RunArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: Result<(), cli::CliError> = match cli.command {
        Some(Command::Run(args)) => cli::run::run(args),
        None => {
            let _ = Cli::command().print_help();
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
