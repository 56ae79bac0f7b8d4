//! raw.csv, the store of a run's measurements: its rows, reading them (a line cut short by a
//! crash repaired, older headers and spellings upgraded) and appending a finished point.

use crate::grid::Status;
use crate::spec::PointSpec;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use stealbench_workloads::Variant;

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

/// The rows of each point (rows of unknown variants left out), points in order of first
/// appearance.
pub(crate) fn by_point(rows: &[RawRow]) -> Vec<(PointSpec, Vec<&RawRow>)> {
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

/// A row for the tests: `fib` fj at size test, `rt` at P = `p`.
#[cfg(test)]
pub(crate) fn test_row(
    rt: &str,
    p: usize,
    rep: Option<usize>,
    s: Option<f64>,
    status: Status,
) -> RawRow {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Meta;
    use crate::tempdir::TempDir;
    use test_row as row;

    #[test]
    fn raw_csv_round_trips() {
        let dir = TempDir::new("raw-round-trip");
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
        assert_eq!(crate::results::recorded_points(&back).len(), 2);
    }

    #[test]
    fn older_spellings_are_read_and_rewritten_as_arms() {
        let dir = TempDir::new("raw-spellings");
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
        let dir = TempDir::new("raw-not-utf8");
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
        let dir = TempDir::new("raw-bad-seconds");
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
    fn a_cut_last_line_is_dropped() {
        let dir = TempDir::new("raw-cut");
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
}
