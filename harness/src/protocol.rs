//! The child protocol: what a point's process (`stealbench run --json`) tells its parent, one
//! JSON [`Event`] per line, and the record of what it ran ([`Ran`], [`PoolRecord`]) that
//! `raw.csv` and `meta.json` keep. The child writes it, the runner reads it, the results
//! store records it.

use serde::{Deserialize, Serialize};
use stealbench_schedulers::{Capabilities, PoolConfig, SETTINGS};

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
/// honours (its [`Capabilities`]; `stealbench_schedulers::SETTINGS` says which it records), at
/// the value it applied; a setting it ignores is left out, being no part of what ran (`serial`
/// records its one worker and nothing else). In `raw.csv` and `meta.json` it is one text spelt
/// as an arm is, `workers=2/pinning=none/idle=lazy/...`, read back by the value parsers of the
/// settings' own types.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub(crate) struct PoolRecord {
    /// The settings recorded at the values applied, the others at their defaults.
    pub config: PoolConfig,
    /// Which of [`SETTINGS`] are recorded, one bit per setting by its place there.
    recorded: u32,
}

impl PoolRecord {
    /// The record of `config` as a pool of a runtime with `capabilities` applies it.
    pub(crate) fn of(config: &PoolConfig, capabilities: &Capabilities) -> PoolRecord {
        let mut r = PoolRecord {
            config: PoolConfig::with_workers(config.workers),
            recorded: 0,
        };
        for (i, s) in SETTINGS.iter().enumerate() {
            if (s.record)(config, capabilities, &mut r.config) {
                r.recorded |= 1 << i;
            }
        }
        r
    }

    /// The record as one line, `key=value` per setting recorded (`workers` first, then in the
    /// order of [`SETTINGS`]), joined with `/`.
    pub(crate) fn spelling(&self) -> String {
        SETTINGS
            .iter()
            .enumerate()
            .filter(|(i, _)| self.recorded & 1 << i != 0)
            .filter_map(|(_, s)| Some(format!("/{}={}", s.key, (s.get)(&self.config)?)))
            .fold(format!("workers={}", self.config.workers), |l, kv| l + &kv)
    }

    /// Reads [`PoolRecord::spelling`] back, each value by its type's parser; an unknown key,
    /// a value its type refuses, a key given twice or no `workers` is refused in one line.
    pub(crate) fn parse(s: &str) -> Result<PoolRecord, String> {
        let mut workers: Option<usize> = None;
        let mut r = PoolRecord {
            config: PoolConfig::with_workers(0),
            recorded: 0,
        };
        for part in s.split('/') {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("pool '{s}': '{part}' is not key=value"))?;
            let read = if k == "workers" {
                match workers {
                    Some(_) => Err("given twice".to_string()),
                    None => v
                        .parse()
                        .map(|w| workers = Some(w))
                        .map_err(|e: std::num::ParseIntError| e.to_string()),
                }
            } else {
                match SETTINGS.iter().position(|x| x.key == k) {
                    None => Err("not a pool setting".to_string()),
                    Some(i) if r.recorded & 1 << i != 0 => Err("given twice".to_string()),
                    Some(i) => {
                        r.recorded |= 1 << i;
                        (SETTINGS[i].set)(&mut r.config, v)
                    }
                }
            };
            read.map_err(|e| format!("pool '{s}': {k}: {e}"))?;
        }
        r.config.workers = workers.ok_or_else(|| format!("pool '{s}': no workers"))?;
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

    /// Every pool record in the committed runs' `raw.csv` reads, and spells back unchanged.
    #[test]
    fn the_committed_runs_pool_records_read_and_spell_back_unchanged() {
        let runs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../paper-figures/runs");
        let mut read = 0;
        let dirs = |d: &std::path::Path| {
            let entries = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path());
            entries.filter(|p| p.is_dir()).collect::<Vec<_>>()
        };
        for figure in dirs(&runs) {
            for run in dirs(&figure) {
                let raw = run.join("raw.csv");
                let Ok(mut csv) = csv::Reader::from_path(&raw) else {
                    continue;
                };
                let header = csv.headers().unwrap().clone();
                let col = header.iter().position(|h| h == "pool").unwrap();
                for row in csv.records() {
                    let text = row.unwrap()[col].to_string();
                    if text.is_empty() {
                        continue;
                    }
                    let record = PoolRecord::parse(&text).unwrap();
                    assert_eq!(record.spelling(), text, "{}", raw.display());
                    read += 1;
                }
            }
        }
        assert!(read > 0, "the committed runs record their pools");
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
