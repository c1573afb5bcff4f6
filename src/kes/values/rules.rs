//! How KES values are read from a curve: slope ranges, width positions and windows, F_m, the
//! reversal rule; printed with the values.

use std::fmt;

use serde::Serialize;

use super::PM_SHORTFALL;

/// The instrument's nominal maximum tensile force F_m for woven fabric [gf/cm].
pub(crate) const KES_TENSILE_MAX_FORCE: f64 = 500.0;

/// Where a path reverses, for every reader of paths (values, fit, plots, TUI): x must come
/// back by this fraction of its range. The friction rig's record shows its noise from about
/// 0.1 % (99 reversals read from 0.2 % to 5 %, 100 at 0.1 %), the driven paths' smallest minor
/// loop is 10 % of the range: 1 % sits a decade from each.
pub const REVERSAL_FRACTION: f64 = 0.01;

/// How the values are read: slope ranges, width positions and windows, F_m. One place, printed
/// with the values. Angles in deg, curvatures in 1/cm, forces in gf/cm.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ReadingRules {
    /// Nominal maximum tensile force F_m [gf/cm] in LT = WT / (F_m·EMT/2). Default 500. The
    /// file's `max force` metadata replaces it; a curve whose largest force is further than
    /// [`FM_BELOW`](super::FM_BELOW) below or [`FM_ABOVE`](super::FM_ABOVE) above that is read
    /// with its own largest force.
    pub tensile_max_force: f64,
    /// G is the mean slope of the four branches over this angle range, each side \[deg\].
    /// Default 0.5..5.
    pub shear_slope_range: [f64; 2],
    /// 2HG is the loop width at ± this angle \[deg\]. Default 0.5.
    pub shear_2hg_at: f64,
    /// 2HG5 is the loop width at ± this angle \[deg\]. Default 5.
    pub shear_2hg5_at: f64,
    /// Half window of the local least-squares line that reads a branch at a width
    /// position \[deg\]. Default 0.25.
    pub shear_half_window: f64,
    /// B is the mean slope of the four branches over this curvature range [1/cm].
    /// Default 0.5..1.5.
    pub bending_slope_range: [f64; 2],
    /// 2HB is the loop width at ± this curvature [1/cm]. Default 1.
    pub bending_2hb_at: f64,
    /// Half window of the local line for 2HB [1/cm]. Default 0.1.
    pub bending_half_window: f64,
    /// A reversal of x counts once x comes back by this fraction of its range (so noise on x
    /// makes no branches). Default [`REVERSAL_FRACTION`].
    pub reversal_fraction: f64,
    /// Generic loops: half window of the local lines that read the width at mid-x, as a
    /// fraction of the x range. Default 0.05.
    pub loop_half_window: f64,
    /// T0 is the thickness at this pressure on compression [gf/cm²]. Default 0.5.
    pub compression_t0_pressure: f64,
    /// P_m: TM is the thickness at this pressure, and LC = WC / (P_m(T0 − TM)/2)
    /// [gf/cm²]. Default 50.
    pub compression_max_pressure: f64,
    /// X: MIU, MMD and SMD are read over the first X of each stroke of the trace \[cm\].
    /// Default 2.
    pub surface_trace: f64,
}

impl Default for ReadingRules {
    fn default() -> Self {
        Self {
            tensile_max_force: KES_TENSILE_MAX_FORCE,
            shear_slope_range: [0.5, 5.0],
            shear_2hg_at: 0.5,
            shear_2hg5_at: 5.0,
            shear_half_window: 0.25,
            bending_slope_range: [0.5, 1.5],
            bending_2hb_at: 1.0,
            bending_half_window: 0.1,
            reversal_fraction: REVERSAL_FRACTION,
            loop_half_window: 0.05,
            compression_t0_pressure: 0.5,
            compression_max_pressure: 50.0,
            surface_trace: 2.0,
        }
    }
}

impl fmt::Display for ReadingRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [s0, s1] = self.shear_slope_range;
        let [b0, b1] = self.bending_slope_range;
        writeln!(
            f,
            "tensile: F_m = {} gf/cm (nominal) or the file's `max force` line, the curve's \
             largest force when that is off it by more than -{} % / +{} % (noted); EMT at the \
             turning point; WT trapezoid on loading; RT = returned energy / WT (above {} %: \
             unavailable)",
            self.tensile_max_force,
            100.0 * super::FM_BELOW,
            100.0 * super::FM_ABOVE,
            100.0 * super::REVERSED_RETURN
        )?;
        writeln!(
            f,
            "shear:   G slope over {s0}..{s1} deg (4 branch regressions); 2HG at +/-{} deg, \
             2HG5 at +/-{} deg, local line +/-{} deg",
            self.shear_2hg_at, self.shear_2hg5_at, self.shear_half_window
        )?;
        writeln!(
            f,
            "bending: B slope over {b0}..{b1} 1/cm (4 branch regressions); 2HB at +/-{} 1/cm, \
             local line +/-{} 1/cm",
            self.bending_2hb_at, self.bending_half_window
        )?;
        writeln!(
            f,
            "compression: T0 at {} gf/cm2, TM at P_m = {} gf/cm2 (or the turn, within {} %); \
             WC = int P dT on compression, TM..T0 (T in cm); LC = WC / (P_m (T0-TM)/2); \
             RC = 100 int P dT on recovery / WC (none above 102 % or for a turn 5 % above P_m); EMC = 100 (T0-TM)/T0",
            self.compression_t0_pressure,
            self.compression_max_pressure,
            100.0 * PM_SHORTFALL
        )?;
        writeln!(
            f,
            "surface: over the first X = {} cm of each stroke, averaged over the strokes \
             (forward, reverse): MIU = (1/X) int mu dx, MMD = (1/X) int |mu - MIU| dx, \
             SMD = (1/X) int |T - mean T| dx",
            self.surface_trace
        )?;
        writeln!(
            f,
            "weight: W from the `# weight [g/m2]` (or mg/cm2, kg/m2, oz/yd2) metadata line; \
             1 mg/cm2 = 10 g/m2, 1 oz/yd2 = 33.906 g/m2"
        )?;
        writeln!(
            f,
            "windows: every shear and bending window ends {} % of the amplitude before the \
             turning point of its side, else its value is unavailable",
            100.0 * super::TURN_MARGIN
        )?;
        write!(
            f,
            "branches: split at the turning points of x (a reversal once x returns by {} % of \
             its range; a dwell of repeated x lies between branches)",
            100.0 * self.reversal_fraction
        )
    }
}
