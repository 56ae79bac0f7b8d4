//! One record of `raw.csv` read and checked: its cells to a typed [`RawRow`], or why not.
//!
//! A record is refused in one line that names the cell: one a spreadsheet would run, a number
//! that is none, a workload spec, check or status that does not read, a round 0.

use super::store::RawRow;
use crate::grid::Status;
use crate::protocol::PoolRecord;
use crate::runtimes::Arm;
use crate::spec::{PointSpec, WorkloadSpec};
use serde::Deserialize;
use serde::de::IntoDeserializer;
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use stealbench_workloads::{Size, Variant};

/// The check of a repetition's answer, the `check` column: `ok`, `failed: <what>`, or empty
/// where no check ran (the one row of a point that produced no repetition).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RepCheck {
    /// No check ran: the empty cell.
    NotRun,
    /// The answer checked: `ok`.
    Ok,
    /// The check failed, with its message: `failed: <what>`.
    Failed(String),
}

impl fmt::Display for RepCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RepCheck::NotRun => Ok(()),
            RepCheck::Ok => f.write_str("ok"),
            RepCheck::Failed(m) => write!(f, "failed: {m}"),
        }
    }
}

impl FromStr for RepCheck {
    type Err = String;

    /// Reads [`RepCheck`]'s spelling back; anything else is refused in one line.
    fn from_str(s: &str) -> Result<RepCheck, String> {
        match s {
            "" => Ok(RepCheck::NotRun),
            "ok" => Ok(RepCheck::Ok),
            _ => s
                .strip_prefix("failed: ")
                .map(|m| RepCheck::Failed(m.to_string()))
                .ok_or_else(|| format!("check '{s}' is none of ok, failed: <what>, or empty")),
        }
    }
}

/// A row this build cannot read as a point, kept as written: each column's text by name (the
/// counters of an older `stats` cell as columns).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct TextRow {
    pub(super) cells: HashMap<String, String>,
}

impl TextRow {
    pub(super) fn get(&self, column: &str) -> &str {
        self.cells.get(column).map_or("", String::as_str)
    }
}

/// Whether `name` can be a counter's column: a name of lowercase letters, digits and `_`.
pub(super) fn is_counter_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Whether a spreadsheet opening the file would run `cell` as a formula: it starts with `=`,
/// `+`, `@`, a tab or a carriage return, or with `-` and is no number. No cell the harness
/// writes does: a `raw.csv` that holds one was written by hand, and is refused when read, so
/// that `merge` and `report` never copy it into the files they write.
pub(crate) fn is_formula(cell: &str) -> bool {
    match cell.chars().next() {
        Some('=' | '+' | '@' | '\t' | '\r') => true,
        Some('-') => cell.parse::<f64>().is_err(),
        _ => false,
    }
}

/// The row of the cells `t` of a point whose arm, variant and size read.
pub(super) fn row_of(
    t: &TextRow,
    arm: Arm,
    variant: Variant,
    size: Size,
    counters: &[String],
) -> Result<RawRow, String> {
    fn number<T: std::str::FromStr>(t: &TextRow, column: &str) -> Result<Option<T>, String> {
        match t.get(column) {
            "" => Ok(None),
            v => v
                .parse()
                .map(Some)
                .map_err(|_| format!("{column} '{v}' is not a number")),
        }
    }
    let workers = number(t, "workers")?.ok_or("no workers")?;
    let seconds: Option<f64> = number(t, "seconds")?;
    // A time is a finite number of seconds, not negative: NaN, infinities and negative values
    // would enter the medians and every speedup.
    if let Some(s) = seconds.filter(|s| !(s.is_finite() && *s >= 0.0)) {
        return Err(format!(
            "seconds {s} is not a time (a finite number, not negative)"
        ));
    }
    let status = Status::deserialize(t.get("status").into_deserializer())
        .map_err(|e: serde::de::value::Error| format!("status: {e}"))?;
    let check: RepCheck = t.get("check").parse()?;
    // A failed check is never a time: a row that says both would be counted as one.
    if status == Status::Ok && matches!(check, RepCheck::Failed(_)) {
        return Err(format!(
            "status ok with check '{check}': a failed check is status check-failed"
        ));
    }
    // Rows written before rounds existed are round 1; rounds count from 1.
    let round = number(t, "round")?.unwrap_or(1);
    if round == 0 {
        return Err("round 0: rounds count from 1".to_string());
    }
    let pool = match t.get("pool") {
        "" => None,
        s => Some(PoolRecord::parse(s)?),
    };
    let mut cs = Vec::new();
    for c in counters {
        match t.get(c) {
            "" => {}
            "n/a" => cs.push((c.clone(), None)),
            v => cs.push((
                c.clone(),
                Some(
                    v.parse()
                        .map_err(|_| format!("counter {c} '{v}' is not a count"))?,
                ),
            )),
        }
    }
    Ok(RawRow {
        point: PointSpec {
            runtime: arm,
            workload: WorkloadSpec::parse(t.get("workload"))?,
            variant,
            workers,
        },
        size,
        params: t.get("params").to_string(),
        rep: number(t, "rep")?,
        seconds,
        peak_rss_kb: number(t, "peak_rss_kb")?,
        check,
        status,
        note: t.get("note").to_string(),
        round,
        answer: t.get("answer").to_string(),
        pool,
        counters: cs,
    })
}

/// Parses an older `stats` cell of `raw.csv` (`steals=3;steal_attempts=n/a`) into (name,
/// value) pairs, `None` for `n/a`; pieces that are not `name=value` are skipped.
pub(crate) fn parse_stats(s: &str) -> Vec<(String, Option<u64>)> {
    s.split(';')
        .filter_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            Some((k.to_string(), v.parse().ok()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::store::{Store, test_row};
    use std::fs;
    use tempfile::TempDir;

    /// A record with a cell that cannot be is refused in one line that names it: a formula a
    /// spreadsheet would run, a time that is no time (NaN, infinite, negative: it would enter
    /// every median and speedup), a check or workload spec that does not read, a failed check
    /// with a time.
    #[test]
    fn a_record_with_a_cell_that_cannot_be_is_refused() {
        let dir = TempDir::with_prefix("stealbench-raw-bad-cell-").unwrap();
        let path = dir.path().join("raw.csv");
        let good = test_row("serial", 1, Some(1), Some(1.0), Status::Ok);
        Store::create(&path, std::slice::from_ref(&good), &[]).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        let formula = "would run as a formula in a spreadsheet";
        for (from, to, why) in [
            ("serial", "=1+2", formula),
            ("serial", "@SUM(A1)", formula),
            (",ok,", ",=HYPERLINK(\"http://x\"),", formula),
            (
                ",1,1,2048,",
                ",1,NaN,2048,",
                "record 1: seconds NaN is not a time",
            ),
            (
                ",1,1,2048,",
                ",1,inf,2048,",
                "record 1: seconds inf is not a time",
            ),
            (
                ",1,1,2048,",
                ",1,-1e9,2048,",
                "record 1: seconds -1000000000 is not a time (a finite number, not negative)",
            ),
            (
                ",ok,ok,",
                ",fine,ok,",
                "record 1: check 'fine' is none of ok, failed: <what>, or empty",
            ),
            (
                ",fib,fj,",
                ",fib/n,fj,",
                "record 1: workload 'fib/n': \"n\": expected key=value",
            ),
            (
                ",ok,ok,",
                ",failed: wrong,ok,",
                "status ok with check 'failed: wrong': a failed check is status check-failed",
            ),
        ] {
            let bad = text.replacen(from, to, 1);
            assert_ne!(bad, text, "{to}");
            let e = Store::parse(&path, &bad).unwrap_err().to_string();
            assert!(e.contains(why) && !e.contains('\n'), "{to}: {e}");
        }
        assert!(!is_formula("-1.5") && is_formula("-cmd") && !is_formula("n=3"));
    }

    #[test]
    fn the_check_column_reads_back_as_written_and_refuses_others() {
        for text in ["", "ok", "failed: wrong", "failed: "] {
            let c: RepCheck = text.parse().unwrap();
            assert_eq!(c.to_string(), text);
        }
        assert_eq!("ok".parse(), Ok(RepCheck::Ok));
        assert_eq!("failed: x".parse(), Ok(RepCheck::Failed("x".to_string())));
        for bad in ["OK", "failed", "fine", " ok"] {
            let e = bad.parse::<RepCheck>().unwrap_err();
            assert_eq!(
                e,
                format!("check '{bad}' is none of ok, failed: <what>, or empty")
            );
        }
    }
}
