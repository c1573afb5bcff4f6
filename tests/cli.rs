//! The command line's forms: what `kestrel` accepts before any command runs.

use crate::common::{assert_success, kestrel};

#[cfg(feature = "tui")]
#[test]
fn files_without_a_command_open_the_workbench() {
    // `kestrel FILE…` is `kestrel tui FILE…`: without a terminal both refuse the same way
    // (not "unrecognized subcommand").
    for args in [
        &["kes_data/wool-suiting/tensile_warp.csv"][..],
        &["tui", "kes_data/wool-suiting/tensile_warp.csv"][..],
    ] {
        assert_usage_error(args, "the workbench needs a terminal");
    }
}

#[test]
fn a_command_name_still_runs_the_command() {
    let out = kestrel(&["values", "kes_data/wool-suiting/tensile_warp.csv"]);
    assert_success(&out);
    assert!(String::from_utf8_lossy(&out.stdout).contains("EMT"));
}

#[cfg(not(feature = "tui"))]
#[test]
fn without_the_tui_feature_no_command_is_a_usage_error() {
    for args in [&[][..], &["kes_data/wool-suiting/tensile_warp.csv"][..]] {
        assert_usage_error(args, "built without the tui feature");
    }
}

/// `kestrel ARGS` exits with 2 (bad input) and says `message` on stderr.
fn assert_usage_error(args: &[&str], message: &str) {
    let out = kestrel(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(message), "{args:?}: {err}");
}
