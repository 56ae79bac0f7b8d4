//! The machine and build a run is measured on (meta.json's `machine` and `build`): probed
//! once per run, and compared where runs or resumes must share them.

use serde::{Deserialize, Serialize};
use std::fs;
use stealbench_schedulers::topology::Topology;
/// The machine a run was made on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Machine {
    /// `model name` of /proc/cpuinfo.
    pub cpu_model: String,
    /// Physical cores this process may run on (all of them unless its affinity, set by
    /// `taskset`, a cgroup or Slurm, leaves some out).
    pub cores: usize,
    /// Logical CPUs this process may run on, as `cores`.
    pub logical_cpus: usize,
    /// NUMA nodes.
    pub numa_nodes: usize,
    /// `uname -srm` of the kernel.
    pub kernel: String,
}

impl Machine {
    /// The machine in words: `MODEL, C cores / L logical CPUs, N NUMA node(s), KERNEL`.
    pub(crate) fn describe(&self) -> String {
        format!(
            "{}, {} cores / {} logical CPUs, {} NUMA node(s), {}",
            self.cpu_model, self.cores, self.logical_cpus, self.numa_nodes, self.kernel
        )
    }
}

/// One machine of a run merged with `--force` from runs of different machines, and the points
/// it measured, each spelt as a point is (`abp fib-fj P=2`, the keys of meta.json's `ran`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Measured {
    /// The machine.
    pub machine: Machine,
    /// The points it measured.
    pub points: Vec<String>,
}

/// The build that made a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Build {
    /// Version of stealbench.
    pub stealbench_version: String,
    /// `rustc --version` at build time.
    pub rustc: String,
    /// Git commit at build time, or `unknown`.
    pub git_commit: String,
    /// `jemalloc` or `system`.
    pub allocator: String,
    /// `release` or `debug` (debug timings are not comparable).
    pub profile: String,
    /// The flags rustc got (empty if none; absent in runs made before it was recorded).
    #[serde(default)]
    pub rustflags: String,
}

/// The machine this process runs on.
pub(crate) fn this_machine() -> Machine {
    let topo = Topology::detect();
    let cpu_model = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".to_string());
    Machine {
        cpu_model,
        cores: topo.cores(),
        logical_cpus: topo.cpus.len(),
        numa_nodes: topo.nodes(),
        kernel: kernel(),
    }
}

fn c_field(field: &[libc::c_char]) -> String {
    let bytes: Vec<u8> = field
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `sysname release machine` from uname(2), or `unknown`.
pub(crate) fn kernel() -> String {
    // SAFETY: `utsname` is plain old data (arrays of c_char) for which all-zeroes is valid.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, exclusively borrowed `utsname` for uname to fill in.
    if unsafe { libc::uname(&mut u) } != 0 {
        return "unknown".to_string();
    }
    format!(
        "{} {} {}",
        c_field(&u.sysname),
        c_field(&u.release),
        c_field(&u.machine)
    )
}

/// The build of this binary, given the allocator `main` chose.
pub(crate) fn this_build(allocator: &str) -> Build {
    Build {
        stealbench_version: env!("CARGO_PKG_VERSION").to_string(),
        rustc: env!("STEALBENCH_RUSTC_VERSION").to_string(),
        git_commit: env!("STEALBENCH_GIT_COMMIT").to_string(),
        allocator: allocator.to_string(),
        profile: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
        .to_string(),
        rustflags: env!("STEALBENCH_RUSTFLAGS").to_string(),
    }
}

impl Build {
    /// Whether it was built from a work tree whose tracked files differed from its commit
    /// (`build.rs` marks its commit `-dirty`): its results claim no commit's code.
    pub(crate) fn dirty(&self) -> bool {
        self.git_commit.ends_with("-dirty")
    }
}

/// The first 8 characters of a commit, with its `-dirty` mark.
fn short(commit: &str) -> String {
    let (hash, dirty) = match commit.strip_suffix("-dirty") {
        Some(h) => (h, "-dirty"),
        None => (commit, ""),
    };
    format!("{}{dirty}", hash.get(..8).unwrap_or(hash))
}

/// What a reader of a run's verdicts should know of `run`, the build that made it, against
/// this build, which renders them: that it was dirty, or another commit than this one's (its
/// figures and claims may have judged the run otherwise). `None` for a clean build of this
/// build's commit.
pub(crate) fn build_note(run: &Build) -> Option<String> {
    build_note_against(run, env!("STEALBENCH_GIT_COMMIT"))
}

/// [`build_note`] against the commit `this`.
fn build_note_against(run: &Build, this: &str) -> Option<String> {
    let base = |c: &str| c.trim_end_matches("-dirty").to_string();
    let other = base(&run.git_commit) != base(this);
    match (run.dirty(), other) {
        (false, false) => None,
        (true, false) => Some(format!(
            "run by a dirty build ({}): uncommitted code",
            short(&run.git_commit)
        )),
        (dirty, true) => Some(format!(
            "run by {}build {}, not this one ({})",
            if dirty { "a dirty " } else { "" },
            short(&run.git_commit),
            short(this)
        )),
    }
}

/// What differs between the machine and build of one run (`was`) and another's (`now`): the
/// CPU model, the CPUs a process may use, the commit, compiler, allocator, profile, flags and
/// version, each as (what, its value in `was`, in `now`). `--resume` refuses any of them, and
/// `merge` (unless `--force`): points measured on another machine or by another build would
/// be shown as if comparable, under one run's record of machine and build.
pub(crate) fn run_differences(
    was: (&Machine, &Build),
    now: (&Machine, &Build),
) -> Vec<(&'static str, String, String)> {
    let ((m, b), (m2, b2)) = (was, now);
    let mut d = Vec::new();
    let mut check = |what: &'static str, x: String, y: String| {
        if x != y {
            d.push((what, x, y));
        }
    };
    check("CPU", m.cpu_model.clone(), m2.cpu_model.clone());
    check("cores", m.cores.to_string(), m2.cores.to_string());
    check(
        "logical CPUs",
        m.logical_cpus.to_string(),
        m2.logical_cpus.to_string(),
    );
    check(
        "NUMA nodes",
        m.numa_nodes.to_string(),
        m2.numa_nodes.to_string(),
    );
    check("commit", b.git_commit.clone(), b2.git_commit.clone());
    check("rustc", b.rustc.clone(), b2.rustc.clone());
    check("allocator", b.allocator.clone(), b2.allocator.clone());
    check("profile", b.profile.clone(), b2.profile.clone());
    check("rustflags", b.rustflags.clone(), b2.rustflags.clone());
    check(
        "stealbench",
        b.stealbench_version.clone(),
        b2.stealbench_version.clone(),
    );
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dirty_build_or_another_commit_is_noted() {
        let at = |c: &str| Build {
            git_commit: c.into(),
            ..this_build("system")
        };
        let this = "0123456789abcdef";
        assert_eq!(build_note_against(&at(this), this), None);
        let dirty = build_note_against(&at("0123456789abcdef-dirty"), this).unwrap();
        assert!(dirty.contains("dirty build (01234567-dirty)"), "{dirty}");
        let other = build_note_against(&at("fedcba9876543210"), this).unwrap();
        assert_eq!(other, "run by build fedcba98, not this one (01234567)");
        let both = build_note_against(&at("fedcba9876543210-dirty"), this).unwrap();
        assert!(
            both.starts_with("run by a dirty build fedcba98-dirty"),
            "{both}"
        );
        assert!(!at("unknown").dirty() && at("x-dirty").dirty());
    }

    #[test]
    fn every_difference_of_machine_or_build_is_named() {
        let (m, b) = (this_machine(), this_build("system"));
        assert!(run_differences((&m, &b), (&m, &b)).is_empty());
        let other = Machine {
            logical_cpus: m.logical_cpus + 2,
            ..m.clone()
        };
        let jemalloc = Build {
            git_commit: "0123abc".into(),
            ..this_build("jemalloc")
        };
        let d = run_differences((&other, &jemalloc), (&m, &b));
        assert_eq!(d.len(), 3, "{d:?}");
        assert_eq!(d[0].0, "logical CPUs", "{d:?}");
        assert_eq!((d[1].0, d[1].1.as_str()), ("commit", "0123abc"), "{d:?}");
        assert_eq!(d[2], ("allocator", "jemalloc".into(), "system".into()));
    }
}
