//! A shard: a disjoint part of a figure's grid (`reproduce ID --shard i/N`). Every node computes
//! the same grid from the same figure and settings, so every node cuts it the same way: the
//! points are dealt, largest expected time first, each to the shard with the least expected
//! time so far (greedy longest processing time). The harness has measured nothing before a
//! run, so a point's expected time is its share of its workload's work under perfect speedup:
//! 1/P, and 1/16 for a simulated point (a replay, no worker thread). Every point of every round
//! is in exactly one shard; a merged run is the unsharded run's point set (the test
//! `three_shards_merge_to_the_whole_grid` in `tests/cli.rs`).

use crate::failure::Failure;
use crate::spec::PointSpec;
use serde::de::Error;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// The `i`-th of `n` shards, 1-based (as `SLURM_ARRAY_TASK_ID` of `--array=1-N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shard {
    /// Which shard, `1..=count`.
    pub index: usize,
    /// How many shards.
    pub count: usize,
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = Failure;
    fn from_str(s: &str) -> Result<Shard, Failure> {
        let bad = || {
            Failure::Usage(format!(
                "--shard {s}: expected i/N with 1 <= i <= N (e.g. 2/8)"
            ))
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        Shard::new(index, count).ok_or_else(bad)
    }
}

impl Shard {
    /// The `index`-th of `count` shards, if `1 <= index <= count`.
    pub(crate) fn new(index: usize, count: usize) -> Option<Shard> {
        (index >= 1 && index <= count).then_some(Shard { index, count })
    }
}

/// The shard in `meta.json`, as `--shard` spells it (`2/3`).
pub(crate) fn stored_as_text<S: Serializer>(
    shard: &Option<Shard>,
    s: S,
) -> Result<S::Ok, S::Error> {
    shard.map(|x| x.to_string()).serialize(s)
}

/// The shard in `meta.json`: `--shard`'s text, read by its parser, or an older build's
/// `{"index": i, "count": N}`, checked as the parser checks.
pub(crate) fn stored<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Shard>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Spelt {
        Text(String),
        Parts { index: usize, count: usize },
    }
    match Option::<Spelt>::deserialize(d)? {
        None => Ok(None),
        Some(Spelt::Text(t)) => t
            .parse::<Shard>()
            .map(Some)
            .map_err(|f| D::Error::custom(format!("shard: {}", f.message()))),
        Some(Spelt::Parts { index, count }) => {
            Shard::new(index, count).map(Some).ok_or_else(|| {
                D::Error::custom(format!(
                    "shard: {index} of {count}: expected i/N with 1 <= i <= N"
                ))
            })
        }
    }
}

/// Refuses `shards` parts of a grid of `points` points (of figure `id`) when some part would
/// be empty: an empty shard records nothing, and its run directory cannot be merged. `flag`
/// names the setting (`--shard i/N`, `--shards N`).
pub(crate) fn check_count(
    flag: &str,
    shards: usize,
    points: usize,
    id: &str,
) -> Result<(), Failure> {
    if shards > points {
        return Err(Failure::Usage(format!(
            "{flag}: {id} has {points} points with these options, so some shards would \
             measure nothing; use at most {points} shards"
        )));
    }
    Ok(())
}

/// The expected time of a point, relative to its workload's serial time.
fn expected_time(p: &PointSpec) -> f64 {
    if p.runtime.sim.is_some() {
        1.0 / 16.0
    } else {
        1.0 / p.workers.max(1) as f64
    }
}

/// The points of `shard`, in grid order: the greedy longest-processing-time deal of the
/// module docs. Deterministic: equal expected times keep grid order, ties in load go to the
/// lower shard.
pub(crate) fn shard_points(points: &[PointSpec], shard: Shard) -> Vec<PointSpec> {
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&a, &b| {
        expected_time(&points[b])
            .total_cmp(&expected_time(&points[a]))
            .then(a.cmp(&b))
    });
    let mut load = vec![0.0f64; shard.count];
    let mut mine = vec![false; points.len()];
    for i in order {
        let s = (0..shard.count)
            .min_by(|&x, &y| load[x].total_cmp(&load[y]).then(x.cmp(&y)))
            .expect("at least one shard");
        load[s] += expected_time(&points[i]);
        mine[i] = s + 1 == shard.index;
    }
    points
        .iter()
        .zip(mine)
        .filter(|(_, m)| *m)
        .map(|(p, _)| p.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use stealbench_workloads::Variant;

    fn points() -> Vec<PointSpec> {
        let mut v = Vec::new();
        for rt in ["serial", "abp", "prows", "abp/sim=unit"] {
            for p in [1, 2, 4, 8, 16] {
                v.push(PointSpec {
                    runtime: rt.into(),
                    workload: "fib".into(),
                    variant: Variant::Fj,
                    workers: p,
                });
            }
        }
        v
    }

    #[test]
    fn shards_partition_the_points_and_balance_them() {
        let all = points();
        for n in 1..=7 {
            let parts: Vec<Vec<PointSpec>> = (1..=n)
                .map(|i| shard_points(&all, Shard { index: i, count: n }))
                .collect();
            let mut union: Vec<PointSpec> = parts.iter().flatten().cloned().collect();
            assert_eq!(union.len(), all.len(), "{n} shards: disjoint and complete");
            union.sort();
            let mut sorted = all.clone();
            sorted.sort();
            assert_eq!(union, sorted);
            let loads: Vec<f64> = parts
                .iter()
                .map(|p| p.iter().map(expected_time).sum())
                .collect();
            let (lo, hi) = loads
                .iter()
                .fold((f64::MAX, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
            // LPT: no shard exceeds another by more than the largest single point.
            assert!(hi - lo <= 1.0 + 1e-12, "{n} shards: loads {loads:?}");
        }
    }

    #[test]
    fn shard_spellings() {
        assert_eq!(
            "2/8".parse::<Shard>().ok(),
            Some(Shard { index: 2, count: 8 })
        );
        for bad in ["0/3", "4/3", "1/0", "3", "a/b", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert_eq!(Shard { index: 1, count: 3 }.to_string(), "1/3");
    }
}
