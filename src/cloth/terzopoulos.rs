//! Terzopoulos et al. (1987) elastic surface: energy ∫ ¼η_ij(G_ij − G⁰_ij)² + ½ξ_ij(B_ij − B⁰_ij)² da
//! (eq. 14) by the difference operators of eqs. 18–24; η [N/m], ξ [N·m], nodal forces [N].

use serde::{Deserialize, Serialize};

use super::grid::Grid;
use super::{ClothError, Mat3, SettingError, Vec3};

/// How the stretch/shear tensions α_ij depend on the state (eq. 16).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricLaw {
    /// α_ij = η_ij (G_ij − G⁰_ij): a prescribed-metric membrane, zero force for rigid motions.
    #[default]
    Prescribed,
    /// α_ij = η_ij constant, acting on the displacement r − r⁰ (linear membrane, K constant).
    Linear,
}

/// How the rigidities β_ij depend on the state (eq. 17).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RigidityLaw {
    /// β_ij = ξ_ij (B_ij − B⁰_ij) with B_ij = n·D_ij(r), force D_ijᵀ(β_ij n) (n frozen).
    #[default]
    Curvature,
    /// β_ij = ξ_ij constant on r − r⁰: the paper's linearised thin plate, K constant.
    Linear,
}

/// Material weights of the surface, uniform over the sheet.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TerzopoulosParams {
    /// η₁₁, η₂₂ (stretch along warp, weft) and η₁₂ (shear) [N/m]. Default 0.
    #[serde(default)]
    pub eta: [f64; 3],
    /// ξ₁₁, ξ₂₂ (bending along warp, weft) and ξ₁₂ (twist) [N·m]. Default 0.
    #[serde(default)]
    pub xi: [f64; 3],
    /// Default `prescribed`.
    #[serde(default)]
    pub metric: MetricLaw,
    /// Default `curvature`.
    #[serde(default)]
    pub bending: RigidityLaw,
    /// Damping density γ [kg/(m²·s)]: force −γ·A·v, the matrix C of eq. 26. Default 0.
    #[serde(default)]
    pub damping_density: f64,
    /// Semi-implicit steps: also put the Gauss–Newton part ½s·u uᵀ of the prescribed-metric
    /// Jacobian into A and keep compressive α (< 0) out of it, explicit (not in the paper):
    /// stretch becomes implicit and A positive definite, so Δt need not scale with h/√η.
    /// Default false (the paper's lagged α).
    #[serde(default)]
    pub tangent: bool,
}

impl TerzopoulosParams {
    pub(crate) fn validate(&self) -> Result<(), SettingError> {
        for (name, w) in [("eta", self.eta), ("xi", self.xi)] {
            for (v, idx) in w.iter().zip(["11", "22", "12"]) {
                SettingError::non_negative(format!("material {name}{idx}"), *v, "")?;
            }
        }
        SettingError::non_negative(
            "material damping_density",
            self.damping_density,
            " kg/(m^2*s)",
        )
    }

    /// Whether K does not depend on r (eq. 28 can reuse one factorisation).
    pub(crate) fn is_linear(&self) -> bool {
        let metric_linear = self.metric == MetricLaw::Linear || self.eta == [0.0; 3];
        let bending_linear = self.bending == RigidityLaw::Linear || self.xi == [0.0; 3];
        metric_linear && bending_linear
    }
}

/// A metric term G = D_a(r)·D_b(r) or a curvature term B = n·D(r).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TermKind {
    Metric,
    Bend,
}

/// One difference term of the discrete energy: its nodes, the coefficients of its difference
/// operators, its rest value and its weight s = quadrature area × multiplicity × (η or ξ).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Term {
    pub kind: TermKind,
    pub len: usize,
    pub nodes: [u32; 4],
    /// D_a (metric) or D_ij (bend) coefficients [1/m or 1/m²].
    pub ca: [f64; 4],
    /// D_b coefficients (metric only).
    pub cb: [f64; 4],
    /// Bend: the node whose normal is used; `None`: the cell normal of the four nodes.
    pub normal_node: Option<u32>,
    /// G⁰ or B⁰ at the rest shape.
    pub rest: f64,
    /// s [N·m (metric) or N·m³ (bend)].
    pub weight: f64,
}

/// The elastic surface on a grid: rest shape, parameters and difference terms.
#[derive(Debug, Clone, PartialEq)]
pub struct TerzopoulosSurface {
    pub params: TerzopoulosParams,
    grid: Grid,
    /// Rest positions r⁰ [m].
    rest: Vec<Vec3>,
    terms: Vec<Term>,
}

impl TerzopoulosSurface {
    /// The surface whose natural shape (G⁰, B⁰) is `rest` on `grid`; material coordinates
    /// a₁ = i·h_warp, a₂ = j·h_weft.
    pub fn new(grid: &Grid, rest: &[Vec3], params: TerzopoulosParams) -> Result<Self, ClothError> {
        params.validate()?;
        grid.check_len(rest.len(), "rest positions")?;
        let terms = build_terms(grid, &params);
        let mut s = Self {
            params,
            grid: *grid,
            rest: rest.to_vec(),
            terms,
        };
        let mut normals = vec![Vec3::zeros(); rest.len()];
        grid.normals(rest, &mut normals);
        for k in 0..s.terms.len() {
            let t = s.terms[k];
            s.terms[k].rest = match t.kind {
                TermKind::Metric => apply(&t.ca, &t, rest).dot(&apply(&t.cb, &t, rest)),
                TermKind::Bend => normal_of(&t, rest, &normals).dot(&apply(&t.ca, &t, rest)),
            };
        }
        Ok(s)
    }

    pub(crate) fn grid(&self) -> &Grid {
        &self.grid
    }

    /// Number of difference terms.
    pub(crate) fn len(&self) -> usize {
        self.terms.len()
    }

    pub(crate) fn terms(&self) -> &[Term] {
        &self.terms
    }

    /// Adds the elastic forces −∂E/∂r (n frozen in the curvature terms) at `x` to `f` \[N\].
    pub fn add_forces(&self, x: &[Vec3], f: &mut [Vec3]) {
        let mut normals = vec![Vec3::zeros(); x.len()];
        self.grid.normals(x, &mut normals);
        for t in &self.terms {
            let n = t.len;
            match (t.kind, self.params.metric, self.params.bending) {
                (TermKind::Metric, law, _) => {
                    let (da, db, alpha) = match law {
                        MetricLaw::Prescribed => {
                            let da = apply(&t.ca, t, x);
                            let db = apply(&t.cb, t, x);
                            (da, db, t.weight * (da.dot(&db) - t.rest))
                        }
                        MetricLaw::Linear => (
                            apply_disp(&t.ca, t, x, &self.rest),
                            apply_disp(&t.cb, t, x, &self.rest),
                            t.weight,
                        ),
                    };
                    for k in 0..n {
                        f[t.nodes[k] as usize] -= (db * t.ca[k] + da * t.cb[k]) * (0.5 * alpha);
                    }
                }
                (TermKind::Bend, _, RigidityLaw::Curvature) => {
                    let nrm = normal_of(t, x, &normals);
                    let beta = t.weight * (nrm.dot(&apply(&t.ca, t, x)) - t.rest);
                    for k in 0..n {
                        f[t.nodes[k] as usize] -= nrm * (beta * t.ca[k]);
                    }
                }
                (TermKind::Bend, _, RigidityLaw::Linear) => {
                    let d = apply_disp(&t.ca, t, x, &self.rest) * t.weight;
                    for k in 0..n {
                        f[t.nodes[k] as usize] -= d * t.ca[k];
                    }
                }
            }
        }
    }

    /// Elastic energy Σ ¼s(G − G⁰)² + ½s(B − B⁰)² (or the quadratic forms of the linear
    /// laws) \[J\].
    pub fn energy(&self, x: &[Vec3]) -> f64 {
        let mut normals = vec![Vec3::zeros(); x.len()];
        self.grid.normals(x, &mut normals);
        self.terms
            .iter()
            .map(|t| self.term_energy(t, x, &normals))
            .sum()
    }

    /// Each term's energy shared equally by its nodes [J per node].
    pub fn node_energy(&self, x: &[Vec3]) -> Vec<f64> {
        let mut normals = vec![Vec3::zeros(); x.len()];
        self.grid.normals(x, &mut normals);
        let mut e = vec![0.0; x.len()];
        for t in &self.terms {
            let w = self.term_energy(t, x, &normals) / t.len as f64;
            for &p in &t.nodes[..t.len] {
                e[p as usize] += w;
            }
        }
        e
    }

    fn term_energy(&self, t: &Term, x: &[Vec3], normals: &[Vec3]) -> f64 {
        match (t.kind, self.params.metric, self.params.bending) {
            (TermKind::Metric, MetricLaw::Prescribed, _) => {
                let g = apply(&t.ca, t, x).dot(&apply(&t.cb, t, x)) - t.rest;
                0.25 * t.weight * g * g
            }
            (TermKind::Metric, MetricLaw::Linear, _) => {
                0.5 * t.weight
                    * apply_disp(&t.ca, t, x, &self.rest).dot(&apply_disp(&t.cb, t, x, &self.rest))
            }
            (TermKind::Bend, _, RigidityLaw::Curvature) => {
                let b = normal_of(t, x, normals).dot(&apply(&t.ca, t, x)) - t.rest;
                0.5 * t.weight * b * b
            }
            (TermKind::Bend, _, RigidityLaw::Linear) => {
                0.5 * t.weight * apply_disp(&t.ca, t, x, &self.rest).norm_squared()
            }
        }
    }

    /// Adds the diagonal 3×3 blocks of K(x) to `out` (for the Newton solvers' scaling).
    pub(crate) fn stiffness_blocks(&self, x: &[Vec3], out: &mut [Mat3]) {
        let mut normals = vec![Vec3::zeros(); x.len()];
        self.grid.normals(x, &mut normals);
        let mut b = vec![Vec3::zeros(); x.len()];
        let terms = &self.terms;
        self.stiffness(
            x,
            &normals,
            |ti, p, q, m| {
                if p == q {
                    out[terms[ti].nodes[p] as usize] += m;
                }
            },
            &mut b,
        );
    }

    /// Visits the 3×3 blocks of K(x) (eq. 25, α and β frozen at x) as (term, row and column
    /// slot in the term, block) and the rest-shape force b with f_elastic = −K(x)·x + b [N].
    pub(crate) fn stiffness(
        &self,
        x: &[Vec3],
        normals: &[Vec3],
        mut block: impl FnMut(usize, usize, usize, Mat3),
        b: &mut [Vec3],
    ) {
        for (ti, t) in self.terms.iter().enumerate() {
            let n = t.len;
            match t.kind {
                TermKind::Metric => {
                    let alpha = match self.params.metric {
                        MetricLaw::Prescribed => {
                            let da = apply(&t.ca, t, x);
                            let db = apply(&t.cb, t, x);
                            let alpha = t.weight * (da.dot(&db) - t.rest);
                            if self.params.tangent && alpha < 0.0 {
                                // compression stays explicit: A keeps only tension
                                for k in 0..n {
                                    b[t.nodes[k] as usize] -=
                                        (db * t.ca[k] + da * t.cb[k]) * (0.5 * alpha);
                                }
                                0.0
                            } else {
                                alpha
                            }
                        }
                        MetricLaw::Linear => {
                            let da = apply(&t.ca, t, &self.rest);
                            let db = apply(&t.cb, t, &self.rest);
                            for k in 0..n {
                                b[t.nodes[k] as usize] +=
                                    (db * t.ca[k] + da * t.cb[k]) * (0.5 * t.weight);
                            }
                            t.weight
                        }
                    };
                    for p in 0..n {
                        for q in 0..n {
                            let c = 0.5 * alpha * (t.ca[p] * t.cb[q] + t.cb[p] * t.ca[q]);
                            block(ti, p, q, Mat3::identity() * c);
                        }
                    }
                    if self.params.tangent && self.params.metric == MetricLaw::Prescribed {
                        // ∂α/∂r_q = u_q, u_q = c_a,q·D_b r + c_b,q·D_a r; K_geo·r = s·G·u
                        let da = apply(&t.ca, t, x);
                        let db = apply(&t.cb, t, x);
                        let g = da.dot(&db);
                        let u: [Vec3; 4] = std::array::from_fn(|k| db * t.ca[k] + da * t.cb[k]);
                        for p in 0..n {
                            b[t.nodes[p] as usize] += u[p] * (t.weight * g);
                            for q in 0..n {
                                block(ti, p, q, u[p] * u[q].transpose() * (0.5 * t.weight));
                            }
                        }
                    }
                }
                TermKind::Bend => match self.params.bending {
                    RigidityLaw::Curvature => {
                        let nrm = normal_of(t, x, normals);
                        let nn = nrm * nrm.transpose() * t.weight;
                        for p in 0..n {
                            b[t.nodes[p] as usize] += nrm * (t.weight * t.rest * t.ca[p]);
                            for q in 0..n {
                                block(ti, p, q, nn * (t.ca[p] * t.ca[q]));
                            }
                        }
                    }
                    RigidityLaw::Linear => {
                        let d = apply(&t.ca, t, &self.rest) * t.weight;
                        for p in 0..n {
                            b[t.nodes[p] as usize] += d * t.ca[p];
                            for q in 0..n {
                                let c = t.weight * t.ca[p] * t.ca[q];
                                block(ti, p, q, Mat3::identity() * c);
                            }
                        }
                    }
                },
            }
        }
    }
}

/// Σ_k c_k r[node_k].
#[inline]
fn apply(c: &[f64; 4], t: &Term, x: &[Vec3]) -> Vec3 {
    (0..t.len).fold(Vec3::zeros(), |acc, k| acc + x[t.nodes[k] as usize] * c[k])
}

/// Σ_k c_k (r − r⁰)[node_k].
#[inline]
fn apply_disp(c: &[f64; 4], t: &Term, x: &[Vec3], rest: &[Vec3]) -> Vec3 {
    (0..t.len).fold(Vec3::zeros(), |acc, k| {
        let p = t.nodes[k] as usize;
        acc + (x[p] - rest[p]) * c[k]
    })
}

/// The unit normal a bend term uses: the node's (central differences) or its cell's
/// (D̄₁ × D̄₂ of the cell-averaged differences).
#[inline]
fn normal_of(t: &Term, x: &[Vec3], normals: &[Vec3]) -> Vec3 {
    match t.normal_node {
        Some(p) => normals[p as usize],
        None => {
            let [a, b, c, d] = t.nodes.map(|p| x[p as usize]);
            let n = ((b - a) + (d - c)).cross(&((c - a) + (d - b)));
            n.try_normalize(1e-300).unwrap_or_else(Vec3::zeros)
        }
    }
}

/// The terms of eqs. 22–24 on the grid, with trapezoid weights (½ on a border line) so that
/// Σ s approximates ∫ da. A term whose stencil leaves the grid is dropped (the paper's free
/// boundary). Mixed terms (G₁₂, B₁₂) live at cell centres: the average of the forward cross
/// difference over the cell's four corners, so mirror-symmetric loads give mirror-symmetric
/// shapes.
fn build_terms(grid: &Grid, p: &TerzopoulosParams) -> Vec<Term> {
    let (nu, nv) = (grid.nu, grid.nv);
    let (h1, h2) = (grid.h_warp, grid.h_weft);
    let idx = |i: usize, j: usize| (j * nu + i) as u32;
    let area = h1 * h2;
    let mut terms = Vec::new();
    let mut push = |kind, nodes: &[u32], ca: &[f64], cb: &[f64], normal_node, weight: f64| {
        if weight == 0.0 {
            return;
        }
        let mut t = Term {
            kind,
            len: nodes.len(),
            nodes: [0; 4],
            ca: [0.0; 4],
            cb: [0.0; 4],
            normal_node,
            rest: 0.0,
            weight,
        };
        t.nodes[..nodes.len()].copy_from_slice(nodes);
        t.ca[..ca.len()].copy_from_slice(ca);
        t.cb[..cb.len()].copy_from_slice(cb);
        terms.push(t);
    };
    let [eta11, eta22, eta12] = p.eta;
    let [xi11, xi22, xi12] = p.xi;
    for j in 0..nv {
        for i in 0..nu {
            let wj = Grid::border_weight(j, nv);
            let wi = Grid::border_weight(i, nu);
            // G₁₁ = D₁⁺r·D₁⁺r on the warp edge from (i, j).
            if i + 1 < nu {
                let c = [-1.0 / h1, 1.0 / h1];
                let nodes = [idx(i, j), idx(i + 1, j)];
                push(TermKind::Metric, &nodes, &c, &c, None, area * wj * eta11);
            }
            if j + 1 < nv {
                let c = [-1.0 / h2, 1.0 / h2];
                let nodes = [idx(i, j), idx(i, j + 1)];
                push(TermKind::Metric, &nodes, &c, &c, None, area * wi * eta22);
            }
            // B₁₁ = n·D₁₁r and B₂₂ = n·D₂₂r, central second differences at (i, j).
            let bends = [
                (i > 0 && i + 1 < nu).then(|| {
                    let nodes = [idx(i - 1, j), idx(i, j), idx(i + 1, j)];
                    (h1, nodes, area * wj * xi11)
                }),
                (j > 0 && j + 1 < nv).then(|| {
                    let nodes = [idx(i, j - 1), idx(i, j), idx(i, j + 1)];
                    (h2, nodes, area * wi * xi22)
                }),
            ];
            for (h, nodes, weight) in bends.into_iter().flatten() {
                let c = [1.0 / (h * h), -2.0 / (h * h), 1.0 / (h * h)];
                push(TermKind::Bend, &nodes, &c, &[], Some(idx(i, j)), weight);
            }
            // Cell (i, j)–(i+1, j+1): G₁₂ = G₂₁ and B₁₂ = B₂₁ (multiplicity 2).
            if i + 1 < nu && j + 1 < nv {
                let nodes = [idx(i, j), idx(i + 1, j), idx(i, j + 1), idx(i + 1, j + 1)];
                let d1 = [-0.5 / h1, 0.5 / h1, -0.5 / h1, 0.5 / h1];
                let d2 = [-0.5 / h2, -0.5 / h2, 0.5 / h2, 0.5 / h2];
                push(TermKind::Metric, &nodes, &d1, &d2, None, 2.0 * area * eta12);
                let t = 1.0 / (h1 * h2);
                let d12 = [t, -t, -t, t];
                push(TermKind::Bend, &nodes, &d12, &[], None, 2.0 * area * xi12);
            }
        }
    }
    terms
}
