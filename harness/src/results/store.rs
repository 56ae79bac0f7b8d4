//! raw.csv, the store of a run's measurements: its typed rows, read once per command into an
//! index by point, older headers and spellings upgraded, a finished point appended.
//!
//! The file has the columns [`RAW_COLUMNS`], then one column per counter (`steals`,
//! `heavy_fences`, ...), so a data-frame library (pandas, R, Python's `csv`) reads each
//! counter as a column of its own: a number, `n/a` where the runtime cannot count it, empty
//! where the row's runtime has no such counter. The counter columns are those of the rows
//! recorded, in the order they first appeared; a point that brings a new counter has the file
//! rewritten with its column added (beside it, then renamed: never torn). Older files, which
//! kept a repetition's counters in one `stats` cell (`steals=3;steal_attempts=n/a`) and had no
//! `pool`, `round` or `answer` column, are read as well and rewritten in today's shape before
//! anything is appended to them.
//!
//! A row names its point by the arm's spelling; a row this build cannot read (a runtime,
//! variant or size it does not know, or an arm a runtime no longer takes) is kept as it is,
//! named by [`left_out_note`], and written back with the others.

use super::record::{RepCheck, TextRow, is_counter_name, is_formula, parse_stats, row_of};
use crate::files::with_path;
use crate::grid::Status;
use crate::protocol::PoolRecord;
use crate::runtimes::{self, Arm};
use crate::spec::PointSpec;
use std::collections::{BTreeSet, HashMap};
use std::io::{self, Seek, Write};
use std::path::{Path, PathBuf};
use stealbench_workloads::{Size, Variant};

/// The columns of `raw.csv` before its counters, in order.
pub(crate) const RAW_COLUMNS: [&str; 15] = [
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
    "note",
    "round",
    "answer",
    "pool",
];

/// The header of the `raw.csv` of older builds: today's columns up to `check` and `status`,
/// then the counters in the one `stats` cell, then `note`, `round` and `answer`, and no `pool`.
/// Its column counts ([`OLDER_COLUMNS`]) are each a first part of it: before `round` (13
/// columns: every row is round 1), before `answer` (14: no row has an answer), and with both
/// (15).
fn older_header() -> impl Iterator<Item = &'static str> {
    let note = RAW_COLUMNS
        .iter()
        .position(|&c| c == "note")
        .expect("a note column");
    let pool = RAW_COLUMNS
        .iter()
        .position(|&c| c == "pool")
        .expect("a pool column");
    RAW_COLUMNS[..note]
        .iter()
        .copied()
        .chain(["stats"])
        .chain(RAW_COLUMNS[note..pool].iter().copied())
}

/// The column counts of older `raw.csv` files ([`older_header`]).
pub(crate) const OLDER_COLUMNS: [usize; 3] = [13, 14, 15];

/// One row of `raw.csv`: one timed repetition, or the one row of a point that produced none
/// (timeout, crash, failed warm-up check). A repetition whose check failed has a row with no
/// time.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawRow {
    /// The point: arm, workload, variant, P.
    pub point: PointSpec,
    /// Size preset.
    pub size: Size,
    /// The workload's parameters as the point's process reported them (`n=32`).
    pub params: String,
    /// 1-based repetition, `None` for a point-level row.
    pub rep: Option<usize>,
    /// Seconds of the timed computation; `None` when there is no valid time.
    pub seconds: Option<f64>,
    /// Peak resident set of the point's process in KiB, as it reported it; `None` if unknown.
    pub peak_rss_kb: Option<u64>,
    /// The check of the repetition's answer.
    pub check: RepCheck,
    /// The point's status.
    pub status: Status,
    /// What went wrong, in one line (empty when nothing did).
    pub note: String,
    /// The round of the grid this point's measurement belongs to (1-based; see
    /// `reproduce --rounds`).
    pub round: usize,
    /// The repetition's answer and what it was checked against
    /// ([`stealbench_workloads::Checked`]); empty for a row with no checked answer.
    pub answer: String,
    /// The pool's configuration as the point's process started it (`None`: a simulated point,
    /// one whose process never reported, or a row of an older build).
    pub pool: Option<PoolRecord>,
    /// The repetition's counters, in the file's column order (`None`: cannot count).
    pub counters: Vec<(String, Option<u64>)>,
}

/// The rows of a `raw.csv`, read once and indexed by point; appending and rewriting keep the
/// file and the index together.
#[derive(Debug, Clone)]
pub(crate) struct Store {
    /// The file.
    path: PathBuf,
    /// Its rows, in file order.
    rows: Vec<RawRow>,
    /// Its rows this build cannot read.
    unread: Vec<TextRow>,
    /// Its counter columns, in order.
    counters: Vec<String>,
    /// Whether the file is in today's shape (header and spellings).
    current: bool,
    /// The rows of each point, by index into `rows`.
    index: HashMap<PointSpec, Vec<usize>>,
    /// The points in the order of their first row.
    order: Vec<PointSpec>,
}

impl Store {
    /// Reads the `raw.csv` at `path` to append to it (none there: an empty store). A last line
    /// cut short by a crash (no final newline) is dropped and cut off the file (not through a
    /// symbolic link), so appending continues on a clean line.
    pub(crate) fn open(path: &Path) -> io::Result<Store> {
        Store::load(path, true)
    }

    /// Reads the `raw.csv` at `path` and leaves the file as it is (`report` reads runs it
    /// must not change): a last line cut short is dropped from the store only.
    pub(crate) fn read(path: &Path) -> io::Result<Store> {
        Store::load(path, false)
    }

    /// [`Store::open`] (`repair`: the cut line is cut off the file too) or [`Store::read`].
    fn load(path: &Path, repair: bool) -> io::Result<Store> {
        let mut bytes = match crate::files::read_regular(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Store::empty(path)),
            r => r?,
        };
        if let Some(keep) = cut_last_line(&bytes) {
            bytes.truncate(keep);
            if repair {
                let f = crate::files::open_regular(path)?;
                f.set_len(keep as u64)
                    .and_then(|()| f.sync_data())
                    .map_err(|e| with_path(path, e))?;
            }
        }
        let text = String::from_utf8(bytes).map_err(|_| {
            with_path(
                path,
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    "stream did not contain valid UTF-8",
                ),
            )
        })?;
        Store::parse(path, &text)
    }

    /// An empty store of the file `path`.
    fn empty(path: &Path) -> Store {
        Store {
            path: path.to_path_buf(),
            rows: Vec::new(),
            unread: Vec::new(),
            counters: Vec::new(),
            current: true,
            index: HashMap::new(),
            order: Vec::new(),
        }
    }

    /// The rows of `text`, the content of the `raw.csv` at `path` (named in the errors), each
    /// arm and variant in today's spelling ([`runtimes::upgrade`]: an older build spelt some
    /// arm settings as runtimes or variants of their own).
    pub(crate) fn parse(path: &Path, text: &str) -> io::Result<Store> {
        let bad = |what: String| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: {what}", path.display()),
            )
        };
        let mut store = Store::empty(path);
        let mut r = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(text.as_bytes());
        let mut records = r.records();
        let Some(header) = records.next() else {
            return Ok(store);
        };
        let header = header.map_err(|e| bad(e.to_string()))?;
        let names: Vec<String> = header.iter().map(str::to_string).collect();
        let older = OLDER_COLUMNS
            .iter()
            .any(|&n| names.iter().map(String::as_str).eq(older_header().take(n)));
        let today = names.len() >= RAW_COLUMNS.len()
            && names[..RAW_COLUMNS.len()]
                .iter()
                .map(String::as_str)
                .eq(RAW_COLUMNS)
            && names[RAW_COLUMNS.len()..]
                .iter()
                .all(|c| is_counter_name(c));
        if !older && !today {
            return Err(bad(format!(
                "unexpected header {:?}",
                names.iter().collect::<Vec<_>>()
            )));
        }
        if today {
            store.counters = names[RAW_COLUMNS.len()..].to_vec();
        }
        store.current = today;
        let mut arms: HashMap<String, Option<Arm>> = HashMap::new();
        for (i, rec) in records.enumerate() {
            let rec = rec.map_err(|e| bad(e.to_string()))?;
            if rec.len() != names.len() {
                return Err(bad(format!(
                    "record {}: {} fields, the header has {}",
                    i + 1,
                    rec.len(),
                    names.len()
                )));
            }
            if let Some((name, cell)) = names.iter().zip(rec.iter()).find(|(_, c)| is_formula(c)) {
                return Err(bad(format!(
                    "record {}: its {name} cell {cell:?} would run as a formula in a \
                     spreadsheet",
                    i + 1
                )));
            }
            let mut cells: HashMap<String, String> = names
                .iter()
                .zip(rec.iter())
                .map(|(n, v)| (n.clone(), v.to_string()))
                .collect();
            if older {
                // The counters of the `stats` cell become columns.
                for (k, v) in parse_stats(&cells.remove("stats").unwrap_or_default()) {
                    // A name that cannot be a column, or that is one of the row's own, would
                    // overwrite a cell or write a header no build reads.
                    if !is_counter_name(&k) || RAW_COLUMNS.contains(&k.as_str()) {
                        return Err(bad(format!(
                            "record {}: '{k}' in its stats cell is not a counter's name",
                            i + 1
                        )));
                    }
                    if !store.counters.contains(&k) {
                        store.counters.push(k.clone());
                    }
                    cells.insert(k, v.map_or("n/a".to_string(), |v| v.to_string()));
                }
            }
            let text = TextRow { cells };
            let (runtime, variant) = runtimes::upgrade(text.get("runtime"), text.get("variant"));
            if runtime != text.get("runtime") || variant != text.get("variant") {
                store.current = false;
            }
            let arm = *arms
                .entry(runtime.clone())
                .or_insert_with(|| Arm::parse(&runtime).ok());
            let typed = (
                arm,
                variant.parse::<Variant>(),
                text.get("size").parse::<Size>(),
            );
            let (Some(arm), Ok(variant), Ok(size)) = typed else {
                let mut text = text;
                text.cells.insert("runtime".to_string(), runtime);
                text.cells.insert("variant".to_string(), variant);
                store.unread.push(text);
                continue;
            };
            let row = row_of(&text, arm, variant, size, &store.counters)
                .map_err(|e| bad(format!("record {}: {e}", i + 1)))?;
            store.push(row);
        }
        Ok(store)
    }

    /// Adds `row` to the rows and the index.
    fn push(&mut self, row: RawRow) {
        let i = self.rows.len();
        match self.index.get_mut(&row.point) {
            Some(v) => v.push(i),
            None => {
                self.order.push(row.point.clone());
                self.index.insert(row.point.clone(), vec![i]);
            }
        }
        self.rows.push(row);
    }

    /// The file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Every row this build reads, in file order.
    pub(crate) fn rows(&self) -> &[RawRow] {
        &self.rows
    }

    /// The rows of each point, points in the order of their first row.
    pub(crate) fn by_point(&self) -> impl Iterator<Item = (&PointSpec, Vec<&RawRow>)> {
        self.order
            .iter()
            .map(|p| (p, self.index[p].iter().map(|&i| &self.rows[i]).collect()))
    }

    /// Whether the store holds no row at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.rows.is_empty() && self.unread.is_empty()
    }

    /// Rewrites the file in today's shape if it is not (an older header, older spellings), so
    /// the rows appended to it have its columns and name their points as its rows do.
    pub(crate) fn upgrade(&mut self) -> io::Result<()> {
        if self.current {
            return Ok(());
        }
        self.rewrite()
    }

    /// Appends the rows of one finished point (writing the header if the file is new) in one
    /// write, then flushes it to the disk, so an interruption loses no finished point. A row
    /// with a counter the file has no column for, or a file of an older shape, has the file
    /// rewritten whole instead ([`Store::rewrite`]). The file is opened without following a
    /// symbolic link.
    pub(crate) fn append(&mut self, rows: &[RawRow]) -> io::Result<()> {
        let mut widened = false;
        for (k, _) in rows.iter().flat_map(|r| &r.counters) {
            if !self.counters.contains(k) {
                self.counters.push(k.clone());
                widened = true;
            }
        }
        for r in rows {
            self.push(r.clone());
        }
        if widened || !self.current {
            return self.rewrite();
        }
        let mut bytes = Vec::new();
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(&mut bytes);
        let at = |e: csv::Error| with_path(&self.path, io::Error::other(e));
        let mut f = crate::files::open_regular(&self.path)?;
        let len = f
            .seek(io::SeekFrom::End(0))
            .map_err(|e| with_path(&self.path, e))?;
        if len == 0 {
            w.write_record(self.header()).map_err(at)?;
        }
        for r in rows {
            w.write_record(self.record(r)).map_err(at)?;
        }
        drop(w);
        f.write_all(&bytes)
            .and_then(|()| f.sync_data())
            .map_err(|e| with_path(&self.path, e))
    }

    /// The header: [`RAW_COLUMNS`], then the counters.
    fn header(&self) -> Vec<String> {
        RAW_COLUMNS
            .iter()
            .map(|c| c.to_string())
            .chain(self.counters.iter().cloned())
            .collect()
    }

    /// The cells of `r` under [`Store::header`].
    fn record(&self, r: &RawRow) -> Vec<String> {
        let opt = |v: Option<String>| v.unwrap_or_default();
        let mut cells = vec![
            r.point.runtime.to_string(),
            r.point.workload.to_string(),
            r.point.variant.name().to_string(),
            r.point.workers.to_string(),
            r.size.name().to_string(),
            r.params.clone(),
            opt(r.rep.map(|v| v.to_string())),
            opt(r.seconds.map(|v| v.to_string())),
            opt(r.peak_rss_kb.map(|v| v.to_string())),
            r.check.to_string(),
            r.status.name().to_string(),
            r.note.clone(),
            r.round.to_string(),
            r.answer.clone(),
            opt(r.pool.as_ref().map(PoolRecord::spelling)),
        ];
        for c in &self.counters {
            cells.push(match r.counters.iter().find(|(k, _)| k == c) {
                Some((_, Some(v))) => v.to_string(),
                Some((_, None)) => "n/a".to_string(),
                None => String::new(),
            });
        }
        cells
    }

    /// Rewrites the file as the store's rows under today's header, whole
    /// ([`crate::files::replace_with`]): an interruption or a full disk leaves either the old
    /// file or the new one, and a link at its name is replaced, not followed.
    pub(crate) fn rewrite(&mut self) -> io::Result<()> {
        crate::files::replace_with(&self.path, |tmp| {
            let mut w = csv::Writer::from_path(tmp).map_err(io::Error::other)?;
            w.write_record(self.header()).map_err(io::Error::other)?;
            for r in &self.rows {
                w.write_record(self.record(r)).map_err(io::Error::other)?;
            }
            for t in &self.unread {
                w.write_record(self.header().iter().map(|c| t.get(c)))
                    .map_err(io::Error::other)?;
            }
            w.flush()
        })?;
        self.current = true;
        Ok(())
    }

    /// A new store at `path` holding `rows` and the rows of `others` this build cannot read
    /// (kept as written, as a rewrite keeps them), written whole ([`Store::rewrite`]):
    /// `merge`'s.
    pub(crate) fn create(path: &Path, rows: &[RawRow], others: &[&Store]) -> io::Result<Store> {
        let mut store = Store::empty(path);
        for o in others {
            for k in &o.counters {
                if !store.counters.contains(k) {
                    store.counters.push(k.clone());
                }
            }
            store.unread.extend(o.unread.iter().cloned());
        }
        for r in rows {
            for (k, _) in &r.counters {
                if !store.counters.contains(k) {
                    store.counters.push(k.clone());
                }
            }
            store.push(r.clone());
        }
        store.rewrite()?;
        Ok(store)
    }

    /// A store of `rows` at `raw.csv` that is not read or written.
    #[cfg(test)]
    pub(crate) fn from_rows(rows: &[RawRow]) -> Store {
        let mut store = Store::empty(Path::new("raw.csv"));
        for r in rows {
            store.push(r.clone());
        }
        store
    }

    /// Moves the rows of the measurements (point, round) `set` to the store at `attempts`
    /// (appended there, so no attempt is lost) and rewrites this file without them.
    pub(crate) fn set_aside(
        &mut self,
        attempts: &Path,
        set: &BTreeSet<(PointSpec, usize)>,
    ) -> io::Result<()> {
        let (moved, kept): (Vec<RawRow>, Vec<RawRow>) = std::mem::take(&mut self.rows)
            .into_iter()
            .partition(|r| set.contains(&(r.point.clone(), r.round)));
        self.index.clear();
        self.order.clear();
        for r in kept {
            self.push(r);
        }
        if moved.is_empty() {
            return Ok(());
        }
        let mut aside = Store::open(attempts)?;
        aside.append(&moved)?;
        self.rewrite()
    }

    /// The runtimes and variants of the rows this build cannot read, each with its number of
    /// rows, in order of first appearance.
    fn unread_arms(&self) -> Vec<(String, usize)> {
        let mut out: Vec<(String, usize)> = Vec::new();
        for t in &self.unread {
            let what = format!("{} {}", t.get("runtime"), t.get("variant"));
            match out.iter_mut().find(|(w, _)| *w == what) {
                Some((_, n)) => *n += 1,
                None => out.push((what, 1)),
            }
        }
        out
    }
}

/// Where the whole lines of `text` end when its last line is cut short (no final newline).
pub(crate) fn cut_last_line(text: &[u8]) -> Option<usize> {
    (!text.is_empty() && !text.ends_with(b"\n"))
        .then(|| text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1))
}

/// The line that names what of `store` (a run's raw.csv) no table or plot of `grid` shows: the
/// arms the grid no longer runs ([`crate::grid::Grid::lacking_note`]), and the runtimes or
/// variants this build cannot read at all (an arm a runtime no longer takes), with how many
/// rows each; `None` where every row has its place.
pub(crate) fn left_out_note(grid: &crate::grid::Grid, store: &Store) -> Option<String> {
    let lacking = grid.lacking_note(store.order.iter().map(|p| p.runtime));
    let unreadable = store.unread_arms();
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

/// An older build's `raw.csv` (`fixtures/raw-older.csv`: serial at P = 1 and abp at P = 2 on
/// fib(20), two repetitions each, counters in the `stats` cell) cut to its first `columns`
/// columns, as the builds before `answer` (14) and before `round` (13) wrote it.
#[cfg(test)]
pub(crate) fn older_fixture(columns: usize) -> String {
    let full = include_str!("fixtures/raw-older.csv");
    let mut r = csv::Reader::from_reader(full.as_bytes());
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(r.headers().unwrap().iter().take(columns))
        .unwrap();
    for rec in r.records() {
        w.write_record(rec.unwrap().iter().take(columns)).unwrap();
    }
    String::from_utf8(w.into_inner().unwrap()).unwrap()
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
        point: PointSpec {
            runtime: rt.into(),
            workload: "fib".into(),
            variant: Variant::Fj,
            workers: p,
        },
        size: Size::Test,
        params: "n=20".into(),
        rep,
        seconds: s,
        peak_rss_kb: Some(2048),
        check: if s.is_some() {
            RepCheck::Ok
        } else {
            RepCheck::NotRun
        },
        status,
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
        pool: None,
        counters: vec![("steals".into(), None), ("steal_attempts".into(), Some(3))],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Meta;
    use std::fs;
    use tempfile::TempDir;
    use test_row as row;

    /// A store of `path` with `rows` appended, one point at a time.
    fn appended(path: &Path, points: &[&[RawRow]]) -> Store {
        let mut store = Store::open(path).unwrap();
        for rows in points {
            store.append(rows).unwrap();
        }
        store
    }

    #[test]
    fn raw_csv_round_trips_with_a_column_per_counter() {
        let dir = TempDir::with_prefix("stealbench-raw-round-trip-").unwrap();
        let path = dir.path().join("raw.csv");
        let a = vec![
            row("serial", 1, Some(1), Some(0.1 + 0.2), Status::Ok),
            row("serial", 1, Some(2), Some(1e-9), Status::Ok),
        ];
        let b = vec![RawRow {
            counters: Vec::new(),
            pool: Some(PoolRecord::parse("workers=2/pinning=none/victim=default/idle=lazy/futures=stack/placement=paper/unmap=on").unwrap()),
            ..row("rayon", 2, None, None, Status::Timeout)
        }];
        let store = appended(&path, &[&a, &b]);
        let text = fs::read_to_string(&path).unwrap();
        let header = format!("{},steals,steal_attempts\n", RAW_COLUMNS.join(","));
        assert!(text.starts_with(&header), "{text}");
        let back = Store::open(&path).unwrap();
        assert_eq!(back.rows(), [a, b].concat());
        assert_eq!(back.rows(), store.rows());
        assert_eq!(crate::results::recorded_points(&back).len(), 2);
        // Read as a data-frame library does: one column per counter.
        let mut r = csv::Reader::from_path(&path).unwrap();
        let headers = r.headers().unwrap().clone();
        let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
        let recs: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        assert_eq!(&recs[0][col("steal_attempts")], "3");
        assert_eq!(&recs[0][col("steals")], "n/a", "cannot count");
        assert_eq!(
            &recs[2][col("steals")],
            "",
            "no counter in a timed-out point's row"
        );
        assert_eq!(
            &recs[2][col("pool")],
            "workers=2/pinning=none/victim=default/idle=lazy/futures=stack/placement=paper/unmap=on"
        );
    }

    #[test]
    fn a_new_counter_adds_a_column_and_rewrites_the_file_whole() {
        let dir = TempDir::with_prefix("stealbench-raw-widen-").unwrap();
        let path = dir.path().join("raw.csv");
        let serial = row("serial", 1, Some(1), Some(0.5), Status::Ok);
        let abp = RawRow {
            counters: vec![("steals".into(), Some(7)), ("heavy_fences".into(), Some(2))],
            ..row("abp", 2, Some(1), Some(0.25), Status::Ok)
        };
        appended(
            &path,
            &[std::slice::from_ref(&serial), std::slice::from_ref(&abp)],
        );
        let text = fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with(&format!(
                "{},steals,steal_attempts,heavy_fences\n",
                RAW_COLUMNS.join(",")
            )),
            "{text}"
        );
        let left = fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with(".tmp-")
            })
            .count();
        assert_eq!(left, 0, "a temporary file is left");
        let back = Store::open(&path).unwrap();
        assert_eq!(back.rows()[0], serial);
        assert_eq!(back.rows()[1], abp);
    }

    #[test]
    fn an_older_raw_csv_is_read_with_its_counters_and_upgraded() {
        for columns in OLDER_COLUMNS {
            let dir = TempDir::with_prefix("stealbench-raw-older-").unwrap();
            let path = dir.path().join("raw.csv");
            fs::write(&path, older_fixture(columns)).unwrap();
            let mut store = Store::open(&path).unwrap();
            let rows = store.rows().to_vec();
            assert_eq!(rows.len(), 4);
            assert_eq!(
                rows[2].counters,
                [("steals".into(), Some(4)), ("steal_attempts".into(), None)]
            );
            assert_eq!(rows[1].seconds, Some(0.000099));
            assert_eq!(rows[3].point.to_string(), "abp fib-fj P=2");
            assert!(rows.iter().all(|r| r.round == 1 && r.pool.is_none()));
            let with_answer = rows.iter().all(|r| r.answer.starts_with("fib(20) = 6765"));
            assert_eq!(with_answer, columns == 15, "{columns} columns");
            store.upgrade().unwrap();
            let text = fs::read_to_string(&path).unwrap();
            assert!(
                text.starts_with(&format!("{},steals,steal_attempts", RAW_COLUMNS.join(","))),
                "{text}"
            );
            assert_eq!(Store::open(&path).unwrap().rows(), rows);
            // A stats key that is no counter's name, or a column of the row's own, is refused.
            for bad in ["note=5", "Steals=1", "a b=2"] {
                let text = older_fixture(columns).replace("steals=4", bad);
                assert_ne!(text, older_fixture(columns));
                fs::write(&path, &text).unwrap();
                let e = Store::read(&path).unwrap_err().to_string();
                assert!(e.contains("is not a counter's name"), "{bad}: {e}");
                assert_eq!(fs::read_to_string(&path).unwrap(), text);
            }
        }
    }

    #[test]
    fn appending_and_repairing_refuse_a_planted_link() {
        let dir = TempDir::with_prefix("stealbench-raw-link-").unwrap();
        let path = dir.path().join("raw.csv");
        let one = [row("serial", 1, Some(1), Some(0.5), Status::Ok)];
        appended(&path, &[&one]);
        // raw.csv replaced by a link to a file of the same text.
        let victim = dir.path().join("victim");
        fs::rename(&path, &victim).unwrap();
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        let before = fs::read(&victim).unwrap();
        let mut store = Store::open(&path).unwrap();
        let e = store.append(&one).unwrap_err();
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        assert_eq!(fs::read(&victim).unwrap(), before);
        // A cut last line is not cut off through the link either.
        fs::write(&victim, b"precious").unwrap();
        let e = Store::open(&path).unwrap_err();
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
        // A rewrite (a new counter's column) replaces the link, never follows it.
        fs::write(&victim, &before).unwrap();
        let mut store = Store::open(&path).unwrap();
        let wider = RawRow {
            counters: vec![("heavy_fences".into(), Some(1))],
            ..one[0].clone()
        };
        store.append(&[wider]).unwrap();
        assert_eq!(fs::read(&victim).unwrap(), before);
        assert!(fs::symlink_metadata(&path).unwrap().is_file());
    }

    #[test]
    fn older_spellings_are_read_and_rewritten_as_arms() {
        let dir = TempDir::with_prefix("stealbench-raw-spellings-").unwrap();
        let path = dir.path().join("raw.csv");
        let mut text = older_fixture(15);
        for (from, to) in [
            ("serial,fib,fj", "serial-async,fib,fj"),
            ("abp,fib,fj", "abp,fib,sf-nostack"),
        ] {
            text = text.replace(from, to);
        }
        fs::write(&path, &text).unwrap();
        let spelt = |store: &Store| -> Vec<String> {
            store.rows().iter().map(|r| r.point.to_string()).collect()
        };
        let want = [
            "serial/front=async fib-fj P=1",
            "serial/front=async fib-fj P=1",
            "abp/futures=nostack fib-sf P=2",
            "abp/futures=nostack fib-sf P=2",
        ];
        let mut store = Store::open(&path).unwrap();
        assert_eq!(spelt(&store), want);
        store.upgrade().unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert!(
            !text.contains("serial-async") && !text.contains("sf-nostack"),
            "{text}"
        );
        assert_eq!(spelt(&Store::open(&path).unwrap()), want);
    }

    #[test]
    fn an_unreadable_raw_csv_or_meta_json_is_named() {
        let dir = TempDir::with_prefix("stealbench-raw-not-utf8-").unwrap();
        let raw = dir.path().join("raw.csv");
        fs::write(&raw, b"runtime,\xff\xfe\n").unwrap();
        let e = Store::open(&raw).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("{}: stream did not contain valid UTF-8", raw.display())
        );
        fs::write(&raw, b"runtime,workload\n").unwrap();
        let e = Store::open(&raw).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("unexpected header"), "{e}");
        let meta = dir.path().join("meta.json");
        fs::write(&meta, b"\xff").unwrap();
        let e = Meta::read(dir.path()).unwrap_err().to_string();
        assert!(e.starts_with(&meta.display().to_string()), "{e}");
    }

    /// Every committed run's `raw.csv` reads (each row's point, workload spec, check and pool
    /// typed) and is written back from its rows byte for byte.
    #[test]
    fn the_committed_runs_raw_csv_read_and_write_back_unchanged() {
        let runs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../paper-figures/runs");
        let dir = TempDir::with_prefix("stealbench-raw-committed-").unwrap();
        let copy = dir.path().join("raw.csv");
        let mut read = 0;
        for figure in fs::read_dir(&runs).unwrap() {
            for run in fs::read_dir(figure.unwrap().path()).unwrap() {
                let raw = run.unwrap().path().join("raw.csv");
                let Ok(text) = fs::read(&raw) else {
                    continue;
                };
                fs::write(&copy, &text).unwrap();
                let mut store = Store::open(&copy).unwrap();
                assert!(store.unread.is_empty(), "{}", raw.display());
                store.rewrite().unwrap();
                assert!(fs::read(&copy).unwrap() == text, "{}", raw.display());
                read += store.rows().len();
            }
        }
        assert!(read > 0, "the committed runs have rows");
    }

    #[test]
    fn a_cut_last_line_is_dropped() {
        let dir = TempDir::with_prefix("stealbench-raw-cut-").unwrap();
        let path = dir.path().join("raw.csv");
        let a = vec![row("serial", 1, Some(1), Some(0.5), Status::Ok)];
        appended(&path, &[&a]);
        let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"rayon,fib,fj,2,test,n=2").unwrap();
        drop(f);
        // A reader (report) drops the cut line and leaves the file as it is.
        let before = fs::read(&path).unwrap();
        assert_eq!(Store::read(&path).unwrap().rows(), a);
        assert_eq!(fs::read(&path).unwrap(), before);
        let mut store = Store::open(&path).unwrap();
        assert_eq!(store.rows(), a);
        assert!(fs::read(&path).unwrap().len() < before.len());
        store.append(&a).unwrap();
        assert_eq!(Store::open(&path).unwrap().rows().len(), 2);
    }

    #[test]
    fn rows_of_arms_no_longer_taken_are_kept_and_named() {
        let fig = crate::figures::prows_fig3::figure();
        let grid = crate::grid::Grid::build(fig.rows, &[1], &Default::default());
        let dir = TempDir::with_prefix("stealbench-raw-unread-").unwrap();
        let path = dir.path().join("raw.csv");
        let ok = row("serial/front=kernel", 1, Some(1), Some(0.1), Status::Ok);
        let mut store = appended(&path, &[std::slice::from_ref(&ok)]);
        assert_eq!(left_out_note(&grid, &store), None);
        let text = fs::read_to_string(&path).unwrap();
        let line =
            text.lines()
                .nth(1)
                .unwrap()
                .replacen("serial/front=kernel", "rayon/idle=busy", 1);
        fs::write(&path, format!("{text}{line}\n{line}\n")).unwrap();
        store = Store::open(&path).unwrap();
        let note = left_out_note(&grid, &store).unwrap();
        assert!(
            note.ends_with(
                "cannot read, in none of its tables or plots: rayon/idle=busy fj (2 rows)"
            ),
            "{note}"
        );
        // Kept through a rewrite.
        store
            .append(&[row("abp", 1, Some(1), Some(0.1), Status::Ok)])
            .unwrap();
        store.rewrite().unwrap();
        let again = Store::open(&path).unwrap();
        assert_eq!(again.rows().len(), 2);
        assert_eq!(again.unread.len(), 2);
        // A merge keeps them too.
        let merged = dir.path().join("merged.csv");
        let m = Store::create(&merged, again.rows(), &[&again]).unwrap();
        assert_eq!(Store::open(&merged).unwrap().unread.len(), 2);
        assert_eq!(m.rows().len(), 2);
    }
}
