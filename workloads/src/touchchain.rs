//! `touchchain`: the lower-bound graph of Spoonhower et al. (SPAA'09), Figure 5(a), built as a
//! program: one future, one steal and one touch that cost a parsimonious work stealer Ω(d)
//! deviations on a graph of span d.
//!
//! # The program
//!
//! ```text
//! x = future(spin(spin_us); 1)          the producer: a long strand, run first by its creator
//! chain(d, x)                           the consumer: the creator's continuation
//! chain(0, x) = touch(x)
//! chain(i, x) = join(chain(i − 1, x), 1)  +
//! ```
//!
//! On two workers, p runs the future's task (work-first) and q steals the continuation, the
//! only work there is: the steal. q goes down the `d` joins, each leaving its right child `Bi`
//! on q's deque, and touches `x` long before p has put it (the spin is far longer than the
//! descent).
//!
//! * A parsimonious scheduler (`abp`, Spoonhower's ws) suspends only the touch: q pops
//!   `Bd, ..., B1` from its own deque, each a deviation (its predecessor in the one-worker
//!   order, the end of `Ai`, has not run). When p puts `x`, p runs the touch's continuation
//!   and every join's continuation after it, each a deviation too (its `Bi` ran on q):
//!   `2 + 2d` deviations in all, growing with the span.
//! * ProWS (`prows`) suspends q's whole deque with the touch; p resumes it after the put and
//!   takes every `Bi` back in serial order: a constant number of deviations, whatever `d`.
//!
//! Nothing forces this schedule: it is what the program does on two workers when the spin
//! outlasts the descent (`spin_us` is a parameter; the default, 10 ms, outlasts d = 4096 joins
//! many times over). The figure `spoonhower-fig5` runs it for d = 2^4 ... 2^12 on the real
//! runtimes and replays its recorded DAG in the simulator.
//!
//! # Check
//!
//! The answer is `1 + d` (the future's 1 and one per join).

use crate::{Checked, Params, Size, Variant, Workload};
use std::time::{Duration, Instant};
use stealbench_schedulers::{AsyncForkJoin, ForkJoin, FutureForkJoin, FutureHandle, Futures};

/// The workload marker type.
#[derive(Debug)]
pub struct Touchchain;

/// The input: the span of the chain and the producer's spin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainInput {
    /// Nested joins between the continuation and the touch.
    pub d: u32,
    /// How long the future's task spins.
    pub spin: Duration,
}

/// Busy-waits for `d`: a strand of known length that keeps its worker (a sleep would let the
/// OS run the other worker on this core, and is not work).
pub fn spin(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// The one variant (`sf`): a future, then `d` nested joins around its touch.
pub fn sf<W: Futures>(w: &W, input: &ChainInput) -> u64 {
    fn chain<W: Futures, H: FutureHandle<u64, Worker = W>>(w: &W, i: u32, x: H) -> u64 {
        if i == 0 {
            return x.get(w);
        }
        let (a, b) = w.join(move |w| chain(w, i - 1, x), |_| 1);
        a + b
    }
    let spin_for = input.spin;
    w.scope(|s, w| {
        let x = w.future(s, move |_, _| {
            spin(spin_for);
            1
        });
        chain(w, input.d, x)
    })
}

/// The kernel: the serial elision of [`sf`] (the future a call, each join two calls), no
/// runtime.
pub fn serial(input: &ChainInput) -> u64 {
    fn chain(i: u32, x: u64) -> u64 {
        if i == 0 {
            return x;
        }
        chain(i - 1, x) + 1
    }
    spin(input.spin);
    chain(input.d, 1)
}

impl Workload for Touchchain {
    const NAME: &'static str = "touchchain";
    const DESCRIPTION: &'static str =
        "Spoonhower et al. Figure 5(a): one future, one steal, one touch under d nested joins";
    const VARIANTS: &'static [Variant] = &[Variant::Sf];
    const ASYNC_VARIANTS: &'static [Variant] = &[];

    type Input = ChainInput;
    type Work = ();
    type Answer = u64;

    fn preset(size: Size) -> Params {
        let d = match size {
            Size::Paper | Size::Small => 4096,
            Size::Quick => 1024,
            Size::Test => 16,
        };
        let spin_us = match size {
            Size::Test => 2_000,
            _ => 10_000,
        };
        Params::new().int("d", d).int("spin_us", spin_us)
    }

    fn input(params: &Params) -> Result<ChainInput, String> {
        let d = params.get_int("d");
        let d = u32::try_from(d)
            .ok()
            .filter(|&d| d <= MAX_D)
            .ok_or_else(|| {
                format!("d={d}: at most {MAX_D} nested joins (each is a stack frame)")
            })?;
        Ok(ChainInput {
            d,
            spin: Duration::from_micros(params.get_int("spin_us")),
        })
    }

    fn prepare(_input: &ChainInput) {}

    fn run<S: ForkJoin>(_pool: &S, variant: Variant, _input: &ChainInput, _work: &mut ()) -> u64 {
        crate::not_without_futures::<Self>(variant)
    }

    fn run_futures<S: FutureForkJoin>(
        pool: &S,
        variant: Variant,
        input: &ChainInput,
        _work: &mut (),
    ) -> u64 {
        match variant {
            Variant::Sf => pool.run(|w| sf(w, input)),
            v => panic!("touchchain has no {v} variant"),
        }
    }

    fn run_async<S: AsyncForkJoin>(_: &S, v: Variant, _: &ChainInput, _: &mut ()) -> u64 {
        panic!("touchchain has no async {v} variant")
    }

    fn kernel(input: &ChainInput, _work: &mut ()) -> u64 {
        serial(input)
    }

    fn check(input: &ChainInput, _work: &(), answer: &u64) -> Result<Checked, String> {
        let want = 1 + u64::from(input.d);
        if *answer == want {
            Ok(Checked::new(
                format!("sum {answer} over {} joins and the future", input.d),
                "1 + d",
            ))
        } else {
            Err(format!(
                "touchchain(d={}) = {answer}, expected {want}",
                input.d
            ))
        }
    }
}

/// The deepest chain: 2^16 joins, a few MiB of stack on the serial elision's thread.
pub const MAX_D: u32 = 1 << 16;

#[cfg(test)]
mod tests {
    use super::*;
    use stealbench_schedulers::abp::Abp;
    use stealbench_schedulers::prows::Prows;
    use stealbench_schedulers::{PoolConfig, Scheduler, Stats, serial::Serial};

    #[test]
    fn serial_answer_and_check() {
        let pool = Serial::start(&PoolConfig::with_workers(1)).unwrap();
        let i = Touchchain::input_at(Size::Test);
        let a = Touchchain::run_futures(&pool, Variant::Sf, &i, &mut ());
        assert_eq!(a, 17);
        assert_eq!(
            Touchchain::check(&i, &(), &a).unwrap().to_string(),
            "sum 17 over 16 joins and the future; checked against 1 + d"
        );
        assert!(Touchchain::check(&i, &(), &16).is_err());
        let too_deep = Touchchain::preset(Size::Test)
            .apply(&[("d".into(), "2^17".into())])
            .unwrap();
        assert!(
            Touchchain::input(&too_deep)
                .unwrap_err()
                .contains("d=131072")
        );
    }

    fn deviations<S: FutureForkJoin>(d: u32, spin: Duration) -> (u64, u64) {
        let pool = S::start(&PoolConfig::with_workers(2)).unwrap();
        pool.reset_stats();
        let a = Touchchain::run_futures(&pool, Variant::Sf, &ChainInput { d, spin }, &mut ());
        assert_eq!(a, 1 + u64::from(d));
        let st: Stats = pool.stats();
        (st.steals.unwrap(), st.extra("deviations").unwrap())
    }

    /// On two workers the schedule of the module docs happens by itself once the idle worker
    /// steals the continuation while the producer spins: abp then deviates at least twice per
    /// join; prows's deviations stay within twice its steals (plus the steal of the
    /// continuation and the touch). On a loaded machine the idle worker may get no CPU within
    /// the spin, so the spin grows (5 ms to 0.3 s) until abp's continuation is stolen.
    #[test]
    fn parsimonious_deviations_grow_with_d_and_proactive_ones_follow_steals() {
        let d = 64;
        let spins = [5, 20, 80, 320].map(Duration::from_millis);
        let (spin, (abp_steals, abp)) = spins
            .iter()
            .map(|&spin| (spin, deviations::<Abp>(d, spin)))
            .find(|(_, (steals, _))| *steals >= 1)
            .expect("abp's continuation is stolen within a spin of 0.3 s");
        eprintln!("abp: {abp_steals} steals, {abp} deviations (spin {spin:?})");
        assert!(
            abp >= 2 + 2 * u64::from(d),
            "abp: {abp} deviations at d={d}"
        );
        let (prows_steals, prows) = deviations::<Prows>(d, spin);
        eprintln!("prows: {prows_steals} steals, {prows} deviations");
        assert!(
            prows <= 2 * prows_steals + 2,
            "prows: {prows} deviations, {prows_steals} steals"
        );
    }
}
