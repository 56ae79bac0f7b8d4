//! Result files of a run directory `results/<id>/<timestamp>/`: `raw.csv` (one row per
//! repetition, appended and flushed point by point), `summary.csv` (one row per point) and
//! `meta.json` (machine, build, settings), plus finding the run to resume.

use crate::grid::Status;
use crate::runtimes::Arm;
use crate::spec::PointSpec;
use crate::stats::{self, Summary};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};
use stealbench_schedulers::Pinning;
use stealbench_schedulers::topology::Topology;
use stealbench_workloads::{InputOptions, Size, Variant};

/// The columns of `raw.csv`, in order. Files written before later columns existed (the first
/// [`OLDER_COLUMNS`] of them) are read with those columns' defaults and given them before
/// anything is appended ([`upgrade_raw`]).
pub(crate) const RAW_HEADER: [&str; 15] = [
    "runtime",
    "workload",
    "variant",
    "workers",
    "size",
    "params",
    "rep",
    "seconds",
    "peak_rss_kb",
    "check",
    "status",
    "stats",
    "note",
    "round",
    "answer",
];

/// The column counts of older `raw.csv` files, each a first part of [`RAW_HEADER`]: before
/// `round` (13 columns: every row is round 1), before `answer` (14: no row has an answer).
pub(crate) const OLDER_COLUMNS: [usize; 2] = [13, 14];

/// One row of `raw.csv`: one timed repetition, or the one row of a point that produced none
/// (timeout, crash, failed warm-up check). A repetition whose check failed has a row with no
/// time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RawRow {
    /// Runtime name.
    pub runtime: String,
    /// Workload name.
    pub workload: String,
    /// Variant name.
    pub variant: String,
    /// Workers P.
    pub workers: usize,
    /// Size preset.
    pub size: String,
    /// The workload's parameters at that size (`n=32`).
    pub params: String,
    /// 1-based repetition, empty for a point-level row.
    pub rep: Option<usize>,
    /// Seconds of the timed computation; empty when there is no valid time.
    pub seconds: Option<f64>,
    /// Peak resident set of the point's process in KiB (from `wait4`), empty if unknown.
    pub peak_rss_kb: Option<u64>,
    /// `ok`, `failed: <what>`, or empty when no check ran.
    pub check: String,
    /// The point's status (`ok`, `check-failed`, `timeout`, `crashed`, `error`).
    pub status: Status,
    /// Scheduler statistics of the repetition, `name=value;...` (`n/a` = cannot count).
    pub stats: String,
    /// What went wrong, in one line (empty when nothing did).
    pub note: String,
    /// The round of the grid this point's measurement belongs to (1-based; see
    /// `reproduce --rounds`).
    #[serde(default = "first_round")]
    pub round: usize,
    /// The repetition's answer and what it was checked against
    /// ([`stealbench_workloads::Checked`]); empty for a row with no checked answer.
    #[serde(default)]
    pub answer: String,
}

/// The round of rows written before rounds existed.
fn first_round() -> usize {
    1
}

impl RawRow {
    /// The point this row belongs to; `None` for a runtime or variant this build does not
    /// know.
    pub(crate) fn key(&self) -> Option<PointSpec> {
        Some(PointSpec {
            runtime: self.runtime.parse().ok()?,
            workload: self.workload.clone(),
            variant: self.variant.parse::<Variant>().ok()?,
            workers: self.workers,
        })
    }
}

/// Appends the rows of one finished point to `raw.csv` (writing the header if the file is new)
/// in one write, then flushes it to the disk, so an interruption loses no finished point.
pub(crate) fn append_rows(path: &Path, rows: &[RawRow]) -> io::Result<()> {
    let new = !path.exists() || fs::metadata(path)?.len() == 0;
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    if new {
        w.write_record(RAW_HEADER).map_err(io::Error::other)?;
    }
    for r in rows {
        w.serialize(r).map_err(io::Error::other)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| io::Error::other(e.to_string()))?;
    let mut f = OpenOptions::new().create(true).append(true).open(path)?;
    f.write_all(&bytes)?;
    f.flush()?;
    f.sync_data()
}

/// Reads `raw.csv`. A last line cut short by a crash (no final newline) is dropped and cut off
/// the file, so appending continues on a clean line.
pub(crate) fn read_raw(path: &Path) -> io::Result<Vec<RawRow>> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let mut text = fs::read_to_string(path).map_err(|e| with_path(path, e))?;
    if let Some(keep) = cut_last_line(&text) {
        text.truncate(keep);
        let cut = |f: fs::File| f.set_len(keep as u64).and_then(|()| f.sync_data());
        OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(cut)
            .map_err(|e| with_path(path, e))?;
    }
    parse_raw(path, &text)
}

/// Where the whole lines of `text` end when its last line is cut short (no final newline).
pub(crate) fn cut_last_line(text: &str) -> Option<usize> {
    (!text.is_empty() && !text.ends_with('\n')).then(|| text.rfind('\n').map_or(0, |i| i + 1))
}

/// The rows of `text`, the content of the `raw.csv` at `path` (named in the errors), each
/// runtime and variant in today's spelling ([`crate::runtimes::upgrade`]: an older build spelt
/// some arm settings as runtimes or variants of their own).
pub(crate) fn parse_raw(path: &Path, text: &str) -> io::Result<Vec<RawRow>> {
    let mut rows = parse_as_written(path, text)?;
    for row in &mut rows {
        (row.runtime, row.variant) = crate::runtimes::upgrade(&row.runtime, &row.variant);
    }
    Ok(rows)
}

/// The rows of `text` as they are spelt in it.
fn parse_as_written(path: &Path, text: &str) -> io::Result<Vec<RawRow>> {
    let mut r = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let headers = r
        .headers()
        .map_err(|e| io::Error::other(format!("{}: {e}", path.display())))?
        .clone();
    let known = std::iter::once(RAW_HEADER.len())
        .chain(OLDER_COLUMNS)
        .any(|columns| headers.iter().eq(RAW_HEADER[..columns].iter().copied()));
    if !headers.is_empty() && !known {
        return Err(io::Error::other(format!(
            "{}: unexpected header {:?}",
            path.display(),
            headers.iter().collect::<Vec<_>>()
        )));
    }
    let mut rows = Vec::new();
    for (i, rec) in r.deserialize().enumerate() {
        let row: RawRow = rec.map_err(|e| io::Error::other(format!("{}: {e}", path.display())))?;
        // A time is a finite number of seconds, not negative: NaN, infinities and negative
        // values would enter the medians and every speedup.
        if let Some(t) = row.seconds.filter(|t| !(t.is_finite() && *t >= 0.0)) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: record {}: seconds {t} is not a time (a finite number, not negative)",
                    path.display(),
                    i + 1
                ),
            ));
        }
        rows.push(row);
    }
    Ok(rows)
}

/// The line that names what of `rows` (a run's raw.csv) no table or plot of `grid` shows: the
/// arms the grid no longer runs ([`crate::grid::Grid::lacking_note`]), and the runtimes or
/// variants this build cannot read at all (an arm a runtime no longer takes), with how many
/// rows each; `None` where every row has its place.
pub(crate) fn left_out_note(grid: &crate::grid::Grid, rows: &[RawRow]) -> Option<String> {
    let lacking = grid.lacking_note(rows.iter().filter_map(|r| Some(r.key()?.runtime)));
    let mut unreadable: Vec<(String, usize)> = Vec::new();
    for r in rows.iter().filter(|r| r.key().is_none()) {
        let what = format!("{} {}", r.runtime, r.variant);
        match unreadable.iter_mut().find(|(w, _)| *w == what) {
            Some((_, n)) => *n += 1,
            None => unreadable.push((what, 1)),
        }
    }
    let unreadable = (!unreadable.is_empty()).then(|| {
        let named: Vec<String> = unreadable
            .iter()
            .map(|(what, n)| format!("{what} ({n} rows)"))
            .collect();
        format!(
            "raw.csv has rows of runtimes or variants this build cannot read, in none of its \
             tables or plots: {}",
            named.join(", ")
        )
    });
    match (lacking, unreadable) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
    }
}

/// The points recorded in `rows` (finished, whatever their status).
pub(crate) fn recorded_points(rows: &[RawRow]) -> BTreeSet<PointSpec> {
    rows.iter().filter_map(RawRow::key).collect()
}

/// Why a recorded point must run again, if it must: its status is not `ok` (a crash, a
/// timeout, a failed check: a resumed run retries it, perhaps with a larger `--timeout`), or
/// its rows are not a whole record ([`incomplete_reason`]).
pub(crate) fn rerun_reason(rows: &[&RawRow], reps: usize) -> Option<String> {
    if let Some(failed) = rows.iter().find(|r| r.status != Status::Ok) {
        return Some(failed.status.name().to_string());
    }
    incomplete_reason(rows, reps)
}

/// Why the rows of one measurement (point, round) are not a whole record, if they are not: a
/// row recorded twice (the same repetition, or the point's row, on two lines), or an `ok`
/// measurement with fewer than `reps` timed repetitions (rows cut short or lost).
pub(crate) fn incomplete_reason(rows: &[&RawRow], reps: usize) -> Option<String> {
    let mut seen = BTreeSet::new();
    for r in rows {
        if !seen.insert(r.rep) {
            return Some(match r.rep {
                Some(rep) => format!("repetition {rep} recorded twice"),
                None => "its row recorded twice".to_string(),
            });
        }
    }
    if rows.iter().any(|r| r.status != Status::Ok) {
        return None;
    }
    let timed = rows
        .iter()
        .filter(|r| r.rep.is_some() && r.seconds.is_some())
        .count();
    (timed < reps).then(|| format!("{timed} of {reps} repetitions"))
}

/// The rows of each measurement (point, round) of `rows`, points in order of first
/// appearance, rounds in order.
fn measurements(rows: &[RawRow]) -> Vec<(PointSpec, usize, Vec<&RawRow>)> {
    by_point(rows)
        .into_iter()
        .flat_map(|(k, rs)| {
            let mut rounds: Vec<usize> = rs.iter().map(|r| r.round).collect();
            rounds.sort_unstable();
            rounds.dedup();
            rounds
                .into_iter()
                .map(|round| {
                    let of_round: Vec<&RawRow> =
                        rs.iter().copied().filter(|r| r.round == round).collect();
                    (k.clone(), round, of_round)
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The measurements (point, round) of `rows` that must run again ([`rerun_reason`]), with the
/// reason, in order of first appearance.
pub(crate) fn points_to_rerun(rows: &[RawRow], reps: usize) -> Vec<(PointSpec, usize, String)> {
    measurements(rows)
        .into_iter()
        .filter_map(|(k, round, rs)| Some((k, round, rerun_reason(&rs, reps)?)))
        .collect()
}

/// The measurements (point, round) of `rows` that are not whole records
/// ([`incomplete_reason`]), with the reason, in order of first appearance.
pub(crate) fn incomplete_measurements(
    rows: &[RawRow],
    reps: usize,
) -> Vec<(PointSpec, usize, String)> {
    measurements(rows)
        .into_iter()
        .filter_map(|(k, round, rs)| Some((k, round, incomplete_reason(&rs, reps)?)))
        .collect()
}

/// The measurements (point, round) recorded in `rows`, whatever their status.
pub(crate) fn recorded_rounds(rows: &[RawRow]) -> BTreeSet<(PointSpec, usize)> {
    rows.iter()
        .filter_map(|r| Some((r.key()?, r.round)))
        .collect()
}

/// The rows of each point (rows of unknown variants left out), points in order of first
/// appearance.
fn by_point(rows: &[RawRow]) -> Vec<(PointSpec, Vec<&RawRow>)> {
    let mut out: Vec<(PointSpec, Vec<&RawRow>)> = Vec::new();
    let mut index: HashMap<PointSpec, usize> = HashMap::new();
    for r in rows {
        let Some(k) = r.key() else { continue };
        let i = *index.entry(k.clone()).or_insert_with(|| {
            out.push((k, Vec::new()));
            out.len() - 1
        });
        out[i].1.push(r);
    }
    out
}

/// Moves the rows of the measurements (point, round) `set` from `raw` to `attempts` (appended
/// there, so no attempt is lost) and rewrites `raw` without them.
pub(crate) fn set_aside(
    raw: &Path,
    attempts: &Path,
    set: &BTreeSet<(PointSpec, usize)>,
) -> io::Result<()> {
    let rows = read_raw(raw)?;
    let (moved, kept): (Vec<RawRow>, Vec<RawRow>) = rows
        .into_iter()
        .partition(|r| r.key().is_some_and(|k| set.contains(&(k, r.round))));
    if moved.is_empty() {
        return Ok(());
    }
    upgrade_raw(attempts)?;
    append_rows(attempts, &moved).map_err(|e| with_path(attempts, e))?;
    rewrite_raw(raw, &kept)
}

/// Rewrites `raw` as `rows` under the current header: a temporary file beside it, synced,
/// then renamed over it, so an interruption leaves either the old file or the new one.
pub(crate) fn rewrite_raw(raw: &Path, rows: &[RawRow]) -> io::Result<()> {
    let tmp = raw.with_extension("csv.tmp");
    // A new file (a stale one removed, a symbolic link refused) gets the header, with or
    // without rows.
    drop(crate::files::create_fresh(&tmp)?);
    append_rows(&tmp, rows).map_err(|e| with_path(&tmp, e))?;
    fs::rename(&tmp, raw).map_err(|e| with_path(raw, e))
}

/// Gives a `raw.csv` of an older header ([`OLDER_COLUMNS`]) the columns it lacks, with their
/// defaults, and its rows of older spellings today's ([`parse_raw`]): the rows appended to it
/// then have its columns and name their points as its rows do.
pub(crate) fn upgrade_raw(raw: &Path) -> io::Result<()> {
    if !raw.exists() {
        return Ok(());
    }
    let text = fs::read_to_string(raw).map_err(|e| with_path(raw, e))?;
    let first = text.lines().next().unwrap_or_default();
    let old_header = OLDER_COLUMNS
        .iter()
        .any(|&columns| first == RAW_HEADER[..columns].join(","));
    if old_header || parse_as_written(raw, &text)? != parse_raw(raw, &text)? {
        let rows = read_raw(raw)?;
        rewrite_raw(raw, &rows)?;
    }
    Ok(())
}

/// `e` with the path it concerns in its message.
pub(crate) fn with_path(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// The summary of one point, for `summary.csv`, the table and the plot.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PointSummary {
    /// The point.
    pub key: PointSpec,
    /// Size preset.
    pub size: String,
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
}

/// Parses a `stats` cell of `raw.csv` (`steals=3;steal_attempts=n/a`) into (name, value)
/// pairs, `None` for `n/a`; pieces that are not `name=value` are skipped.
pub(crate) fn parse_stats(s: &str) -> Vec<(String, Option<u64>)> {
    s.split(';')
        .filter_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            Some((k.to_string(), v.parse().ok()))
        })
        .collect()
}

/// The counters of `rows` (one point's repetitions), in order of first appearance.
fn counters_of(rows: &[&RawRow]) -> Vec<(String, Vec<u64>)> {
    let mut out: Vec<(String, Vec<u64>)> = Vec::new();
    for r in rows.iter().filter(|r| r.rep.is_some()) {
        for (k, v) in parse_stats(&r.stats) {
            let i = match out.iter().position(|(n, _)| *n == k) {
                Some(i) => i,
                None => {
                    out.push((k, Vec::new()));
                    out.len() - 1
                }
            };
            out[i].1.extend(v);
        }
    }
    out
}

/// Groups raw rows into points (in order of first appearance) and summarises each. A row
/// recorded twice (a repetition of a round on two lines) counts once.
pub(crate) fn summarize(rows: &[RawRow]) -> Vec<PointSummary> {
    by_point(rows)
        .into_iter()
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
                size: rs[0].size.clone(),
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
                key: k,
            }
        })
        .collect()
}

/// The median of the point `key` if it finished ok.
pub(crate) fn median_of(summaries: &[PointSummary], key: &PointSpec) -> Option<f64> {
    summaries
        .iter()
        .find(|s| &s.key == key)
        .and_then(|s| s.summary)
        .map(|s| s.median)
}

/// The T_s point of `workload` among `summaries` (the `serial` runtime at P = 1).
pub(crate) fn ts_of<'a>(summaries: &'a [PointSummary], workload: &str) -> Option<&'a PointSummary> {
    summaries.iter().find(|s| {
        s.key.workload == workload && s.key.runtime == crate::runtimes::SERIAL && s.key.workers == 1
    })
}

/// One row of `summary.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SummaryRow {
    /// Runtime.
    pub runtime: String,
    /// Workload.
    pub workload: String,
    /// Variant.
    pub variant: String,
    /// Workers P.
    pub workers: usize,
    /// Size preset.
    pub size: String,
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
    /// T_s / T_P, T_s being the workload's `serial` time at P = 1 (empty when oversubscribed or
    /// simulated).
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
/// workers than `cpus` (oversubscribed: no speedup).
pub(crate) fn summary_rows(summaries: &[PointSummary], cpus: usize) -> Vec<SummaryRow> {
    summaries
        .iter()
        .map(|s| {
            let median = s.summary.map(|x| x.median);
            let ts = ts_of(summaries, &s.key.workload)
                .and_then(|t| t.summary)
                .map(|x| x.median);
            let t1_key = PointSpec {
                workers: 1,
                ..s.key.clone()
            };
            let t1 = median_of(summaries, &t1_key);
            let simulated = s.key.runtime.sim.is_some();
            let oversubscribed = s.key.workers > cpus && !simulated;
            // A simulated point's seconds are the replay's wall time: no speedup either.
            let speedup =
                |base| stats::speedup(base, median).filter(|_| !oversubscribed && !simulated);
            SummaryRow {
                runtime: s.key.runtime.to_string(),
                workload: s.key.workload.clone(),
                variant: s.key.variant.name().to_string(),
                workers: s.key.workers,
                size: s.size.clone(),
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

/// The settings of a reproduction, stored in `meta.json` so `--resume` continues with them.
/// The typed ones are stored as the text the command line takes, and read back with their
/// `FromStr` (an arm with `Arm::parse`, older spellings upgraded), which names a value it
/// refuses; the counts and lists are checked by `reproduce::check_stored_settings`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Settings {
    /// Size preset.
    #[serde(with = "as_text")]
    pub size: Size,
    /// Timed repetitions per point.
    pub reps: usize,
    /// Worker counts.
    pub workers: Vec<usize>,
    /// Runtimes selected (`None` = all): an arm with no setting selects every arm of its
    /// runtime.
    #[serde(with = "arms_as_text")]
    pub runtimes: Option<Vec<Arm>>,
    /// Workloads selected (`None` = all).
    pub workloads: Option<Vec<String>>,
    /// Per-point timeout in seconds (0 = none).
    pub timeout_secs: u64,
    /// Thread pinning.
    #[serde(with = "as_text")]
    pub pinning: Pinning,
    /// `--hw-video`: the AVI the `hw` points tracked (absolute path; absent = the synthetic
    /// video). The hw rows' `params` also give its fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hw_video: Option<PathBuf>,
    /// `--hw-points`: the initial points file of `hw_video` (absolute path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hw_points: Option<PathBuf>,
    /// Rounds over the grid (`--rounds`): every point runs once per round, the rounds one
    /// after the other, each in a shuffled order.
    #[serde(default = "first_round")]
    pub rounds: usize,
    /// `--stack-size` in bytes (absent: the runtimes' default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_size: Option<usize>,
    /// `--figures-dir`: where the table and plots go (absolute path; absent in runs made
    /// before it was stored: `paper-figures`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figures_dir: Option<PathBuf>,
    /// `--shard`: the part of the grid this run measures (absent: all of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shard::Shard>,
}

/// A setting in `meta.json` as the command line spells it: written with `Display`, read with
/// `FromStr` (the command line's parser), whose message names a value it refuses.
mod as_text {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};
    use std::fmt::Display;
    use std::str::FromStr;

    pub(super) fn serialize<T: Display, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    pub(super) fn deserialize<'de, T, D>(d: D) -> Result<T, D::Error>
    where
        T: FromStr<Err = String>,
        D: Deserializer<'de>,
    {
        String::deserialize(d)?.parse().map_err(D::Error::custom)
    }
}

/// The selected runtimes in `meta.json`: each arm's spelling, read in today's spelling
/// ([`crate::runtimes::upgrade`]: an older build spelt some settings as runtimes of their
/// own).
mod arms_as_text {
    use crate::runtimes::{self, Arm};
    use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error};

    pub(super) fn serialize<S: Serializer>(
        arms: &Option<Vec<Arm>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        arms.as_ref()
            .map(|v| v.iter().map(Arm::spec).collect::<Vec<_>>())
            .serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Vec<Arm>>, D::Error> {
        let Some(spelt) = Option::<Vec<String>>::deserialize(d)? else {
            return Ok(None);
        };
        spelt
            .iter()
            .map(|r| Arm::parse(&runtimes::upgrade(r, "").0).map_err(D::Error::custom))
            .collect::<Result<_, _>>()
            .map(Some)
    }
}

impl Settings {
    /// The `--runtimes` / `--workloads` filters of these settings.
    pub(crate) fn selection(&self) -> crate::grid::Selection {
        crate::grid::Selection {
            runtimes: self.runtimes.clone(),
            workloads: self.workloads.clone(),
        }
    }

    /// The input options these settings give the workloads.
    pub(crate) fn input_options(&self) -> InputOptions {
        InputOptions {
            hw_video: self.hw_video.clone(),
            hw_points: self.hw_points.clone(),
            params: Vec::new(),
        }
    }
}

/// The machine a run was made on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Machine {
    /// `model name` of /proc/cpuinfo.
    pub cpu_model: String,
    /// Physical cores this process may run on (all of them unless its affinity, set by
    /// `taskset`, a cgroup or Slurm, leaves some out).
    pub cores: usize,
    /// Logical CPUs this process may run on, as `cores`.
    pub logical_cpus: usize,
    /// NUMA nodes.
    pub numa_nodes: usize,
    /// `uname -srm` of the kernel.
    pub kernel: String,
}

/// The build that made a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Build {
    /// Version of stealbench.
    pub stealbench_version: String,
    /// `rustc --version` at build time.
    pub rustc: String,
    /// Git commit at build time, or `unknown`.
    pub git_commit: String,
    /// `jemalloc` or `system`.
    pub allocator: String,
    /// `release` or `debug` (debug timings are not comparable).
    pub profile: String,
    /// The flags rustc got (empty if none; absent in runs made before it was recorded).
    #[serde(default)]
    pub rustflags: String,
}

/// `meta.json` of a run directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Meta {
    /// Figure or table id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// When the run started (UTC, ISO 8601).
    pub timestamp: String,
    /// The command line that started it.
    pub command_line: String,
    /// Command lines of later `--resume`s, with their times.
    pub resumed: Vec<String>,
    /// Whether every point has been measured and the summary written.
    pub finished: bool,
    /// When it finished.
    pub finished_at: Option<String>,
    /// The settings.
    pub settings: Settings,
    /// The machine.
    pub machine: Machine,
    /// The build.
    pub build: Build,
    /// The run directories `stealbench merge` combined into this one, each with its commit,
    /// size, CPU and start (empty for a run `reproduce` made).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<String>,
}

#[cfg(test)]
impl Meta {
    /// A run's metadata for the tests: figure `id`, size `test`, P = 1, `reps` repetitions,
    /// this machine and build.
    pub(crate) fn sample(id: &str, reps: usize) -> Meta {
        Meta {
            id: id.into(),
            title: String::new(),
            timestamp: String::new(),
            command_line: String::new(),
            resumed: Vec::new(),
            finished: false,
            finished_at: None,
            settings: Settings {
                size: Size::Test,
                reps,
                workers: vec![1],
                runtimes: None,
                workloads: None,
                timeout_secs: 0,
                pinning: Pinning::None,
                hw_video: None,
                hw_points: None,
                rounds: 1,
                stack_size: None,
                figures_dir: None,
                shard: None,
            },
            machine: this_machine(),
            build: this_build("system"),
            merged_from: Vec::new(),
        }
    }
}

impl Meta {
    /// Reads `meta.json` of `dir`.
    pub(crate) fn read(dir: &Path) -> io::Result<Meta> {
        let path = dir.join("meta.json");
        let text = fs::read_to_string(&path).map_err(|e| with_path(&path, e))?;
        serde_json::from_str(&text)
            .map_err(|e| io::Error::other(format!("{}: {e}", path.display())))
    }

    /// Writes `meta.json` of `dir` (through a temporary file, so a crash leaves the old one).
    pub(crate) fn write(&self, dir: &Path) -> io::Result<()> {
        let tmp = dir.join("meta.json.tmp");
        let mut f = crate::files::create_fresh(&tmp)?;
        f.write_all(serde_json::to_string_pretty(self)?.as_bytes())?;
        f.write_all(b"\n")?;
        f.sync_data()?;
        fs::rename(tmp, dir.join("meta.json"))
    }
}

/// The machine this process runs on.
pub(crate) fn this_machine() -> Machine {
    let topo = Topology::detect();
    let cpu_model = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".to_string());
    Machine {
        cpu_model,
        cores: topo.cores(),
        logical_cpus: topo.cpus.len(),
        numa_nodes: topo.nodes(),
        kernel: kernel(),
    }
}

fn c_field(field: &[libc::c_char]) -> String {
    let bytes: Vec<u8> = field
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `sysname release machine` from uname(2), or `unknown`.
pub(crate) fn kernel() -> String {
    // SAFETY: `utsname` is plain old data (arrays of c_char) for which all-zeroes is valid.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, exclusively borrowed `utsname` for uname to fill in.
    if unsafe { libc::uname(&mut u) } != 0 {
        return "unknown".to_string();
    }
    format!(
        "{} {} {}",
        c_field(&u.sysname),
        c_field(&u.release),
        c_field(&u.machine)
    )
}

/// The build of this binary, given the allocator `main` chose.
pub(crate) fn this_build(allocator: &str) -> Build {
    Build {
        stealbench_version: env!("CARGO_PKG_VERSION").to_string(),
        rustc: env!("STEALBENCH_RUSTC_VERSION").to_string(),
        git_commit: env!("STEALBENCH_GIT_COMMIT").to_string(),
        allocator: allocator.to_string(),
        profile: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
        .to_string(),
        rustflags: env!("STEALBENCH_RUSTFLAGS").to_string(),
    }
}

/// Civil date (year, month, day) of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// UTC date and time of `t` as (`2026-11-21T20:55:03Z`, `2026-11-21T20-55-03Z`): ISO 8601, and
/// the same without colons for a directory name.
pub(crate) fn timestamps(t: SystemTime) -> (String, String) {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    let (h, mi, se) = (s / 3600, s / 60 % 60, s % 60);
    (
        format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{se:02}Z"),
        format!("{y:04}-{mo:02}-{d:02}T{h:02}-{mi:02}-{se:02}Z"),
    )
}

/// An exclusive lock on a run directory, held for as long as a `reproduce` works in it, so
/// that a `--resume` cannot write into a run that another process is still making. The lock
/// is `flock(2)` on `<dir>/.lock`: the kernel releases it when the process ends, however it
/// ends, so a crashed run never leaves a stale lock behind.
#[derive(Debug)]
pub(crate) struct RunLock {
    _file: File,
}

impl RunLock {
    /// Takes the lock of `dir`, or says which process is using the run.
    pub(crate) fn acquire(dir: &Path) -> Result<RunLock, String> {
        use std::os::fd::AsRawFd;
        let path = dir.join(".lock");
        let mut file =
            crate::files::open_regular(&path).map_err(|e| format!("cannot lock the run: {e}"))?;
        // SAFETY: `file` is open for the whole call, so its descriptor is valid; flock reads
        // and writes no memory of ours.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let holder = fs::read_to_string(&path).unwrap_or_default();
            return Err(format!(
                "{} is in use by another stealbench process{}; wait for it or stop it first",
                dir.display(),
                match holder.trim() {
                    "" => String::new(),
                    pid => format!(" (pid {pid})"),
                }
            ));
        }
        file.set_len(0)
            .and_then(|()| write!(file, "{}", std::process::id()))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(RunLock { _file: file })
    }
}

/// Creates a new run directory `<root>/<id>/<timestamp>/` (suffixed `-2`, `-3`, ... if taken).
pub(crate) fn create_run_dir(root: &Path, id: &str, stamp: &str) -> io::Result<PathBuf> {
    let parent = root.join(id);
    fs::create_dir_all(&parent)?;
    for i in 1.. {
        let name = if i == 1 {
            stamp.to_string()
        } else {
            format!("{stamp}-{i}")
        };
        let dir = parent.join(name);
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    unreachable!("an unbounded range ends only by returning")
}

/// The most recent run directory of `id` under `root` whose `meta.json` says it is unfinished.
pub(crate) fn latest_unfinished(root: &Path, id: &str) -> io::Result<Option<PathBuf>> {
    let parent = root.join(id);
    if !parent.is_dir() {
        return Ok(None);
    }
    let mut dirs: Vec<PathBuf> = fs::read_dir(&parent)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    // Directory names are timestamps: the lexical order is the time order.
    dirs.sort();
    Ok(dirs
        .into_iter()
        .rev()
        .find(|d| Meta::read(d).is_ok_and(|m| m.id == id && !m.finished)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_read_per_repetition() {
        assert_eq!(
            parse_stats("steals=3;steal_attempts=n/a;junk"),
            [
                ("steals".to_string(), Some(3)),
                ("steal_attempts".to_string(), None)
            ]
        );
        let row = |rep: Option<usize>, stats: &str| RawRow {
            runtime: "abp".into(),
            workload: "fib".into(),
            variant: "fj".into(),
            workers: 2,
            size: "test".into(),
            params: "n=20".into(),
            rep,
            seconds: rep.map(|_| 0.1),
            peak_rss_kb: None,
            check: "ok".into(),
            status: Status::Ok,
            stats: stats.into(),
            note: String::new(),
            round: 1,
            answer: String::new(),
        };
        let s = summarize(&[
            row(Some(1), "steals=3;deviations=n/a"),
            row(Some(2), "steals=5;deviations=n/a"),
        ]);
        assert_eq!(s[0].counter("steals"), Some(&[3, 5][..]));
        assert_eq!(s[0].counter("deviations"), None);
        assert_eq!(s[0].counter("nope"), None);
    }
    use tempfile::TempDir;

    fn row(rt: &str, p: usize, rep: Option<usize>, s: Option<f64>, status: Status) -> RawRow {
        RawRow {
            runtime: rt.into(),
            workload: "fib".into(),
            variant: "fj".into(),
            workers: p,
            size: "test".into(),
            params: "n=20".into(),
            rep,
            seconds: s,
            peak_rss_kb: Some(2048),
            check: if s.is_some() {
                "ok".into()
            } else {
                String::new()
            },
            status,
            stats: "steals=n/a;steal_attempts=3".into(),
            note: if status == Status::Ok {
                String::new()
            } else {
                "killed, \"quoted\"\nnewline".into()
            },
            round: 1,
            answer: if s.is_some() {
                "3987 nodes, depth 5, 3232 leaves; checked against \"a walk\"".into()
            } else {
                String::new()
            },
        }
    }

    #[test]
    fn a_run_directory_is_locked_while_in_use() {
        let tmp = TempDir::with_prefix("stealbench-lock-").unwrap();
        let dir = tmp.path();
        let held = RunLock::acquire(dir).unwrap();
        let e = RunLock::acquire(dir).unwrap_err();
        assert!(e.contains("in use by another stealbench process"), "{e}");
        assert!(e.contains(&std::process::id().to_string()), "{e}");
        drop(held);
        RunLock::acquire(dir).unwrap();
    }

    #[test]
    fn the_lock_and_the_temporary_files_refuse_planted_links() {
        let dir = TempDir::with_prefix("stealbench-results-planted-").unwrap();
        let target = dir.path().join("target");
        fs::write(&target, b"precious").unwrap();
        let plant = |name: &str| std::os::unix::fs::symlink(&target, dir.path().join(name));
        // The lock of a run directory.
        plant(".lock").unwrap();
        let e = RunLock::acquire(dir.path()).unwrap_err();
        assert!(e.contains(".lock is a symbolic link"), "{e}");
        // The temporary meta.json and raw.csv.
        plant("meta.json.tmp").unwrap();
        let e = Meta::write(&Meta::sample("prows-fig3", 1), dir.path()).unwrap_err();
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        plant("raw.csv.tmp").unwrap();
        let e = rewrite_raw(&dir.path().join("raw.csv"), &[]).unwrap_err();
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        assert_eq!(fs::read(&target).unwrap(), b"precious");
    }

    #[test]
    fn raw_csv_round_trips() {
        let dir = TempDir::with_prefix("stealbench-raw-round-trip-").unwrap();
        let path = dir.path().join("raw.csv");
        let a = vec![
            row("serial", 1, Some(1), Some(0.1 + 0.2), Status::Ok),
            row("serial", 1, Some(2), Some(1e-9), Status::Ok),
        ];
        let b = vec![row("rayon", 2, None, None, Status::Timeout)];
        append_rows(&path, &a).unwrap();
        append_rows(&path, &b).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(&RAW_HEADER.join(",")), "{text}");
        let back = read_raw(&path).unwrap();
        assert_eq!(back, [a, b].concat());
        assert_eq!(recorded_points(&back).len(), 2);
    }

    #[test]
    fn older_spellings_are_read_and_rewritten_as_arms() {
        let dir = TempDir::with_prefix("stealbench-raw-spellings-").unwrap();
        let path = dir.path().join("raw.csv");
        let old = |rt: &str, variant: &str| RawRow {
            variant: variant.into(),
            ..row(rt, 2, Some(1), Some(0.5), Status::Ok)
        };
        append_rows(
            &path,
            &[
                old("prows-artifact", "gf"),
                old("serial-async", "fj"),
                old("abp", "sf-nostack"),
                old("libfork/pin=scatter", "fj"),
            ],
        )
        .unwrap();
        let want = [
            ("prows/placement=artifact", "gf"),
            ("serial/front=async", "fj"),
            ("abp/futures=nostack", "sf"),
            ("libfork/pinning=scatter", "fj"),
        ];
        let spelt = |rows: &[RawRow]| -> Vec<(String, String)> {
            rows.iter()
                .map(|r| (r.runtime.clone(), r.variant.clone()))
                .collect()
        };
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(spelt(&read_raw(&path).unwrap()), want);
        upgrade_raw(&path).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert!(
            !text.contains("prows-artifact") && !text.contains("pin="),
            "{text}"
        );
        assert_eq!(spelt(&read_raw(&path).unwrap()), want);
    }

    #[test]
    fn an_unreadable_raw_csv_or_meta_json_is_named() {
        let dir = TempDir::with_prefix("stealbench-raw-not-utf8-").unwrap();
        let raw = dir.path().join("raw.csv");
        fs::write(&raw, b"runtime,\xff\xfe\n").unwrap();
        for e in [read_raw(&raw).unwrap_err(), upgrade_raw(&raw).unwrap_err()] {
            assert_eq!(
                e.to_string(),
                format!("{}: stream did not contain valid UTF-8", raw.display())
            );
        }
        let meta = dir.path().join("meta.json");
        fs::write(&meta, b"\xff").unwrap();
        let e = Meta::read(dir.path()).unwrap_err().to_string();
        assert!(e.starts_with(&meta.display().to_string()), "{e}");
    }

    #[test]
    fn a_time_that_is_no_time_is_refused() {
        let dir = TempDir::with_prefix("stealbench-raw-bad-seconds-").unwrap();
        let raw = dir.path().join("raw.csv");
        let good = row("serial", 1, Some(1), Some(0.1), Status::Ok);
        append_rows(&raw, std::slice::from_ref(&good)).unwrap();
        assert_eq!(read_raw(&raw).unwrap(), std::slice::from_ref(&good));
        for bad in [f64::NAN, f64::INFINITY, -1e9] {
            let _ = fs::remove_file(&raw);
            let r = RawRow {
                seconds: Some(bad),
                ..good.clone()
            };
            append_rows(&raw, &[good.clone(), r]).unwrap();
            let e = read_raw(&raw).unwrap_err().to_string();
            assert!(
                e.contains("record 2: seconds") && e.contains("is not a time"),
                "{e}"
            );
        }
    }

    #[test]
    fn rows_of_arms_no_longer_taken_are_named() {
        let fig = crate::figures::prows_fig3::figure();
        let grid = crate::grid::Grid::build(fig.rows, &[1], &Default::default());
        let ok = row("serial", 1, Some(1), Some(0.1), Status::Ok);
        assert_eq!(left_out_note(&grid, std::slice::from_ref(&ok)), None);
        let refused = RawRow {
            runtime: "rayon/idle=busy".into(),
            ..ok.clone()
        };
        let note = left_out_note(&grid, &[ok, refused.clone(), refused]).unwrap();
        assert!(
            note.ends_with(
                "cannot read, in none of its tables or plots: rayon/idle=busy fj (2 rows)"
            ),
            "{note}"
        );
    }

    #[test]
    fn meta_json_settings_are_read_by_the_command_lines_parsers() {
        let dir = TempDir::with_prefix("stealbench-meta-settings-").unwrap();
        let mut meta = Meta::sample("prows-fig3", 2);
        meta.settings.runtimes = Some(vec!["prows/placement=artifact".into()]);
        meta.write(dir.path()).unwrap();
        let path = dir.path().join("meta.json");
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"size\": \"test\""), "{text}");
        assert_eq!(Meta::read(dir.path()).unwrap(), meta);
        // An older build's spelling selects the same arm.
        let older = text.replace("prows/placement=artifact", "prows-artifact");
        fs::write(&path, older).unwrap();
        assert_eq!(Meta::read(dir.path()).unwrap(), meta);
        for (from, to, says) in [
            (
                "\"size\": \"test\"",
                "\"size\": \"huge\"",
                "unknown size 'huge'",
            ),
            (
                "\"pinning\": \"none\"",
                "\"pinning\": \"diagonal\"",
                "'diagonal'",
            ),
            (
                "prows/placement=artifact",
                "nosuch",
                "unknown runtime 'nosuch'",
            ),
            (
                "prows/placement=artifact",
                "abp/placement=artifact",
                "only prows has",
            ),
        ] {
            fs::write(&path, text.replace(from, to)).unwrap();
            let e = Meta::read(dir.path()).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("meta.json"), "{to}: {e}");
        }
    }

    #[test]
    fn a_row_recorded_twice_counts_once_and_marks_the_measurement() {
        let rep = |n, t| row("serial", 1, Some(n), Some(t), Status::Ok);
        let whole = vec![rep(1, 0.1), rep(2, 0.3)];
        assert!(points_to_rerun(&whole, 2).is_empty());
        assert!(incomplete_measurements(&whole, 2).is_empty());
        // Repetition 2 twice, repetition 1 lost: two rows, but not two repetitions.
        let twice = vec![rep(2, 0.3), rep(2, 0.3)];
        let why = points_to_rerun(&twice, 2);
        assert_eq!(why.len(), 1);
        assert_eq!(why[0].2, "repetition 2 recorded twice");
        assert_eq!(incomplete_measurements(&twice, 2)[0].2, why[0].2);
        assert_eq!(summarize(&twice)[0].summary.unwrap().n, 1);
        // A point's row twice.
        let timeout = row("serial", 1, None, None, Status::Timeout);
        let rows = vec![timeout.clone(), timeout];
        assert_eq!(
            incomplete_measurements(&rows, 2)[0].2,
            "its row recorded twice"
        );
        // Cut short: fewer repetitions than asked.
        assert_eq!(
            incomplete_measurements(&whole[..1], 2)[0].2,
            "1 of 2 repetitions"
        );
        // A failed measurement is whole, and run again.
        let failed = vec![row("serial", 1, None, None, Status::Crashed)];
        assert!(incomplete_measurements(&failed, 2).is_empty());
        assert_eq!(points_to_rerun(&failed, 2)[0].2, "crashed");
    }

    #[test]
    fn a_cut_last_line_is_dropped() {
        let dir = TempDir::with_prefix("stealbench-raw-cut-").unwrap();
        let path = dir.path().join("raw.csv");
        let a = vec![row("serial", 1, Some(1), Some(0.5), Status::Ok)];
        append_rows(&path, &a).unwrap();
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"rayon,fib,fj,2,test,n=2").unwrap();
        drop(f);
        assert_eq!(read_raw(&path).unwrap(), a);
        append_rows(&path, &a).unwrap();
        assert_eq!(read_raw(&path).unwrap().len(), 2);
    }

    #[test]
    fn a_simulated_point_has_no_speedup() {
        let rows = vec![
            row("serial", 1, Some(1), Some(1.0), Status::Ok),
            row("abp/sim=unit", 1, Some(1), Some(0.5), Status::Ok),
            row("abp/sim=unit", 64, Some(1), Some(0.25), Status::Ok),
        ];
        let out = summary_rows(&summarize(&rows), 2);
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
            row("serial", 1, Some(1), Some(1.0), Status::Ok),
            row("serial", 1, Some(2), Some(3.0), Status::Ok),
            row("rayon", 1, Some(1), Some(4.0), Status::Ok),
            row("rayon", 2, Some(1), Some(1.0), Status::Ok),
            row("rayon", 2, Some(2), Some(1.0), Status::Ok),
            row("rayon", 2, Some(3), Some(4.0), Status::Ok),
            row("tokio", 2, None, None, Status::Crashed),
        ];
        let s = summarize(&rows);
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
    fn timestamps_are_utc_civil_dates() {
        let t = UNIX_EPOCH + std::time::Duration::from_secs(951_782_400 + 3661); // 2000-02-29
        assert_eq!(
            timestamps(t),
            (
                "2000-02-29T01:01:01Z".to_string(),
                "2000-02-29T01-01-01Z".to_string()
            )
        );
        assert_eq!(timestamps(UNIX_EPOCH).0, "1970-01-01T00:00:00Z");
    }

    #[test]
    fn run_dirs_and_latest_unfinished() {
        let dir = TempDir::with_prefix("stealbench-run-dirs-").unwrap();
        let a = create_run_dir(dir.path(), "fig", "2020-01-01T00-00-00Z").unwrap();
        let b = create_run_dir(dir.path(), "fig", "2020-01-01T00-00-00Z").unwrap();
        assert_ne!(a, b);
        assert!(latest_unfinished(dir.path(), "fig").unwrap().is_none());
        let mut meta = Meta::sample("fig", 2);
        meta.write(&a).unwrap();
        assert_eq!(
            latest_unfinished(dir.path(), "fig").unwrap(),
            Some(a.clone())
        );
        meta.write(&b).unwrap();
        assert_eq!(
            latest_unfinished(dir.path(), "fig").unwrap(),
            Some(b.clone())
        );
        meta.finished = true;
        meta.write(&b).unwrap();
        assert_eq!(latest_unfinished(dir.path(), "fig").unwrap(), Some(a));
        assert_eq!(Meta::read(&b).unwrap(), meta);
    }
}
