//! Command line → library calls. The only place that prints errors.

mod cli;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// kestrel: a terminal lab workbench for the mechanics of woven fabric (KES-FB curves,
/// connector laws with Dahl / Bliman–Sorine friction, identification, cloth simulation).
#[derive(Debug, Parser)]
#[command(
    name = "kestrel",
    version,
    about,
    long_about = None,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// With no command: KES curve files or folders to open in the workbench.
    files: Vec<std::path::PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Open the terminal workbench (the default with no command).
    #[cfg(feature = "tui")]
    Tui(cli::tui::Args),
    /// KES characteristic values of curve files (table or --json).
    Values(cli::values::Args),
    /// Write the KES protocol curve of a law or fabric parameter file as a KES CSV.
    Simulate(cli::simulate::Args),
    /// Fit the connector laws to each fabric's curves and write parameter files.
    Fit(cli::fit::Args),
    /// Drive a parameter file's laws along measured curves (no refit): NRMSE and KES values.
    Validate(cli::validate::Args),
    /// A fabric library's summary table (CSV; --json): KES values, parameters, fit quality.
    Report(cli::report::Args),
    /// PNG of a curve (with its law and residuals), a fabric sheet, or a hysteresis view.
    Plot(cli::plot::Args),
    /// Run a scene: a cloth simulation or a virtual KES test (docs/cloth.md).
    Run(cli::run::RunArgs),
    /// Render a scene (simulated) or a record to PNG frames with headless wgpu (docs/render.md).
    #[cfg(feature = "render")]
    Render(cli::render::RenderArgs),
    /// Precompute a reduced model of a scene's impulse palette (SVD, IRF library; docs/reduced.md).
    Precompute(cli::precompute::PrecomputeArgs),
    /// The lab's tests of a fabric card on the mesh: cantilever (ASTM D1388) and drape (Cusick).
    Test(cli::test::TestArgs),
    /// Play a reduced model under an impulse sequence; --out renders PNG frames.
    Play(cli::play::PlayArgs),
}

/// Every option's value may be a negative number (`--dt -1` reaches the range check and its
/// message, not clap's "unexpected argument"), and a size may start with a hyphen
/// (`--size -5x10`), in every command and subcommand.
fn negative_values(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|a| {
        if !a.get_action().takes_values() {
            a
        } else if a.get_id() == "size" {
            a.allow_hyphen_values(true)
        } else {
            a.allow_negative_numbers(true)
        }
    })
    .mut_subcommands(negative_values)
}

fn main() -> ExitCode {
    // A reader that closes stdout early (`kestrel values … | head`) ends the process as it
    // ends `cat`: Rust ignores SIGPIPE, and `println!` then panics on the broken pipe.
    #[cfg(unix)]
    // SAFETY: before any thread; SIG_DFL is a valid disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // Before any thread: Mesa's "XDG_RUNTIME_DIR is invalid" stays off the terminal.
    #[cfg(feature = "render")]
    let _runtime_dir = kestrel::render::RuntimeDir::ensure();
    let matches = negative_values(Cli::command()).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let result: Result<(), cli::CliError> = match cli.command {
        Some(Command::Plot(args)) => cli::plot::run(args),
        None => cli::tui::run(cli::tui::Args { files: cli.files }),
        #[cfg(feature = "tui")]
        Some(Command::Tui(args)) => cli::tui::run(args),
        Some(Command::Fit(args)) => cli::fit::run(args),
        Some(Command::Validate(args)) => cli::validate::run(args),
        Some(Command::Report(args)) => cli::report::run(args),
        Some(Command::Values(args)) => cli::values::run(args),
        Some(Command::Simulate(args)) => cli::simulate::run(args),
        Some(Command::Run(args)) => cli::run::run(args),
        #[cfg(feature = "render")]
        Some(Command::Render(args)) => cli::render::run(args),
        Some(Command::Precompute(args)) => cli::precompute::run(args),
        Some(Command::Play(args)) => cli::play::run(args),
        Some(Command::Test(args)) => cli::test::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // text from input files (a fabric name, a cell) never drives the terminal: control
            // characters other than the message's own line breaks are escaped
            let lines: Vec<String> = e
                .to_string()
                .split('\n')
                .map(kestrel::input::printable)
                .collect();
            eprintln!("error: {}", lines.join("\n"));
            ExitCode::from(e.exit_code())
        }
    }
}
