//! Where workers sit: each worker's victims, its nominal CPU and its lazy-pool group.

use crate::config::{Pinning, PoolConfig, VictimPolicy};
use crate::topology::Topology;
use crate::victims::{self, VictimTable};

/// Each worker's victims under `config`: uniform for [`VictimPolicy::Uniform`] and
/// [`VictimPolicy::RuntimeDefault`]; for [`VictimPolicy::NumaWeighted`], libfork's weighting
/// ([`victims`]) over the workers' [`nominal_placement`] (unpinned, their weights favour
/// workers that are near only on paper: pin for the weights to mean what they say).
pub(super) fn victim_tables(config: &PoolConfig, topology: &Topology) -> Vec<VictimTable> {
    let p = config.workers;
    match config.victim {
        VictimPolicy::Uniform | VictimPolicy::RuntimeDefault => {
            (0..p).map(|w| VictimTable::uniform(p, w)).collect()
        }
        VictimPolicy::NumaWeighted => {
            victims::numa_tables(topology, &nominal_placement(config, topology))
        }
    }
}

/// The CPU of each worker, for the NUMA-aware parts of the pool: where `config.pinning` puts
/// it, or, unpinned ([`Pinning::None`]), the compact order's CPU (worker i on the i-th CPU,
/// filling a node first) as a nominal placement. The OS may move unpinned threads anywhere:
/// pin for the placement to describe the machine.
pub(super) fn nominal_placement(config: &PoolConfig, topology: &Topology) -> Vec<usize> {
    let pinning = match config.pinning {
        Pinning::None => Pinning::Compact,
        pinned => pinned,
    };
    topology
        .placement(pinning, config.workers)
        .expect("a pinning other than none places every worker")
}

/// Each worker's lazy-pool group: the NUMA node of its CPU in the [`nominal_placement`],
/// numbered densely from 0 in the order the nodes first appear.
pub(super) fn groups_of(config: &PoolConfig, topology: &Topology) -> Vec<usize> {
    let mut nodes: Vec<usize> = Vec::new();
    nominal_placement(config, topology)
        .iter()
        .map(|&c| {
            let node = topology.cpu(c).map_or(0, |c| c.node);
            nodes.iter().position(|&n| n == node).unwrap_or_else(|| {
                nodes.push(node);
                nodes.len() - 1
            })
        })
        .collect()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::topology::{Cpu, NodeDistances};

    /// Two nodes of two CPUs each (CPU c on node c / 2), distances 10 / 20.
    pub(in crate::libfork) fn two_nodes() -> Topology {
        Topology {
            cpus: (0..4)
                .map(|id| Cpu {
                    id,
                    core: id,
                    package: id / 2,
                    node: id / 2,
                })
                .collect(),
            caches: Vec::new(),
            distances: NodeDistances {
                nodes: vec![0, 1],
                matrix: vec![10, 20, 20, 10],
            },
        }
    }

    fn levels(t: &VictimTable) -> Vec<Vec<u32>> {
        t.levels().map(<[u32]>::to_vec).collect()
    }

    #[test]
    fn victim_tables_follow_the_policy_and_the_placement() {
        let topo = two_nodes();
        let config = |victim, pinning| PoolConfig {
            victim,
            pinning,
            ..PoolConfig::with_workers(4)
        };
        for victim in [VictimPolicy::Uniform, VictimPolicy::RuntimeDefault] {
            let t = victim_tables(&config(victim, Pinning::Scatter), &topo);
            assert_eq!(levels(&t[0]), vec![vec![1, 2, 3]], "{victim}");
            assert!(t[0].sweep().is_empty());
        }
        // Unpinned: the compact order's nominal placement, workers 0 and 1 on node 0.
        let t = victim_tables(&config(VictimPolicy::NumaWeighted, Pinning::None), &topo);
        assert_eq!(levels(&t[0]), vec![vec![1], vec![2, 3]]);
        assert_eq!(levels(&t[3]), vec![vec![2], vec![0, 1]]);
        // Scattered: workers 0 and 2 on node 0 (CPUs 0 and 1), 1 and 3 on node 1.
        let t = victim_tables(&config(VictimPolicy::NumaWeighted, Pinning::Scatter), &topo);
        assert_eq!(levels(&t[0]), vec![vec![2], vec![1, 3]]);
        assert!((t[0].probability(2) - 9.0 / 13.0).abs() < 1e-8);
        assert!((t[0].probability(1) - 2.0 / 13.0).abs() < 1e-8);
    }
}
