//! Scheduler statistics: the counters every runtime reports, and its own named extras.

use std::sync::atomic::{AtomicU64, Ordering};

/// A snapshot of a pool's counters.
///
/// `None` means the runtime cannot count it (rayon and tokio keep no steal counters that a
/// stable build can read); it is printed as `n/a`, never as zero.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Successful steals.
    pub steals: Option<u64>,
    /// Steal attempts, successful or not (fiber pools: made while a `run` is in progress;
    /// an idle pool's hunting between runs is not counted).
    pub steal_attempts: Option<u64>,
    /// Runtime-specific counters (suspensions, muggings, ...): events since the last reset,
    /// zero after `reset_stats`.
    pub extra: Vec<(&'static str, u64)>,
    /// Runtime-specific levels (stacks mapped, high-water marks): a reset does not zero a
    /// level, and sets a high-water mark to the current level.
    pub gauges: Vec<(&'static str, u64)>,
}

impl Stats {
    /// Every counter and gauge as (name, value) pairs: `steals` and `steal_attempts` first,
    /// then the extras, then the gauges.
    pub fn named(&self) -> Vec<(String, Option<u64>)> {
        let mut v = vec![
            ("steals".to_string(), self.steals),
            ("steal_attempts".to_string(), self.steal_attempts),
        ];
        v.extend(self.extra.iter().map(|(k, x)| (k.to_string(), Some(*x))));
        v.extend(self.gauges.iter().map(|(k, x)| (k.to_string(), Some(*x))));
        v
    }

    /// The runtime-specific counter `name`, if the runtime has one.
    pub fn extra(&self, name: &str) -> Option<u64> {
        find(&self.extra, name)
    }

    /// The runtime-specific level `name`, if the runtime has one.
    pub fn gauge(&self, name: &str) -> Option<u64> {
        find(&self.gauges, name)
    }
}

fn find(named: &[(&'static str, u64)], name: &str) -> Option<u64> {
    named.iter().find(|(k, _)| *k == name).map(|(_, v)| *v)
}

/// A counter that workers bump without contending: one cache-padded cell per worker.
///
/// Relaxed ordering suffices: counts are read only after the run's end, which the pool's own
/// synchronisation (the root task's completion) orders after every increment.
#[derive(Debug)]
pub struct PerWorker {
    cells: Box<[Padded]>,
}

#[derive(Debug, Default)]
#[repr(align(128))]
struct Padded(AtomicU64);

impl PerWorker {
    /// One cell per worker.
    pub fn new(workers: usize) -> Self {
        PerWorker {
            cells: (0..workers.max(1)).map(|_| Padded::default()).collect(),
        }
    }
    /// Adds `n` to worker `i`'s cell.
    #[inline]
    pub fn add(&self, i: usize, n: u64) {
        self.cells[i % self.cells.len()]
            .0
            .fetch_add(n, Ordering::Relaxed);
    }
    /// Adds `n` to worker `i`'s cell when worker `i` is the cell's only writer (apart from
    /// [`PerWorker::reset`] between runs): a plain load and store instead of `add`'s
    /// read-modify-write instruction, for counters bumped on a runtime's fast path.
    #[inline]
    pub fn add_single_writer(&self, i: usize, n: u64) {
        Self::bump(&self.cells[i].0, n);
    }
    /// Worker `i`'s cell, for a worker that caches it (see [`PerWorker::add_single_writer`]).
    pub fn cell(&self, i: usize) -> &AtomicU64 {
        &self.cells[i].0
    }
    /// Adds `n` to `cell` (from [`PerWorker::cell`]) as its only writer: see
    /// [`PerWorker::add_single_writer`].
    #[inline(always)]
    pub fn bump(cell: &AtomicU64, n: u64) {
        cell.store(
            cell.load(Ordering::Relaxed).wrapping_add(n),
            Ordering::Relaxed,
        );
    }
    /// The sum over all workers.
    pub fn sum(&self) -> u64 {
        self.cells.iter().map(|c| c.0.load(Ordering::Relaxed)).sum()
    }
    /// Sets every cell to zero.
    pub fn reset(&self) {
        for c in self.cells.iter() {
            c.0.store(0, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_worker_sums_and_resets() {
        let c = PerWorker::new(3);
        c.add(0, 2);
        c.add(2, 5);
        assert_eq!(c.sum(), 7);
        c.reset();
        assert_eq!(c.sum(), 0);
    }

    #[test]
    fn named_puts_steals_first() {
        let s = Stats {
            steals: Some(1),
            steal_attempts: None,
            extra: vec![("suspensions", 4)],
            gauges: vec![("stacks_mapped", 2)],
        };
        let n = s.named();
        assert_eq!(n[0], ("steals".into(), Some(1)));
        assert_eq!(n[1], ("steal_attempts".into(), None));
        assert_eq!(n[2], ("suspensions".into(), Some(4)));
        assert_eq!(n[3], ("stacks_mapped".into(), Some(2)));
    }
}
