//! Victim selection: uniform, or NUMA-weighted as libfork.
//!
//! Each worker gets a [`VictimTable`] at pool start: the other workers grouped into levels by
//! distance, closest first, and the cumulative weight of each level. A thief walks it with a
//! [`StealPass`]. Picking a victim is one draw of the worker's own generator and a scan of at
//! most as many entries as there are levels (a handful); nothing is allocated or shared.
//!
//! # libfork's NUMA weighting
//!
//! These are the facts of libfork's code (`include/libfork/schedule/ext/numa.hpp`, and
//! `include/libfork/schedule/impl/numa_context.hpp` for the weights and the steal loop) and of
//! its paper (Section III-D, Eq. 6):
//!
//! * **Distance.** Every worker is pinned to one processing unit (PU), placed by
//!   `hwloc_distrib` (by default spread over the whole machine, its `numa_strategy::fan`), and
//!   the distance of two PUs is the number of levels from a PU up to their lowest common
//!   ancestor in hwloc's topology tree (PU, core, caches, dies, packages, groups of NUMA nodes,
//!   machine). Workers on the same PU are at distance 0.
//! * **Levels.** For worker w, the distinct distances from w to the *other* workers, sorted
//!   ascending, define its levels 1, 2, ...; level i holds every other worker at the i-th
//!   smallest of those distances, and n_i is how many there are. Level 0 is w alone and is
//!   never a victim. Without hwloc libfork has one level: every other worker.
//! * **Weights.** Each worker of level i has weight 1 / (n_i * i^2), normalised over all the
//!   other workers (`std::discrete_distribution`). i is the level's rank, not the distance
//!   itself (the paper's Eq. 6 writes r_ij, the distance; the code uses the rank, and so do
//!   we). So level i as a whole is chosen with probability proportional to 1 / i^2, whatever
//!   its size, and uniformly within it: with levels of 3, 4 and 8 workers, a thief picks its
//!   own level-1 group 73% of the time, level 2 18%, level 3 8%.
//! * **The steal loop.** A call of libfork's `try_steal` first tries every level-1 worker
//!   once, in a freshly shuffled order, then makes 1024 + 32 (P - 1) draws from the
//!   distribution, one steal attempt each, and gives up (the pool's loop calls it again, or the
//!   lazy pool's thief goes towards sleep). A lost race moves on to the next victim.
//!
//! # Ours
//!
//! The distance is [`Topology::distance`]: the same order as hwloc's tree (same CPU, SMT
//! siblings, shared caches, NUMA node, then nodes by the firmware's distance matrix, then the
//! package) computed from one [`Topology`] whether sysfs or hwloc read it. Only which workers
//! are equally far and which are closer matters, so levels come out as libfork's wherever the
//! two orders agree. The weights are libfork's. Sampling picks a level with one cumulative
//! table (the upper 32 bits of the draw against thresholds out of 2^32) and a worker within
//! it uniformly (the lower 32 bits, multiplied by the level's size and shifted), so every
//! victim's probability is exact up to the table's 2^-32 steps. The pass ([`StealPass`]) is
//! libfork's, with one difference: the level-1 sweep starts at a random member and goes round
//! in order, instead of shuffling (no per-thief copy of the list to shuffle). Our `libfork`
//! retries a steal that lost a race on the same victim (libfork's moves on). A uniform table
//! has one level and no sweep: a uniform draw every time.
//!
//! Which CPU a worker sits on comes from the caller: the pool's pinning placement, or, where
//! workers are not pinned, a nominal placement (see `libfork`'s module documentation).

use crate::topology::{Cpu, Topology};

/// libfork's draws per pass: `DRAWS_MIN + DRAWS_PER_VICTIM * (P - 1)` after the sweep
/// (`k_min_steal_attempts`, `k_steal_attempts_per_target` in its `numa_context.hpp`).
pub const DRAWS_MIN: u32 = 1024;
/// See [`DRAWS_MIN`].
pub const DRAWS_PER_VICTIM: u32 = 32;

/// The sum of a table's level weights in fixed point.
const ONE: u64 = 1 << 32;

/// One worker's victims: the other workers by level, and each level's cumulative weight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VictimTable {
    /// The other workers, level by level (closest first), within a level in increasing order.
    order: Box<[u32]>,
    /// `ends[i]`: where level i + 1 ends in `order`.
    ends: Box<[u32]>,
    /// `cum[i]`: the weight of levels 1..=i + 1 out of 2^32; strictly increasing, the last
    /// is 2^32.
    cum: Box<[u64]>,
    /// How many workers at the front of `order` a pass tries before drawing (level 1; 0 for a
    /// uniform table).
    sweep: u32,
}

impl VictimTable {
    /// Every other worker of `p` equally likely, no sweep: the papers' uniform victim.
    pub fn uniform(p: usize, worker: usize) -> VictimTable {
        let order: Box<[u32]> = (0..p).filter(|&v| v != worker).map(to_u32).collect();
        let (ends, cum) = if order.is_empty() {
            (Box::default(), Box::default())
        } else {
            (Box::from([to_u32(order.len())]), Box::from([ONE]))
        };
        VictimTable {
            order,
            ends,
            cum,
            sweep: 0,
        }
    }

    /// libfork's weighting for `worker` of `p`: the other workers grouped into levels by
    /// `distance(worker, v)` (equal distances, one level; smaller, closer), level i's workers
    /// weighing 1 / (n_i * i^2) each; a pass sweeps level 1 first.
    pub fn by_distance<D: Ord>(
        p: usize,
        worker: usize,
        distance: impl Fn(usize, usize) -> D,
    ) -> VictimTable {
        let mut others: Vec<(D, usize)> = (0..p)
            .filter(|&v| v != worker)
            .map(|v| (distance(worker, v), v))
            .collect();
        others.sort();
        let mut ends = Vec::new();
        for (k, pair) in others.windows(2).enumerate() {
            if pair[0].0 != pair[1].0 {
                ends.push(to_u32(k + 1));
            }
        }
        if !others.is_empty() {
            ends.push(to_u32(others.len()));
        }
        // Level i weighs n_i * 1 / (n_i * i^2) = 1 / i^2 in all.
        let total: f64 = (1..=ends.len()).map(|i| 1.0 / (i * i) as f64).sum();
        let mut cum = Vec::with_capacity(ends.len());
        let mut prefix = 0.0;
        let mut last = 0u64;
        for i in 1..=ends.len() {
            prefix += 1.0 / (i * i) as f64;
            let c = if i == ends.len() {
                ONE
            } else {
                ((prefix / total * ONE as f64).round() as u64).clamp(last + 1, ONE - 1)
            };
            cum.push(c);
            last = c;
        }
        VictimTable {
            sweep: ends.first().copied().unwrap_or(0),
            order: others.into_iter().map(|(_, v)| to_u32(v)).collect(),
            ends: ends.into(),
            cum: cum.into(),
        }
    }

    /// Whether there is no other worker to steal from.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The levels, closest first: the workers of each, in increasing order.
    pub fn levels(&self) -> impl Iterator<Item = &[u32]> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(self.ends.iter().copied())
            .map(|(a, b)| &self.order[a as usize..b as usize])
    }

    /// The workers a pass tries first, once each (libfork's level 1; none for uniform).
    pub fn sweep(&self) -> &[u32] {
        &self.order[..self.sweep as usize]
    }

    /// The probability that [`VictimTable::sample`] picks `victim` (0 for this worker itself
    /// and for workers out of range), as the table holds it.
    pub fn probability(&self, victim: usize) -> f64 {
        let mut lo = 0;
        let mut below = 0;
        for (&end, &c) in self.ends.iter().zip(self.cum.iter()) {
            if self.order[lo as usize..end as usize].contains(&to_u32(victim)) {
                return (c - below) as f64 / ONE as f64 / (end - lo) as f64;
            }
            lo = end;
            below = c;
        }
        0.0
    }

    /// The victim for the random draw `r` (all 64 bits used). The table must not be empty.
    #[inline]
    pub fn sample(&self, r: u64) -> usize {
        let x = r >> 32;
        let mut i = 0;
        // The last threshold is 2^32 > x: the scan stops in the table.
        while x >= self.cum[i] {
            i += 1;
        }
        let lo = if i == 0 { 0 } else { self.ends[i - 1] };
        let n = u64::from(self.ends[i] - lo);
        let k = ((r & 0xFFFF_FFFF) * n) >> 32;
        self.order[lo as usize + k as usize] as usize
    }
}

/// libfork's NUMA-weighted tables for `cpus.len()` workers, worker i on CPU `cpus[i]` of
/// `topology` (a CPU it does not list counts as a core of its own on node 0).
pub fn numa_tables(topology: &Topology, cpus: &[usize]) -> Vec<VictimTable> {
    let placed: Vec<Cpu> = cpus
        .iter()
        .map(|&id| {
            topology.cpu(id).copied().unwrap_or(Cpu {
                id,
                core: id,
                package: 0,
                node: 0,
            })
        })
        .collect();
    (0..placed.len())
        .map(|w| {
            VictimTable::by_distance(placed.len(), w, |a, b| {
                topology.distance(&placed[a], &placed[b])
            })
        })
        .collect()
}

/// A thief's place in libfork's steal pass: first its table's sweep (level 1), each once,
/// starting at a random one, then `DRAWS_MIN + DRAWS_PER_VICTIM * (P - 1)` weighted draws;
/// then a new pass begins. Start one where libfork's thief calls `try_steal` afresh (a worker
/// that starts looking for work, a sleeper that wakes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StealPass {
    start: u32,
    swept: u32,
    draws_left: u32,
}

impl StealPass {
    /// A new pass over `table`; `r` is a random draw (picks where the sweep starts).
    pub fn new(table: &VictimTable, r: u64) -> StealPass {
        let others = to_u32(table.order.len());
        StealPass {
            start: (((r >> 32) * u64::from(table.sweep)) >> 32) as u32,
            swept: 0,
            draws_left: DRAWS_MIN.saturating_add(DRAWS_PER_VICTIM.saturating_mul(others)),
        }
    }

    /// The next victim to try; `rand` gives the thief's random draws. The table must not be
    /// empty.
    #[inline]
    pub fn next_victim(&mut self, table: &VictimTable, mut rand: impl FnMut() -> u64) -> usize {
        loop {
            if self.swept < table.sweep {
                let i = (self.start + self.swept) % table.sweep;
                self.swept += 1;
                return table.order[i as usize] as usize;
            }
            if self.draws_left > 0 {
                self.draws_left -= 1;
                return table.sample(rand());
            }
            *self = StealPass::new(table, rand());
        }
    }
}

fn to_u32(x: usize) -> u32 {
    u32::try_from(x).expect("more than 2^32 workers")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Pinning;
    use crate::topology::{Cache, NodeDistances};

    /// 2 packages x 2 NUMA nodes x 4 cores, no SMT: CPU c on node c / 4, package c / 8, an L3
    /// per node; node distances 10 (own), 12 (the package's other node), 20 (other package).
    fn two_by_two_by_four() -> Topology {
        let cpus = (0..16)
            .map(|id| Cpu {
                id,
                core: id % 8,
                package: id / 8,
                node: id / 4,
            })
            .collect();
        let caches = (0..4)
            .map(|n| Cache {
                level: 3,
                cpus: (4 * n..4 * n + 4).collect(),
            })
            .collect();
        let matrix = (0..16)
            .map(|k| {
                let (a, b) = (k / 4, k % 4);
                match (a == b, a / 2 == b / 2) {
                    (true, _) => 10,
                    (false, true) => 12,
                    (false, false) => 20,
                }
            })
            .collect();
        Topology {
            cpus,
            caches,
            distances: NodeDistances {
                nodes: vec![0, 1, 2, 3],
                matrix,
            },
        }
    }

    /// One node of `n` cores sharing an L3, no SMT.
    fn one_node(n: usize) -> Topology {
        Topology {
            caches: vec![Cache {
                level: 3,
                cpus: (0..n).collect(),
            }],
            ..Topology::flat(n)
        }
    }

    fn levels(t: &VictimTable) -> Vec<Vec<u32>> {
        t.levels().map(<[u32]>::to_vec).collect()
    }

    /// libfork's weight of a victim at level i (1-based) of `sizes`, normalised.
    fn libfork_weight(sizes: &[usize], i: usize) -> f64 {
        let w = |i: usize| 1.0 / (sizes[i - 1] * i * i) as f64;
        let total: f64 = (1..=sizes.len()).map(|k| sizes[k - 1] as f64 * w(k)).sum();
        w(i) / total
    }

    /// Every victim's probability is libfork's 1 / (n_i i^2), normalised, to the table's
    /// 2^-32 resolution; the worker itself has none.
    fn assert_libfork_weights(t: &VictimTable, worker: usize, p: usize) {
        let lv = levels(t);
        let sizes: Vec<usize> = lv.iter().map(Vec::len).collect();
        let mut seen = 0;
        for (i, level) in lv.iter().enumerate() {
            for &v in level {
                let want = libfork_weight(&sizes, i + 1);
                let got = t.probability(v as usize);
                assert!((got - want).abs() < 1e-8, "victim {v}: {got} vs {want}");
                seen += 1;
            }
        }
        assert_eq!(seen, p - 1);
        assert_eq!(t.probability(worker), 0.0);
        let sum: f64 = (0..p).map(|v| t.probability(v)).sum();
        assert!((sum - 1.0).abs() < 1e-8, "{sum}");
    }

    #[test]
    fn fake_numa_topology_gives_libforks_levels_and_weights() {
        let topo = two_by_two_by_four();
        let cpus = topo.placement(Pinning::Compact, 16).unwrap();
        assert_eq!(cpus, (0..16).collect::<Vec<_>>());
        let tables = numa_tables(&topo, &cpus);
        for (w, t) in tables.iter().enumerate() {
            let node = (4 * (w / 4)..4 * (w / 4) + 4).filter(|&v| v != w);
            let pair_node = 4 * ((w / 4) ^ 1);
            let package = pair_node..pair_node + 4;
            let other = 8 * (1 - w / 8)..8 * (1 - w / 8) + 8;
            let want: Vec<Vec<u32>> =
                [node.collect::<Vec<_>>(), package.collect(), other.collect()]
                    .into_iter()
                    .map(|l| l.into_iter().map(|v| v as u32).collect())
                    .collect();
            assert_eq!(levels(t), want, "worker {w}");
            assert_eq!(t.sweep(), &want[0][..]);
            assert_libfork_weights(t, w, 16);
            // n = 3, 4, 8: each level weighs 1 / i^2 in all.
            let level = |i: usize| {
                want[i]
                    .iter()
                    .map(|&v| t.probability(v as usize))
                    .sum::<f64>()
            };
            let h = 1.0 + 1.0 / 4.0 + 1.0 / 9.0;
            for (i, share) in [1.0 / h, 0.25 / h, 1.0 / 9.0 / h].into_iter().enumerate() {
                assert!(
                    (level(i) - share).abs() < 1e-8,
                    "worker {w} level {}",
                    i + 1
                );
            }
        }
    }

    #[test]
    fn level_sizes_depend_on_the_worker() {
        // Six workers placed compactly: four on node 0, two on node 1.
        let topo = two_by_two_by_four();
        let cpus = topo.placement(Pinning::Compact, 6).unwrap();
        let tables = numa_tables(&topo, &cpus);
        assert_eq!(levels(&tables[0]), vec![vec![1, 2, 3], vec![4, 5]]);
        assert_eq!(levels(&tables[4]), vec![vec![5], vec![0, 1, 2, 3]]);
        for (w, t) in tables.iter().enumerate() {
            assert_libfork_weights(t, w, 6);
        }
        // Worker 4: its one neighbour weighs 1 / (1 * 1), each of node 0's 1 / (4 * 4).
        assert!((tables[4].probability(5) - 0.8).abs() < 1e-8);
        assert!((tables[4].probability(0) - 0.05).abs() < 1e-8);
        // Scattered over the four nodes: one level per node distance.
        let cpus = topo.placement(Pinning::Scatter, 4).unwrap();
        let t = &numa_tables(&topo, &cpus)[0];
        let node_of = |v: u32| cpus[v as usize] / 4;
        let lv = levels(t);
        assert_eq!(lv.len(), 2, "{lv:?}");
        assert_eq!(
            lv[0].iter().map(|&v| node_of(v)).collect::<Vec<_>>(),
            vec![1]
        );
        assert_eq!(lv[1].len(), 2);
    }

    #[test]
    fn levels_are_ranks_of_distances_not_distances() {
        // libfork-style tree distances from worker 0: 5 (shared L3) to two workers, 7 (the
        // machine) to three. The weights use the ranks 1 and 2.
        let d = [0, 5, 5, 7, 7, 7];
        let t = VictimTable::by_distance(6, 0, |_, v| d[v]);
        assert_eq!(levels(&t), vec![vec![1, 2], vec![3, 4, 5]]);
        let total = 2.0 * 1.0 / 2.0 + 3.0 * 1.0 / 12.0;
        assert!((t.probability(1) - 0.5 / total).abs() < 1e-8);
        assert!((t.probability(3) - 1.0 / 12.0 / total).abs() < 1e-8);
    }

    #[test]
    fn one_node_degenerates_to_uniform() {
        let topo = one_node(4);
        let cpus = topo.placement(Pinning::Compact, 4).unwrap();
        for (w, t) in numa_tables(&topo, &cpus).iter().enumerate() {
            assert_eq!(t.levels().count(), 1);
            for v in (0..4).filter(|&v| v != w) {
                assert!((t.probability(v) - 1.0 / 3.0).abs() < 1e-9);
            }
            let u = VictimTable::uniform(4, w);
            assert_eq!(levels(t), levels(&u));
            assert_eq!(t.probability(w), 0.0);
        }
        // One worker: nobody to steal from.
        assert!(numa_tables(&topo, &[0])[0].is_empty());
        assert!(VictimTable::uniform(1, 0).is_empty());
    }

    /// xorshift64*, as the libfork workers draw.
    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
    }

    /// 400,000 draws per worker with a fixed seed: every victim's frequency is within five
    /// standard deviations of its weight (sqrt(q (1 - q) / N), at most 0.004 absolute), and the
    /// worker itself never comes up.
    #[test]
    fn sampling_matches_the_weights() {
        const N: usize = 400_000;
        let topo = two_by_two_by_four();
        let cpus = topo.placement(Pinning::Compact, 16).unwrap();
        let tables = numa_tables(&topo, &cpus);
        for w in [0, 5, 13] {
            let t = &tables[w];
            let mut r = rng(0x9E37_79B9_7F4A_7C15 ^ w as u64);
            let mut count = [0usize; 16];
            for _ in 0..N {
                count[t.sample(r())] += 1;
            }
            assert_eq!(count[w], 0, "worker {w} drew itself");
            for (v, &c) in count.iter().enumerate().filter(|&(v, _)| v != w) {
                let q = t.probability(v);
                let sigma = (q * (1.0 - q) / N as f64).sqrt();
                let f = c as f64 / N as f64;
                assert!(
                    (f - q).abs() < 5.0 * sigma,
                    "worker {w} victim {v}: {f} vs {q}"
                );
            }
        }
        // The uniform table too.
        let u = VictimTable::uniform(5, 2);
        let mut r = rng(7);
        let mut count = [0usize; 5];
        for _ in 0..N {
            count[u.sample(r())] += 1;
        }
        assert_eq!(count[2], 0);
        for (v, &c) in count.iter().enumerate().filter(|&(v, _)| v != 2) {
            let f = c as f64 / N as f64;
            assert!(
                (f - 0.25).abs() < 5.0 * (0.25f64 * 0.75 / N as f64).sqrt(),
                "{v}: {f}"
            );
        }
    }

    #[test]
    fn a_pass_sweeps_level_one_then_draws_then_starts_over() {
        let topo = two_by_two_by_four();
        let cpus = topo.placement(Pinning::Compact, 16).unwrap();
        let t = &numa_tables(&topo, &cpus)[6];
        let mut r = rng(42);
        let mut pass = StealPass::new(t, r());
        let draws = (DRAWS_MIN + DRAWS_PER_VICTIM * 15) as usize;
        for round in 0..3 {
            let mut swept: Vec<usize> = (0..3).map(|_| pass.next_victim(t, &mut r)).collect();
            swept.sort();
            assert_eq!(swept, vec![4, 5, 7], "pass {round}: level 1, each once");
            let mut far = 0;
            for _ in 0..draws {
                let v = pass.next_victim(t, &mut r);
                assert_ne!(v, 6);
                far += usize::from(v >= 8);
            }
            assert!(far > 0, "the draws reach the far level");
        }
        // A uniform table has no sweep.
        let u = VictimTable::uniform(3, 0);
        assert!(u.sweep().is_empty());
        let mut pass = StealPass::new(&u, 1);
        for _ in 0..5000 {
            assert_ne!(pass.next_victim(&u, &mut r), 0);
        }
    }
}
