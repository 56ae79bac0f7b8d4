//! What the workloads' unit tests share: the pools they run on, the run of every variant of a
//! workload on an input of the test's choosing, each answer checked, and the textbook matrix
//! product the matrix multiplications are compared with.
//!
//! `tests/every_runtime.rs` runs every variant of every workload on its `test` preset on
//! every runtime; a unit test runs the variants on inputs of its own (edge cases, other
//! cutoffs, several sizes) and adds its own assertions (a known answer, the serial kernel's
//! result bit for bit).

use crate::Workload;
use stealbench_schedulers::abp::Abp;
use stealbench_schedulers::libfork::LibforkPool;
use stealbench_schedulers::serial::Serial;
use stealbench_schedulers::{AsyncForkJoin, FutureForkJoin, PoolConfig, Scheduler};

/// The runtime's name of a pool, for messages.
fn name<S: Scheduler>(_: &S) -> &'static str {
    S::NAME
}

/// The serial elision, for both front-ends.
pub(crate) fn serial() -> Serial {
    Serial::start(&PoolConfig::with_workers(1)).unwrap()
}

/// The pools a test runs a workload on: the serial elision (both front-ends) and two workers,
/// `abp` for the closure front-end and `libfork` for the async one.
pub(crate) struct Pools {
    pub serial: Serial,
    pub abp: Abp,
    pub libfork: LibforkPool,
}

impl Pools {
    pub fn start() -> Pools {
        let two = PoolConfig::with_workers(2);
        Pools {
            serial: serial(),
            abp: Abp::start(&two).unwrap(),
            libfork: LibforkPool::start(&two).unwrap(),
        }
    }

    /// [`check_every_variant`] on the serial elision, then on two workers.
    pub fn check_every_variant<W: Workload>(
        &self,
        input: &W::Input,
        mut also: impl FnMut(&str, &W::Work, &W::Answer),
    ) {
        check_every_variant::<W>(&self.serial, &self.serial, input, &mut also);
        check_every_variant::<W>(&self.abp, &self.libfork, input, &mut also);
    }
}

/// Runs every variant of `W` on `input`, each on fresh work ([`Workload::prepare`]): those of
/// the closure front-end on `pool`, those of the async front-end on `async_pool`. Panics when
/// an answer fails [`Workload::check`]; otherwise hands it, with its work and the run's name
/// for messages (`fj on abp`, `async fj on libfork`), to `also`: the test's own assertions.
pub(crate) fn check_every_variant<W: Workload>(
    pool: &impl FutureForkJoin,
    async_pool: &impl AsyncForkJoin,
    input: &W::Input,
    mut also: impl FnMut(&str, &W::Work, &W::Answer),
) {
    let mut checked = |what: String, work: W::Work, answer: W::Answer| {
        if let Err(e) = W::check(input, &work, &answer) {
            panic!("{} {what}: {e}", W::NAME);
        }
        also(&what, &work, &answer);
    };
    for &v in W::VARIANTS {
        let mut work = W::prepare(input);
        let answer = W::run_futures(pool, v, input, &mut work);
        checked(format!("{v} on {}", name(pool)), work, answer);
    }
    for &v in W::ASYNC_VARIANTS {
        let mut work = W::prepare(input);
        let answer = W::run_async(async_pool, v, input, &mut work);
        checked(format!("async {v} on {}", name(async_pool)), work, answer);
    }
}

/// The product `A·B` of two row-major `n × n` matrices by the textbook triple loop: the
/// reference of the matrix multiplications' tests.
pub(crate) fn naive_product(n: usize, a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut c = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            c[i * n + j] = (0..n).map(|k| a[i * n + k] * b[k * n + j]).sum();
        }
    }
    c
}
