//! The measurement loop of one point: a checked warm-up, then timed repetitions, each checked,
//! with the pool's counters and the process's page faults and resident set around it; every
//! step an [`Event`] of the child protocol.

use crate::probe::{self_minor_faults, self_rss_kb};
use crate::protocol::Event;
use std::time::Instant;
use stealbench_schedulers::{Scheduler, Stats};
use stealbench_workloads::Workload;

/// The memory counters of a repetition: the resident set (`process_rss_before_kb`) and its
/// peak (`process_hwm_before_kb`) just before the point's first computation (the warm-up; the
/// pool started, the input generated, the work prepared), and the peak after this
/// repetition's computation (`process_hwm_kb`, so the warm-up and every earlier repetition
/// included). `process_hwm_kb - process_rss_before_kb` is what the computation added to the
/// resident set at its peak (Fibril's "incremental RSS"), unless the peak was reached before
/// the computation (`process_hwm_kb == process_hwm_before_kb`): then it is an upper bound.
fn memory_stats(
    before: Option<(u64, u64)>,
    after: Option<(u64, u64)>,
) -> [(String, Option<u64>); 3] {
    [
        ("process_rss_before_kb".to_string(), before.map(|b| b.0)),
        ("process_hwm_before_kb".to_string(), before.map(|b| b.1)),
        ("process_hwm_kb".to_string(), after.map(|a| a.1)),
    ]
}

/// Why a measurement stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MeasureError {
    /// The answer of repetition `rep` (0 = warm-up) was wrong.
    CheckFailed {
        /// The repetition (0 = warm-up).
        rep: usize,
        /// What the check said.
        message: String,
    },
}

/// Measures `reps` timed repetitions of `run` on `pool` (after one warm-up), checking each.
/// Every event goes to `sink`; returns the times of the repetitions.
pub(crate) fn measure<S, W, R>(
    pool: &S,
    input: &W::Input,
    reps: usize,
    run: R,
    sink: &mut dyn FnMut(Event),
) -> Result<Vec<f64>, MeasureError>
where
    S: Scheduler,
    W: Workload,
    R: Fn(&S, &W::Input, &mut W::Work) -> W::Answer,
{
    // Warm-up: same steps, untimed, its counters discarded.
    let mut work = W::prepare(input);
    let before = self_rss_kb();
    let answer = run(pool, input, &mut work);
    if let Err(message) = W::check(input, &work, &answer) {
        sink(Event::CheckFailed {
            rep: 0,
            message: message.clone(),
        });
        return Err(MeasureError::CheckFailed { rep: 0, message });
    }
    drop((answer, work));
    pool.reset_stats();

    let mut times = Vec::with_capacity(reps);
    for rep in 1..=reps {
        let mut work = W::prepare(input);
        let faults = self_minor_faults();
        // `black_box` on the input before and the answer inside the timed region: a pure
        // computation (integrate, nqueens on the serial elision) must be computed every
        // repetition, not once for the warm-up and reused.
        let start = Instant::now();
        let answer = std::hint::black_box(run(pool, std::hint::black_box(input), &mut work));
        let seconds = start.elapsed().as_secs_f64();
        let faults = self_minor_faults() - faults;
        let after = self_rss_kb();
        let stats: Stats = pool.stats();
        pool.reset_stats();
        let checked = match W::check(input, &work, &answer) {
            Ok(checked) => checked,
            Err(message) => {
                sink(Event::CheckFailed {
                    rep,
                    message: message.clone(),
                });
                return Err(MeasureError::CheckFailed { rep, message });
            }
        };
        drop((answer, work));
        times.push(seconds);
        let mut stats = stats.named();
        stats.push(("process_minor_faults".to_string(), Some(faults)));
        stats.extend(memory_stats(before, after));
        sink(Event::Rep {
            rep,
            seconds,
            answer: checked.to_string(),
            stats,
        });
    }
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;
    use stealbench_schedulers::PoolConfig;
    use stealbench_schedulers::serial::Serial;
    use stealbench_workloads::Variant;
    use stealbench_workloads::fib::Fib;

    #[test]
    fn measure_reports_every_rep_and_checks() {
        let pool = Serial::start(&PoolConfig::with_workers(1)).unwrap();
        let mut events = Vec::new();
        let times = measure::<Serial, Fib, _>(
            &pool,
            &15,
            3,
            |p, i, w| Fib::run(p, Variant::Fj, i, w),
            &mut |e| events.push(e),
        )
        .unwrap();
        assert_eq!(times.len(), 3);
        assert_eq!(events.len(), 3);
        assert!(matches!(&events[2], Event::Rep { rep: 3, stats, .. } if stats[0].0 == "steals"));
        for e in &events {
            let Event::Rep { answer, .. } = e else {
                panic!("a repetition: {e:?}")
            };
            assert_eq!(
                answer,
                "fib(15) = 610; checked against the iterative fib(n)"
            );
        }
    }

    #[test]
    fn a_wrong_answer_is_an_error_not_a_time() {
        let pool = Serial::start(&PoolConfig::with_workers(1)).unwrap();
        let mut events = Vec::new();
        // Wrong from the second call on: the warm-up passes, repetition 1 fails.
        let calls = std::cell::Cell::new(0);
        let r = measure::<Serial, Fib, _>(
            &pool,
            &15,
            3,
            |p, i, w| {
                calls.set(calls.get() + 1);
                Fib::run(p, Variant::Fj, i, w) + u64::from(calls.get() > 1)
            },
            &mut |e| events.push(e),
        );
        assert!(matches!(r, Err(MeasureError::CheckFailed { rep: 1, .. })));
        assert_eq!(events.len(), 1);
        assert!(matches!(events[0], Event::CheckFailed { rep: 1, .. }));
    }

    #[test]
    fn repetitions_record_the_resident_set_before_the_first_run_and_the_peak_after() {
        let pool = Serial::start(&PoolConfig::with_workers(1)).unwrap();
        // Each run maps 64 MiB of fresh pages, touches them and unmaps them: the process's
        // resident set grows by 64 MiB during the run, whatever the allocator keeps.
        const GROW: usize = 64 << 20;
        let touch = || {
            // SAFETY: a fresh private anonymous mapping, written page by page, then unmapped;
            // nothing else refers to it.
            unsafe {
                let m = libc::mmap(
                    std::ptr::null_mut(),
                    GROW,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                );
                assert_ne!(m, libc::MAP_FAILED);
                for off in (0..GROW).step_by(4096) {
                    std::ptr::write_volatile(m.cast::<u8>().add(off), 1);
                }
                libc::munmap(m, GROW);
            }
        };
        let mut events = Vec::new();
        measure::<Serial, Fib, _>(
            &pool,
            &15,
            2,
            |p, i, w| {
                touch();
                Fib::run(p, Variant::Fj, i, w)
            },
            &mut |e| events.push(e),
        )
        .unwrap();
        let stat = |e: &Event, name: &str| match e {
            Event::Rep { stats, .. } => stats.iter().find(|(k, _)| k == name).unwrap().1,
            _ => panic!("a repetition"),
        };
        let Some((rss, hwm)) = self_rss_kb() else {
            return; // no /proc here: nothing to compare
        };
        assert!(rss > 0 && hwm >= rss);
        for e in &events {
            let before = stat(e, "process_rss_before_kb").unwrap();
            let hwm_before = stat(e, "process_hwm_before_kb").unwrap();
            let peak = stat(e, "process_hwm_kb").unwrap();
            assert!(hwm_before >= before);
            // The pages touched by the runs are in the peak, above the resident set before (by
            // half of them at least: the other tests of this process may free memory meanwhile).
            assert!(
                peak >= before + (GROW as u64 >> 11),
                "{before} KiB, then {peak} KiB"
            );
        }
        // The resident set before is read once, before the warm-up: the same in every rep.
        assert_eq!(
            stat(&events[0], "process_rss_before_kb"),
            stat(&events[1], "process_rss_before_kb")
        );
    }
}
