//! Machine topology (CPUs, cores, packages, NUMA nodes and their distances, caches), read from
//! Linux sysfs or, with the `hwloc` feature, through hwloc; and thread pinning.
//!
//! Both readers fill the same [`Topology`], and everything built on it (pinning orders, the
//! topology tree and its [`Ancestors`], whose distances NUMA-weighted victim selection weighs
//! workers by) is computed from that one description, so the two agree wherever they read the
//! same machine. [`Topology::detect`] keeps the CPUs the calling thread may run on (its
//! affinity, which `taskset`, cgroups and Slurm set for the process), so pinning places workers
//! on those only.
//! Without sysfs (another OS, a container hiding it) the topology falls back to one node of
//! those CPUs, and pinning off Linux is an error that says so.

use crate::config::Pinning;
use std::collections::HashMap;
use std::fs;
use std::path::Path;

/// One logical CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cpu {
    /// Linux CPU number.
    pub id: usize,
    /// Physical core id (unique within its package).
    pub core: usize,
    /// Package (socket) id.
    pub package: usize,
    /// NUMA node.
    pub node: usize,
}

/// A data or unified cache (instruction caches are left out, as hwloc leaves them out of its
/// tree by default). Private caches are kept: each is a level of the topology tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cache {
    /// 1 for L1, 2 for L2, ...
    pub level: u8,
    /// The CPUs sharing it (one for a private cache), in increasing order.
    pub cpus: Vec<usize>,
}

/// The NUMA node distance matrix as the firmware reports it (ACPI SLIT, through
/// `/sys/devices/system/node/nodeN/distance` or hwloc's `NUMALatency` matrix): 10 from a node to
/// itself, larger for farther nodes. Empty when nothing reported it (one node, or no sysfs).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeDistances {
    /// The nodes of the matrix, in its order.
    pub nodes: Vec<usize>,
    /// Row-major: `matrix[i * nodes.len() + j]` is the distance from `nodes[i]` to `nodes[j]`.
    pub matrix: Vec<u32>,
}

impl NodeDistances {
    /// The reported distance from node `a` to node `b`, if both are in the matrix.
    pub fn get(&self, a: usize, b: usize) -> Option<u32> {
        let i = self.nodes.iter().position(|&n| n == a)?;
        let j = self.nodes.iter().position(|&n| n == b)?;
        self.matrix.get(i * self.nodes.len() + j).copied()
    }
}

/// Linux's node distance within a node, and between nodes when the firmware reports none.
pub const LOCAL_DISTANCE: u32 = 10;
/// See [`LOCAL_DISTANCE`].
pub const REMOTE_DISTANCE: u32 = 20;

/// One CPU's place in the topology tree (hwloc's, with its default filters): the CPU sets of
/// its ancestors below the machine (the root), smallest first. They are the CPU's core, each
/// data or unified cache holding it (private ones too), and its package; and the groups hwloc
/// adds where no such object has the same CPUs: the CPU's NUMA node, and the groups of nodes by
/// distance. A group by distance is, for a distance d of the firmware's matrix (any two nodes'),
/// the nodes within d of the CPU's node, kept only where every node of the group finds the
/// same nodes within d of itself: so the groups nest into a tree, as hwloc's do (hwloc joins
/// the nodes at the smallest distance, then the groups one level up, with more than 2 nodes).
/// A matrix without such nested groups (a ring of nodes) gives none, and the nodes sit under
/// their package. Levels this topology does not report (caches, where neither reader found
/// them; dies and clusters, which neither reads) are missing from the tree.
///
/// Built by [`Topology::ancestors`]; [`Ancestors::distance`] is libfork's topological distance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ancestors {
    /// The CPU.
    cpu: usize,
    /// Its ancestors' CPU sets (each in increasing order), smallest first.
    sets: Vec<Vec<usize>>,
}

impl Ancestors {
    /// The ancestors' CPU sets below the machine, smallest first.
    #[cfg(test)]
    pub(crate) fn sets(&self) -> &[Vec<usize>] {
        &self.sets
    }

    /// How many levels up from this CPU the lowest ancestor holding CPU `other` is: 0 for the
    /// CPU itself, else 1 + the number of its ancestors that do not hold `other` (the machine
    /// holds every CPU).
    fn levels_up_to(&self, other: usize) -> u32 {
        if other == self.cpu {
            return 0;
        }
        let below = self
            .sets
            .iter()
            .filter(|s| s.binary_search(&other).is_err())
            .count();
        u32::try_from(below + 1).expect("a tree of fewer than 2^32 levels")
    }

    /// libfork's topological distance between two CPUs (its paper's r_ij, Section III-D, and
    /// `distance_matrix` in its `numa.hpp`): the larger of the two climbs from each CPU to their
    /// lowest common ancestor, counted in levels. The climb starts at the hardware thread, as
    /// `numa.hpp`'s does (its leaves are hwloc's PUs): 0 for one CPU, 1 for SMT siblings (their
    /// core), and two cores under one L3 with private L1d and L2 are 4 apart (core, L1d, L2,
    /// L3). The paper's text puts the cores at the leaves, one level less: on its machine (an L3
    /// and a NUMA node per socket) another core of the socket is at 4 here and another socket's
    /// at 6, where the text's tree gives 3 and 5.
    ///
    /// A climb counts the CPU's own ancestors only. hwloc's depth difference (`numa.hpp`'s)
    /// also counts a level that exists elsewhere in the tree but not above this CPU (a group
    /// over some nodes only): the two differ on such uneven machines only.
    pub fn distance(&self, other: &Ancestors) -> u32 {
        self.levels_up_to(other.cpu)
            .max(other.levels_up_to(self.cpu))
    }
}

/// A machine's CPUs, caches and node distances: every online CPU as the readers find it, the
/// CPUs this process may run on as [`Topology::detect`] gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    /// Logical CPUs in increasing id order.
    pub cpus: Vec<Cpu>,
    /// Data and unified caches, private ones included, each once.
    pub caches: Vec<Cache>,
    /// NUMA node distances.
    pub distances: NodeDistances,
}

fn read_usize(path: &Path) -> Option<usize> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Parses a Linux CPU list such as `0-3,8,10-11`.
pub fn parse_cpu_list(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.parse::<usize>().ok()),
        }
    }
    out
}

/// Adds a cache of `level` held by `cpus` unless it holds none or is already known.
fn add_cache(caches: &mut Vec<Cache>, level: usize, mut cpus: Vec<usize>) {
    cpus.sort_unstable();
    cpus.dedup();
    let Ok(level) = u8::try_from(level) else {
        return;
    };
    if !cpus.is_empty() && !caches.iter().any(|c| c.level == level && c.cpus == cpus) {
        caches.push(Cache { level, cpus });
    }
}

impl Topology {
    /// Reads the topology of this machine, restricted to the CPUs the calling thread may run on
    /// ([`allowed_cpus`], [`Topology::restricted_to`]): through hwloc with the `hwloc` feature
    /// (falling back to sysfs if hwloc fails), else from sysfs; [`Topology::fallback`] if
    /// neither works. Every placement drawn from it is on CPUs the threads may take.
    pub fn detect() -> Topology {
        #[cfg(feature = "hwloc")]
        let read = Topology::from_hwloc()
            .ok()
            .or_else(|| Topology::from_sysfs(Path::new("/sys/devices/system")));
        #[cfg(not(feature = "hwloc"))]
        let read = Topology::from_sysfs(Path::new("/sys/devices/system"));
        match read {
            Some(t) => t.restricted_to(&allowed_cpus()),
            None => Topology::fallback(),
        }
    }

    /// One node of the CPUs the calling thread may run on ([`allowed_cpus`]; where the OS does
    /// not say, `available_parallelism` CPUs numbered from 0), one core each, no cache known.
    pub fn fallback() -> Topology {
        let allowed = allowed_cpus();
        if allowed.is_empty() {
            Topology::flat(std::thread::available_parallelism().map_or(1, |n| n.get()))
        } else {
            Topology::one_node(allowed)
        }
    }

    /// This topology with only the CPUs in `allowed`: each cache keeps the allowed CPUs it holds
    /// (one that holds none goes), the node distances stay. Unchanged where `allowed` holds
    /// none of its CPUs (an empty `allowed`: the OS did not say).
    pub fn restricted_to(&self, allowed: &[usize]) -> Topology {
        let keep = |id: &usize| allowed.contains(id);
        if !self.cpus.iter().any(|c| keep(&c.id)) {
            return self.clone();
        }
        let mut caches = Vec::new();
        for c in &self.caches {
            add_cache(
                &mut caches,
                usize::from(c.level),
                c.cpus.iter().copied().filter(keep).collect(),
            );
        }
        Topology {
            cpus: self.cpus.iter().copied().filter(|c| keep(&c.id)).collect(),
            caches,
            distances: self.distances.clone(),
        }
    }

    /// One node of `n` CPUs (ids `0..n`), one core each, one package, no cache known.
    pub fn flat(n: usize) -> Topology {
        Topology::one_node(0..n)
    }

    /// One node of the CPUs `ids` (in increasing order), one core each, one package, no cache
    /// known.
    fn one_node(ids: impl IntoIterator<Item = usize>) -> Topology {
        Topology {
            cpus: ids
                .into_iter()
                .map(|id| Cpu {
                    id,
                    core: id,
                    package: 0,
                    node: 0,
                })
                .collect(),
            caches: Vec::new(),
            distances: NodeDistances::default(),
        }
    }

    /// Reads the topology from a sysfs tree rooted at `root` (`/sys/devices/system` on Linux):
    /// `cpu/online`, `cpu/cpuN/topology/{core_id,physical_package_id}`,
    /// `cpu/cpuN/cache/indexK/{level,type,shared_cpu_list}`, `node/online`,
    /// `node/nodeN/{cpulist,distance}`. `None` if no online CPU is listed.
    ///
    /// A node's `distance` file lists its distance to every online node, in the order of
    /// `node/online`; a matrix with a row of another length is dropped (unknown distances).
    pub fn from_sysfs(root: &Path) -> Option<Topology> {
        let online = fs::read_to_string(root.join("cpu/online"))
            .map(|s| parse_cpu_list(&s))
            .unwrap_or_default();
        if online.is_empty() {
            return None;
        }
        let mut node_of = HashMap::new();
        let nodes = fs::read_to_string(root.join("node/online"))
            .map(|s| parse_cpu_list(&s))
            .unwrap_or_default();
        let mut matrix = Vec::new();
        for &node in &nodes {
            let dir = root.join(format!("node/node{node}"));
            if let Ok(list) = fs::read_to_string(dir.join("cpulist")) {
                for cpu in parse_cpu_list(&list) {
                    node_of.insert(cpu, node);
                }
            }
            let row: Vec<u32> = fs::read_to_string(dir.join("distance"))
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|d| d.parse().ok())
                .collect();
            if row.len() == nodes.len() {
                matrix.extend(row);
            }
        }
        let distances = if matrix.len() == nodes.len() * nodes.len() && nodes.len() > 1 {
            NodeDistances { nodes, matrix }
        } else {
            NodeDistances::default()
        };
        let mut caches: Vec<Cache> = Vec::new();
        let cpus: Vec<Cpu> = online
            .into_iter()
            .map(|id| {
                let base = root.join(format!("cpu/cpu{id}"));
                for k in 0.. {
                    let index = base.join(format!("cache/index{k}"));
                    let Some(level) = read_usize(&index.join("level")) else {
                        break;
                    };
                    let kind = fs::read_to_string(index.join("type")).unwrap_or_default();
                    if kind.trim() == "Instruction" {
                        continue;
                    }
                    let shared = fs::read_to_string(index.join("shared_cpu_list"))
                        .map(|s| parse_cpu_list(&s))
                        .unwrap_or_default();
                    add_cache(&mut caches, level, shared);
                }
                Cpu {
                    id,
                    core: read_usize(&base.join("topology/core_id")).unwrap_or(id),
                    package: read_usize(&base.join("topology/physical_package_id")).unwrap_or(0),
                    node: node_of.get(&id).copied().unwrap_or(0),
                }
            })
            .collect();
        Some(Topology {
            cpus,
            caches,
            distances,
        })
    }

    /// Reads the topology through hwloc: every PU (`os_index` as the CPU id), its `Core` and
    /// `Package` ancestors' OS indices, its NUMA node (of the NUMA nodes whose CPU set holds
    /// it, the one with the fewest CPUs, then the lowest number: a CPU-less memory node such
    /// as HBM, whose CPU set is its locality, never wins over the node the CPU is in), the
    /// data and unified caches (`L1Cache`..`L5Cache`), and the OS-provided latency matrix of
    /// the NUMA nodes (`NUMALatency`, the same numbers as sysfs).
    #[cfg(feature = "hwloc")]
    pub fn from_hwloc() -> Result<Topology, String> {
        use hwlocality::object::TopologyObject;
        use hwlocality::object::distance::DistancesKind;
        use hwlocality::object::types::ObjectType;

        let t = hwlocality::Topology::new().map_err(|e| format!("hwloc: {e}"))?;
        let index = |o: &TopologyObject| o.os_index().unwrap_or_else(|| o.logical_index());
        let set = |o: &TopologyObject| -> Vec<usize> {
            o.cpuset()
                .map(|s| s.iter_set().map(usize::from).collect())
                .unwrap_or_default()
        };
        let nodes: Vec<(usize, Vec<usize>)> = t
            .objects_with_type(ObjectType::NUMANode)
            .map(|n| (index(n), set(n)))
            .collect();
        let mut cpus: Vec<Cpu> = t
            .objects_with_type(ObjectType::PU)
            .map(|pu| {
                let id = index(pu);
                let node = nodes
                    .iter()
                    .filter(|(_, s)| s.binary_search(&id).is_ok())
                    .min_by_key(|(n, s)| (s.len(), *n))
                    .map_or(0, |(n, _)| *n);
                Cpu {
                    id,
                    core: pu
                        .first_ancestor_with_type(ObjectType::Core)
                        .map_or(id, index),
                    package: pu
                        .first_ancestor_with_type(ObjectType::Package)
                        .map_or(0, index),
                    node,
                }
            })
            .collect();
        if cpus.is_empty() {
            return Err("hwloc: the topology has no PU".into());
        }
        cpus.sort_by_key(|c| c.id);
        let mut caches = Vec::new();
        for (level, ty) in [
            (1, ObjectType::L1Cache),
            (2, ObjectType::L2Cache),
            (3, ObjectType::L3Cache),
            (4, ObjectType::L4Cache),
            (5, ObjectType::L5Cache),
        ] {
            for c in t.objects_with_type(ty) {
                add_cache(&mut caches, level, set(c));
            }
        }
        let kind = DistancesKind::FROM_OS | DistancesKind::MEANS_LATENCY;
        let distances = t
            .distances_with_type(Some(kind), ObjectType::NUMANode)
            .map_err(|e| format!("hwloc: {e}"))?
            .into_iter()
            .next()
            .and_then(|d| {
                let nodes: Option<Vec<usize>> = d.objects().map(|o| o.map(index)).collect();
                let matrix: Option<Vec<u32>> = d
                    .distances()
                    .iter()
                    .map(|&x| u32::try_from(x).ok())
                    .collect();
                Some(NodeDistances {
                    nodes: nodes?,
                    matrix: matrix?,
                })
            })
            .filter(|d| d.nodes.len() > 1)
            .unwrap_or_default();
        Ok(Topology {
            cpus,
            caches,
            distances,
        })
    }

    /// The CPU numbered `id`, if this topology has it.
    pub fn cpu(&self, id: usize) -> Option<&Cpu> {
        self.cpus
            .binary_search_by_key(&id, |c| c.id)
            .ok()
            .map(|i| &self.cpus[i])
    }

    /// The distance between nodes `a` and `b`: the reported one, else [`LOCAL_DISTANCE`] from a
    /// node to itself and [`REMOTE_DISTANCE`] between two nodes.
    pub fn node_distance(&self, a: usize, b: usize) -> u32 {
        self.distances.get(a, b).unwrap_or(if a == b {
            LOCAL_DISTANCE
        } else {
            REMOTE_DISTANCE
        })
    }

    /// The ancestors of CPU `id` in the topology tree (see [`Ancestors`]). A CPU this topology
    /// does not list is a core of its own under the machine.
    pub fn ancestors(&self, id: usize) -> Ancestors {
        let Some(c) = self.cpu(id) else {
            return Ancestors {
                cpu: id,
                sets: vec![vec![id]],
            };
        };
        let cpus_where = |keep: &dyn Fn(&Cpu) -> bool| -> Vec<usize> {
            self.cpus.iter().filter(|x| keep(x)).map(|x| x.id).collect()
        };
        // hwloc's typed objects: each a level even where one has the same CPUs as another.
        let mut typed = vec![cpus_where(&|x| (x.package, x.core) == (c.package, c.core))];
        let mut caches: Vec<&Cache> = self
            .caches
            .iter()
            .filter(|k| k.cpus.binary_search(&id).is_ok())
            .collect();
        caches.sort_by_key(|k| (k.level, k.cpus.len()));
        typed.extend(caches.into_iter().map(|k| k.cpus.clone()));
        typed.push(cpus_where(&|x| x.package == c.package));
        // Its groups: a level only where no object has the same CPUs, and never the machine.
        let mut sets = typed;
        let mut nodes: Vec<usize> = self.cpus.iter().map(|x| x.node).collect();
        nodes.sort_unstable();
        nodes.dedup();
        let mut reported: Vec<u32> = nodes
            .iter()
            .flat_map(|&a| nodes.iter().map(move |&b| (a, b)))
            .map(|(a, b)| self.node_distance(a, b))
            .collect();
        reported.sort_unstable();
        reported.dedup();
        let within = |n: usize, d: u32| -> Vec<usize> {
            nodes
                .iter()
                .copied()
                .filter(|&m| m == n || self.node_distance(n, m) <= d)
                .collect()
        };
        // The groups by distance that every node of theirs agrees on: these nest into a tree.
        let by_distance = reported
            .iter()
            .map(|&d| within(c.node, d))
            .zip(&reported)
            .filter(|(g, d)| g.iter().all(|&m| within(m, **d) == *g))
            .map(|(g, _)| cpus_where(&|x| g.contains(&x.node)));
        let groups = std::iter::once(cpus_where(&|x| x.node == c.node)).chain(by_distance);
        for g in groups {
            if g.len() < self.cpus.len() && !sets.contains(&g) {
                sets.push(g);
            }
        }
        sets.sort_by_key(Vec::len);
        Ancestors { cpu: id, sets }
    }

    /// libfork's topological distance between CPUs `a` and `b` ([`Ancestors::distance`]).
    #[cfg(test)]
    pub(crate) fn distance(&self, a: usize, b: usize) -> u32 {
        self.ancestors(a).distance(&self.ancestors(b))
    }

    /// Number of NUMA nodes.
    pub fn nodes(&self) -> usize {
        let mut n: Vec<usize> = self.cpus.iter().map(|c| c.node).collect();
        n.sort_unstable();
        n.dedup();
        n.len().max(1)
    }

    /// Number of physical cores.
    pub fn cores(&self) -> usize {
        let mut c: Vec<(usize, usize)> = self.cpus.iter().map(|c| (c.package, c.core)).collect();
        c.sort_unstable();
        c.dedup();
        c.len().max(1)
    }

    /// The CPU for each of `workers` workers under `pinning` (`None` for `Pinning::None`).
    /// Past the number of CPUs the order wraps around.
    pub fn placement(&self, pinning: Pinning, workers: usize) -> Option<Vec<usize>> {
        let order: Vec<usize> = match pinning {
            Pinning::None => return None,
            Pinning::Compact => {
                // Fill a node, core by core, taking both hyperthreads of a core together.
                let mut c = self.cpus.clone();
                c.sort_by_key(|c| (c.node, c.package, c.core, c.id));
                c.iter().map(|c| c.id).collect()
            }
            Pinning::Scatter => {
                // Deal over nodes, then over distinct cores within a node, hyperthreads last.
                let mut c = self.cpus.clone();
                c.sort_by_key(|c| (c.node, c.package, c.core, c.id));
                let mut rank_in_core = std::collections::HashMap::new();
                let mut keyed: Vec<(usize, usize, usize, usize)> = Vec::new();
                let mut per_node: std::collections::HashMap<usize, usize> = Default::default();
                for cpu in &c {
                    let r = rank_in_core
                        .entry((cpu.node, cpu.package, cpu.core))
                        .or_insert(0usize);
                    let k = per_node.entry((*r) << 32 | cpu.node).or_insert(0usize);
                    keyed.push((*r, *k, cpu.node, cpu.id));
                    *k += 1;
                    *r += 1;
                }
                keyed.sort();
                keyed.iter().map(|t| t.3).collect()
            }
        };
        Some((0..workers).map(|i| order[i % order.len()]).collect())
    }
}

/// Binds the calling thread to `cpu`. Returns an error string where the OS refuses.
pub fn pin_current_thread(cpu: usize) -> Result<(), String> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `cpu_set_t` is plain old data for which all-zeroes is the empty set, and
        // CPU_SET writes inside it only for `cpu < CPU_SETSIZE`, which we check first.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(format!("cpu {cpu} is beyond CPU_SETSIZE"));
        }
        // SAFETY: see above; `set` is a valid, exclusively borrowed cpu_set_t.
        unsafe { libc::CPU_SET(cpu, &mut set) };
        // SAFETY: pid 0 is the calling thread, and `set` is valid for its whole size.
        let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) };
        if rc != 0 {
            return Err(format!(
                "sched_setaffinity(cpu {cpu}): {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err(format!("pinning to cpu {cpu} is only implemented on Linux"))
    }
}

/// The CPUs the calling thread may run on: its affinity mask (`sched_getaffinity`), which the
/// threads it starts inherit and which `taskset`, a cgroup's cpuset or a batch system (Slurm)
/// sets for the whole process. Empty where the OS does not say (not Linux, or a mask of more
/// than 65,536 CPUs).
pub fn allowed_cpus() -> Vec<usize> {
    #[cfg(target_os = "linux")]
    {
        let bits = libc::c_ulong::BITS as usize;
        // 1,024 CPUs (glibc's `cpu_set_t`), doubled while the kernel's mask is larger.
        let mut words = 1024 / bits;
        while words * bits <= 65_536 {
            let mut mask: Vec<libc::c_ulong> = vec![0; words];
            // SAFETY: pid 0 is the calling thread; `mask` is valid for writes of the size
            // given, and the kernel writes no more than that.
            let rc = unsafe {
                libc::sched_getaffinity(
                    0,
                    std::mem::size_of_val(&mask[..]),
                    mask.as_mut_ptr().cast::<libc::cpu_set_t>(),
                )
            };
            if rc == 0 {
                return (0..words * bits)
                    .filter(|&cpu| (mask[cpu / bits] >> (cpu % bits)) & 1 == 1)
                    .collect();
            }
            if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
                break;
            }
            words *= 2;
        }
        Vec::new()
    }
    #[cfg(not(target_os = "linux"))]
    {
        Vec::new()
    }
}

/// Made-up machines for the tests of the topology tree and of the victims.
#[cfg(test)]
pub(crate) mod fake {
    use super::*;

    /// `packages` packages of `nodes` NUMA nodes of `cores` cores each, `smt` hardware threads
    /// per core numbered as Linux does (every core's first thread, then every core's second,
    /// ...); each core's L1d and L2 shared by its threads, an L3 per node; node `a` to node
    /// `b` at `distance(a, b)`, nodes numbered package by package.
    pub(crate) fn machine(
        packages: usize,
        nodes: usize,
        cores: usize,
        smt: usize,
        distance: impl Fn(usize, usize) -> u32,
    ) -> Topology {
        let all_cores = packages * nodes * cores;
        let node_count = packages * nodes;
        let cpus = (0..smt * all_cores)
            .map(|id| {
                let k = id % all_cores;
                Cpu {
                    id,
                    core: k % (nodes * cores),
                    package: k / (nodes * cores),
                    node: k / cores,
                }
            })
            .collect();
        let threads = |k: usize| (0..smt).map(move |t| t * all_cores + k);
        let mut caches = Vec::new();
        for k in 0..all_cores {
            for level in [1, 2] {
                caches.push(Cache {
                    level,
                    cpus: threads(k).collect(),
                });
            }
        }
        for n in 0..node_count {
            let mut cpus: Vec<usize> = (n * cores..(n + 1) * cores).flat_map(threads).collect();
            cpus.sort_unstable();
            caches.push(Cache { level: 3, cpus });
        }
        Topology {
            cpus,
            caches,
            distances: NodeDistances {
                nodes: (0..node_count).collect(),
                matrix: (0..node_count * node_count)
                    .map(|i| distance(i / node_count, i % node_count))
                    .collect(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_nodes() -> Topology {
        // 2 nodes x 2 cores x 2 hyperthreads; Linux numbers hyperthread siblings last.
        let mut cpus = Vec::new();
        for id in 0..8 {
            let node = (id / 2) % 2;
            let core = id % 2;
            cpus.push(Cpu {
                id,
                core: core + 10 * node,
                package: node,
                node,
            });
        }
        Topology {
            cpus,
            caches: Vec::new(),
            distances: NodeDistances::default(),
        }
    }

    /// Writes `contents` to `root/path`, making the directories.
    fn put(root: &Path, path: &str, contents: &str) {
        let p = root.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, contents).unwrap();
    }

    /// A fake sysfs tree: 2 packages x 2 NUMA nodes x 4 cores (CPU c on node c / 4, package
    /// c / 8), an L3 per node, private L1d and L2, an L1i "shared" by core pairs (which must be
    /// ignored: instruction caches say nothing of data locality), node distances 10 / 12 (the
    /// other node of the package) / 20 (the other package).
    fn fake_sysfs(root: &Path) {
        put(root, "cpu/online", "0-15\n");
        put(root, "node/online", "0-3\n");
        for n in 0..4 {
            let first = 4 * n;
            put(
                root,
                &format!("node/node{n}/cpulist"),
                &format!("{}-{}\n", first, first + 3),
            );
            let row: Vec<String> = (0..4)
                .map(|m| match (n == m, n / 2 == m / 2) {
                    (true, _) => "10",
                    (false, true) => "12",
                    (false, false) => "20",
                })
                .map(String::from)
                .collect();
            put(
                root,
                &format!("node/node{n}/distance"),
                &(row.join(" ") + "\n"),
            );
        }
        for c in 0..16 {
            let base = format!("cpu/cpu{c}");
            put(
                root,
                &format!("{base}/topology/core_id"),
                &format!("{}\n", c % 8),
            );
            put(
                root,
                &format!("{base}/topology/physical_package_id"),
                &format!("{}\n", c / 8),
            );
            let pair = c & !1;
            let l3 = 4 * (c / 4);
            for (k, level, kind, shared) in [
                (0, 1, "Data", format!("{c}")),
                (1, 1, "Instruction", format!("{pair}-{}", pair + 1)),
                (2, 2, "Unified", format!("{c}")),
                (3, 3, "Unified", format!("{l3}-{}", l3 + 3)),
            ] {
                let idx = format!("{base}/cache/index{k}");
                put(root, &format!("{idx}/level"), &format!("{level}\n"));
                put(root, &format!("{idx}/type"), &format!("{kind}\n"));
                put(
                    root,
                    &format!("{idx}/shared_cpu_list"),
                    &format!("{shared}\n"),
                );
            }
        }
    }

    #[test]
    fn sysfs_tree_gives_nodes_caches_and_distances() {
        let root = std::env::temp_dir().join(format!("stealbench-sysfs-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fake_sysfs(&root);
        let t = Topology::from_sysfs(&root).unwrap();
        fs::remove_dir_all(&root).unwrap();
        assert_eq!(t.cpus.len(), 16);
        for c in &t.cpus {
            assert_eq!(
                (c.node, c.package, c.core),
                (c.id / 4, c.id / 8, c.id % 8),
                "{c:?}"
            );
        }
        assert_eq!((t.nodes(), t.cores()), (4, 16));
        // Every CPU's L1d and L2 (private) and the four L3s; the L1i pairs are left out.
        assert_eq!(t.caches.len(), 36, "{:?}", t.caches);
        assert_eq!(t.caches.iter().filter(|c| c.cpus.len() == 1).count(), 32);
        assert!(
            t.caches
                .iter()
                .all(|c| (c.level == 3) == (c.cpus.len() == 4))
        );
        assert_eq!(t.distances.nodes, vec![0, 1, 2, 3]);
        assert_eq!(
            [
                t.node_distance(0, 0),
                t.node_distance(0, 1),
                t.node_distance(1, 3)
            ],
            [10, 12, 20]
        );
        // The tree from CPU 0: core, L1d, L2, L3 (its node's CPUs: no group), package (the
        // nodes within distance 12: no group either).
        let want: Vec<Vec<usize>> = vec![
            vec![0],
            vec![0],
            vec![0],
            (0..4).collect(),
            (0..8).collect(),
        ];
        assert_eq!(t.ancestors(0).sets(), &want[..]);
        let d = |a: usize, b: usize| t.distance(a, b);
        assert_eq!(
            [
                d(0, 0),
                d(0, 1),
                d(0, 3),
                d(0, 4),
                d(0, 7),
                d(0, 8),
                d(0, 15)
            ],
            [0, 4, 4, 5, 5, 6, 6]
        );
        assert_eq!(d(5, 14), d(14, 5));
    }

    #[test]
    fn smt_siblings_then_shared_cache_then_node() {
        let mut t = two_nodes();
        // CPUs 0 and 4 are SMT siblings (node 0, core 0); 1 and 5 the other core of node 0.
        t.caches.push(Cache {
            level: 2,
            cpus: vec![0, 1, 4, 5],
        });
        let d = |a: usize, b: usize| t.distance(a, b);
        // Up to the core, to the L2, past the package (no distance matrix: the nodes are the
        // packages).
        assert_eq!([d(0, 4), d(0, 1), d(0, 5), d(0, 2)], [1, 2, 2, 4]);
    }

    #[test]
    fn groups_are_levels_only_where_they_add_structure() {
        // Two sockets of one node each (SLIT 10 / 21), 4 cores x 2 threads: the node is the
        // package and the L3, so no group; siblings 1, the socket 4, the other socket 6.
        let t = fake::machine(2, 1, 4, 2, |a, b| if a == b { 10 } else { 21 });
        assert_eq!(t.ancestors(0).sets().len(), 5);
        assert_eq!(
            [t.distance(0, 8), t.distance(0, 1), t.distance(0, 4)],
            [1, 4, 6]
        );
        // Four sockets, pairs of them close (SLIT 10 / 16 / 32): the pair is a group of hwloc's
        // (by distance), one more level before the machine.
        let pairs = |a: usize, b: usize| match (a == b, a / 2 == b / 2) {
            (true, _) => 10,
            (false, true) => 16,
            (false, false) => 32,
        };
        let t = fake::machine(4, 1, 2, 1, pairs);
        assert_eq!(t.ancestors(0).sets().last().unwrap(), &vec![0, 1, 2, 3]);
        assert_eq!(
            [t.distance(0, 1), t.distance(0, 2), t.distance(0, 4)],
            [4, 6, 7]
        );
        // Two nodes in one package without a cache of their own: each node is a group.
        let mut t = Topology::flat(4);
        for c in &mut t.cpus {
            c.node = c.id / 2;
        }
        assert_eq!(
            t.ancestors(0).sets(),
            [vec![0], vec![0, 1], vec![0, 1, 2, 3]]
        );
        assert_eq!([t.distance(0, 1), t.distance(0, 2)], [2, 3]);
        // A CPU the topology does not list: a core of its own under the machine.
        assert_eq!(t.ancestors(9).sets(), [vec![9]]);
        assert_eq!(t.distance(0, 9), 4);
    }

    /// Whether `sets` (CPU sets, each in increasing order) nest: any two are disjoint or one
    /// holds the other.
    fn nested(sets: &[Vec<usize>]) -> bool {
        sets.iter().all(|a| {
            sets.iter().all(|b| {
                let common = a.iter().filter(|x| b.binary_search(x).is_ok()).count();
                common == 0 || common == a.len() || common == b.len()
            })
        })
    }

    #[test]
    fn groups_by_distance_form_a_tree() {
        // A ring of four nodes in one package (SLIT 10 / 16 to the neighbours / 22 across), 2
        // cores each: node 0's neighbours 3 and 1 are not node 1's (0 and 2), so no group by
        // distance; every node sits under the package, the others all at 5.
        let ring = |a: usize, b: usize| match (a + 4 - b) % 4 {
            0 => 10,
            1 | 3 => 16,
            _ => 22,
        };
        let t = fake::machine(1, 4, 2, 1, ring);
        assert_eq!(
            t.ancestors(0).sets(),
            [vec![0], vec![0], vec![0], vec![0, 1], (0..8).collect()]
        );
        assert_eq!(
            (1..8).map(|b| t.distance(0, b)).collect::<Vec<_>>(),
            [4, 5, 5, 5, 5, 5, 5]
        );
        // Pairs of nodes (10 / 16 / 32) and a ring, each over every CPU: one tree.
        let pairs = |a: usize, b: usize| match (a == b, a / 2 == b / 2) {
            (true, _) => 10,
            (false, true) => 16,
            (false, false) => 32,
        };
        for t in [
            fake::machine(1, 4, 2, 1, ring),
            fake::machine(1, 4, 2, 1, pairs),
            fake::machine(4, 1, 2, 2, pairs),
        ] {
            let mut all: Vec<Vec<usize>> = Vec::new();
            for c in &t.cpus {
                for s in t.ancestors(c.id).sets() {
                    if !all.contains(s) {
                        all.push(s.clone());
                    }
                }
            }
            assert!(nested(&all), "{all:?}");
        }
        // The pairs in one package: each pair a group, between the L3 and the package.
        let t = fake::machine(1, 4, 2, 1, pairs);
        assert_eq!(
            t.ancestors(0).sets(),
            [
                vec![0],
                vec![0],
                vec![0],
                vec![0, 1],
                (0..4).collect(),
                (0..8).collect()
            ]
        );
        assert_eq!([t.distance(0, 2), t.distance(0, 4)], [5, 6]);
    }

    #[test]
    fn a_restricted_topology_places_on_its_cpus_only() {
        // CPU 1 (node 0), 2 and 6 (node 1) of 2 nodes x 2 cores x 2 threads.
        let t = two_nodes().restricted_to(&[1, 2, 6, 40]);
        assert_eq!(t.cpus.iter().map(|c| c.id).collect::<Vec<_>>(), [1, 2, 6]);
        for pinning in [Pinning::Compact, Pinning::Scatter] {
            let p = t.placement(pinning, 6).unwrap();
            assert!(p.iter().all(|c| [1, 2, 6].contains(c)), "{pinning}: {p:?}");
        }
        // A cache keeps its allowed CPUs; one left with none goes.
        let t = fake::machine(1, 2, 2, 1, |a, b| if a == b { 10 } else { 20 });
        let r = t.restricted_to(&[0, 1]);
        assert_eq!(r.caches.iter().filter(|c| c.level == 3).count(), 1);
        assert_eq!(r.caches.len(), 2 * 2 + 1);
        // Nothing allowed that the topology has: the OS said nothing of these CPUs.
        assert_eq!(t.restricted_to(&[]), t);
        assert_eq!(t.restricted_to(&[99]), t);
    }

    #[test]
    fn detect_keeps_the_cpus_the_thread_may_run_on() {
        let allowed = allowed_cpus();
        let status = fs::read_to_string("/proc/thread-self/status").unwrap();
        let listed = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap();
        assert_eq!(allowed, parse_cpu_list(listed));
        // A thread confined to one CPU (as by taskset) finds that CPU only, and places every
        // worker there.
        let last = *allowed.last().unwrap();
        std::thread::spawn(move || {
            pin_current_thread(last).unwrap();
            assert_eq!(allowed_cpus(), [last]);
            let t = Topology::detect();
            assert_eq!(t.cpus.iter().map(|c| c.id).collect::<Vec<_>>(), [last]);
            assert_eq!(t.placement(Pinning::Scatter, 3), Some(vec![last; 3]));
            assert_eq!(Topology::fallback().cpus.len(), 1);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn missing_sysfs_gives_none() {
        let root = std::env::temp_dir().join("stealbench-no-such-sysfs");
        assert_eq!(Topology::from_sysfs(&root), None);
        let f = Topology::fallback();
        assert_eq!(f.nodes(), 1);
        assert!(f.distances.nodes.is_empty());
    }

    /// hwloc and sysfs read this machine alike.
    #[cfg(feature = "hwloc")]
    #[test]
    fn hwloc_agrees_with_sysfs() {
        let h = Topology::from_hwloc().unwrap();
        let s = Topology::from_sysfs(Path::new("/sys/devices/system")).unwrap();
        let key = |t: &Topology| {
            let mut c = t.caches.clone();
            c.sort_by(|a, b| (a.level, &a.cpus).cmp(&(b.level, &b.cpus)));
            (t.cpus.clone(), c, t.distances.clone())
        };
        assert_eq!(key(&h), key(&s));
    }

    /// On this machine the distance over the tree that hwloc's reading gives is hwloc's own:
    /// the larger of two PUs' depths below their first common ancestor (libfork's
    /// `distance_matrix`).
    #[cfg(feature = "hwloc")]
    #[test]
    fn tree_distance_is_hwlocs_on_this_machine() {
        use hwlocality::object::TopologyObject;
        use hwlocality::object::types::ObjectType;
        let h = hwlocality::Topology::new().unwrap();
        let t = Topology::from_hwloc().unwrap();
        let pus: Vec<&TopologyObject> = h.objects_with_type(ObjectType::PU).collect();
        let depth = |o: &TopologyObject| usize::from(o.depth().expect_normal());
        for a in &pus {
            for b in &pus {
                let want = if std::ptr::eq(*a, *b) {
                    0
                } else {
                    let top = depth(a.first_common_ancestor(b).unwrap());
                    (depth(a) - top).max(depth(b) - top)
                };
                let (i, j) = (a.os_index().unwrap(), b.os_index().unwrap());
                assert_eq!(t.distance(i, j) as usize, want, "PUs {i} and {j}");
            }
        }
    }

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list(""), Vec::<usize>::new());
    }

    #[test]
    fn compact_fills_a_node_first() {
        let t = two_nodes();
        let p = t.placement(Pinning::Compact, 4).unwrap();
        assert!(p.iter().all(|&c| t.cpus[c].node == 0), "{p:?}");
    }

    #[test]
    fn scatter_alternates_nodes_and_avoids_siblings() {
        let t = two_nodes();
        let p = t.placement(Pinning::Scatter, 4).unwrap();
        let nodes: Vec<usize> = p.iter().map(|&c| t.cpus[c].node).collect();
        assert_eq!(nodes.iter().filter(|&&n| n == 0).count(), 2, "{p:?}");
        let mut cores: Vec<usize> = p.iter().map(|&c| t.cpus[c].core).collect();
        cores.sort();
        cores.dedup();
        assert_eq!(cores.len(), 4, "four distinct cores expected: {p:?}");
    }

    #[test]
    fn detect_finds_this_machine() {
        let t = Topology::detect();
        assert!(!t.cpus.is_empty());
        assert!(t.nodes() >= 1 && t.cores() >= 1);
        assert_eq!(t.placement(Pinning::None, 3), None);
        assert_eq!(t.placement(Pinning::Compact, 3).unwrap().len(), 3);
    }
}
