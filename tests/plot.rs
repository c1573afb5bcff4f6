//! PNG plots: decoded images of the right size with the branch colours drawn where the plots
//! are; the sheet's cells; atomic writes; dissipated energy per cycle against closed forms;
//! the `kestrel plot` command end to end.

use std::io::Cursor;
use std::path::Path;

use kestrel::friction::FrictionShape;
use kestrel::kes::{Curve, Cycle, Direction, KesTest, Path as KesPath};
use kestrel::material::{ConnectorLaw, FrictionLaw, MaterialLaw, ShearLaw};
use kestrel::params::FabricParams;
use kestrel::plot::{
    self, CurvePlot, HysteresisPlot, ImageFormat, Overlay, PlotError, PlotSize, LOADING_RGB,
    MODEL_RGB, UNLOADING_RGB,
};

use crate::common::{assert_success, kestrel};
use crate::fit::{curve_of, known_laws};

struct Image {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
}

impl Image {
    fn decode(bytes: &[u8]) -> Image {
        let decoder = png::Decoder::new(Cursor::new(bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut rgb = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut rgb).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb);
        assert_eq!(info.bit_depth, png::BitDepth::Eight);
        rgb.truncate(info.buffer_size());
        Image {
            width: info.width,
            height: info.height,
            rgb,
        }
    }

    /// Pixels within ±30 of `color` on each channel inside x0..x1 × y0..y1.
    fn count(&self, color: (u8, u8, u8), (x0, x1): (u32, u32), (y0, y1): (u32, u32)) -> usize {
        let near = |a: u8, b: u8| (a as i32 - b as i32).abs() <= 30;
        let mut n = 0;
        for y in y0..y1.min(self.height) {
            for x in x0..x1.min(self.width) {
                let i = 3 * (y * self.width + x) as usize;
                let p = &self.rgb[i..i + 3];
                if near(p[0], color.0) && near(p[1], color.1) && near(p[2], color.2) {
                    n += 1;
                }
            }
        }
        n
    }

    fn count_all(&self, color: (u8, u8, u8)) -> usize {
        self.count(color, (0, self.width), (0, self.height))
    }
}

fn law_of(test: KesTest) -> ConnectorLaw {
    known_laws(false, 0.1)
        .into_iter()
        .find(|(_, t)| *t == test)
        .map(|(l, _)| l)
        .unwrap()
}

fn curve(test: KesTest, direction: Direction) -> Curve {
    let mut c = curve_of(&law_of(test), test, 800);
    c.direction = direction;
    c.fabric = "Test fabric".into();
    c
}

fn legend() -> Vec<String> {
    vec!["EMT 6.50 %".into(), "NRMSE 0.00 %".into()]
}

/// The PNG of a measured curve alone, with the usual legend.
fn measured_png(c: &Curve, size: PlotSize) -> Vec<u8> {
    let lines = legend();
    let plot = CurvePlot {
        curve: c,
        model: None,
        legend: &lines,
    };
    plot::curve_image(&plot, size, ImageFormat::Png).unwrap()
}

#[test]
fn single_curve_has_its_size_and_both_branches_in_the_plot_area() {
    let c = curve(KesTest::Shear, Direction::Warp);
    let bytes = measured_png(&c, PlotSize::SINGLE);
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let img = Image::decode(&bytes);
    assert_eq!((img.width, img.height), (1200, 800));
    // the legend swatches are at most 26 × 3 pixels each: hundreds of pixels are the curve,
    // and they lie right of the legend box and under the title
    let plot_area = ((450, 1200), (60, 800));
    for color in [LOADING_RGB, UNLOADING_RGB] {
        let n = img.count(color, plot_area.0, plot_area.1);
        assert!(n > 500, "{color:?}: {n} pixels");
    }
    // white background
    assert!(img.count_all((255, 255, 255)) > 1200 * 800 / 2);
}

#[test]
fn model_overlay_and_residual_panel_are_drawn_at_a_custom_size() {
    let c = curve(KesTest::Tensile, Direction::Weft);
    let law = law_of(KesTest::Tensile);
    // a model a little off the curve, so the residual panel has something to show
    let model = Overlay {
        label: "model".into(),
        y: law.drive(&c.x).iter().map(|f| f * 1.05).collect(),
    };
    let lines = legend();
    let size = PlotSize::new(800, 600).unwrap();
    let draw = |model: Option<&Overlay>| {
        let bytes = plot::curve_image(
            &CurvePlot {
                curve: &c,
                model,
                legend: &lines,
            },
            size,
            ImageFormat::Png,
        )
        .unwrap();
        Image::decode(&bytes)
    };
    let (with, without) = (draw(Some(&model)), draw(None));
    assert_eq!((with.width, with.height), (800, 600));
    // the residual panel (lower 30 %) holds both branches
    let lower = (600 * 72 / 100, 600);
    assert!(with.count(LOADING_RGB, (0, 800), lower) > 100);
    assert!(with.count(UNLOADING_RGB, (0, 800), lower) > 100);
    // the dashed model: black pixels beyond those of the text
    let black = |img: &Image| img.count(MODEL_RGB, (0, 800), (40, 600 * 70 / 100));
    assert!(
        black(&with) > black(&without) + 800,
        "{} {}",
        black(&with),
        black(&without)
    );
}

#[test]
fn sheet_fills_the_cells_that_have_a_curve() {
    let curves = [
        curve(KesTest::Tensile, Direction::Warp),
        curve(KesTest::Shear, Direction::Warp),
        curve(KesTest::Bending, Direction::Weft),
        curve(KesTest::Tensile, Direction::Weft),
    ];
    let lines = legend();
    let plots: Vec<CurvePlot<'_>> = curves
        .iter()
        .map(|curve| CurvePlot {
            curve,
            model: None,
            legend: &lines,
        })
        .collect();
    let bytes =
        plot::sheet_image("Test fabric", &plots, PlotSize::SHEET, ImageFormat::Png).unwrap();
    let img = Image::decode(&bytes);
    assert_eq!((img.width, img.height), (1800, 1100));
    let (w, h, top) = (img.width / 3, (img.height - 60) / 2, 60);
    let cell = |row: u32, col: u32| {
        let x = (col * w + 10, (col + 1) * w - 10);
        let y = (top + row * h + 10, top + (row + 1) * h - 10);
        (img.count(LOADING_RGB, x, y), img.count(UNLOADING_RGB, x, y))
    };
    // rows warp, weft × columns tensile, shear, bending
    let filled = [(0, 0), (0, 1), (1, 2), (1, 0)];
    for row in 0..2 {
        for col in 0..3 {
            let (load, unload) = cell(row, col);
            if filled.contains(&(row, col)) {
                assert!(
                    load > 300 && unload > 300,
                    "cell {row},{col}: {load} {unload}"
                );
            } else {
                assert_eq!((load, unload), (0, 0), "empty cell {row},{col}");
            }
        }
    }
}

#[test]
fn sheet_refuses_what_has_no_cell() {
    let lines = legend();
    let a = curve(KesTest::Shear, Direction::Warp);
    let plots = [
        CurvePlot {
            curve: &a,
            model: None,
            legend: &lines,
        },
        CurvePlot {
            curve: &a,
            model: None,
            legend: &lines,
        },
    ];
    let e = plot::sheet_image("t", &plots, PlotSize::SHEET, ImageFormat::Png).unwrap_err();
    assert!(matches!(e, PlotError::Sheet(_)), "{e}");
    assert!(e.to_string().contains("two shear warp curves"), "{e}");
    let b = curve(KesTest::Shear, Direction::Bias);
    let e = plot::sheet_image(
        "t",
        &[CurvePlot {
            curve: &b,
            model: None,
            legend: &lines,
        }],
        PlotSize::SHEET,
        ImageFormat::Png,
    )
    .unwrap_err();
    assert!(e.to_string().contains("bias"), "{e}");
}

#[test]
fn what_cannot_be_drawn_is_an_error_not_a_panic() {
    let lines = legend();
    let mut c = curve(KesTest::Shear, Direction::Warp);
    let one = |c: &Curve| {
        plot::curve_image(
            &CurvePlot {
                curve: c,
                model: None,
                legend: &lines,
            },
            PlotSize::SINGLE,
            ImageFormat::Png,
        )
    };
    c.y[10] = f64::NAN;
    assert!(matches!(one(&c), Err(PlotError::NotFinite(_))));
    c.x.truncate(1);
    c.y.truncate(1);
    assert!(matches!(one(&c), Err(PlotError::Empty(_))));
    let c = curve(KesTest::Shear, Direction::Warp);
    let short = Overlay {
        label: "m".into(),
        y: vec![0.0; 3],
    };
    let e = plot::curve_image(
        &CurvePlot {
            curve: &c,
            model: Some(&short),
            legend: &lines,
        },
        PlotSize::SINGLE,
        ImageFormat::Png,
    )
    .unwrap_err();
    assert!(matches!(e, PlotError::ModelLength { model: 3, .. }), "{e}");
}

#[test]
fn sizes_parse_and_stay_in_bounds() {
    assert_eq!(
        "1600x900".parse::<PlotSize>().unwrap(),
        PlotSize::new(1600, 900).unwrap()
    );
    for bad in ["1600", "x900", "10x10", "99999x800", "axb", ""] {
        assert!(bad.parse::<PlotSize>().is_err(), "{bad}");
    }
}

#[test]
fn hysteresis_view_shows_friction_branches_and_energy_bars() {
    let c = curve(KesTest::Shear, Direction::Warp);
    let law = law_of(KesTest::Shear);
    let lines = legend();
    let bytes = plot::hysteresis_image(
        &HysteresisPlot {
            curve: &c,
            law: Some(&law),
            offset: 0.0,
            legend: &lines,
            law_alone: false,
        },
        PlotSize::SINGLE,
        ImageFormat::Png,
    )
    .unwrap();
    let img = Image::decode(&bytes);
    assert_eq!((img.width, img.height), (1200, 800));
    // friction part on the left 60 %, both branches
    let left = (0, 720);
    assert!(img.count(UNLOADING_RGB, left, (60, 800)) > 500);
    assert!(img.count(LOADING_RGB, left, (60, 800)) > 500);
    // energy bars upper right: a measured (blue) and a law (black) bar of one closed cycle
    let bars = ((760, 1200), (60, 420));
    assert!(img.count(LOADING_RGB, bars.0, bars.1) > 2000);
    assert!(img.count(MODEL_RGB, bars.0, bars.1) > 2000);
}

#[test]
fn hysteresis_without_a_law_still_draws_the_loop_and_its_energy() {
    let c = curve(KesTest::Bending, Direction::Weft);
    let bytes = plot::hysteresis_image(
        &HysteresisPlot {
            curve: &c,
            law: None,
            offset: 0.0,
            legend: &[],
            law_alone: false,
        },
        PlotSize::SINGLE,
        ImageFormat::Png,
    )
    .unwrap();
    let img = Image::decode(&bytes);
    assert!(img.count(UNLOADING_RGB, (0, 720), (60, 800)) > 500);
    assert!(img.count(LOADING_RGB, (760, 1200), (60, 420)) > 2000);
}

#[test]
fn write_image_is_atomic_and_refuses_to_overwrite_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plot.png");
    let c = curve(KesTest::Bending, Direction::Warp);
    let bytes = measured_png(&c, PlotSize::new(400, 300).unwrap());
    plot::write_image(&path, &bytes, false).unwrap();
    assert_eq!(Image::decode(&std::fs::read(&path).unwrap()).width, 400);
    let e = plot::write_image(&path, b"not a png", false).unwrap_err();
    assert!(e.to_string().contains("--force"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    plot::write_image(&path, b"replaced", true).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"replaced");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

fn shear_dahl(level: f64, eps_f: f64) -> ConnectorLaw {
    ConnectorLaw::Shear(ShearLaw {
        k_s: 50.0,
        theta0: 0.0,
        friction: FrictionLaw {
            level,
            mu: 0.0,
            shape: FrictionShape::Dahl { eps_f, alpha: 1.0 },
        },
    })
}

/// `cycles` full cycles 0 → +a → −a → 0 with `per_quarter` samples a quarter.
fn cycles_path(a: f64, cycles: usize, per_quarter: usize) -> Vec<f64> {
    let mut x = vec![0.0];
    let q = per_quarter as f64;
    for _ in 0..cycles {
        x.extend((1..=per_quarter).map(|i| a * i as f64 / q));
        x.extend((1..=2 * per_quarter).map(|i| a - a * i as f64 / q));
        x.extend((1..=per_quarter).map(|i| -a + a * i as f64 / q));
    }
    x
}

/// Every cycle dissipates `expected` to a relative `tol`.
fn assert_each_cycle_dissipates(cycles: &[Cycle], expected: f64, tol: f64) {
    for c in cycles {
        assert!(
            (c.energy - expected).abs() < tol * expected,
            "{} vs {expected}",
            c.energy
        );
    }
}

#[test]
fn dahl_loop_dissipates_its_closed_form_per_cycle() {
    // steady symmetric Dahl (α = 1) loop between ±a: 4 F_c (a − ε_f tanh(a/ε_f)); the
    // elastic part stores and returns, it adds nothing over a closed cycle
    let (f_c, eps_f, a) = (0.8, 0.02, 0.05);
    let law = shear_dahl(f_c, eps_f);
    let x = cycles_path(a, 4, 4000);
    let y = law.drive(&x);
    let cycles = KesPath::new(&x).closed_cycles(&y);
    assert_eq!(cycles.len(), 4);
    assert!(KesPath::new(&x).open_segments(&y).is_empty());
    let exact = 4.0 * f_c * (a - eps_f * (a / eps_f).tanh());
    let last = cycles[3].energy;
    assert!((last - exact).abs() < 1e-4 * exact, "{last} vs {exact}");
    // the first cycle starts from a virgin state: it dissipates less than a steady one
    assert!(cycles[0].energy < last);
    // cycles meet end to end
    for w in cycles.windows(2) {
        assert_eq!(w[0].last, w[1].first);
    }
}

#[test]
fn coulomb_limit_dissipates_the_rectangle() {
    // ε_f → 0: Coulomb friction, a rectangle of width 2a and height 2F_c: 4 F_c a per cycle
    let (f_c, a) = (1.5, 0.1);
    let law = shear_dahl(f_c, 1e-7);
    let x = cycles_path(a, 2, 5000);
    let cycles = KesPath::new(&x).closed_cycles(&law.drive(&x));
    assert_eq!(cycles.len(), 2);
    assert_each_cycle_dissipates(&cycles, 4.0 * f_c * a, 1e-3);
}

#[test]
fn one_sided_paths_are_cut_at_every_second_reversal() {
    // 0 → a → 0 → a → 0 → a: never back past the start moving up
    let (f_c, a) = (1.0, 0.1);
    let law = shear_dahl(f_c, 1e-7);
    let mut x = vec![0.0];
    for k in 0..5 {
        let (from, to) = if k % 2 == 0 { (0.0, a) } else { (a, 0.0) };
        x.extend((1..=2000).map(|i| from + (to - from) * i as f64 / 2000.0));
    }
    let y = law.drive(&x);
    let cycles = KesPath::new(&x).closed_cycles(&y);
    // two cycles 0 → a → 0; the last rise holds no reversal and is no cycle
    assert_eq!(cycles.len(), 2, "{cycles:?}");
    assert!(KesPath::new(&x).open_segments(&y).is_empty());
    assert_each_cycle_dissipates(&cycles, 2.0 * f_c * a, 2e-3);
}

#[test]
fn a_tensile_test_is_no_cycle_but_one_open_segment_worth_loading_minus_returned_work() {
    let c = curve(KesTest::Tensile, Direction::Warp);
    let path = KesPath::new(&c.x);
    assert!(path.closed_cycles(&c.y).is_empty());
    let open = path.open_segments(&c.y);
    assert_eq!(open.len(), 1);
    assert_eq!((open[0].first, open[0].last), (0, c.len() - 1));
    let top =
        c.x.iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .unwrap()
            .0;
    let work = |r: std::ops::Range<usize>| -> f64 {
        r.map(|i| 0.5 * (c.y[i] + c.y[i - 1]) * (c.x[i] - c.x[i - 1]))
            .sum()
    };
    let loading = work(1..top + 1);
    let returned = -work(top + 1..c.len());
    let expected = loading - returned;
    assert!(expected > 0.0);
    assert!((open[0].work - expected).abs() < 1e-9 * loading);
}

// ---- the command line ----

/// A KES CSV file (KES units) of a law's curve.
fn write_kes_csv(path: impl AsRef<Path>, test: KesTest, direction: Direction) {
    let c = curve_of(&law_of(test), test, 400);
    let (header, sx, sy) = match test {
        KesTest::Tensile => ("strain [%],force [gf/cm]", 100.0, 1.0 / 0.980665),
        KesTest::Shear => (
            "angle [deg],force [gf/cm]",
            180.0 / std::f64::consts::PI,
            1.0 / 0.980665,
        ),
        _ => ("curvature [1/cm],moment [gf*cm/cm]", 0.01, 1.0 / 9.80665e-3),
    };
    let mut text = format!("# kestrel-kes: 1\n# fabric: CLI fabric\n# test: {test}\n# direction: {direction}\n{header}\n");
    for (x, y) in c.x.iter().zip(&c.y) {
        text += &format!("{:.5},{:.5}\n", x * sx, y * sy);
    }
    std::fs::write(path, text).unwrap();
}

#[test]
fn command_writes_single_sheet_and_hysteresis_pngs() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    write_kes_csv(p("shear_warp.csv"), KesTest::Shear, Direction::Warp);
    write_kes_csv(p("bending_weft.csv"), KesTest::Bending, Direction::Weft);
    // a parameter file with the shear law only
    let mut params = FabricParams::new("CLI fabric");
    if let ConnectorLaw::Shear(l) = law_of(KesTest::Shear) {
        params.warp.shear = Some(l);
    }
    params
        .write(
            Path::new(&p("params.toml")),
            kestrel::params::ParamsFormat::Toml,
            false,
        )
        .unwrap();

    let out = kestrel(&[
        "plot",
        &p("shear_warp.csv"),
        "--params",
        &p("params.toml"),
        "-o",
        &p("one.png"),
    ]);
    assert_success(&out);
    let img = Image::decode(&std::fs::read(p("one.png")).unwrap());
    assert_eq!((img.width, img.height), (1200, 800));
    assert!(img.count_all(LOADING_RGB) > 500 && img.count_all(UNLOADING_RGB) > 500);

    let out = kestrel(&[
        "plot",
        &p("shear_warp.csv"),
        &p("bending_weft.csv"),
        "--params",
        &p("params.toml"),
        "-o",
        &p("sheet.png"),
        "--size",
        "1500x900",
    ]);
    assert_success(&out);
    // the bending law is missing from the file: said, not fatal
    assert!(String::from_utf8_lossy(&out.stderr).contains("no weft bending law"));
    let img = Image::decode(&std::fs::read(p("sheet.png")).unwrap());
    assert_eq!((img.width, img.height), (1500, 900));

    let out = kestrel(&[
        "plot",
        "--hysteresis",
        &p("shear_warp.csv"),
        "--params",
        &p("params.toml"),
        "-o",
        &p("hyst.png"),
    ]);
    assert_success(&out);
    let img = Image::decode(&std::fs::read(p("hyst.png")).unwrap());
    assert!(img.count(MODEL_RGB, (760, 1200), (60, 420)) > 2000);

    // no overwrite without --force; with it, fine
    let before = std::fs::read(p("one.png")).unwrap();
    let out = kestrel(&["plot", &p("bending_weft.csv"), "-o", &p("one.png")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--force"));
    assert_eq!(std::fs::read(p("one.png")).unwrap(), before);
    let out = kestrel(&[
        "plot",
        &p("bending_weft.csv"),
        "-o",
        &p("one.png"),
        "--force",
    ]);
    assert!(out.status.success());
    assert_ne!(std::fs::read(p("one.png")).unwrap(), before);
}

#[test]
fn command_errors_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    write_kes_csv(p("a.csv"), KesTest::Shear, Direction::Warp);
    write_kes_csv(p("b.csv"), KesTest::Shear, Direction::Weft);
    std::fs::write(
        p("bad.csv"),
        "# test: shear\n# direction: warp\nangle [deg],force [gf/cm]\n0,1\n0.1,x\n",
    )
    .unwrap();
    std::fs::write(
        p("unit.csv"),
        "# test: shear\n# direction: warp\nangle [grad],force [gf/cm]\n0,1\n",
    )
    .unwrap();
    let cases: [(&[&str], &str); 6] = [
        (
            &["plot", &p("bad.csv"), "-o", &p("o.png")],
            "bad.csv:5:2: not a number",
        ),
        (
            &["plot", &p("unit.csv"), "-o", &p("o.png")],
            "unknown unit `grad`",
        ),
        (
            &["plot", &p("missing.csv"), "-o", &p("o.png")],
            "cannot read",
        ),
        (
            &[
                "plot",
                "--hysteresis",
                &p("a.csv"),
                &p("b.csv"),
                "-o",
                &p("o.png"),
            ],
            "one curve; got 2 files",
        ),
        (
            &["plot", &p("a.csv"), &p("a.csv"), "-o", &p("o.png")],
            "duplicate curve",
        ),
        (
            &["plot", &p("a.csv"), "--size", "5x5", "-o", &p("o.png")],
            "bad plot size",
        ),
    ];
    for (args, message) in cases {
        let out = kestrel(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    assert!(!Path::new(&p("o.png")).exists());
}

/// A force near f64's largest with a model drawn over it: the axis span was not finite, which
/// plotters' tick search never finishes (a hang); such a force is now refused on reading,
/// naming the file, the line and the bound, by plot and validate alike.
#[test]
fn a_curve_whose_axis_span_overflows_is_refused_not_drawn_forever() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("huge.csv");
    let text =
        std::fs::read_to_string(crate::common::kes_data().join("cotton-shirting/tensile_warp.csv"))
            .unwrap()
            .replacen("\n0.0078,", "\n1.0,1e308\n0.0078,", 1);
    std::fs::write(&csv, text).unwrap();
    let png = dir.path().join("o.png");
    let card = crate::common::repo("scenes/fabrics/cotton-shirting.fitted.params.toml");
    let out = kestrel(&[
        "plot",
        &csv.display().to_string(),
        "--params",
        &card.display().to_string(),
        "-o",
        &png.display().to_string(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("huge.csv:8:2") && err.contains("1e6 N/m"),
        "{err}"
    );
    assert!(!png.exists());
    // the same curve validated: its NRMSE overflows, said as such (it said "no range")
    let out = kestrel(&[
        "validate",
        "--params",
        &card.display().to_string(),
        &csv.display().to_string(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("huge.csv:8:2"), "{err}");
}

/// The texts of an SVG's `<text>` elements, trimmed.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = t.split_once('>')?.1;
            Some(body.split_once("</text>")?.0.trim().to_string())
        })
        .collect()
}

#[test]
fn an_svg_name_writes_vector_text_and_other_names_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    write_kes_csv(p("tensile_warp.csv"), KesTest::Tensile, Direction::Warp);
    let out = kestrel(&["plot", &p("tensile_warp.csv"), "-o", &p("one.svg")]);
    assert_success(&out);
    let svg = std::fs::read_to_string(p("one.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    let texts = svg_texts(&svg);
    assert!(
        texts.contains(&"CLI fabric · tensile · warp".to_string()),
        "{texts:?}"
    );
    // values with three significant digits and typeset units; LT has none
    let lt = texts
        .iter()
        .find(|t| t.starts_with("LT "))
        .expect("LT in the legend");
    assert!(!lt.contains('-') && lt.len() <= "LT 0.123".len(), "{lt}");
    let wt = texts
        .iter()
        .find(|t| t.starts_with("WT "))
        .expect("WT in the legend");
    assert!(wt.ends_with(" gf·cm/cm²"), "{wt}");
    for bad in ["one.jpg", "one"] {
        let out = kestrel(&["plot", &p("tensile_warp.csv"), "-o", &p(bad)]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(".png or .svg"));
        assert!(!dir.path().join(bad).exists());
    }
}

#[test]
fn the_error_against_rank_labels_integer_ranks() {
    let sigma: Vec<f64> = (0..30).map(|k| 0.7f64.powi(k)).collect();
    let svg = kestrel::plot::reduced::error_vs_rank_image(
        "t",
        &sigma,
        8,
        1e-3,
        PlotSize::SINGLE,
        ImageFormat::Svg,
    )
    .unwrap();
    let texts = svg_texts(std::str::from_utf8(&svg).unwrap());
    assert!(texts.contains(&"10".to_string()), "{texts:?}");
    assert!(!texts.iter().any(|t| t.ends_with(".0")), "{texts:?}");
}

#[test]
fn a_law_alone_is_drawn_as_the_law_never_as_measured() {
    let law = law_of(KesTest::Shear);
    let c = curve_of(&law, KesTest::Shear, 400);
    let c = Curve {
        fabric: String::new(),
        ..c
    };
    let svg = plot::hysteresis_image(
        &HysteresisPlot {
            curve: &c,
            law: Some(&law),
            offset: 0.0,
            legend: &[],
            law_alone: true,
        },
        PlotSize::SINGLE,
        ImageFormat::Svg,
    )
    .unwrap();
    let texts = svg_texts(std::str::from_utf8(&svg).unwrap());
    assert!(
        texts.iter().any(|t| t == "shear law alone — hysteresis"),
        "{texts:?}"
    );
    assert!(
        texts.iter().any(|t| t == "dissipated by the law"),
        "{texts:?}"
    );
    assert!(!texts.iter().any(|t| t.contains("measured")), "{texts:?}");
    assert!(
        !texts.iter().any(|t| t.contains("dissipated, law")),
        "{texts:?}"
    );
}
