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
