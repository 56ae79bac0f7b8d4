//! `heat`: Jacobi heat diffusion on a two-dimensional grid, the program of Fibril's paper
//! (its `test/heat.c`, a port of Cilk-5's `heat.cilk` by Volker Strumpen) at its input
//! `nx=4096 ny=1024 nt=100`.
//!
//! # Algorithm
//!
//! The heat equation `u_t = u_xx + u_yy` on `[0, π/2]²` for `t` in `[0, 10⁻⁷]`, discretised on
//! `nx × ny` points (`x` down the rows, `y` along them) and `nt` explicit time steps. The exact
//! solution is `u = e^(−2t)·sin x·sin y`; the initial grid and, at every step, the boundary
//! (rows `0` and `nx − 1`, columns `0` and `ny − 1`) are set from it, the interior points by the
//! five-point stencil
//!
//! ```text
//! out[i][j] = in[i][j] + dt/dy²·(in[i][j+1] − 2·in[i][j] + in[i][j−1])
//!                      + dt/dx²·(in[i+1][j] − 2·in[i][j] + in[i−1][j])
//! ```
//!
//! (Jacobi: step `k` reads the grid of step `k − 1` and writes the other of two grids). As in
//! Fibril's code, a step is a divide and conquer over the rows: the row range is halved, the two
//! halves forked, down to single rows ([`row`], the kernel). The steps run one after the other
//! inside one root task. Work `Θ(nx·ny·nt)`, span `Θ(nt·(log nx + ny))`. At the paper's size
//! the two grids (2 × 32 MiB) exceed a 32 MiB last-level cache, so every step streams both
//! through memory: the speedup is bounded by the memory bandwidth as much as by the runtime.
//! The same constants as Fibril's, and the same arithmetic in the same order; Fibril's runs
//! `nt + 2` steps for an odd `nt`, this one `nt`.
//!
//! # Which program: Fibril's heat, one row a leaf
//!
//! We follow Fibril's `heat.c`, not Cilk-5's `heat.cilk` as distributed. The two differ in the
//! leaf: Fibril's `diffuse` halves the row range while it holds more than one row
//! (`if (iu - il > 1)`), so a leaf is one row; Cilk-5's `divide` halves it while it holds more
//! than `leafmaxcol` rows (its option `-g`, "columns per partition", default 10) and computes a
//! leaf's stripe of rows in a loop. Cilk-5's own preset for the input Fibril runs
//! (`-benchmark long`: `nx=4096 ny=1024 nt=100`) sets `leafmaxcol` to 1, so at the paper's input
//! both programs fork down to single rows. The leaf is not a parameter here: always one row,
//! `nx − 1` joins a step. They also differ in the order of the stencil's three terms (Cilk-5:
//! `dt/dx²·(…) + dt/dy²·(…) + in[i][j]`; Fibril's, above, is ours) and in the time of step `k`
//! (Cilk-5 `tu + k·dt`; Fibril's and ours accumulate `t += dt`), so our arithmetic is Fibril's,
//! not Cilk-5's.
//!
//! # Layout and sharing
//!
//! A grid is a `Vec` of rows, each its own allocation (Fibril's `double **`), each behind an
//! `RwLock`: the async front-end lends a task only what outlives the whole
//! [`AsyncForkJoin::run_async`] scope, so the two grids, which swap the roles of read and
//! written grid at every step, are shared (`&[Row]`) by every task of every step, on both
//! front-ends. A leaf takes the write lock of its output row and the read locks of the three
//! input rows with `try_write` / `try_read`: the algorithm never lets a task write a row that
//! another task uses, so a lock that is not free is reported as a race (a panic). The locks
//! cost nothing measurable: serially at the paper's size, four runs took 0.67–0.77 s with
//! them, 0.72–0.74 s as the same loop over two plain contiguous grids (four uncontended lock
//! pairs per row of 1024 points).
//!
//! # Check
//!
//! Every point is computed by the same arithmetic whatever the schedule, so the final grid must
//! equal, bit for bit, the grid of a serial run (the kernel in a loop over rows, no runtime;
//! computed once by [`Workload::input`], untimed). The check also compares it with the exact
//! solution at `t = 10⁻⁷` by the criteria of Fibril's `verify`: largest absolute error, mean absolute error and
//! largest relative error (over the points whose value is not zero) at most
//! [`Grid::tolerance`]: Fibril's [`TOLERANCE`] `10⁻¹²` plus twice the stencil's discretisation
//! error `T·(dx² + dy²)/12` (relative; `u_xxxx = u_yyyy = u`), which is `2·10⁻¹⁴` on the paper's
//! grid but dominates on the small grids of the tests. A row missed in the last step is off by
//! about `4·10⁻⁹` relative.

use crate::params::check_memory;
use crate::{Checked, Params, Size, Variant, Workload, parfor};
use std::future::Future;
use std::ops::Range;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard, TryLockError};
use stealbench_schedulers::{AsyncForkJoin, AsyncWorker, ForkJoin, Worker};

/// The workload marker type.
#[derive(Debug)]
pub struct Heat;

/// Fibril's tolerance (its `verify`) for each of the three errors against the exact solution (see
/// [`Grid::tolerance`]).
pub const TOLERANCE: f64 = 1e-12;

/// The domain's upper end in `x` and `y`: π/2 (the programs' literal `1.570796326794896558` is
/// this `f64`).
const HALF_PI: f64 = std::f64::consts::FRAC_PI_2;

/// The end of the simulated time interval.
const END_TIME: f64 = 0.0000001;

/// The exact solution, written as Fibril's `solu(x, y, t)`.
fn exact(x: f64, y: f64, t: f64) -> f64 {
    (-2.0 * t).exp() * x.sin() * y.sin()
}

/// The exact solution on the edges `x = π/2` (as a function of `s = y`) and `y = π/2` (of
/// `s = x`), written as Fibril's `randd` and `randb`; the other two edges are 0.
fn edge(s: f64, t: f64) -> f64 {
    (-2.0 * t).exp() * s.sin()
}

/// The discretisation: grid size, steps and the constants derived from them (as Fibril's
/// `init`).
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// Rows (points in `x`).
    pub nx: usize,
    /// Columns (points in `y`).
    pub ny: usize,
    /// Time steps.
    pub nt: usize,
    /// Distance of two rows.
    pub dx: f64,
    /// Distance of two columns.
    pub dy: f64,
    /// The time step.
    pub dt: f64,
    /// `dt / dx²`.
    pub dtdxsq: f64,
    /// `dt / dy²`.
    pub dtdysq: f64,
}

impl Grid {
    /// The discretisation of `nx × ny` points and `nt` steps; `Err` if a value is unusable.
    pub fn new(nx: usize, ny: usize, nt: usize) -> Result<Self, String> {
        if nx < 3 || ny < 3 {
            return Err(format!(
                "heat needs at least 3 × 3 points, not nx={nx} ny={ny}"
            ));
        }
        if nx.checked_mul(ny).is_none_or(|p| p > 1 << 30) {
            return Err(format!("heat needs nx·ny <= 2^30, not {nx}·{ny}"));
        }
        if nt == 0 {
            return Err("heat needs nt >= 1".into());
        }
        let dx = HALF_PI / (nx - 1) as f64;
        let dy = HALF_PI / (ny - 1) as f64;
        let dt = END_TIME / nt as f64;
        // The explicit scheme is stable only for dt/dx² + dt/dy² <= 1/2: beyond it the error
        // grows by a factor at every step (1.1·10²⁶ at nx=10^6 nt=100), and no run can pass
        // the check.
        let courant = dt / (dx * dx) + dt / (dy * dy);
        if courant > 0.5 {
            return Err(format!(
                "nx={nx} ny={ny} nt={nt}: the explicit scheme is unstable (dt/dx² + dt/dy² = \
                 {courant:.3e}, above 1/2): raise nt or lower nx and ny"
            ));
        }
        Ok(Grid {
            nx,
            ny,
            nt,
            dx,
            dy,
            dt,
            dtdxsq: dt / (dx * dx),
            dtdysq: dt / (dy * dy),
        })
    }

    /// The bound of each of the three errors against the exact solution: [`TOLERANCE`] plus
    /// twice the discretisation error of the stencil, `T·(dx² + dy²)/12` relative to `u`
    /// (`|u| <= 1`).
    pub fn tolerance(&self) -> f64 {
        TOLERANCE + END_TIME * (self.dx * self.dx + self.dy * self.dy) / 6.0
    }

    /// The times of the steps `1..=nt`, accumulated as Fibril's `t += dt`.
    pub fn times(&self) -> impl Iterator<Item = f64> + use<> {
        let dt = self.dt;
        (0..self.nt).scan(0.0, move |t, _| {
            *t += dt;
            Some(*t)
        })
    }

    /// Row `i` of the initial grid (Fibril's `heat`).
    pub fn initial_row(&self, i: usize, out: &mut [f64]) {
        let (x, ny) = (i as f64 * self.dx, self.ny);
        if i == 0 || i == self.nx - 1 {
            self.boundary_row(i, 0.0, out);
        } else {
            out[0] = 0.0;
            for (j, o) in out.iter_mut().enumerate().take(ny - 1).skip(1) {
                *o = x.sin() * (j as f64 * self.dy).sin();
            }
            out[ny - 1] = edge(x, 0.0);
        }
    }

    /// Row 0 or `nx − 1` at time `t`: `0`, and `e^(−2t)·sin y`.
    fn boundary_row(&self, i: usize, t: f64, out: &mut [f64]) {
        if i == 0 {
            out.fill(0.0);
        } else {
            for (j, o) in out.iter_mut().enumerate() {
                *o = edge(j as f64 * self.dy, t);
            }
        }
    }
}

/// The kernel: row `i` of step `t`, from rows `i − 1`, `i`, `i + 1` of the previous step
/// (unused for the boundary rows `0` and `nx − 1`, which are set from the exact solution).
pub fn row(g: &Grid, i: usize, t: f64, [up, mid, down]: [&[f64]; 3], out: &mut [f64]) {
    if i == 0 || i == g.nx - 1 {
        g.boundary_row(i, t, out);
        return;
    }
    let (dtdxsq, dtdysq) = (g.dtdxsq, g.dtdysq);
    let last = g.ny - 1;
    out[0] = 0.0;
    let inner = out[1..last].iter_mut().zip(mid.windows(3));
    for ((o, m), (&u, &d)) in inner.zip(up[1..last].iter().zip(&down[1..last])) {
        *o = m[1] + dtdysq * (m[2] - 2.0 * m[1] + m[0]) + dtdxsq * (d - 2.0 * m[1] + u);
    }
    out[last] = edge(i as f64 * g.dx, t);
}

/// The serial elision, without a runtime: `nt` steps of the kernel in a loop over the rows.
/// Returns the final grid, row-major. The reference of the check.
pub fn serial(g: &Grid, initial: &[f64]) -> Vec<f64> {
    let ny = g.ny;
    let mut inp = initial.to_vec();
    let mut out = vec![0.0; initial.len()];
    for t in g.times() {
        for (i, o) in out.chunks_exact_mut(ny).enumerate() {
            let r = |k: usize| &inp[k.clamp(0, g.nx - 1) * ny..][..ny];
            row(g, i, t, [r(i.saturating_sub(1)), r(i), r(i + 1)], o);
        }
        std::mem::swap(&mut inp, &mut out);
    }
    inp
}

/// A row of a grid, shared by the tasks of every step (see the module documentation).
pub type Row = RwLock<Box<[f64]>>;

/// Reads a row that no task writes now (a held write lock is a race).
fn read(r: &Row) -> RwLockReadGuard<'_, Box<[f64]>> {
    match r.try_read() {
        Ok(g) => g,
        Err(TryLockError::WouldBlock) => panic!("heat: a row was read while written (a race)"),
        Err(TryLockError::Poisoned(_)) => panic!("heat: a task panicked while writing a row"),
    }
}

/// Writes a row that no other task uses now (a held lock is a race).
fn write(r: &Row) -> RwLockWriteGuard<'_, Box<[f64]>> {
    match r.try_write() {
        Ok(g) => g,
        Err(TryLockError::WouldBlock) => panic!("heat: a row was written while used (a race)"),
        Err(TryLockError::Poisoned(_)) => panic!("heat: a task panicked while writing a row"),
    }
}

/// The leaf of a step: row `i` of `out` from `inp`, under the rows' locks.
fn leaf(g: &Grid, out: &[Row], inp: &[Row], i: usize, t: f64) {
    let mut o = write(&out[i]);
    if i == 0 || i == g.nx - 1 {
        g.boundary_row(i, t, &mut o);
    } else {
        let (up, mid, down) = (read(&inp[i - 1]), read(&inp[i]), read(&inp[i + 1]));
        row(g, i, t, [&up, &mid, &down], &mut o);
    }
}

/// The grids of the steps: step `k` (from 1) writes grid `k mod 2` and reads the other; the
/// initial grid is grid 0.
fn grids(k: usize, work: &[Vec<Row>; 2]) -> (&[Row], &[Row]) {
    (&work[k % 2], &work[(k + 1) % 2])
}

/// Fork-join: one step over `rows`, halves under `join`, down to single rows (Fibril's
/// `if (iu - il > 1)`).
pub fn fj<W: Worker>(w: &W, g: &Grid, out: &[Row], inp: &[Row], rows: Range<usize>, t: f64) {
    parfor::fj(w, rows, &|_, i| leaf(g, out, inp, i, t));
}

/// Fork-join on the async front-end: one step over `rows`, halves under
/// [`AsyncWorker::join`], down to single rows.
pub fn fj_async<'s, C: AsyncWorker<'s>>(
    c: C,
    g: &'s Grid,
    out: &'s [Row],
    inp: &'s [Row],
    rows: Range<usize>,
    t: f64,
) -> impl Future<Output = ()> + Send + 's {
    parfor::fj_async(c, rows, move |_, i| async move { leaf(g, out, inp, i, t) })
}

/// The input: the discretisation, the initial grid and the serial run's final grid.
#[derive(Debug, Clone)]
pub struct HeatInput {
    /// Grid size, steps and constants.
    pub grid: Grid,
    /// The initial grid, row-major.
    pub initial: Vec<f64>,
    /// The final grid of [`serial`], row-major.
    pub expected: Vec<f64>,
}

impl HeatInput {
    /// The input of `nx × ny` points and `nt` steps, with its serial run; `Err` if a value is
    /// unusable.
    pub fn new(nx: usize, ny: usize, nt: usize) -> Result<Self, String> {
        let grid = Grid::new(nx, ny, nt)?;
        let mut initial = vec![0.0; nx * ny];
        for (i, r) in initial.chunks_exact_mut(ny).enumerate() {
            grid.initial_row(i, r);
        }
        let expected = serial(&grid, &initial);
        Ok(HeatInput {
            grid,
            initial,
            expected,
        })
    }

    /// The grid of the step count's parity: where the answer is.
    fn last(&self) -> usize {
        self.grid.nt % 2
    }
}

/// Compares a final grid (its rows) with the serial run's, bit for bit, then with the exact
/// solution by the three criteria of Fibril's `verify`.
pub fn check_grid(input: &HeatInput, rows: &[&[f64]]) -> Result<Checked, String> {
    let g = &input.grid;
    if rows.len() != g.nx || rows.iter().any(|r| r.len() != g.ny) {
        return Err(format!("the grid is not {} × {}", g.nx, g.ny));
    }
    for (i, (r, want)) in rows
        .iter()
        .zip(input.expected.chunks_exact(g.ny))
        .enumerate()
    {
        if let Some(j) = (0..g.ny).find(|&j| r[j].to_bits() != want[j].to_bits()) {
            return Err(format!(
                "point ({i}, {j}) is {:e}, the serial run has {:e}",
                r[j], want[j]
            ));
        }
    }
    let t = g.times().last().unwrap_or(0.0);
    let (mut max_abs, mut max_rel, mut sum) = (0.0f64, 0.0f64, 0.0);
    for (i, r) in rows.iter().enumerate() {
        let x = i as f64 * g.dx;
        for (j, &v) in r.iter().enumerate() {
            let err = (v - exact(x, j as f64 * g.dy, END_TIME)).abs();
            sum += err;
            max_abs = max_abs.max(err);
            let rel = if v != 0.0 { (err / v).abs() } else { err };
            max_rel = max_rel.max(rel);
            if err.is_nan() {
                return Err(format!("point ({i}, {j}) is {v}"));
            }
        }
    }
    let mean = sum / (g.nx * g.ny) as f64;
    let tolerance = g.tolerance();
    for (what, e) in [
        ("largest absolute", max_abs),
        ("largest relative", max_rel),
        ("mean absolute", mean),
    ] {
        if e > tolerance {
            return Err(format!(
                "{what} error against the exact solution at t = {t:e} is {e:e} > {tolerance:e}"
            ));
        }
    }
    Ok(Checked::new(
        format!(
            "errors against the exact solution at t = {t:e}: largest absolute {max_abs:.3e}, \
             largest relative {max_rel:.3e}, mean absolute {mean:.3e}"
        ),
        format!("the serial run's grid, bit for bit, and {tolerance:.3e} for each error"),
    ))
}

impl Workload for Heat {
    const NAME: &'static str = "heat";
    const DESCRIPTION: &'static str =
        "Jacobi heat diffusion (Fibril's Cilk-5 heat), rows halved per time step down to one";
    const VARIANTS: &'static [Variant] = &[Variant::Fj];
    const ASYNC_VARIANTS: &'static [Variant] = &[Variant::Fj];

    type Input = HeatInput;
    type Work = [Vec<Row>; 2];
    type Answer = ();

    fn preset(size: Size) -> Params {
        let (nx, ny, nt) = match size {
            Size::Paper => (4096, 1024, 100),
            Size::Small => (4096, 1024, 10),
            // The paper's run is short (0.3 s serially here): quick is half of it.
            Size::Quick => (4096, 1024, 50),
            Size::Test => (64, 32, 10),
        };
        Params::new().int("nx", nx).int("ny", ny).int("nt", nt)
    }

    fn input(params: &Params) -> Result<HeatInput, String> {
        let [nx, ny, nt] = ["nx", "ny", "nt"].map(|k| params.get_usize(k));
        let (nx, ny) = (nx?, ny?);
        // Four grids of f64: the initial one, the serial run's and a repetition's two.
        check_memory(
            &format!("nx={nx} ny={ny}"),
            4.0 * 8.0 * nx as f64 * ny as f64,
        )?;
        HeatInput::new(nx, ny, nt?)
    }

    /// Grid 0 is the initial grid; grid 1 is filled with NaN (every page written before the
    /// timed run; a row the run never writes fails the check).
    fn prepare(input: &HeatInput) -> [Vec<Row>; 2] {
        let ny = input.grid.ny;
        let even = input
            .initial
            .chunks_exact(ny)
            .map(|r| RwLock::new(r.into()))
            .collect();
        let odd = (0..input.grid.nx)
            .map(|_| RwLock::new(vec![f64::NAN; ny].into()))
            .collect();
        [even, odd]
    }

    fn run<S: ForkJoin>(pool: &S, variant: Variant, input: &HeatInput, work: &mut [Vec<Row>; 2]) {
        let (g, work) = (&input.grid, &*work);
        match variant {
            Variant::Fj => pool.run(|w| {
                for (k, t) in (1..).zip(g.times()) {
                    let (out, inp) = grids(k, work);
                    fj(w, g, out, inp, 0..g.nx, t);
                }
            }),
            v => panic!("heat has no {v} variant"),
        }
    }

    fn run_async<S: AsyncForkJoin>(
        pool: &S,
        variant: Variant,
        input: &HeatInput,
        work: &mut [Vec<Row>; 2],
    ) {
        let (g, work) = (&input.grid, &*work);
        match variant {
            Variant::Fj => pool.run_async(|c| async move {
                for (k, t) in (1..).zip(g.times()) {
                    let (out, inp) = grids(k, work);
                    c.call(move |c| fj_async(c, g, out, inp, 0..g.nx, t)).await;
                }
            }),
            v => panic!("heat has no async {v} variant"),
        }
    }

    fn kernel(input: &HeatInput, work: &mut [Vec<Row>; 2]) {
        let g = &input.grid;
        for (k, t) in (1..).zip(g.times()) {
            let (out, inp) = grids(k, work);
            for i in 0..g.nx {
                leaf(g, out, inp, i, t);
            }
        }
    }

    fn check(input: &HeatInput, work: &[Vec<Row>; 2], _answer: &()) -> Result<Checked, String> {
        let guards: Vec<_> = work[input.last()]
            .iter()
            .map(|r| r.read().unwrap_or_else(|e| e.into_inner()))
            .collect();
        let rows: Vec<&[f64]> = guards.iter().map(|r| &r[..]).collect();
        check_grid(input, &rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    fn final_grid(input: &HeatInput, work: &[Vec<Row>; 2]) -> Vec<f64> {
        work[input.last()]
            .iter()
            .flat_map(|r| r.read().unwrap().to_vec())
            .collect()
    }

    #[test]
    fn kernel_matches_the_exact_solution() {
        // One step from the exact solution at t = 0 stays within the tolerance of the exact
        // solution at t = dt; the boundary is exact.
        let input = HeatInput::new(64, 48, 1).unwrap();
        let g = &input.grid;
        assert_eq!(g.times().collect::<Vec<_>>(), vec![END_TIME]);
        for i in 0..g.nx {
            let r = |k: usize| &input.initial[k.clamp(0, g.nx - 1) * g.ny..][..g.ny];
            let mut out = vec![f64::NAN; g.ny];
            row(
                g,
                i,
                g.dt,
                [r(i.saturating_sub(1)), r(i), r(i + 1)],
                &mut out,
            );
            for (j, &v) in out.iter().enumerate() {
                let want = exact(i as f64 * g.dx, j as f64 * g.dy, g.dt);
                assert!(
                    (v - want).abs() <= g.tolerance(),
                    "({i}, {j}): {v} vs {want}"
                );
            }
            assert_eq!(out[0], 0.0);
        }
        // The initial grid is the exact solution at t = 0.
        for (k, &v) in input.initial.iter().enumerate() {
            let (i, j) = (k / g.ny, k % g.ny);
            assert!((v - exact(i as f64 * g.dx, j as f64 * g.dy, 0.0)).abs() < 1e-15);
        }
        check_grid(
            &input,
            &input.expected.chunks_exact(g.ny).collect::<Vec<_>>(),
        )
        .unwrap();
    }

    #[test]
    fn every_variant_checks_on_serial() {
        let pool = testing::serial();
        // An odd and an even number of steps end in different grids.
        for nt in [7, 10] {
            let input = HeatInput::new(40, 24, nt).unwrap();
            testing::check_every_variant::<Heat>(&pool, &pool, &input, |what, work, _| {
                assert_eq!(final_grid(&input, work), input.expected, "{what} nt={nt}");
            });
        }
    }

    #[test]
    fn test_preset() {
        assert_eq!(Heat::preset(Size::Test).to_string(), "nx=64 ny=32 nt=10");
    }

    #[test]
    fn check_rejects_wrong_answers() {
        let input = Heat::input_at(Size::Test);
        let (nx, ny) = (input.grid.nx, input.grid.ny);
        let good: Vec<&[f64]> = input.expected.chunks_exact(ny).collect();
        let checked = check_grid(&input, &good).unwrap();
        assert!(
            checked
                .answer
                .starts_with("errors against the exact solution at t = "),
            "{checked}"
        );
        assert!(checked.against.contains("bit for bit"), "{checked}");
        let with = |i: usize, j: usize, f: &dyn Fn(f64) -> f64| {
            let mut m = input.expected.clone();
            m[i * ny + j] = f(m[i * ny + j]);
            check_grid(&input, &m.chunks_exact(ny).collect::<Vec<_>>())
        };
        // The last bit of one point.
        let err = with(5, 7, &|x| f64::from_bits(x.to_bits() ^ 1)).unwrap_err();
        assert!(err.contains("point (5, 7)"), "{err}");
        assert!(with(nx - 1, ny - 1, &|_| f64::NAN).is_err());
        // A row left at the previous step's values: those of the serial run one step shorter.
        let mut shorter = input.grid.clone();
        shorter.nt -= 1;
        let earlier = serial(&shorter, &input.initial);
        let mut m = input.expected.clone();
        m[3 * ny..4 * ny].copy_from_slice(&earlier[3 * ny..4 * ny]);
        assert!(check_grid(&input, &m.chunks_exact(ny).collect::<Vec<_>>()).is_err());
        // The exact-solution criteria alone reject a run with a wrong constant.
        let mut skewed = input.clone();
        skewed.grid.dtdxsq *= 1.5;
        skewed.expected = serial(&skewed.grid, &input.initial);
        let err = check_grid(
            &skewed,
            &skewed.expected.chunks_exact(ny).collect::<Vec<_>>(),
        );
        assert!(err.unwrap_err().contains("exact solution"));
        // A grid of the wrong shape, and an untouched work.
        assert!(check_grid(&input, &good[1..]).is_err());
        assert!(Heat::check(&input, &Heat::prepare(&input), &()).is_err());
    }

    #[test]
    fn constants_are_cilks() {
        assert_eq!("1.570796326794896558".parse::<f64>(), Ok(HALF_PI));
        let g = Grid::new(4096, 1024, 100).unwrap();
        assert_eq!(g.dt, 0.0000001 / 100.0);
        assert_eq!(g.times().count(), 100);
    }

    #[test]
    fn rejects_unusable_sizes() {
        assert!(Grid::new(2, 10, 1).unwrap_err().contains("3 × 3"));
        assert!(Grid::new(10, 10, 0).is_err());
        assert!(Grid::new(1 << 20, 1 << 20, 1).is_err());
        let mut p = Heat::preset(Size::Test);
        p.set("nx", "2").unwrap();
        assert!(Heat::input(&p).unwrap_err().contains("nx=2"));
        // An unstable scheme cannot pass its check: refused, not run.
        let e = Grid::new(1_000_000, 1024, 100).unwrap_err();
        assert!(
            e.starts_with("nx=1000000 ny=1024 nt=100: the explicit scheme is unstable"),
            "{e}"
        );
        let e = Grid::new(10_000, 10_000, 1).unwrap_err();
        assert!(e.contains("above 1/2"), "{e}");
        // Every preset is stable.
        for size in [Size::Paper, Size::Small, Size::Quick, Size::Test] {
            let p = Heat::preset(size);
            let [nx, ny, nt] = ["nx", "ny", "nt"].map(|k| p.get_usize(k).unwrap());
            Grid::new(nx, ny, nt).unwrap();
        }
    }
}
