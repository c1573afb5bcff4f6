//! The command line's forms: what `kestrel` accepts before any command runs.

use crate::common::{assert_success, kestrel, stdout_json, write_file};

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

#[test]
fn test_cantilever_prints_the_bending_length_beside_peirce_and_refuses_a_card_without_weight() {
    let card = "scenes/fabrics/cotton-shirting.fitted.params.toml";
    let out = kestrel(&[
        "test",
        "cantilever",
        "--params",
        card,
        "--direction",
        "weft",
        "--no-friction",
        "--json",
    ]);
    let v = stdout_json(&out);
    let num = |k: &str| v[k].as_f64().unwrap_or_else(|| panic!("no {k}: {v}"));
    let (c, peirce, b, w) = (
        num("bending_length_cm"),
        num("peirce_cm"),
        num("B"),
        num("W_gf_per_cm2"),
    );
    // Peirce's c = (B/W)^(1/3) from the printed B and W, and the mesh within 3 % of it
    assert!(((b / w).cbrt() / peirce - 1.0).abs() < 1e-9, "{v}");
    assert!((c / peirce - 1.0).abs() < 0.03, "{v}");

    // a card without areal density: bad input, exit 2, saying what to add
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(card).unwrap();
    let start = text
        .find("[properties]")
        .expect("the card has [properties]");
    let end = text[start + 1..]
        .find("\n[")
        .map_or(text.len(), |e| start + 1 + e);
    let bare = write_file(
        dir.path(),
        "bare.params.toml",
        format!("{}{}", &text[..start], &text[end..]),
    );
    assert_usage_error(
        &[
            "test",
            "cantilever",
            "--params",
            bare.to_str().unwrap(),
            "--json",
        ],
        "areal density",
    );
}

#[test]
fn drape_lowering_options_go_with_their_lowering() {
    // refused by the command line before the card is read: --load-steps is the quasi-static
    // lowering's, --ramp / --max-time / --free-vibration the dynamic one's
    let card = "scenes/fabrics/cotton-shirting.fitted.params.toml";
    let base = ["test", "drape", "--params", card];
    for extra in [
        &["--dynamic", "--load-steps", "20"][..],
        &["--ramp", "2"][..],
        &["--max-time", "5"][..],
        &["--free-vibration"][..],
    ] {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        let out = kestrel(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains("--"), "{extra:?}: {err}");
    }
}

/// What a card lacks for a lab test is bad input naming the card: here a card cut to its warp
/// laws, for the drape (which needs the weft's too) and for a weft cantilever.
#[test]
fn a_lab_test_names_the_card_that_lacks_a_law() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(crate::common::repo(
        "scenes/fabrics/cotton-shirting.fitted.params.toml",
    ))
    .unwrap();
    let mut params: kestrel::params::FabricParams = toml::from_str(&text).unwrap();
    params.weft = Default::default();
    let card = dir.path().join("warp_only.toml");
    std::fs::write(&card, toml::to_string(&params).unwrap()).unwrap();
    let card = card.display().to_string();
    for args in [
        &["test", "drape", "--params", &card, "--cell", "30", "--json"][..],
        &[
            "test",
            "cantilever",
            "--params",
            &card,
            "--direction",
            "weft",
        ][..],
    ] {
        let out = kestrel(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("warp_only.toml: ") && err.contains("weft"),
            "{args:?}: {err}"
        );
    }
}
