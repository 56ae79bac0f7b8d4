//! Victim selection: uniform, or NUMA-weighted as libfork's paper has it.
//!
//! Each worker gets a [`VictimTable`] at pool start: the other workers grouped into levels by
//! distance, closest first, and the cumulative weight of each level. A thief walks it with a
//! [`StealPass`]. Picking a victim is one draw of the worker's own generator and a scan of at
//! most as many entries as there are levels (a handful); nothing is allocated or shared.
//!
//! # libfork's NUMA weighting
//!
//! These are the facts of libfork's paper (Section III-D, Eq. 6) and of its code
//! (`include/libfork/schedule/ext/numa.hpp`, and `include/libfork/schedule/impl/numa_context.hpp`
//! for the weights and the steal loop):
//!
//! * **Distance.** Every worker is pinned to one processing unit (PU), placed by
//!   `hwloc_distrib` (by default spread over the whole machine, its `numa_strategy::fan`), and
//!   the distance r_ij of two PUs is the number of levels from a PU up to their lowest common
//!   ancestor in hwloc's topology tree (PU, core, caches, groups of NUMA nodes, packages,
//!   machine), the larger of the two climbs. Workers on the same PU are at distance 0.
//! * **Levels.** For worker w, the distinct distances from w to the *other* workers, sorted
//!   ascending, define its levels 1, 2, ...; level i holds every other worker at the i-th
//!   smallest of those distances, and n_i is how many there are. Level 0 is w alone and is
//!   never a victim. Without hwloc libfork has one level: every other worker.
//! * **Weights.** Eq. 6: victim j is drawn with probability proportional to
//!   w_ij = 1 / (n_ij r_ij^2), n_ij being how many workers are at j's distance. So a level as a
//!   whole weighs 1 / r^2, whatever its size, and its workers are equally likely. libfork's
//!   code writes the level's rank i where the paper has r_ij (`1. / (n * I * I)`): the two
//!   agree only where the distances are the ranks 1, 2, 3, ..., which hwloc's tree does not give
//!   past SMT siblings (every level below the lowest shared one, a core's L1d and L2, adds to
//!   every distance).
//! * **The steal loop.** A call of libfork's `try_steal` first tries every level-1 worker
//!   once, in a freshly shuffled order, then makes 1024 + 32 (P - 1) draws from the
//!   distribution, one steal attempt each, and gives up (the pool's loop calls it again, or the
//!   lazy pool's thief goes towards sleep). A lost race moves on to the next victim.
//!
//! # Ours
//!
//! The distance is [`Ancestors::distance`]: libfork's, over the topology tree that one
//! [`Topology`] describes (whether sysfs or hwloc read it), with hwloc's levels (core, every
//! data cache, the groups hwloc adds for NUMA nodes, package). The weights are the paper's:
//! Eq. 6 with the distance itself. Two workers on one CPU (more workers than CPUs) are at
//! distance 0, where Eq. 6 divides by zero: they weigh as distance 1, the closest there is.
//!
//! What the distance changes against the rank, with one worker per core:
//!
//! * the paper's machine (2 sockets x 56 cores, an L1d and an L2 per core, an L3 and a NUMA node
//!   per socket): another core of the socket is at 4 (core, L1d, L2, then the L3 holds both),
//!   a core of the other socket at 6. The socket weighs 1/16 against the other's 1/36: a draw
//!   stays in the socket 69% of the time, where the rank (1 and 2) gives 80%;
//! * two sockets of two NUMA nodes each, an L3 per node: the node at 4, the socket's other
//!   node at 5, the other socket at 6, so 48%, 31% and 21% of the draws, where the rank gives
//!   73%, 18% and 8%.
//!
//! Either way the levels, and so the sweep, are the same. On one NUMA node whose workers each
//! have a core of their own under one shared cache (a machine of one node and one L3, at P up
//! to its cores), every other worker is equally far: one level, with the uniform table's
//! probabilities (a pass still sweeps it once before drawing, as libfork's does). SMT siblings
//! (P past the cores under compact pinning), several L3s in a node, or workers sharing a CPU
//! make levels there too.
//!
//! Sampling picks a level with one cumulative table (the upper 32 bits of the draw against
//! thresholds out of 2^32) and a worker within it uniformly (the lower 32 bits, multiplied by
//! the level's size and shifted), so every victim's probability is exact up to the table's
//! 2^-32 steps. The pass ([`StealPass`]) is libfork's, with one difference: the level-1 sweep
//! starts at a random member and goes round in order, instead of shuffling (no per-thief copy
//! of the list to shuffle). Our `libfork` retries a steal that lost a race on the same victim
//! (libfork's moves on). A uniform table has one level and no sweep: a uniform draw every time.
//!
//! Which CPU a worker sits on comes from the caller: the pool's pinning placement, or, where
//! workers are not pinned, a nominal placement (see `libfork`'s module documentation).

use crate::topology::{Ancestors, Topology};

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

    /// libfork's paper's weighting (Eq. 6) for `worker` of `p`: the other workers grouped into
    /// levels by `distance(worker, v)` (equal distances, one level; smaller, closer), each
    /// worker v weighing 1 / (n * r^2), r = `distance(worker, v)` (0 counts as 1) and n the
    /// size of its level; a pass sweeps the closest level first.
    pub fn by_distance(
        p: usize,
        worker: usize,
        distance: impl Fn(usize, usize) -> u32,
    ) -> VictimTable {
        let mut others: Vec<(u32, usize)> = (0..p)
            .filter(|&v| v != worker)
            .map(|v| (distance(worker, v), v))
            .collect();
        others.sort_unstable();
        let mut ends = Vec::new();
        let mut level_weights = Vec::new();
        for (k, pair) in others.windows(2).enumerate() {
            if pair[0].0 != pair[1].0 {
                ends.push(to_u32(k + 1));
                level_weights.push(level_weight(pair[0].0));
            }
        }
        if let Some(&(r, _)) = others.last() {
            ends.push(to_u32(others.len()));
            level_weights.push(level_weight(r));
        }
        let total: f64 = level_weights.iter().sum();
        let mut cum = Vec::with_capacity(ends.len());
        let mut prefix = 0.0;
        let mut last = 0u64;
        for (i, w) in level_weights.iter().enumerate() {
            prefix += w;
            let c = if i + 1 == ends.len() {
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

/// libfork's NUMA-weighted tables (Eq. 6) for `cpus.len()` workers, worker i on CPU `cpus[i]`
/// of `topology` (a CPU it does not list counts as a core of its own under the machine).
pub fn numa_tables(topology: &Topology, cpus: &[usize]) -> Vec<VictimTable> {
    let placed: Vec<Ancestors> = cpus.iter().map(|&id| topology.ancestors(id)).collect();
    (0..placed.len())
        .map(|w| VictimTable::by_distance(placed.len(), w, |a, b| placed[a].distance(&placed[b])))
        .collect()
}

/// The weight of a level at distance `r` as a whole: n workers of 1 / (n r^2) each.
fn level_weight(r: u32) -> f64 {
    let r = f64::from(r.max(1));
    1.0 / (r * r)
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
    use crate::topology::fake;

    /// 2 packages x 2 NUMA nodes x 4 cores, no SMT: CPU c on node c / 4, package c / 8, an L1d
    /// and an L2 per core, an L3 per node; node distances (SLIT) 10 (own), 12 (the package's
    /// other node), 21 (other package).
    fn two_by_two_by_four() -> Topology {
        fake::machine(2, 2, 4, 1, |a, b| match (a == b, a / 2 == b / 2) {
            (true, _) => 10,
            (false, true) => 12,
            (false, false) => 21,
        })
    }

    /// Two sockets as the paper's machine, scaled down: one NUMA node each (SLIT 10 / 21), 4
    /// cores of 2 hardware threads, an L1d and an L2 per core, an L3 per socket.
    fn two_sockets() -> Topology {
        fake::machine(2, 1, 4, 2, |a, b| if a == b { 10 } else { 21 })
    }

    fn levels(t: &VictimTable) -> Vec<Vec<u32>> {
        t.levels().map(<[u32]>::to_vec).collect()
    }

    /// Eq. 6 for `worker` of `p` at `distance`: victim v weighs 1 / (n_v r_v^2), r_v its
    /// distance (0 counting as 1), n_v how many others are that far; normalised.
    fn eq6(p: usize, worker: usize, distance: impl Fn(usize) -> u32) -> Vec<f64> {
        let others = || (0..p).filter(|&v| v != worker);
        let w = |v: usize| {
            let n = others().filter(|&u| distance(u) == distance(v)).count() as f64;
            let r = f64::from(distance(v).max(1));
            1.0 / (n * r * r)
        };
        let total: f64 = others().map(w).sum();
        (0..p)
            .map(|v| if v == worker { 0.0 } else { w(v) / total })
            .collect()
    }

    /// Every victim's probability in `t` is `want`'s, to the table's 2^-32 resolution, and they
    /// sum to 1.
    fn assert_probabilities(t: &VictimTable, want: &[f64]) {
        for (v, &q) in want.iter().enumerate() {
            let got = t.probability(v);
            assert!((got - q).abs() < 1e-8, "victim {v}: {got} vs {q}");
        }
        let sum: f64 = (0..want.len()).map(|v| t.probability(v)).sum();
        assert!((sum - 1.0).abs() < 1e-8, "{sum}");
    }

    /// `t`'s levels as a whole: the probability of each.
    fn level_shares(t: &VictimTable) -> Vec<f64> {
        t.levels()
            .map(|l| l.iter().map(|&v| t.probability(v as usize)).sum())
            .collect()
    }

    fn assert_close(got: &[f64], want: &[f64]) {
        assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-4, "{got:?} vs {want:?}");
        }
    }

    #[test]
    fn two_sockets_weigh_by_the_distance() {
        // One worker per core, spread over both sockets: worker w on socket w % 2.
        let topo = two_sockets();
        let cpus = topo.placement(Pinning::Scatter, 8).unwrap();
        assert_eq!(cpus, [0, 4, 1, 5, 2, 6, 3, 7]);
        let tables = numa_tables(&topo, &cpus);
        for (w, t) in tables.iter().enumerate() {
            let socket = |v: usize| v % 2;
            // The socket's other cores at 4 (core, L1d, L2, then the L3), the other socket at 6.
            let r = |v: usize| if socket(v) == socket(w) { 4 } else { 6 };
            assert_probabilities(t, &eq6(8, w, r));
            assert_eq!(t.sweep().len(), 3, "worker {w}: its socket first");
        }
        // The socket weighs 1/16 against the other's 1/36: 69% / 31% (the rank, 1 and 2,
        // would give 80% / 20%); each of the 3 near workers 23.1%, each of the 4 far 7.7%.
        assert_close(&level_shares(&tables[0]), &[9.0 / 13.0, 4.0 / 13.0]);
        assert!((tables[0].probability(2) - 3.0 / 13.0).abs() < 1e-8);
        assert!((tables[0].probability(1) - 1.0 / 13.0).abs() < 1e-8);
        // Every hardware thread: the SMT sibling at 1 takes 92% of the draws, the socket's
        // other 6 threads 5.7%, the other socket's 8 threads 2.5%.
        let cpus = topo.placement(Pinning::Scatter, 16).unwrap();
        let t = &numa_tables(&topo, &cpus)[0];
        assert_eq!(
            levels(t)[0],
            [8],
            "CPU 8 is CPU 0's sibling, worker 8's CPU"
        );
        let h = 1.0 + 1.0 / 16.0 + 1.0 / 36.0;
        assert_close(&level_shares(t), &[1.0 / h, 1.0 / 16.0 / h, 1.0 / 36.0 / h]);
    }

    #[test]
    fn four_sockets_in_pairs_give_three_levels() {
        // SLIT 10 / 16 / 32: sockets 0 and 1 close, 2 and 3 close. hwloc groups the pairs, so
        // the pair's other socket is one level nearer than the far pair.
        let topo = fake::machine(4, 1, 2, 1, |a, b| match (a == b, a / 2 == b / 2) {
            (true, _) => 10,
            (false, true) => 16,
            (false, false) => 32,
        });
        let cpus = topo.placement(Pinning::Scatter, 8).unwrap();
        assert_eq!(cpus, [0, 2, 4, 6, 1, 3, 5, 7]);
        let t = &numa_tables(&topo, &cpus)[0];
        assert_eq!(levels(t), [vec![4], vec![1, 5], vec![2, 3, 6, 7]]);
        let r = |v: usize| [0, 6, 7, 7, 4, 6, 7, 7][v];
        assert_probabilities(t, &eq6(8, 0, r));
        // Distances 4, 6, 7: 56% / 25% / 18% (the rank: 73% / 18% / 8%).
        let h = 1.0 / 16.0 + 1.0 / 36.0 + 1.0 / 49.0;
        assert_close(
            &level_shares(t),
            &[1.0 / 16.0 / h, 1.0 / 36.0 / h, 1.0 / 49.0 / h],
        );
    }

    #[test]
    fn nodes_within_sockets_give_libforks_levels_and_the_papers_weights() {
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
            // The node at 4, the package's other node at 5, the other package at 6.
            let r = |v: usize| match (v / 4 == w / 4, v / 8 == w / 8) {
                (true, _) => 4,
                (false, true) => 5,
                (false, false) => 6,
            };
            assert_probabilities(t, &eq6(16, w, r));
            // 48% / 31% / 21% of the draws (the rank, 1 / 2 / 3: 73% / 18% / 8%).
            let h = 1.0 / 16.0 + 1.0 / 25.0 + 1.0 / 36.0;
            assert_close(
                &level_shares(t),
                &[1.0 / 16.0 / h, 1.0 / 25.0 / h, 1.0 / 36.0 / h],
            );
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
        // Worker 4: its one neighbour at 4 weighs 1 / (1 * 16), each of node 0's at 5
        // 1 / (4 * 25).
        let total = 1.0 / 16.0 + 1.0 / 25.0;
        assert!((tables[4].probability(5) - 1.0 / 16.0 / total).abs() < 1e-8);
        assert!((tables[4].probability(0) - 1.0 / 100.0 / total).abs() < 1e-8);
        // Scattered over the four nodes: one level per distance.
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
    fn weights_use_the_distance_not_its_rank() {
        // libfork-style tree distances from worker 0: 5 to two workers, 7 to three. Eq. 6
        // weighs the levels 1/25 and 1/49; the rank (1 and 2) would weigh them 1 and 1/4.
        let d = [0, 5, 5, 7, 7, 7];
        let t = VictimTable::by_distance(6, 0, |_, v| d[v]);
        assert_eq!(levels(&t), vec![vec![1, 2], vec![3, 4, 5]]);
        let total = 1.0 / 25.0 + 1.0 / 49.0;
        assert!((t.probability(1) - 1.0 / 50.0 / total).abs() < 1e-8);
        assert!((t.probability(3) - 1.0 / 147.0 / total).abs() < 1e-8);
        // Workers on one CPU (distance 0) weigh as distance 1.
        let t = VictimTable::by_distance(3, 0, |_, v| [0, 0, 4][v]);
        assert_eq!(levels(&t), vec![vec![1], vec![2]]);
        assert!((t.probability(1) - 16.0 / 17.0).abs() < 1e-8);
    }

    #[test]
    fn one_node_of_one_cache_is_uniform() {
        // One node, one L3, private L1d and L2 (this 2-core machine's shape, at 4 cores): at P
        // up to the cores, every table has the uniform table's one level and probabilities; a
        // pass sweeps it once (as libfork's does) before drawing.
        let topo = fake::machine(1, 1, 4, 1, |_, _| 10);
        for pinning in [Pinning::Compact, Pinning::Scatter] {
            for p in 1..=4 {
                let cpus = topo.placement(pinning, p).unwrap();
                for (w, t) in numa_tables(&topo, &cpus).iter().enumerate() {
                    let u = VictimTable::uniform(p, w);
                    assert_eq!(levels(t), levels(&u), "P={p} worker {w}");
                    for v in 0..p {
                        assert!((t.probability(v) - u.probability(v)).abs() < 1e-9);
                    }
                    assert_eq!(t.sweep().len(), p - 1);
                }
            }
        }
        // One worker: nobody to steal from.
        assert!(numa_tables(&topo, &[0])[0].is_empty());
        assert!(VictimTable::uniform(1, 0).is_empty());
        // Past the cores it is not uniform: SMT siblings under compact pinning, workers
        // sharing a CPU when there are more workers than CPUs.
        let smt = fake::machine(1, 1, 2, 2, |_, _| 10);
        let cpus = smt.placement(Pinning::Compact, 4).unwrap();
        assert_eq!(levels(&numa_tables(&smt, &cpus)[0]), [vec![1], vec![2, 3]]);
        let cpus = topo.placement(Pinning::Scatter, 8).unwrap();
        assert_eq!(levels(&numa_tables(&topo, &cpus)[0]).len(), 2);
    }

    /// xorshift64*, as the libfork workers draw.
    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let state = std::cell::Cell::new(seed);
        move || crate::rng::xorshift64star(&state)
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
