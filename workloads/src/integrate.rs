//! `integrate`: adaptive trapezoid quadrature of `f(x) = (x² + 1)·x` over `[0, n]`, the
//! Cilk-5 example Fibril and libfork benchmark (Fibril Table 1, libfork Table I:
//! `n = 10^4`, `eps = 10^-9`).
//!
//! # Algorithm
//!
//! An [`Interval`] `[x1, x2]` carries `f` at its ends and the trapezoid estimate `area` of its
//! parent's split. [`split`] halves it at `x0` and computes the two halves' trapezoids; if
//! their sum differs from `area` by less than `eps` (Cilk's two-sided test), that sum is the
//! interval's integral, otherwise each half is integrated recursively and the two results
//! added (left + right). The root is `[0, n]` with `area = 0`, so it always splits.
//!
//! The parallel variants fork the left half and call the right one (Cilk's spawn and call),
//! as `join(left, right)`. An interval narrower than `grain` (a parameter, 0 in every preset:
//! Cilk-5, Fibril and libfork fork at every split) is integrated serially ([`serial`]).
//!
//! # Work per task
//!
//! A split is one evaluation of `f` and about ten floating-point operations, and a split costs
//! more at larger `n` (1.75·10^8 leaves at the paper's `n = 10^4`): near `x = 10^4` the test
//! compares estimates that differ in their last bits only, so its branch is unpredictable. A
//! join (one per split that is not a leaf) does two splits' work, about what a join or a fork
//! costs. With `grain = 0` this workload measures the fork overhead (T_1/T_s is bounded below
//! by about `(join's work + fork) / join's work`); `grain` shows what coarsening buys. The
//! times per split and per runtime: `paper-figures/measurements.md`.
//!
//! # Check
//!
//! Every split performs the same floating-point operations in the same order whoever runs
//! it, and the results are added in the same tree, so the answer must equal the serial
//! recursion's bit for bit ([`Reference`], computed with the input, untimed).
//!
//! It must also be within [`tolerance`] of the analytic integral `n⁴/4 + n²/2`. For a cubic
//! `f` the trapezoid rule's error on a width `h` is exactly `h³·f''(m)/12` (`m` the middle),
//! so the two halves' error is a quarter of the whole's and a third of their difference: an
//! accepted interval is off by less than `eps/3`, and the sum of `L` accepted intervals by
//! less than `L·eps/3`. Each addition of the tree rounds by at most half a unit in the last
//! place of its sum, and each leaf's estimate by a few of its own: `tolerance` allows
//! `L·eps/3 + 2^-40·|I|`, 2^12 units in the last place of `I`, far more than the recursion's
//! depth (at most [`MAX_DEPTH`], 64) of levels need. An input whose recursion would go deeper
//! is refused by [`Reference::of`]: its intervals would be too narrow for the floats to halve.

use crate::{Checked, Params, Size, Variant, Workload};
use std::future::Future;
use stealbench_schedulers::{AsyncForkJoin, AsyncWorker, ForkJoin, Worker};

/// The workload marker type.
#[derive(Debug)]
pub struct Integrate;

/// The integrand (Cilk's `f`).
#[inline]
pub fn f(x: f64) -> f64 {
    (x * x + 1.0) * x
}

/// The exact integral of [`f`] over `[0, n]`: `n⁴/4 + n²/2`.
pub fn exact(n: f64) -> f64 {
    n.powi(4) / 4.0 + n * n / 2.0
}

/// An interval to integrate, with `f` at its ends and its trapezoid estimate from the parent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Left end.
    pub x1: f64,
    /// `f(x1)`.
    pub y1: f64,
    /// Right end.
    pub x2: f64,
    /// `f(x2)`.
    pub y2: f64,
    /// The parent's estimate of this interval's integral.
    pub area: f64,
}

impl Interval {
    /// The root: `[0, n]`, with estimate 0 (Cilk's first call).
    pub fn root(n: f64) -> Self {
        Interval {
            x1: 0.0,
            y1: f(0.0),
            x2: n,
            y2: f(n),
            area: 0.0,
        }
    }
}

/// The step of the recursion, written once: `Ok(integral)` when the two halves' trapezoids
/// agree with `area` to within `eps`, otherwise the two halves with their estimates.
#[inline]
pub fn split(iv: &Interval, eps: f64) -> Result<f64, [Interval; 2]> {
    let Interval {
        x1,
        y1,
        x2,
        y2,
        area,
    } = *iv;
    let half = (x2 - x1) / 2.0;
    let x0 = x1 + half;
    let y0 = f(x0);
    let left = (y1 + y0) / 2.0 * half;
    let right = (y0 + y2) / 2.0 * half;
    let both = left + right;
    if both - area < eps && area - both < eps {
        return Ok(both);
    }
    Err([
        Interval {
            x1,
            y1,
            x2: x0,
            y2: y0,
            area: left,
        },
        Interval {
            x1: x0,
            y1: y0,
            x2,
            y2,
            area: right,
        },
    ])
}

/// The kernel: the integral of `iv` by the serial recursion (Cilk's `integrate_serial`).
pub fn serial(iv: &Interval, eps: f64) -> f64 {
    serial_at(iv.x1, iv.y1, iv.x2, iv.y2, iv.area, eps)
}

/// [`serial`] on the interval's fields, as Cilk passes them. The recursions pass five `f64`s
/// (in registers) rather than a reference to an `Interval` the caller has just stored: the
/// caller's stores of a child's fields and the callee's wider (paired) loads of them defeat
/// store-to-load forwarding, which made the recursion three times slower when measured.
fn serial_at(x1: f64, y1: f64, x2: f64, y2: f64, area: f64, eps: f64) -> f64 {
    let iv = Interval {
        x1,
        y1,
        x2,
        y2,
        area,
    };
    match split(&iv, eps) {
        Ok(area) => area,
        Err([l, r]) => {
            serial_at(l.x1, l.y1, l.x2, l.y2, l.area, eps)
                + serial_at(r.x1, r.y1, r.x2, r.y2, r.area, eps)
        }
    }
}

/// The deepest recursion an input may need. An interval at this depth is `n·2^-64` wide,
/// narrower than a unit in the last place of every `x` above `n·2^-12`: a recursion that goes
/// deeper is splitting intervals the floats cannot halve, where the two halves' estimates
/// differ by their rounding alone. That difference need never fall under `eps` (with `eps`
/// below the rounding of `f(x)·h`, as at `n = 50000` with `eps = 10^-9` or at any `n` with
/// `eps = 10^-300`): an interval whose midpoint rounds to an end splits into itself, and the
/// recursion never ends. The inputs of every preset stay under 40 (32 at the paper's
/// `n = 10^4`).
pub const MAX_DEPTH: u32 = 64;

/// What [`counting`] gives: the integral and the number of leaves, if deep enough.
type Counted = Option<(f64, u64)>;

/// [`serial`] that also counts the accepted intervals (leaves), which [`tolerance`] needs: the
/// same additions in the same order, so the same result bit for bit, in one pass. `None`
/// when the recursion goes deeper than `depth` more levels ([`MAX_DEPTH`]).
fn counting(x1: f64, y1: f64, x2: f64, y2: f64, area: f64, eps: f64, depth: u32) -> Counted {
    let iv = Interval {
        x1,
        y1,
        x2,
        y2,
        area,
    };
    match split(&iv, eps) {
        Ok(area) => Some((area, 1)),
        Err(_) if depth == 0 => None,
        Err([l, r]) => {
            // The right half first: f grows with x, so an input too fine for the floats
            // reaches the depth limit soonest on the right, and is refused before the whole
            // left half is walked. The sum is `a + b` whichever half is computed first.
            let (b, n) = counting(r.x1, r.y1, r.x2, r.y2, r.area, eps, depth - 1)?;
            let (a, m) = counting(l.x1, l.y1, l.x2, l.y2, l.area, eps, depth - 1)?;
            Some((a + b, m + n))
        }
    }
}

/// The allowed distance from the exact integral `exact` of a recursion with `leaves` accepted
/// intervals: `leaves·eps/3 + 2^-40·|exact|` (see the module documentation).
pub fn tolerance(exact: f64, leaves: u64, eps: f64) -> f64 {
    leaves as f64 * eps / 3.0 + exact.abs() * (-40f64).exp2()
}

/// Fork-join: the left half forked, the right half called, below `grain` serial.
pub fn fj<W: Worker>(w: &W, iv: &Interval, eps: f64, grain: f64) -> f64 {
    fj_at(w, iv.x1, iv.y1, iv.x2, iv.y2, iv.area, eps, grain)
}

/// [`fj`] on the interval's fields (see [`serial_at`]).
#[allow(clippy::too_many_arguments)]
fn fj_at<W: Worker>(
    w: &W,
    x1: f64,
    y1: f64,
    x2: f64,
    y2: f64,
    area: f64,
    eps: f64,
    grain: f64,
) -> f64 {
    if x2 - x1 < grain {
        return serial_at(x1, y1, x2, y2, area, eps);
    }
    let iv = Interval {
        x1,
        y1,
        x2,
        y2,
        area,
    };
    match split(&iv, eps) {
        Ok(area) => area,
        Err([l, r]) => {
            let (a, b) = w.join(
                move |w| fj_at(w, l.x1, l.y1, l.x2, l.y2, l.area, eps, grain),
                move |w| fj_at(w, r.x1, r.y1, r.x2, r.y2, r.area, eps, grain),
            );
            a + b
        }
    }
}

/// Fork-join on the async front-end: as [`fj`], under [`AsyncWorker::join`].
pub fn fj_async<'s, C: AsyncWorker<'s>>(
    c: C,
    iv: Interval,
    eps: f64,
    grain: f64,
) -> impl Future<Output = f64> + Send + 's {
    async move {
        if iv.x2 - iv.x1 < grain {
            return serial(&iv, eps);
        }
        match split(&iv, eps) {
            Ok(area) => area,
            Err([l, r]) => {
                let (a, b) = c
                    .join(
                        move |c| fj_async(c, l, eps, grain),
                        move |c| fj_async(c, r, eps, grain),
                    )
                    .await;
                a + b
            }
        }
    }
}

/// The reference of an input: the serial recursion's result and its number of leaves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reference {
    /// [`serial`] of the root.
    pub area: f64,
    /// The number of accepted intervals of the recursion.
    pub leaves: u64,
}

impl Reference {
    /// The reference of `[0, n]` at `eps` (one serial recursion; untimed). `Err` when the
    /// recursion would go deeper than [`MAX_DEPTH`]: every run of the input splits the same
    /// intervals, so the runs would too, and overflow their stacks or never end.
    pub fn of(n: f64, eps: f64) -> Result<Self, String> {
        let root = Interval::root(n);
        let (area, leaves) = counting(
            root.x1, root.y1, root.x2, root.y2, root.area, eps, MAX_DEPTH,
        )
        .ok_or_else(|| {
            format!(
                "n={n} eps={eps:e}: the recursion would go deeper than {MAX_DEPTH} levels (eps \
                 is below the rounding of f near n, where an interval too narrow to halve \
                 splits into itself): raise eps or lower n"
            )
        })?;
        Ok(Reference { area, leaves })
    }
}

/// Checks `answer`: bit for bit the serial recursion's, and within [`tolerance`] of the exact
/// integral.
pub fn check_area(n: f64, eps: f64, reference: &Reference, answer: f64) -> Result<Checked, String> {
    if answer.to_bits() != reference.area.to_bits() {
        return Err(format!(
            "integral {answer:e} differs from the serial recursion's {:e} (bits {:#x} vs {:#x})",
            reference.area,
            answer.to_bits(),
            reference.area.to_bits()
        ));
    }
    let want = exact(n);
    let tol = tolerance(want, reference.leaves, eps);
    let error = (answer - want).abs();
    if error > tol {
        return Err(format!(
            "integral {answer:e} is {error:e} from the exact {want:e} (tolerance {tol:e})"
        ));
    }
    Ok(Checked::new(
        format!("integral over [0, {n}] = {answer:e}, {error:.3e} from the exact {want:e}"),
        format!(
            "the serial recursion's, bit for bit, and the exact value within {tol:.3e} ({} \
             leaves)",
            reference.leaves
        ),
    ))
}

/// The input: the interval's end, the tolerance, the grain, and the reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IntegrateInput {
    /// The integral is over `[0, n]`.
    pub n: f64,
    /// Cilk's `epsilon`.
    pub eps: f64,
    /// Intervals narrower than this are integrated serially (0: never).
    pub grain: f64,
    /// The serial recursion's result and leaf count.
    pub reference: Reference,
}

/// The root and the parameters of a run, hidden from the optimiser: the computation is a pure
/// function of them, so without this the compiler may compute it once for the warm-up and
/// every timed repetition (the `serial` runtime's run was measured at 0 s).
fn opaque(input: &IntegrateInput) -> (Interval, f64, f64) {
    std::hint::black_box((Interval::root(input.n), input.eps, input.grain))
}

impl Workload for Integrate {
    const NAME: &'static str = "integrate";
    const DESCRIPTION: &'static str =
        "Cilk-5 adaptive quadrature of (x²+1)x, a fork per split (spawn overhead)";
    const VARIANTS: &'static [Variant] = &[Variant::Fj];
    const ASYNC_VARIANTS: &'static [Variant] = &[Variant::Fj];

    type Input = IntegrateInput;
    type Work = ();
    type Answer = f64;

    fn preset(size: Size) -> Params {
        // The leaves grow as n^(4/3) (the accepted width goes as f''(x)^(-1/3) = (6x)^(-1/3))
        // and a split costs more at larger n (see the module documentation): measured
        // serially, n=4000 takes a ninth of the paper's time (0.25 s against 2.2 s), n=2500
        // 0.12 s, n=1500 half that. Quick is n=1500: tokio pays about 100 times the serial
        // time here (a task per split), and the memory figures run it at six worker counts.
        let n = match size {
            Size::Paper => 10_000,
            Size::Small => 4_000,
            Size::Quick => 1_500,
            Size::Test => 20,
        };
        Params::new()
            .int("n", n)
            .float("eps", 1e-9)
            .float("grain", 0.0)
    }

    fn input(params: &Params) -> Result<IntegrateInput, String> {
        let n = params.get_int("n") as f64;
        let eps = params.get_float("eps");
        let grain = params.get_float("grain");
        if eps <= 0.0 {
            return Err(format!("eps={eps:?}: must be positive"));
        }
        if grain < 0.0 {
            return Err(format!("grain={grain:?}: must be at least 0"));
        }
        Ok(IntegrateInput {
            n,
            eps,
            grain,
            reference: Reference::of(n, eps)?,
        })
    }

    fn prepare(_input: &IntegrateInput) {}

    fn run<S: ForkJoin>(pool: &S, variant: Variant, input: &IntegrateInput, _work: &mut ()) -> f64 {
        let (root, eps, grain) = opaque(input);
        match variant {
            Variant::Fj => pool.run(|w| fj(w, &root, eps, grain)),
            v => panic!("integrate has no {v} variant"),
        }
    }

    fn run_async<S: AsyncForkJoin>(
        pool: &S,
        variant: Variant,
        input: &IntegrateInput,
        _work: &mut (),
    ) -> f64 {
        let (root, eps, grain) = opaque(input);
        match variant {
            Variant::Fj => pool.run_async(|c| fj_async(c, root, eps, grain)),
            v => panic!("integrate has no async {v} variant"),
        }
    }

    fn kernel(input: &IntegrateInput, _work: &mut ()) -> f64 {
        let (root, eps, _) = opaque(input);
        serial(&root, eps)
    }

    fn check(input: &IntegrateInput, _work: &(), answer: &f64) -> Result<Checked, String> {
        check_area(input.n, input.eps, &input.reference, *answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    #[test]
    fn kernel_is_close_to_the_exact_integral() {
        for (n, eps) in [(1.0, 1e-9), (10.0, 1e-6), (100.0, 1e-3)] {
            let r = Reference::of(n, eps).unwrap();
            assert_eq!(r.area.to_bits(), serial(&Interval::root(n), eps).to_bits());
            let err = (r.area - exact(n)).abs();
            assert!(err <= tolerance(exact(n), r.leaves, eps), "n={n}: {err:e}");
            assert!(r.leaves > 1);
        }
        // A trapezoid is exact for a linear integrand: f's error comes from its cubic term.
        assert_eq!(exact(2.0), 6.0);
    }

    #[test]
    fn variants_on_serial_and_two_workers() {
        let pools = testing::Pools::start();
        let (n, eps) = (50.0, 1e-4);
        let reference = Reference::of(n, eps).unwrap();
        for grain in [0.0, 0.5, 100.0] {
            // The check is the serial recursion's area, to the bit.
            let input = IntegrateInput {
                n,
                eps,
                grain,
                reference,
            };
            pools.check_every_variant::<Integrate>(&input, |_, _, _| {});
        }
    }

    #[test]
    fn presets_and_workload_runs() {
        assert_eq!(
            Integrate::preset(Size::Paper).to_string(),
            "n=10000 eps=1e-9 grain=0.0"
        );
        let input = Integrate::input_at(Size::Test);
        let pool = testing::serial();
        testing::check_every_variant::<Integrate>(&pool, &pool, &input, |what, _, &a| {
            assert!(
                Integrate::check(&input, &(), &(a * (1.0 + 1e-15))).is_err(),
                "{what}"
            );
        });
        let mut p = Integrate::preset(Size::Test);
        p.set("eps", "0").unwrap();
        assert!(Integrate::input(&p).unwrap_err().starts_with("eps="));
        let mut p = Integrate::preset(Size::Test);
        p.set("grain", "-1").unwrap();
        assert!(Integrate::input(&p).unwrap_err().starts_with("grain="));
        // eps below the rounding of f: the recursion would never end (it overflowed the
        // stack); refused by the reference, in one line, before any run.
        for (n, eps) in [("20", "1e-300"), ("5", "1e-30")] {
            let mut p = Integrate::preset(Size::Test);
            p.set("n", n).unwrap();
            p.set("eps", eps).unwrap();
            let e = Integrate::input(&p).unwrap_err();
            assert!(e.contains("deeper than 64 levels"), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn check_rejects_wrong_answers() {
        let (n, eps) = (20.0, 1e-6);
        let r = Reference::of(n, eps).unwrap();
        let checked = check_area(n, eps, &r, r.area).unwrap();
        assert!(
            checked.answer.starts_with("integral over [0, 20] = 4.02"),
            "{checked}"
        );
        assert!(checked.against.contains("bit for bit"), "{checked}");
        // One ulp off the serial recursion.
        let next = f64::from_bits(r.area.to_bits() + 1);
        assert!(check_area(n, eps, &r, next).unwrap_err().contains("serial"));
        // A reference far from the exact integral (a broken kernel) fails the second test.
        let bad = Reference {
            area: r.area * 1.001,
            leaves: r.leaves,
        };
        assert!(
            check_area(n, eps, &bad, bad.area)
                .unwrap_err()
                .contains("exact")
        );
    }
}
