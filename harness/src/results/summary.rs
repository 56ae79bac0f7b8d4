//! Summaries: a point's repetitions reduced to its statistics and counters, the speedups
//! over T_s and T_1, and summary.csv.

use super::machine::Machine;
use super::meta::Meta;
use super::store::{RawRow, Store};
use crate::grid::Status;
use crate::runtimes::Arm;
use crate::spec::{PointSpec, WorkloadSpec};
use crate::stats::{self, Summary};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::io;
use std::path::Path;
use stealbench_workloads::{Shape, Size};

/// Every point of a run, summarised ([`summarize`]), in the order of their first rows, and
/// indexed: a figure's cell ([`median_of`], [`ts_of`], [`Summaries::get`]) is a lookup, not a
/// scan. It derefs to the slice of the points.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Summaries {
    /// The points.
    list: Vec<PointSummary>,
    /// Each point's place in `list`.
    index: HashMap<PointSpec, usize>,
    /// The place of each workload's T_s point (the kernel arm [`Summaries::ts_arm`] at P = 1).
    ts: HashMap<WorkloadSpec, usize>,
    /// The shape of T_s's kernel: the figure's paper's ([`Summaries::with_ts`]; the plain
    /// kernel unless said).
    ts_shape: Shape,
    /// The arms of the points, by their spellings.
    arms: HashMap<String, Arm>,
    /// The machine that measured each point, where the run names one per point (a run merged
    /// across machines: [`Summaries::measured_on`]); empty when the run's machine measured all.
    machines: HashMap<PointSpec, Machine>,
}

/// The summaries of `list`, T_s the plain kernel.
impl From<Vec<PointSummary>> for Summaries {
    fn from(list: Vec<PointSummary>) -> Summaries {
        let mut index = HashMap::new();
        let mut arms = HashMap::new();
        for (i, s) in list.iter().enumerate() {
            index.entry(s.key.clone()).or_insert(i);
            arms.entry(s.key.runtime.to_string())
                .or_insert(s.key.runtime);
        }
        Summaries {
            list,
            index,
            ts: HashMap::new(),
            ts_shape: Shape::Plain,
            arms,
            machines: HashMap::new(),
        }
        .with_ts(Shape::Plain)
    }
}

impl std::ops::Deref for Summaries {
    type Target = [PointSummary];
    fn deref(&self) -> &[PointSummary] {
        &self.list
    }
}

impl Summaries {
    /// The summaries with T_s the kernel in `shape` (a figure's [`Figure::ts`]): each
    /// workload's point of that kernel arm at P = 1.
    ///
    /// [`Figure::ts`]: crate::figures::Figure::ts
    pub(crate) fn with_ts(mut self, shape: Shape) -> Summaries {
        self.ts_shape = shape;
        self.ts.clear();
        let arm = self.ts_arm();
        for (i, s) in self.list.iter().enumerate() {
            if s.key.runtime == arm && s.key.workers == 1 {
                self.ts.entry(s.key.workload.clone()).or_insert(i);
            }
        }
        self
    }

    /// The arm of T_s ([`Summaries::with_ts`]).
    pub(crate) fn ts_arm(&self) -> Arm {
        crate::runtimes::kernel(self.ts_shape)
    }

    /// The summary of `key`, if measured.
    pub(crate) fn get(&self, key: &PointSpec) -> Option<&PointSummary> {
        self.index.get(key).map(|&i| &self.list[i])
    }

    /// The summaries with each point's machine from `meta` ([`Meta::machine_of`]), where its
    /// points come from more than one machine.
    pub(crate) fn measured_on(mut self, meta: &Meta) -> Summaries {
        self.machines = if meta.machines.is_empty() {
            HashMap::new()
        } else {
            self.list
                .iter()
                .map(|s| (s.key.clone(), meta.machine_of(&s.key.to_string()).clone()))
                .collect()
        };
        self
    }

    /// The machine that measured `key`, where the run names one per point (else the run's
    /// machine measured it).
    pub(crate) fn machine_of(&self, key: &PointSpec) -> Option<&Machine> {
        self.machines.get(key)
    }

    /// The logical CPUs of the machine that measured `key`, `cpus` (the run's machine's) unless
    /// the run names one per point: a point with more workers is oversubscribed.
    pub(crate) fn cpus_of(&self, key: &PointSpec, cpus: usize) -> usize {
        self.machine_of(key).map_or(cpus, |m| m.logical_cpus)
    }

    /// The arm of the points spelt `spelling`, if any point has it.
    pub(crate) fn arm(&self, spelling: &str) -> Option<Arm> {
        self.arms.get(spelling).copied()
    }
}
/// The summary of one point, for `summary.csv`, the table and the plot.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PointSummary {
    /// The point.
    pub key: PointSpec,
    /// Size preset.
    pub size: Size,
    /// Workload parameters.
    pub params: String,
    /// The point's status.
    pub status: Status,
    /// Statistics of its times; only for status `ok`.
    pub summary: Option<Summary>,
    /// Peak RSS in KiB.
    pub peak_rss_kb: Option<u64>,
    /// The runtime's counters, each with its value in every repetition that has one, in the
    /// order of the repetitions (a counter the runtime cannot count has no values).
    pub counters: Vec<(String, Vec<u64>)>,
    /// The median time of each round that has timed repetitions, in round order (one entry
    /// for a run without rounds).
    pub round_medians: Vec<f64>,
    /// What went wrong.
    pub note: String,
}

impl PointSummary {
    /// The values of counter `name` over the repetitions; `None` if no repetition has one.
    pub(crate) fn counter(&self, name: &str) -> Option<&[u64]> {
        self.counters
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
            .filter(|v| !v.is_empty())
    }

    /// The peak resident set of the point, KiB: its process's `VmHWM` after its last
    /// repetition (the largest `process_hwm_kb`), else `wait4`'s peak (the memory figures'
    /// module documentation, `figures::memory`, says why).
    pub(crate) fn peak_kb(&self) -> Option<u64> {
        self.counter("process_hwm_kb")
            .and_then(|v| v.iter().copied().max())
            .or(self.peak_rss_kb)
    }
}

/// The counters of `rows` (one point's repetitions), in the order of raw.csv's columns.
fn counters_of(rows: &[&RawRow]) -> Vec<(String, Vec<u64>)> {
    let mut out: Vec<(String, Vec<u64>)> = Vec::new();
    for r in rows.iter().filter(|r| r.rep.is_some()) {
        for (k, v) in &r.counters {
            let i = match out.iter().position(|(n, _)| n == k) {
                Some(i) => i,
                None => {
                    out.push((k.clone(), Vec::new()));
                    out.len() - 1
                }
            };
            out[i].1.extend(v);
        }
    }
    out
}

/// Groups the rows of `store` into points (in order of first appearance) and summarises each.
/// A row recorded twice (a repetition of a round on two lines) counts once.
pub(crate) fn summarize(store: &Store) -> Summaries {
    store
        .by_point()
        .map(|(k, mut rs)| {
            let mut seen = BTreeSet::new();
            rs.retain(|r| seen.insert((r.round, r.rep)));
            // Every round must have finished ok for the point to be ok.
            let status = rs
                .iter()
                .map(|r| r.status)
                .find(|s| *s != Status::Ok)
                .unwrap_or(Status::Ok);
            let mut rounds: Vec<usize> = rs.iter().map(|r| r.round).collect();
            rounds.sort_unstable();
            rounds.dedup();
            let round_medians = rounds
                .iter()
                .filter_map(|&round| {
                    let t: Vec<f64> = rs
                        .iter()
                        .filter(|r| r.round == round)
                        .filter_map(|r| r.seconds)
                        .collect();
                    stats::median(&t)
                })
                .collect();
            let times: Vec<f64> = rs.iter().filter_map(|r| r.seconds).collect();
            PointSummary {
                size: rs[0].size,
                params: rs[0].params.clone(),
                status,
                summary: if status == Status::Ok {
                    stats::summarize(&times)
                } else {
                    None
                },
                peak_rss_kb: rs.iter().filter_map(|r| r.peak_rss_kb).max(),
                counters: counters_of(&rs),
                round_medians,
                note: rs
                    .iter()
                    .map(|r| r.note.as_str())
                    .find(|n| !n.is_empty())
                    .unwrap_or("")
                    .to_string(),
                key: k.clone(),
            }
        })
        .collect::<Vec<_>>()
        .into()
}

/// The median of the point `key` if it finished ok.
pub(crate) fn median_of(summaries: &Summaries, key: &PointSpec) -> Option<f64> {
    summaries.get(key).and_then(|s| s.summary).map(|s| s.median)
}

/// The T_s point of `workload` among `summaries` (their kernel arm at P = 1).
pub(crate) fn ts_of<'a>(
    summaries: &'a Summaries,
    workload: &WorkloadSpec,
) -> Option<&'a PointSummary> {
    summaries.ts.get(workload).map(|&i| &summaries.list[i])
}

/// One row of `summary.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SummaryRow {
    /// Runtime.
    pub runtime: String,
    /// Workload.
    pub workload: WorkloadSpec,
    /// Variant.
    pub variant: String,
    /// Workers P.
    pub workers: usize,
    /// Size preset.
    #[serde(
        serialize_with = "crate::spec::stored::as_text",
        deserialize_with = "crate::spec::stored::size"
    )]
    pub size: Size,
    /// Workload parameters.
    pub params: String,
    /// Number of timed repetitions with a valid time.
    pub n: usize,
    /// Median seconds.
    pub median: Option<f64>,
    /// Mean seconds.
    pub mean: Option<f64>,
    /// Sample standard deviation, seconds.
    pub stddev: Option<f64>,
    /// Minimum seconds.
    pub min: Option<f64>,
    /// T_s / T_P, T_s being the workload's kernel time at P = 1 (`serial/front=kernel`, in the
    /// figure's shape; empty when oversubscribed or simulated).
    pub speedup_ts: Option<f64>,
    /// T_1 / T_P of the same runtime and variant (empty when oversubscribed).
    pub scalability_t1: Option<f64>,
    /// Peak RSS, KiB.
    pub peak_rss_kb: Option<u64>,
    /// Status of the point.
    pub status: Status,
    /// What went wrong.
    pub note: String,
    /// More workers than the machine's logical CPUs: a time, not a speedup.
    pub oversubscribed: bool,
    /// Rounds with timed repetitions.
    pub rounds: usize,
    /// How far apart the rounds' medians are: the largest over the smallest, minus 1 (0.04 =
    /// 4%); empty with fewer than 2 rounds.
    pub round_spread: Option<f64>,
}

/// How far apart `medians` are: the largest over the smallest, minus 1; `None` for fewer than
/// two.
pub(crate) fn spread(medians: &[f64]) -> Option<f64> {
    if medians.len() < 2 {
        return None;
    }
    let lo = medians.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = medians.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lo > 0.0).then(|| hi / lo - 1.0)
}

/// The `summary.csv` rows of `summaries`, with both speedups but for the points with more
/// workers than the logical CPUs of the machine that measured them (`cpus`, the run's machine's,
/// unless the summaries name one per point: [`Summaries::cpus_of`]; oversubscribed: no speedup),
/// and each but over a base (T_s, T_1) that another machine measured.
pub(crate) fn summary_rows(summaries: &Summaries, cpus: usize) -> Vec<SummaryRow> {
    summaries
        .iter()
        .map(|s| {
            let median = s.summary.map(|x| x.median);
            // A base measured on another machine (a run merged across machines) makes no
            // speedup.
            let here = summaries.machine_of(&s.key);
            let ts = ts_of(summaries, &s.key.workload)
                .filter(|t| summaries.machine_of(&t.key) == here)
                .and_then(|t| t.summary)
                .map(|x| x.median);
            let t1_key = PointSpec {
                workers: 1,
                ..s.key.clone()
            };
            let t1 =
                median_of(summaries, &t1_key).filter(|_| summaries.machine_of(&t1_key) == here);
            let simulated = s.key.runtime.sim.is_some();
            let oversubscribed = s.key.workers > summaries.cpus_of(&s.key, cpus) && !simulated;
            // A simulated point's seconds are the replay's wall time: no speedup either.
            let speedup =
                |base| stats::speedup(base, median).filter(|_| !oversubscribed && !simulated);
            SummaryRow {
                runtime: s.key.runtime.to_string(),
                workload: s.key.workload.clone(),
                variant: s.key.variant.name().to_string(),
                workers: s.key.workers,
                size: s.size,
                params: s.params.clone(),
                n: s.summary.map_or(0, |x| x.n),
                median,
                mean: s.summary.map(|x| x.mean),
                stddev: s.summary.map(|x| x.stddev),
                min: s.summary.map(|x| x.min),
                speedup_ts: speedup(ts),
                scalability_t1: speedup(t1),
                peak_rss_kb: s.peak_rss_kb,
                status: s.status,
                note: s.note.clone(),
                oversubscribed,
                rounds: s.round_medians.len(),
                round_spread: spread(&s.round_medians),
            }
        })
        .collect()
}

/// Writes `summary.csv` whole ([`crate::files::replace_with`]).
pub(crate) fn write_summary(path: &Path, rows: &[SummaryRow]) -> io::Result<()> {
    crate::files::replace_with(path, |tmp| {
        let mut w = csv::Writer::from_path(tmp).map_err(io::Error::other)?;
        for r in rows {
            w.serialize(r).map_err(io::Error::other)?;
        }
        w.flush()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::store::test_row as row;

    #[test]
    fn counters_are_read_per_repetition() {
        assert_eq!(
            crate::results::record::parse_stats("steals=3;steal_attempts=n/a;junk"),
            [
                ("steals".to_string(), Some(3)),
                ("steal_attempts".to_string(), None)
            ]
        );
        let row = |rep: Option<usize>, steals: u64| RawRow {
            counters: vec![("steals".into(), Some(steals)), ("deviations".into(), None)],
            ..row("abp", 2, rep, rep.map(|_| 0.1), Status::Ok)
        };
        let s = summarize(&Store::from_rows(&[row(Some(1), 3), row(Some(2), 5)]));
        assert_eq!(s[0].counter("steals"), Some(&[3, 5][..]));
        assert_eq!(s[0].counter("deviations"), None);
        assert_eq!(s[0].counter("nope"), None);
    }

    #[test]
    fn a_simulated_point_has_no_speedup() {
        let rows = vec![
            row("serial/front=kernel", 1, Some(1), Some(1.0), Status::Ok),
            row("abp/sim=unit", 1, Some(1), Some(0.5), Status::Ok),
            row("abp/sim=unit", 64, Some(1), Some(0.25), Status::Ok),
        ];
        let out = summary_rows(&summarize(&Store::from_rows(&rows)), 2);
        for r in &out[1..] {
            assert_eq!(
                (r.speedup_ts, r.scalability_t1),
                (None, None),
                "{}",
                r.runtime
            );
            assert!(!r.oversubscribed, "a simulation runs no worker thread");
        }
        assert_eq!(out[0].speedup_ts, Some(1.0));
    }

    #[test]
    fn summaries_and_speedups() {
        let rows = vec![
            row("serial/front=kernel", 1, Some(1), Some(1.0), Status::Ok),
            row("serial/front=kernel", 1, Some(2), Some(3.0), Status::Ok),
            row("rayon", 1, Some(1), Some(4.0), Status::Ok),
            row("rayon", 2, Some(1), Some(1.0), Status::Ok),
            row("rayon", 2, Some(2), Some(1.0), Status::Ok),
            row("rayon", 2, Some(3), Some(4.0), Status::Ok),
            row("tokio", 2, None, None, Status::Crashed),
        ];
        let s = summarize(&Store::from_rows(&rows));
        assert_eq!(s.len(), 4);
        assert_eq!(s[0].summary.unwrap().median, 2.0);
        assert_eq!(s[3].summary, None);
        let out = summary_rows(&s, 2);
        // rayon P=2: median 1, T_s = 2, T_1 = 4.
        assert_eq!(out[2].median, Some(1.0));
        assert_eq!(out[2].mean, Some(2.0));
        assert_eq!(out[2].speedup_ts, Some(2.0));
        assert_eq!(out[2].scalability_t1, Some(4.0));
        assert_eq!(out[2].n, 3);
        assert_eq!(out[3].status, Status::Crashed);
        assert_eq!(out[3].median, None);
        assert!(!out[2].oversubscribed);
        // On one CPU, P=2 is oversubscribed: its time stays, its speedups go.
        let one = summary_rows(&s, 1);
        assert!(one[2].oversubscribed);
        assert_eq!(one[2].median, Some(1.0));
        assert_eq!((one[2].speedup_ts, one[2].scalability_t1), (None, None));
    }

    #[test]
    fn ts_is_the_kernel_in_the_figures_shape() {
        let rows = vec![
            row("serial", 1, Some(1), Some(5.0), Status::Ok),
            row("serial/front=kernel", 1, Some(1), Some(4.0), Status::Ok),
            row(
                "serial/front=kernel/shape=libfork",
                1,
                Some(1),
                Some(8.0),
                Status::Ok,
            ),
        ];
        let s = summarize(&Store::from_rows(&rows));
        // The elision (`serial`) is a row like the others: T_s is the plain kernel.
        assert_eq!(s.ts_arm(), "serial/front=kernel");
        assert_eq!(
            ts_of(&s, &"fib".into()).unwrap().summary.unwrap().median,
            4.0
        );
        assert_eq!(summary_rows(&s, 2)[0].speedup_ts, Some(0.8));
        let s = s.with_ts(Shape::Libfork);
        assert_eq!(s.ts_arm(), "serial/front=kernel/shape=libfork");
        assert_eq!(
            ts_of(&s, &"fib".into()).unwrap().summary.unwrap().median,
            8.0
        );
        assert_eq!(summary_rows(&s, 2)[0].speedup_ts, Some(1.6));
    }

    /// Every committed run's `summary.csv` names its points as this build writes them from its
    /// `raw.csv`: the cells of each row's point (runtime, workload spec, variant, workers,
    /// size, params) byte for byte, typed in between. (The rows' order and T_s are the page's,
    /// `page::view`, so the points are compared as sets.)
    #[test]
    fn the_committed_runs_summary_csv_names_its_points_as_written() {
        let runs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../paper-figures/runs");
        let dir = tempfile::TempDir::with_prefix("stealbench-summary-committed-").unwrap();
        let out = dir.path().join("summary.csv");
        let points = |p: &Path| {
            let mut r = csv::Reader::from_path(p).unwrap();
            let mut l: Vec<Vec<String>> = r
                .records()
                .map(|rec| rec.unwrap().iter().take(6).map(str::to_string).collect())
                .collect();
            l.sort();
            l
        };
        let mut written = 0;
        for figure in std::fs::read_dir(&runs).unwrap() {
            for run in std::fs::read_dir(figure.unwrap().path()).unwrap() {
                let run = run.unwrap().path();
                let committed = run.join("summary.csv");
                if !committed.exists() {
                    continue;
                }
                let meta = crate::results::Meta::read(&run).unwrap();
                let store = Store::read(&run.join("raw.csv")).unwrap();
                let rows = summary_rows(&summarize(&store), meta.machine.logical_cpus);
                write_summary(&out, &rows).unwrap();
                assert_eq!(points(&out), points(&committed), "{}", run.display());
                written += rows.len();
            }
        }
        assert!(written > 0, "the committed runs have summaries");
    }
}
