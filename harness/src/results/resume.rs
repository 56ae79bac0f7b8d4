//! The resume policy: which recorded measurements are whole, and which run again (a failed
//! status, or rows cut short or recorded twice), their rows set aside in attempts.csv.

use super::store::{RawRow, Store};
use crate::grid::Status;
use crate::spec::PointSpec;
use std::collections::BTreeSet;

/// The points recorded in `store` (finished, whatever their status).
#[cfg(test)]
pub(crate) fn recorded_points(store: &Store) -> BTreeSet<PointSpec> {
    store.by_point().map(|(p, _)| p.clone()).collect()
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

/// The rows of each measurement (point, round) of `store`, points in order of first
/// appearance, rounds in order.
fn measurements(store: &Store) -> Vec<(PointSpec, usize, Vec<&RawRow>)> {
    store
        .by_point()
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

/// The measurements (point, round) of `store` that must run again ([`rerun_reason`]), with
/// the reason, in order of first appearance.
pub(crate) fn points_to_rerun(store: &Store, reps: usize) -> Vec<(PointSpec, usize, String)> {
    measurements(store)
        .into_iter()
        .filter_map(|(k, round, rs)| Some((k, round, rerun_reason(&rs, reps)?)))
        .collect()
}

/// The measurements (point, round) of `store` that are not whole records
/// ([`incomplete_reason`]), with the reason, in order of first appearance.
pub(crate) fn incomplete_measurements(
    store: &Store,
    reps: usize,
) -> Vec<(PointSpec, usize, String)> {
    measurements(store)
        .into_iter()
        .filter_map(|(k, round, rs)| Some((k, round, incomplete_reason(&rs, reps)?)))
        .collect()
}

/// The measurements (point, round) recorded in `store`, whatever their status.
pub(crate) fn recorded_rounds(store: &Store) -> BTreeSet<(PointSpec, usize)> {
    store
        .rows()
        .iter()
        .map(|r| (r.point.clone(), r.round))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::store::Store;
    use crate::results::store::test_row as row;
    use crate::results::summarize;

    fn store(rows: &[RawRow]) -> Store {
        Store::from_rows(rows)
    }

    #[test]
    fn a_row_recorded_twice_counts_once_and_marks_the_measurement() {
        let rep = |n, t| row("serial", 1, Some(n), Some(t), Status::Ok);
        let whole = vec![rep(1, 0.1), rep(2, 0.3)];
        assert!(points_to_rerun(&store(&whole), 2).is_empty());
        assert!(incomplete_measurements(&store(&whole), 2).is_empty());
        // Repetition 2 twice, repetition 1 lost: two rows, but not two repetitions.
        let twice = vec![rep(2, 0.3), rep(2, 0.3)];
        let why = points_to_rerun(&store(&twice), 2);
        assert_eq!(why.len(), 1);
        assert_eq!(why[0].2, "repetition 2 recorded twice");
        assert_eq!(incomplete_measurements(&store(&twice), 2)[0].2, why[0].2);
        assert_eq!(summarize(&store(&twice))[0].summary.unwrap().n, 1);
        // A point's row twice.
        let timeout = row("serial", 1, None, None, Status::Timeout);
        let rows = vec![timeout.clone(), timeout];
        assert_eq!(
            incomplete_measurements(&store(&rows), 2)[0].2,
            "its row recorded twice"
        );
        // Cut short: fewer repetitions than asked.
        assert_eq!(
            incomplete_measurements(&store(&whole[..1]), 2)[0].2,
            "1 of 2 repetitions"
        );
        // A failed measurement is whole, and run again.
        let failed = vec![row("serial", 1, None, None, Status::Crashed)];
        assert!(incomplete_measurements(&store(&failed), 2).is_empty());
        assert_eq!(points_to_rerun(&store(&failed), 2)[0].2, "crashed");
    }
}
