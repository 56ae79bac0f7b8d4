//! The least-squares fit of libfork's Eq. (17), `MRSS = a + b * M_1 * P^n`, to a row's peak
//! resident set at each P (libfork's Table II: the exponent `n` with its error "estimated from
//! the fit's covariance matrix").
//!
//! The model is nonlinear in `n` only: for a fixed `n` it is a straight line in `x = P^n`, whose
//! least-squares `a` and `c = b * M_1` are exact (2 x 2 normal equations). So the fit is
//! variable projection: the residual sum of squares of that best line, as a function of `n`, is
//! minimised over a fine grid of `n` and then to machine precision by golden-section search in
//! the grid cell around the best point. The standard errors are those of the full nonlinear
//! model at the optimum: covariance `s^2 (J^T J)^-1`, `J` the Jacobian of the model in
//! `(a, c, n)` (columns `1`, `P^n`, `c P^n ln P`) and `s^2` the residual sum of squares over
//! `m - 3` degrees of freedom, so a fit needs 4 points at least.

/// The exponents searched: wider than any the paper reports (0 to 1.3).
pub(crate) const N_RANGE: (f64, f64) = (-1.0, 3.0);

/// Grid cells over [`N_RANGE`] before the golden-section refinement.
const GRID: usize = 4000;

/// A fitted `MRSS = a + b * M_1 * P^n`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Fit {
    /// The exponent.
    pub n: f64,
    /// The constant, in the data's unit.
    pub a: f64,
    /// The coefficient of `M_1 * P^n`.
    pub b: f64,
    /// The standard errors of `n`, `a` and `b` from the covariance; `None` when `J^T J` is
    /// singular (flat data: `n` is not determined).
    pub se: Option<(f64, f64, f64)>,
    /// The number of points fitted.
    pub points: usize,
    /// The residual sum of squares.
    pub rss: f64,
    /// The best `n` lies on the edge of [`N_RANGE`]: the data prefer an exponent outside it.
    pub at_bound: bool,
}

impl Fit {
    /// The model's value at `p`.
    pub(crate) fn at(&self, m1: f64, p: f64) -> f64 {
        self.a + self.b * m1 * p.powf(self.n)
    }
}

/// The least-squares line `y = a + c x` through `(x, y)` and its residual sum of squares;
/// `None` if the `x` are all equal.
fn line(x: &[f64], y: &[f64]) -> Option<(f64, f64, f64)> {
    let m = x.len() as f64;
    let mx = x.iter().sum::<f64>() / m;
    let my = y.iter().sum::<f64>() / m;
    let sxx: f64 = x.iter().map(|xi| (xi - mx) * (xi - mx)).sum();
    // Also false for NaN.
    let spread = sxx > 1e-300;
    if !spread {
        return None;
    }
    let sxy: f64 = x.iter().zip(y).map(|(xi, yi)| (xi - mx) * (yi - my)).sum();
    let c = sxy / sxx;
    let a = my - c * mx;
    let rss = x
        .iter()
        .zip(y)
        .map(|(xi, yi)| (yi - a - c * xi).powi(2))
        .sum();
    Some((a, c, rss))
}

/// The best line for exponent `n`: `(a, c, rss)`.
fn profile(ps: &[f64], ys: &[f64], n: f64) -> Option<(f64, f64, f64)> {
    let x: Vec<f64> = ps.iter().map(|p| p.powf(n)).collect();
    line(&x, ys)
}

/// The inverse of a symmetric positive definite 3 x 3 matrix, `None` if (nearly) singular.
fn inverse3(m: [[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    let cof =
        |r0: usize, r1: usize, c0: usize, c1: usize| m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0];
    let c = [
        [cof(1, 2, 1, 2), -cof(1, 2, 0, 2), cof(1, 2, 0, 1)],
        [-cof(0, 2, 1, 2), cof(0, 2, 0, 2), -cof(0, 2, 0, 1)],
        [cof(0, 1, 1, 2), -cof(0, 1, 0, 2), cof(0, 1, 0, 1)],
    ];
    let det = m[0][0] * c[0][0] + m[0][1] * c[0][1] + m[0][2] * c[0][2];
    // Relative to the scale of the diagonal: a determinant that small is rounding.
    let scale = m[0][0] * m[1][1] * m[2][2];
    let regular = det.is_finite() && det.abs() > 1e-12 * scale.abs();
    if !regular {
        return None;
    }
    let mut inv = [[0.0; 3]; 3];
    for (i, row) in inv.iter_mut().enumerate() {
        for (j, x) in row.iter_mut().enumerate() {
            // The adjugate is the transpose of the cofactor matrix.
            *x = c[j][i] / det;
        }
    }
    Some(inv)
}

/// Fits `y = a + b * m1 * P^n` to `points` `(P, y)` by least squares; `m1` is the value at
/// P = 1 (`M_1`). `None` with fewer than 4 points, fewer than 2 distinct P, or `m1 <= 0`.
pub(crate) fn fit(points: &[(f64, f64)], m1: f64) -> Option<Fit> {
    let m = points.len();
    let positive = |x: f64| x > 0.0;
    if m < 4 || !positive(m1) {
        return None;
    }
    let ps: Vec<f64> = points.iter().map(|p| p.0).collect();
    let ys: Vec<f64> = points.iter().map(|p| p.1).collect();
    if !ps.iter().all(|&p| positive(p)) {
        return None;
    }
    let (lo, hi) = N_RANGE;
    let step = (hi - lo) / GRID as f64;
    let mut best: Option<(usize, f64)> = None;
    for i in 0..=GRID {
        let n = lo + step * i as f64;
        if let Some((_, _, rss)) = profile(&ps, &ys, n)
            && best.is_none_or(|(_, r)| rss < r)
        {
            best = Some((i, rss));
        }
    }
    let (i, _) = best?;
    // Golden-section search over the cells either side of the best grid point.
    let (mut l, mut r) = (
        lo + step * (i.max(1) - 1) as f64,
        lo + step * (i + 1).min(GRID) as f64,
    );
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let f = |n: f64| profile(&ps, &ys, n).map_or(f64::INFINITY, |x| x.2);
    let (mut x1, mut x2) = (r - g * (r - l), l + g * (r - l));
    let (mut f1, mut f2) = (f(x1), f(x2));
    for _ in 0..100 {
        if f1 <= f2 {
            r = x2;
            (x2, f2) = (x1, f1);
            x1 = r - g * (r - l);
            f1 = f(x1);
        } else {
            l = x1;
            (x1, f1) = (x2, f2);
            x2 = l + g * (r - l);
            f2 = f(x2);
        }
    }
    let n = (l + r) / 2.0;
    let (a, c, rss) = profile(&ps, &ys, n)?;
    let at_bound = i == 0 || i == GRID;
    // The covariance of (a, c, n) in the full model.
    let mut jtj = [[0.0; 3]; 3];
    for &p in &ps {
        let x = p.powf(n);
        let j = [1.0, x, c * x * p.ln()];
        for (u, row) in jtj.iter_mut().enumerate() {
            for (v, e) in row.iter_mut().enumerate() {
                *e += j[u] * j[v];
            }
        }
    }
    let s2 = rss / (m - 3) as f64;
    let se = inverse3(jtj).map(|inv| {
        (
            (s2 * inv[2][2]).max(0.0).sqrt(),
            (s2 * inv[0][0]).max(0.0).sqrt(),
            (s2 * inv[1][1]).max(0.0).sqrt() / m1,
        )
    });
    Some(Fit {
        n,
        a,
        b: c / m1,
        se,
        points: m,
        rss,
        at_bound,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PS: [f64; 6] = [1.0, 2.0, 4.0, 8.0, 12.0, 16.0];

    fn data(a: f64, b: f64, m1: f64, n: f64, ps: &[f64]) -> Vec<(f64, f64)> {
        ps.iter().map(|&p| (p, a + b * m1 * p.powf(n))).collect()
    }

    /// A small deterministic generator of standard normal numbers (xorshift, Box-Muller).
    struct Normal(u64);
    impl Normal {
        fn uniform(&mut self) -> f64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
        fn next(&mut self) -> f64 {
            let (u, v) = (self.uniform(), self.uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
    }

    #[test]
    fn exact_data_give_back_their_parameters() {
        for n in [-0.3, 0.05, 0.38, 0.86, 1.0, 1.3, 2.2] {
            let pts = data(5.0, 0.2, 6.0, n, &PS);
            let f = fit(&pts, 6.0).unwrap();
            assert!((f.n - n).abs() < 1e-6, "n {n}: {f:?}");
            assert!((f.a - 5.0).abs() < 1e-4, "n {n}: {f:?}");
            assert!((f.b - 0.2).abs() < 1e-5, "n {n}: {f:?}");
            assert_eq!(f.points, 6);
            assert!(!f.at_bound);
            assert!((f.at(6.0, 16.0) - pts[5].1).abs() < 1e-6);
        }
        // Up to libfork's 112 cores.
        let ps = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 56.0, 112.0];
        let f = fit(&data(300.0, 0.05, 40.0, 0.43, &ps), 40.0).unwrap();
        assert!((f.n - 0.43).abs() < 1e-6, "{f:?}");
    }

    #[test]
    fn a_fit_that_ignores_the_constant_would_fail_these_tests() {
        // The naive fit, the slope of log(MRSS) against log(P), sees the exponent of
        // a + c P^n only when a is 0: on the data above it is far off, so a fit that forgot
        // `a` (or fixed it) would fail `exact_data_give_back_their_parameters`.
        let naive = |pts: &[(f64, f64)]| {
            let lx: Vec<f64> = pts.iter().map(|p| p.0.ln()).collect();
            let ly: Vec<f64> = pts.iter().map(|p| p.1.ln()).collect();
            line(&lx, &ly).unwrap().1
        };
        let pts = data(5.0, 0.2, 6.0, 0.86, &PS);
        assert!((naive(&pts) - 0.86).abs() > 0.3, "{}", naive(&pts));
        assert!((fit(&pts, 6.0).unwrap().n - 0.86).abs() < 1e-6);
        // And the residual of the best fit is smaller than that of any exponent near it.
        let best = fit(&pts, 6.0).unwrap();
        for dn in [-0.05, -0.01, 0.01, 0.05] {
            let (_, _, rss) = profile(
                &PS,
                &pts.iter().map(|p| p.1).collect::<Vec<_>>(),
                best.n + dn,
            )
            .unwrap();
            assert!(rss > best.rss + 1e-9, "{dn}");
        }
    }

    #[test]
    fn the_standard_error_is_the_spread_of_the_fitted_exponent() {
        // 400 data sets with noise of known size: the fitted exponents centre on the truth,
        // and their spread is what the covariance says it is (within 20%).
        let (a, b, m1, n, sigma) = (20.0, 0.5, 10.0, 0.9, 0.6);
        let mut rng = Normal(0x9e37_79b9_7f4a_7c15);
        let mut ns = Vec::new();
        let mut ses = Vec::new();
        for _ in 0..400 {
            let pts: Vec<(f64, f64)> = data(a, b, m1, n, &PS)
                .into_iter()
                .map(|(p, y)| (p, y + sigma * rng.next()))
                .collect();
            let f = fit(&pts, m1).unwrap();
            ns.push(f.n);
            ses.push(f.se.unwrap().0);
        }
        let mean = ns.iter().sum::<f64>() / ns.len() as f64;
        let sd =
            (ns.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (ns.len() - 1) as f64).sqrt();
        // Each s.e. scales with its own s, an estimate of sigma on 3 degrees of freedom: their
        // root mean square is the s.e. the covariance gives for sigma itself.
        let typical_se = (ses.iter().map(|s| s * s).sum::<f64>() / ses.len() as f64).sqrt();
        assert!((mean - n).abs() < 0.01, "mean {mean}");
        assert!(
            (sd / typical_se - 1.0).abs() < 0.2,
            "spread {sd}, s.e. {typical_se}"
        );
    }

    #[test]
    fn too_few_points_or_flat_data() {
        assert_eq!(fit(&data(1.0, 1.0, 1.0, 1.0, &PS[..3]), 1.0), None);
        assert_eq!(fit(&data(1.0, 1.0, 1.0, 1.0, &PS), 0.0), None);
        assert_eq!(
            fit(&[(2.0, 1.0), (2.0, 2.0), (2.0, 3.0), (2.0, 4.0)], 1.0),
            None
        );
        // Flat: every exponent fits as well; no error can be given.
        let flat: Vec<(f64, f64)> = PS.iter().map(|&p| (p, 7.0)).collect();
        let f = fit(&flat, 7.0).unwrap();
        assert!(f.se.is_none(), "{f:?}");
        assert!(f.b.abs() < 1e-9 && (f.a - 7.0).abs() < 1e-9);
    }

    #[test]
    fn an_exponent_outside_the_range_is_flagged() {
        let f = fit(&data(1.0, 0.01, 1.0, 4.0, &PS), 1.0).unwrap();
        assert!(f.at_bound, "{f:?}");
    }
}
