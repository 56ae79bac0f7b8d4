//! Machine topology (CPUs, cores, NUMA nodes, read from Linux sysfs) and thread pinning.
//!
//! Without sysfs (another OS, a container hiding it) the topology falls back to one node with
//! `available_parallelism` CPUs, and pinning becomes a no-op that says so in its result.

use crate::config::Pinning;
use std::fs;

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

/// The CPUs this process may run on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    /// Logical CPUs in increasing id order.
    pub cpus: Vec<Cpu>,
}

fn read_usize(path: &str) -> Option<usize> {
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

impl Topology {
    /// Reads the topology of this machine.
    pub fn detect() -> Topology {
        let online = fs::read_to_string("/sys/devices/system/cpu/online")
            .map(|s| parse_cpu_list(&s))
            .unwrap_or_default();
        let mut node_of = std::collections::HashMap::new();
        if let Ok(nodes) = fs::read_to_string("/sys/devices/system/node/online") {
            for node in parse_cpu_list(&nodes) {
                let path = format!("/sys/devices/system/node/node{node}/cpulist");
                if let Ok(list) = fs::read_to_string(path) {
                    for cpu in parse_cpu_list(&list) {
                        node_of.insert(cpu, node);
                    }
                }
            }
        }
        let cpus: Vec<Cpu> = online
            .into_iter()
            .map(|id| {
                let base = format!("/sys/devices/system/cpu/cpu{id}/topology");
                Cpu {
                    id,
                    core: read_usize(&format!("{base}/core_id")).unwrap_or(id),
                    package: read_usize(&format!("{base}/physical_package_id")).unwrap_or(0),
                    node: node_of.get(&id).copied().unwrap_or(0),
                }
            })
            .collect();
        if cpus.is_empty() {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            return Topology {
                cpus: (0..n)
                    .map(|id| Cpu {
                        id,
                        core: id,
                        package: 0,
                        node: 0,
                    })
                    .collect(),
            };
        }
        Topology { cpus }
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
        Topology { cpus }
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
