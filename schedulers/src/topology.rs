//! Machine topology (CPUs, cores, packages, NUMA nodes and their distances, shared caches),
//! read from Linux sysfs or, with the `hwloc` feature, through hwloc; and thread pinning.
//!
//! Both readers fill the same [`Topology`], and everything built on it (pinning orders, the
//! [`CpuDistance`] that NUMA-weighted victim selection groups workers by) is computed from that
//! one description, so the two agree wherever they read the same machine. Without sysfs (another
//! OS, a container hiding it) the topology falls back to one node with `available_parallelism`
//! CPUs, and pinning becomes a no-op that says so in its result.

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

/// A data or unified cache shared by more than one CPU (instruction caches and private caches
/// are left out: they tell nothing about which CPUs are close).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cache {
    /// 1 for L1, 2 for L2, ...
    pub level: u8,
    /// The CPUs sharing it, in increasing order.
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

/// How far apart two CPUs are, ordered field by field: smaller is closer. Two pairs with equal
/// distances are equally far; only this order (which pairs are closer, which are equally far)
/// is used, never the numbers themselves.
///
/// The order is the one of a topology tree such as hwloc's (the same CPU, SMT siblings, a
/// shared cache, the NUMA node, the package, the machine), with NUMA nodes ordered by the
/// firmware's distance matrix, as hwloc groups them: within a node every pair is closer than
/// across nodes, and across nodes the node distance decides, then the package.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CpuDistance {
    /// The distance of the two CPUs' NUMA nodes ([`Topology::node_distance`]).
    pub node: u32,
    /// Whether they are on different NUMA nodes (decides if the firmware reports a remote
    /// distance equal to the local one).
    pub other_node: bool,
    /// Whether they are in different packages.
    pub other_package: bool,
    /// The smallest thing they share: 0 the CPU itself, 1 a core (SMT siblings), 1 + L a cache
    /// of level L, `u8::MAX` none of these.
    pub shared: u8,
}

/// The CPUs this process may run on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    /// Logical CPUs in increasing id order.
    pub cpus: Vec<Cpu>,
    /// Data and unified caches shared by more than one CPU, each once.
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

/// Adds a cache of `level` shared by `cpus` unless it is private to one CPU or already known.
fn add_cache(caches: &mut Vec<Cache>, level: usize, mut cpus: Vec<usize>) {
    cpus.sort_unstable();
    cpus.dedup();
    let Ok(level) = u8::try_from(level) else {
        return;
    };
    if cpus.len() > 1 && !caches.iter().any(|c| c.level == level && c.cpus == cpus) {
        caches.push(Cache { level, cpus });
    }
}

impl Topology {
    /// Reads the topology of this machine: through hwloc with the `hwloc` feature (falling
    /// back to sysfs if hwloc fails), else from sysfs; one node of `available_parallelism`
    /// CPUs if neither works.
    pub fn detect() -> Topology {
        #[cfg(feature = "hwloc")]
        if let Ok(t) = Topology::from_hwloc() {
            return t;
        }
        Topology::from_sysfs(Path::new("/sys/devices/system")).unwrap_or_else(Topology::fallback)
    }

    /// One node of `available_parallelism` CPUs, one core each, no shared cache.
    pub fn fallback() -> Topology {
        Topology::flat(std::thread::available_parallelism().map_or(1, |n| n.get()))
    }

    /// One node of `n` CPUs (ids `0..n`), one core each, one package, no shared cache.
    pub fn flat(n: usize) -> Topology {
        Topology {
            cpus: (0..n)
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
    /// data and unified caches (`L1Cache`..`L5Cache`) shared by more than one PU, and the
    /// OS-provided latency matrix of the NUMA nodes (`NUMALatency`, the same numbers as sysfs).
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

    /// How far apart CPUs `a` and `b` are (see [`CpuDistance`]). Symmetric when the node
    /// distance matrix is.
    pub fn distance(&self, a: &Cpu, b: &Cpu) -> CpuDistance {
        let shared = if a.id == b.id {
            0
        } else if (a.package, a.core) == (b.package, b.core) {
            1
        } else {
            self.caches
                .iter()
                .filter(|c| {
                    c.cpus.binary_search(&a.id).is_ok() && c.cpus.binary_search(&b.id).is_ok()
                })
                .map(|c| c.level.saturating_add(1))
                .min()
                .unwrap_or(u8::MAX)
        };
        CpuDistance {
            node: self.node_distance(a.node, b.node),
            other_node: a.node != b.node,
            other_package: a.package != b.package,
            shared,
        }
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

/// The CPUs the calling thread may run on, as Linux reports them (for tests of pinning).
#[cfg(test)]
pub(crate) fn allowed_cpus() -> Vec<usize> {
    let status = fs::read_to_string("/proc/thread-self/status").unwrap();
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap();
    parse_cpu_list(line.trim())
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
        // Only the four L3s are shared data caches.
        assert_eq!(t.caches.len(), 4, "{:?}", t.caches);
        assert!(t.caches.iter().all(|c| c.level == 3 && c.cpus.len() == 4));
        assert_eq!(t.distances.nodes, vec![0, 1, 2, 3]);
        assert_eq!(
            [
                t.node_distance(0, 0),
                t.node_distance(0, 1),
                t.node_distance(1, 3)
            ],
            [10, 12, 20]
        );
        let d = |a: usize, b: usize| t.distance(&t.cpus[a], &t.cpus[b]);
        assert!(d(0, 0) < d(0, 1), "the CPU itself is closest");
        assert!(
            d(0, 1) < d(0, 4),
            "same node before the package's other node"
        );
        assert!(
            d(0, 4) < d(0, 8),
            "the package's other node before the other package"
        );
        assert_eq!(d(0, 1), d(0, 3));
        assert_eq!(d(0, 4), d(0, 7));
        assert_eq!(d(0, 8), d(0, 15));
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
        let d = |a: usize, b: usize| t.distance(&t.cpus[a], &t.cpus[b]);
        assert_eq!(d(0, 4).shared, 1);
        assert_eq!(d(0, 1).shared, 3);
        assert!(d(0, 4) < d(0, 1));
        // No distance matrix: another node is REMOTE_DISTANCE away, and farther than any CPU
        // of the node.
        assert_eq!(d(0, 2).node, REMOTE_DISTANCE);
        assert!(d(0, 1) < d(0, 2));
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
