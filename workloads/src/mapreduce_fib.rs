//! `mapreduce-fib`: the MapReduce-Fib benchmark of the Rayon-LH thesis. Each of `items` items
//! first waits a latency of `latency_ms` milliseconds (a stand-in for fetching it over the
//! network), then computes `fib(n)`, in parallel above `cutoff` and serially below; the reduce
//! sums `fib(n) + i` over the items `i` (the wait yields the item's index, so the value of
//! every wait reaches the sum). The map spreads the items over the workers by a join tree.
//!
//! Two programs, as the thesis compares them:
//! * `fj` (*classic*): the wait is `thread::sleep` in the item's task: it blocks its worker.
//! * `sf` (*latency-hiding*): the wait is a latency future
//!   ([`Futures::latency_future`]) of a tokio
//!   timer of `latency_ms` ([`sleep`]: at 0 ms it is ready at its first poll, so the latency
//!   future costs its creation only), touched at once. On the fiber runtimes (`prows`, `abp`) the touch
//!   suspends (the deque or the fiber) and the worker computes other items while the pool's
//!   I/O thread waits; the runtimes that cannot hide latency (`serial`, `rayon`) block on it,
//!   which is the classic program again. On the async front-end, `tokio` awaits the timer
//!   natively (its task is suspended), `serial/front=async` and `libfork` block.
//!
//! Latency is not CPU: with latency hiding, P workers finish in about
//! `latency + items·T(fib(n)) / P`, classic ones in about `items·(latency + T(fib(n))) / P`,
//! and classic gains from more threads than cores (sleeping threads use none).

use crate::{Checked, Params, Size, Variant, Workload, fib};
use std::future::Future;
use std::time::Duration;
use stealbench_schedulers::io::sleep;
use stealbench_schedulers::{
    AsyncForkJoin, AsyncWorker, ForkJoin, FutureForkJoin, FutureHandle, Futures, Worker,
};

/// The workload marker type.
#[derive(Debug)]
pub struct MapReduceFib;

/// The input: the parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Input {
    /// Items to map.
    pub items: u64,
    /// Each item's wait.
    pub latency: Duration,
    /// Each item computes fib(n)...
    pub n: u64,
    /// ... in parallel above this n, serially at or below it.
    pub cutoff: u64,
}

/// The known answer: `sum over i < items of fib(n) + i`.
pub fn expected(input: &Input) -> u64 {
    input.items * fib::expected(input.n) + input.items * input.items.saturating_sub(1) / 2
}

/// fib(n), forking above `cutoff`.
pub fn pfib<W: Worker>(w: &W, n: u64, cutoff: u64) -> u64 {
    if n <= cutoff || n < 2 {
        return fib::serial(n);
    }
    let (a, b) = w.join(|w| pfib(w, n - 1, cutoff), |w| pfib(w, n - 2, cutoff));
    a + b
}

/// fib(n) on the async front-end, forking above `cutoff`.
pub fn pfib_async<'s, C: AsyncWorker<'s>>(
    c: C,
    n: u64,
    cutoff: u64,
) -> impl Future<Output = u64> + Send + 's {
    async move {
        if n <= cutoff || n < 2 {
            return fib::serial(n);
        }
        let (a, b) = c
            .join(
                move |c| pfib_async(c, n - 1, cutoff),
                move |c| pfib_async(c, n - 2, cutoff),
            )
            .await;
        a + b
    }
}

/// The map and reduce of items `lo..hi`; `wait(w, x, i)` waits for item `i`'s latency and
/// returns `i` ([`blocking_wait`] or [`latency_wait`]).
pub fn map<W: Worker, F>(w: &W, x: &Input, lo: u64, hi: u64, wait: &F) -> u64
where
    F: Fn(&W, &Input, u64) -> u64 + Sync,
{
    if hi - lo == 1 {
        let i = wait(w, x, lo);
        return pfib(w, x.n, x.cutoff) + i;
    }
    let mid = lo + (hi - lo) / 2;
    let (a, b) = w.join(|w| map(w, x, lo, mid, wait), |w| map(w, x, mid, hi, wait));
    a + b
}

/// The kernel: the serial elision of `fj` as a plain loop, each item's wait a sleep, then its
/// `fib(n)` by [`fib::serial`].
pub fn serial(x: &Input) -> u64 {
    (0..x.items)
        .map(|i| {
            std::thread::sleep(x.latency);
            fib::serial(x.n) + i
        })
        .sum()
}

/// The `fj` wait of an item: the worker sleeps.
pub fn blocking_wait<W: Worker>(_w: &W, x: &Input, i: u64) -> u64 {
    std::thread::sleep(x.latency);
    i
}

/// The `sf` wait of an item: a latency future, touched at once.
pub fn latency_wait<W: Futures>(w: &W, x: &Input, i: u64) -> u64 {
    let wait = x.latency;
    w.scope(|s, w| {
        w.latency_future(s, move || async move {
            sleep(wait).await;
            i
        })
        .get(w)
    })
}

/// The map and reduce on the async front-end.
pub fn map_async<'s, C: AsyncWorker<'s>>(
    c: C,
    x: Input,
    lo: u64,
    hi: u64,
    lh: bool,
) -> impl Future<Output = u64> + Send + 's {
    async move {
        if hi - lo == 1 {
            let i = if lh {
                let wait = x.latency;
                c.latency_future(move || async move {
                    sleep(wait).await;
                    lo
                })
                .await
            } else {
                std::thread::sleep(x.latency);
                lo
            };
            return c.call(move |c| pfib_async(c, x.n, x.cutoff)).await + i;
        }
        let mid = lo + (hi - lo) / 2;
        let (a, b) = c
            .join(
                move |c| map_async(c, x, lo, mid, lh),
                move |c| map_async(c, x, mid, hi, lh),
            )
            .await;
        a + b
    }
}

impl Workload for MapReduceFib {
    const NAME: &'static str = "mapreduce-fib";
    const DESCRIPTION: &'static str = "Rayon-LH's MapReduce-Fib: items that each wait a latency, then compute fib(n); fj blocks (classic), sf awaits a latency future";
    const VARIANTS: &'static [Variant] = &[Variant::Fj, Variant::Sf];
    const ASYNC_VARIANTS: &'static [Variant] = &[Variant::Fj, Variant::Sf];

    type Input = Input;
    type Work = ();
    type Answer = u64;

    /// The thesis: 5,000 items, fib(30) with cutoff 25. `quick` keeps the thesis's items but
    /// few of them, so that a classic run at 100 ms takes seconds (64 x 0.1 s on one worker).
    fn preset(size: Size) -> Params {
        let (items, latency_ms, n, cutoff) = match size {
            Size::Paper => (5000, 50, 30, 25),
            Size::Small => (500, 50, 30, 25),
            Size::Quick => (64, 50, 30, 25),
            Size::Test => (8, 1, 12, 8),
        };
        Params::new()
            .int("items", items)
            .int("latency_ms", latency_ms)
            .int("n", n)
            .int("cutoff", cutoff)
    }

    fn input(params: &Params) -> Result<Input, String> {
        let items = params.get_int("items");
        let n = params.get_int("n");
        if items == 0 {
            return Err("items=0: at least one item".to_string());
        }
        if n > fib::MAX_N {
            return Err(format!(
                "n={n}: fib(n) fits 64 bits only up to n={}",
                fib::MAX_N
            ));
        }
        let x = Input {
            items,
            latency: Duration::from_millis(params.get_int("latency_ms")),
            n,
            cutoff: params.get_int("cutoff"),
        };
        items
            .checked_mul(fib::expected(n))
            .zip(items.checked_mul(items - 1))
            .and_then(|(f, i)| f.checked_add(i / 2))
            .ok_or_else(|| format!("items={items} n={n}: the sum does not fit 64 bits"))?;
        Ok(x)
    }

    fn prepare(_input: &Input) {}

    fn run<S: ForkJoin>(pool: &S, variant: Variant, x: &Input, _work: &mut ()) -> u64 {
        match variant {
            Variant::Fj => pool.run(|w| map(w, x, 0, x.items, &blocking_wait)),
            v => crate::not_without_futures::<Self>(v),
        }
    }

    fn run_futures<S: FutureForkJoin>(pool: &S, variant: Variant, x: &Input, work: &mut ()) -> u64 {
        match variant {
            Variant::Sf => pool.run(|w| map(w, x, 0, x.items, &latency_wait)),
            v => Self::run(pool, v, x, work),
        }
    }

    fn run_async<S: AsyncForkJoin>(pool: &S, variant: Variant, x: &Input, _work: &mut ()) -> u64 {
        let lh = match variant {
            Variant::Fj => false,
            Variant::Sf => true,
            v => panic!("mapreduce-fib has no async {v} variant"),
        };
        let x = *x;
        pool.run_async(move |c| map_async(c, x, 0, x.items, lh))
    }

    fn kernel(x: &Input, _work: &mut ()) -> u64 {
        serial(x)
    }

    fn check(x: &Input, _work: &(), answer: &u64) -> Result<Checked, String> {
        let want = expected(x);
        if *answer == want {
            Ok(Checked::new(
                format!("sum {answer} over {} items", x.items),
                format!("items·fib({}) + items·(items-1)/2", x.n),
            ))
        } else {
            Err(format!(
                "mapreduce-fib items={} n={}: sum {answer}, expected {want}",
                x.items, x.n
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_rejects_a_wrong_answer() {
        let x = MapReduceFib::input_at(Size::Test);
        assert_eq!(expected(&x), 8 * 144 + 28);
        assert_eq!(
            MapReduceFib::check(&x, &(), &expected(&x))
                .unwrap()
                .to_string(),
            "sum 1180 over 8 items; checked against items·fib(12) + items·(items-1)/2"
        );
        assert!(MapReduceFib::check(&x, &(), &0).is_err());
    }

    #[test]
    fn unusable_inputs_are_refused() {
        let p = |k: &str, v: &str| {
            MapReduceFib::preset(Size::Test)
                .apply(&[(k.into(), v.into())])
                .unwrap()
        };
        assert!(MapReduceFib::input(&p("items", "0")).is_err());
        assert!(
            MapReduceFib::input(&p("n", "94"))
                .unwrap_err()
                .contains("n=94")
        );
        assert!(MapReduceFib::input(&p("items", "10^9")).is_ok());
        assert!(MapReduceFib::input(&p("n", "90")).is_err());
    }
}
