//! The child protocol: what a point's process (`stealbench run --json`) tells its parent, one
//! JSON [`Event`] per line, and the record of what it ran ([`Ran`], [`PoolRecord`]) that
//! `raw.csv` and `meta.json` keep. The child writes it, the runner reads it, the results
//! store records it.

use serde::{Deserialize, Serialize};
use stealbench_schedulers::{
    Capabilities, FenceMode, FutureStack, IdlePolicy, Pinning, Placement, PoolConfig, Unmap,
    VictimPolicy,
};

/// One message of the child-to-parent protocol (one JSON object per line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub(crate) enum Event {
    /// The point, before it measures: what it runs ([`Ran`]), which the parent records as
    /// the point's.
    Start(Ran),
    /// A timed repetition whose answer checked.
    Rep {
        /// 1-based repetition number.
        rep: usize,
        /// Wall-clock seconds of the computation alone.
        seconds: f64,
        /// The answer and what it was checked against, one line
        /// ([`stealbench_workloads::Checked`]).
        answer: String,
        /// The pool's counters during this repetition (`None` = cannot count).
        stats: Vec<(String, Option<u64>)>,
    },
    /// A check failed; no time is reported for that repetition (0 = the warm-up).
    CheckFailed {
        /// The repetition (0 = warm-up).
        rep: usize,
        /// What the check said.
        message: String,
    },
    /// The point could not run (the pool refused to start).
    Error {
        /// Why.
        message: String,
    },
    /// Every repetition ran and checked.
    Done {
        /// Number of timed repetitions.
        reps: usize,
        /// Their median, in seconds.
        median: f64,
        /// This process's peak resident set, KiB (getrusage).
        peak_rss_kb: u64,
    },
}

/// What a point's process ran, as that process reports it (its [`Event::Start`]): the record
/// `raw.csv` keeps of every repetition, and `meta.json` of every point, rather than what the
/// parent meant to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Ran {
    /// The workload's parameters as the process resolved them (`n=32`).
    pub params: String,
    /// The pool's configuration as the process started it (`None`: a simulated point, which
    /// starts no pool).
    pub pool: Option<PoolRecord>,
}

/// A pool's configuration ([`PoolConfig`]) as the pool applied it: each setting the runtime
/// honours (its [`Capabilities`]), typed; a setting it ignores is left out, being no part of
/// what ran (`serial` records its one worker and nothing else). A setting added to
/// `PoolConfig` is one more field here and one line in each of [`PoolRecord::of`],
/// [`PoolRecord::spelling`] and [`PoolRecord::parse`]. In `raw.csv` and `meta.json` it is one
/// text spelt as an arm is, `workers=2/pinning=none/idle=lazy/...`, read back by the value
/// parsers of the settings' own types.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub(crate) struct PoolRecord {
    /// Workers P.
    pub workers: usize,
    /// Thread pinning (where it has worker threads it can pin).
    pub pinning: Option<Pinning>,
    /// Victim selection (where it has worker threads and more than one policy).
    pub victim: Option<VictimPolicy>,
    /// Idle behaviour (where it has worker threads and more than one policy).
    pub idle: Option<IdlePolicy>,
    /// Where future tasks run (a runtime on fiber stacks).
    pub futures: Option<FutureStack>,
    /// Usable bytes of every fiber stack, the default's included (a runtime on fiber stacks).
    pub stack_size: Option<usize>,
    /// The forced schedule's steal budget (where one is forced).
    pub steals: Option<u64>,
    /// Where a deque that becomes stealable goes (a runtime with stealable sets).
    pub placement: Option<Placement>,
    /// Whether suspended stacks' unused pages go back to the OS (where it can tell).
    pub unmap: Option<Unmap>,
    /// The fence mode the pool's deques applied (a runtime on this crate's deques).
    pub fence: Option<FenceMode>,
}

impl PoolRecord {
    /// The record of `config` as a pool of a runtime with `capabilities` applies it.
    pub(crate) fn of(config: &PoolConfig, capabilities: &Capabilities) -> PoolRecord {
        let c = capabilities;
        let fibers = c.fiber_stacks;
        PoolRecord {
            workers: config.workers,
            pinning: (c.threads && c.pinning).then_some(config.pinning),
            // The serial elision takes every policy and has no thief or idle worker to apply
            // one to.
            victim: (c.threads && c.victims.len() > 1).then_some(config.victim),
            idle: (c.threads && c.idle.len() > 1).then_some(config.idle),
            futures: fibers.then_some(config.futures),
            stack_size: fibers.then(|| {
                config
                    .stack_size
                    .unwrap_or(stealbench_schedulers::abp::DEFAULT_STACK_SIZE)
            }),
            steals: config.steals.filter(|_| c.steals),
            placement: c.placement.then_some(config.placement),
            unmap: c.unmap.then_some(config.unmap),
            fence: c.fence_applied(config),
        }
    }

    /// The record as one line, `key=value` per setting recorded, joined with `/`.
    pub(crate) fn spelling(&self) -> String {
        let text = |k: &str, v: Option<String>| v.map(|v| format!("{k}={v}"));
        [
            text("workers", Some(self.workers.to_string())),
            text("pinning", self.pinning.map(|v| v.to_string())),
            text("victim", self.victim.map(|v| v.to_string())),
            text("idle", self.idle.map(|v| v.to_string())),
            text("futures", self.futures.map(|v| v.to_string())),
            text("stack_size", self.stack_size.map(|v| v.to_string())),
            text("steals", self.steals.map(|v| v.to_string())),
            text("placement", self.placement.map(|v| v.to_string())),
            text("unmap", self.unmap.map(|v| v.to_string())),
            text("fence", self.fence.map(|v| v.to_string())),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("/")
    }

    /// Reads [`PoolRecord::spelling`] back, each value by its type's parser; an unknown key,
    /// a value its type refuses, a key given twice or no `workers` is refused in one line.
    pub(crate) fn parse(s: &str) -> Result<PoolRecord, String> {
        fn put<T: std::str::FromStr>(slot: &mut Option<T>, v: &str) -> Result<(), String>
        where
            T::Err: std::fmt::Display,
        {
            if slot.is_some() {
                return Err("given twice".into());
            }
            *slot = Some(v.parse().map_err(|e: T::Err| e.to_string())?);
            Ok(())
        }
        let mut workers: Option<usize> = None;
        let mut r = PoolRecord {
            workers: 0,
            pinning: None,
            victim: None,
            idle: None,
            futures: None,
            stack_size: None,
            steals: None,
            placement: None,
            unmap: None,
            fence: None,
        };
        for part in s.split('/') {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("pool '{s}': '{part}' is not key=value"))?;
            match k {
                "workers" => put(&mut workers, v),
                "pinning" => put(&mut r.pinning, v),
                "victim" => put(&mut r.victim, v),
                "idle" => put(&mut r.idle, v),
                "futures" => put(&mut r.futures, v),
                "stack_size" => put(&mut r.stack_size, v),
                "steals" => put(&mut r.steals, v),
                "placement" => put(&mut r.placement, v),
                "unmap" => put(&mut r.unmap, v),
                "fence" => put(&mut r.fence, v),
                _ => Err("not a pool setting".into()),
            }
            .map_err(|e| format!("pool '{s}': {k}: {e}"))?;
        }
        r.workers = workers.ok_or_else(|| format!("pool '{s}': no workers"))?;
        Ok(r)
    }
}

impl From<PoolRecord> for String {
    fn from(r: PoolRecord) -> String {
        r.spelling()
    }
}

impl TryFrom<String> for PoolRecord {
    type Error = String;
    fn try_from(s: String) -> Result<PoolRecord, String> {
        PoolRecord::parse(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_record_holds_what_the_runtime_honours_typed() {
        use stealbench_schedulers::Scheduler as _;
        let config = PoolConfig::with_workers(2);
        let serial = PoolRecord::of(
            &config,
            &stealbench_schedulers::serial::Serial::CAPABILITIES,
        );
        assert_eq!(serial.spelling(), "workers=2");
        let abp = PoolRecord::of(&config, &stealbench_schedulers::abp::Abp::CAPABILITIES);
        let text = abp.spelling();
        assert!(
            text.contains("stack_size=16777216") && text.contains("fence="),
            "{text}"
        );
        assert_eq!(PoolRecord::parse(&text).unwrap(), abp);
        for bad in [
            "pinning=banana/workers=1",
            "workers=1/workers=2",
            "idle=lazy",
            "x=1/workers=1",
        ] {
            assert!(PoolRecord::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn events_round_trip_through_json() {
        let e = Event::Rep {
            rep: 2,
            seconds: 0.125,
            answer: "fib(3) = 2; checked against the iterative fib(n)".into(),
            stats: vec![("steals".into(), None), ("x".into(), Some(4))],
        };
        let line = serde_json::to_string(&e).unwrap();
        assert!(line.contains("\"event\":\"rep\""), "{line}");
        assert!(line.contains("\"answer\":\"fib(3) = 2; checked"), "{line}");
        assert_eq!(serde_json::from_str::<Event>(&line).unwrap(), e);
    }
}
