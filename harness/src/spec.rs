//! The typed experiment model: a point ([`PointSpec`]: runtime arm, workload spec
//! ([`WorkloadSpec`], `uts/tree=T3L`), variant, P; the key of its results everywhere) and how
//! it is measured ([`Measure`]: size, repetitions, pinning, stack size, input files,
//! parameters).
//! Each setting is read once, by the check of its field (the functions below): from the
//! command line through its clap value parser, from `meta.json` through its deserializer in
//! [`stored`], which hands the stored value to the same check. The parent's argv to a
//! `stealbench run` child is the serialisation of the two ([`PointSpec::to_args`],
//! [`Measure::to_args`]), which the child reads back with the same parsers.

use crate::runtimes::{self, Arm};
use crate::suggest;
use clap::Args;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;
use stealbench_schedulers::{FenceMode, Pinning};
use stealbench_workloads::{Size, Variant};

/// One point: a runtime arm running a workload's variant on P workers.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Args)]
pub(crate) struct PointSpec {
    /// Runtime name (see `stealbench list`), optionally with settings, `NAME[/key=value]...`:
    /// idle=busy|lazy, victim=uniform|numa|default, pinning=none|compact|scatter (in place of
    /// --pinning), steals=K, placement=paper|artifact, unmap=on|off, futures=stack|nostack,
    /// front=closure|async, sim=unit|nanos (e.g. libfork/idle=busy/victim=numa/pinning=scatter,
    /// Busy-LF as libfork's figures run it; prows/placement=artifact; fibril/unmap=off, Fibril
    /// w/o unmap).
    #[arg(long, value_name = "ARM", value_parser = parse_arm)]
    pub runtime: Arm,
    /// Workload name (see `stealbench list`), or a spec `NAME/key=value...` with parameters
    /// set (`uts/tree=T3L`), as figures' rows and result files name it.
    #[arg(long, value_name = "WORKLOAD", value_parser = WorkloadSpec::parse)]
    pub workload: WorkloadSpec,
    /// Variant: fj, sf, gf, lp (the workload must offer it on the runtime's front-end).
    #[arg(long, value_parser = parse_variant)]
    pub variant: Variant,
    /// Number of workers P, 1 to 1024.
    #[arg(long, value_parser = parse_workers)]
    pub workers: usize,
}

impl fmt::Display for PointSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}-{} P={}",
            self.runtime, self.workload, self.variant, self.workers
        )
    }
}

/// A workload with some of its input parameters set, `NAME[/key=value]...` (`fib`,
/// `uts/tree=T3L`), as the command line, figures' rows and result files name it, the way an
/// arm spells a runtime's configuration. Read once where it enters ([`WorkloadSpec::parse`]:
/// the command line, a CSV cell, a figure's declaration) and spelt back by `Display` as it was
/// read, byte for byte: the name, then each parameter in its order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct WorkloadSpec {
    /// The workload's name (`uts`).
    name: String,
    /// The parameters it sets, in the spelling's order (`tree=T3L`).
    params: Vec<(String, String)>,
}

impl WorkloadSpec {
    /// Reads `NAME[/key=value]...` (the workloads crate's
    /// [`stealbench_workloads::params::split_spec`]); no name, or a part that is not
    /// `key=value`, is refused in one line. Whether the workload exists is the caller's to ask
    /// ([`crate::grid::workload_info`]): a result file keeps the rows of one this build lacks.
    pub(crate) fn parse(s: &str) -> Result<WorkloadSpec, String> {
        let (name, params) = stealbench_workloads::params::split_spec(s)
            .map_err(|e| format!("workload '{s}': {e}"))?;
        if name.is_empty() {
            return Err(format!("workload '{s}': no workload name"));
        }
        Ok(WorkloadSpec {
            name: name.to_string(),
            params,
        })
    }

    /// The workload's name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The parameters the spec sets, in order (a later value of a key wins).
    pub(crate) fn params(&self) -> &[(String, String)] {
        &self.params
    }

    /// The spec with `key` set to `value`: in place where the spec sets it, else appended.
    pub(crate) fn with(&self, key: &str, value: &str) -> WorkloadSpec {
        let mut out = self.clone();
        let mut found = false;
        for (_, v) in out.params.iter_mut().filter(|(k, _)| k == key) {
            *v = value.to_string();
            found = true;
        }
        if !found {
            out.params.push((key.to_string(), value.to_string()));
        }
        out
    }

    /// Whether `self` selects `spec`: the same spec, or a bare name and any spec of it.
    pub(crate) fn selects(&self, spec: &WorkloadSpec) -> bool {
        self == spec || (self.params.is_empty() && self.name == spec.name)
    }
}

impl fmt::Display for WorkloadSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        for (k, v) in &self.params {
            write!(f, "/{k}={v}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for WorkloadSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<WorkloadSpec, String> {
        WorkloadSpec::parse(s)
    }
}

/// Specs order as their spellings do (one spelling per spec), so that points, tables and
/// files list them as they did when a spec was its text.
impl Ord for WorkloadSpec {
    fn cmp(&self, other: &WorkloadSpec) -> std::cmp::Ordering {
        self.to_string().cmp(&other.to_string())
    }
}

impl PartialOrd for WorkloadSpec {
    fn partial_cmp(&self, other: &WorkloadSpec) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// A spec is equal to its spelling.
impl PartialEq<str> for WorkloadSpec {
    fn eq(&self, other: &str) -> bool {
        WorkloadSpec::parse(other).is_ok_and(|o| *self == o)
    }
}

impl PartialEq<&str> for WorkloadSpec {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

/// Tests spell specs as text: a spelling that does not parse is a mistake in the test.
#[cfg(test)]
impl From<&str> for WorkloadSpec {
    fn from(s: &str) -> WorkloadSpec {
        WorkloadSpec::parse(s).unwrap_or_else(|e| panic!("a test's workload: {e}"))
    }
}

/// Serialised as its spelling (`summary.csv`'s `workload` cell).
impl Serialize for WorkloadSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Read from its spelling by [`WorkloadSpec::parse`].
impl<'de> Deserialize<'de> for WorkloadSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<WorkloadSpec, D::Error> {
        WorkloadSpec::parse(&String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl PointSpec {
    /// The arguments that give this point to `stealbench run`.
    pub(crate) fn to_args(&self) -> Vec<String> {
        [
            "--runtime",
            &self.runtime.spec(),
            "--workload",
            &self.workload.to_string(),
            "--variant",
            self.variant.name(),
            "--workers",
            &self.workers.to_string(),
        ]
        .map(str::to_string)
        .to_vec()
    }
}

/// How a point is measured: what `stealbench run` takes, and what a reproduction gives every
/// point's child process (it is part of a run's `Settings`, stored flattened in `meta.json`:
/// each field there under its own key, as the command line spells it).
#[derive(Debug, Clone, PartialEq, Eq, Args, Serialize, Deserialize)]
pub(crate) struct Measure {
    /// Input size: paper, small, quick (or test).
    #[arg(long, default_value = "paper", value_parser = parse_size)]
    #[serde(serialize_with = "stored::as_text", deserialize_with = "stored::size")]
    pub size: Size,
    /// Timed repetitions, 1 to 10000 (default: 10 for paper, 5 small, 3 quick, 2 test).
    #[arg(long, value_parser = count(MAX_REPS))]
    #[serde(deserialize_with = "stored::reps")]
    pub reps: Option<usize>,
    /// Thread pinning: none, compact, scatter (the runtime's `pinning=`, if given, instead).
    #[arg(long, default_value = "none", value_parser = parse_pinning)]
    #[serde(
        serialize_with = "stored::as_text",
        deserialize_with = "stored::pinning"
    )]
    pub pinning: Pinning,
    /// Usable size of every fiber stack of a fiber runtime (abp, fibril, prows), in bytes or
    /// with K, M, G (KiB, MiB, GiB), 16K to 4G; default 16M. Other runtimes refuse it.
    #[arg(long, value_name = "SIZE", value_parser = parse_stack_size)]
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "stored::stack_size"
    )]
    pub stack_size: Option<usize>,
    /// Workload hw: track this uncompressed AVI (e.g. Rodinia's test.avi) instead of the
    /// synthetic video.
    #[arg(long, value_name = "PATH")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hw_video: Option<PathBuf>,
    /// Workload hw: the initial points for --hw-video, one `row col` per line (0-based, row 0
    /// at the top). Default: Rodinia's points for a 609x590 video, else two rings.
    #[arg(long, value_name = "PATH", requires = "hw_video")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hw_points: Option<PathBuf>,
    /// Override one input parameter of the size's preset (repeatable, applied in order; e.g.
    /// `--param n=30`, `--param tree=T3`). `list` shows every workload's parameters.
    /// The row's params record the values used.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<String>,
}

impl Measure {
    /// The timed repetitions: `--reps`, else the size's default.
    pub(crate) fn reps(&self) -> usize {
        self.reps.unwrap_or_else(|| default_reps(self.size))
    }

    /// The arguments that give these settings to `stealbench run` of `point`: the pinning
    /// only where the point has worker threads to pin (`run` refuses it elsewhere), the stack
    /// size only where the point runs on fiber stacks, the hw files only to the hw workload.
    pub(crate) fn to_args(&self, point: &PointSpec) -> Vec<String> {
        let mut args = vec!["--size".to_string(), self.size.name().to_string()];
        if let Some(r) = self.reps {
            args.extend(["--reps".to_string(), r.to_string()]);
        }
        if point.runtime.no_worker_to_pin().is_none() {
            args.extend(["--pinning".to_string(), self.pinning.name().to_string()]);
        }
        if let Some(s) = self.stack_size.filter(|_| point.runtime.has_fibers()) {
            args.extend(["--stack-size".to_string(), s.to_string()]);
        }
        if point.workload.name() == "hw" {
            for (flag, path) in [
                ("--hw-video", &self.hw_video),
                ("--hw-points", &self.hw_points),
            ] {
                if let Some(p) = path {
                    args.extend([flag.to_string(), p.to_string_lossy().into_owned()]);
                }
            }
        }
        for p in &self.params {
            args.extend(["--param".to_string(), p.clone()]);
        }
        args
    }
}

/// The most timed repetitions of a point (`--reps`): the papers take 10.
pub(crate) const MAX_REPS: usize = 10_000;

/// The most rounds over a grid or over `bench`'s runtimes (`--rounds`).
pub(crate) const MAX_ROUNDS: usize = 100;

/// The longest timeout (`--timeout`), in seconds: a week.
pub(crate) const MAX_TIMEOUT: u64 = 7 * 24 * 3600;

/// The most workers a point may have: measured (each is an OS thread) or simulated alike.
pub(crate) const MAX_WORKERS: usize = 1024;

/// The smallest and largest fiber stack `--stack-size` accepts.
pub(crate) const STACK_SIZE_RANGE: (usize, usize) = (16 << 10, 4 << 30);

/// The default number of timed repetitions of a size.
pub(crate) fn default_reps(size: Size) -> usize {
    match size {
        Size::Paper => 10,
        Size::Small => 5,
        Size::Quick => 3,
        Size::Test => 2,
    }
}

/// The default per-point timeout of a size, in seconds.
pub(crate) fn default_timeout(size: Size) -> u64 {
    match size {
        Size::Paper => 3600,
        Size::Small => 1200,
        Size::Quick => 300,
        Size::Test => 120,
    }
}

/// A whole number from `lo` to `hi`: the one check of a bounded count, whether it comes from
/// the command line (the value parsers [`count`], [`seconds`], [`fib_n`]) or from `meta.json`
/// ([`stored`]). Its message is clap's for a range.
fn check_range(v: u64, lo: u64, hi: u64) -> Result<u64, String> {
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is not in {lo}..={hi}"))
    }
}

/// The value parser of a whole number from `lo` to `hi` ([`check_range`]): anything else is
/// refused by clap, before the command does anything.
fn ranged<T: TryFrom<u64>>(
    lo: u64,
    hi: u64,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static {
    move |s: &str| {
        let v: u64 = s
            .trim()
            .parse()
            .map_err(|_| format!("'{s}' is not a whole number from {lo} to {hi}"))?;
        let v = check_range(v, lo, hi)?;
        T::try_from(v).map_err(|_| format!("{v} does not fit this machine's integers"))
    }
}

/// The value parser of a count from 1 to `max`.
pub(crate) fn count(max: usize) -> impl Fn(&str) -> Result<usize, String> + Clone + Send + Sync {
    ranged(1, max as u64)
}

/// The value parser of `--timeout`: 0 (never) to [`MAX_TIMEOUT`] seconds.
pub(crate) fn seconds() -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync {
    ranged(0, MAX_TIMEOUT)
}

/// The value parser of `bench`'s `--n`: the Fibonacci numbers that fit 64 bits, as `run`
/// takes them.
pub(crate) fn fib_n() -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync {
    ranged(0, stealbench_workloads::fib::MAX_N)
}

/// An implemented runtime's arm (`NAME[/key=value]...`), refused with the nearest valid name
/// or value, or the capability the runtime lacks.
pub(crate) fn parse_arm(s: &str) -> Result<Arm, String> {
    runtimes::lookup_arm(s).map_err(|e| {
        // An older build's spelling names the arm it is today.
        let (today, _) = runtimes::upgrade(s, "");
        if today != s && runtimes::lookup_arm(&today).is_ok() {
            format!("runtime '{s}' is spelt {today}")
        } else {
            e
        }
    })
}

/// A size, with the nearest valid name in the error.
pub(crate) fn parse_size(s: &str) -> Result<Size, String> {
    s.parse::<Size>()
        .map_err(|_| suggest::unknown("size", s, &Size::NAMES))
}

/// A variant, with the nearest valid name in the error.
pub(crate) fn parse_variant(s: &str) -> Result<Variant, String> {
    s.parse::<Variant>().map_err(|_| {
        // An older build's variant that is a runtime setting: say which.
        let (arm, today) = runtimes::upgrade("abp", s);
        if today != s {
            let setting = arm.trim_start_matches("abp/");
            return format!(
                "variant '{s}' is {today} on an arm with {setting} (e.g. --runtime \
                 prows/{setting} --variant {today})"
            );
        }
        let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
        suggest::unknown("variant", s, &names)
    })
}

/// A pinning policy, with the nearest valid name in the error.
pub(crate) fn parse_pinning(s: &str) -> Result<Pinning, String> {
    s.parse::<Pinning>()
        .map_err(|_| suggest::unknown("pinning", s, Pinning::NAMES))
}

/// A fence mode of the deques (`--fence`), with the nearest valid name in the error.
pub(crate) fn parse_fence(s: &str) -> Result<FenceMode, String> {
    s.parse::<FenceMode>()
        .map_err(|_| suggest::unknown("fence mode", s, FenceMode::NAMES))
}

/// A fiber stack size: bytes, or a number with `K`, `M`, `G` (powers of 1024, `KiB`, `MiB`,
/// `GiB` also accepted), between [`STACK_SIZE_RANGE`]'s bounds ([`check_stack_size`]).
pub(crate) fn parse_stack_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let bad = |why: &str| format!("stack size {s}: {why}");
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(digits);
    let n: u64 = n
        .parse()
        .map_err(|_| bad("expected bytes, or a number with K, M or G (16M)"))?;
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => return Err(bad("unknown unit (use K, M or G)")),
    };
    // A product that overflows is as much too large as any other.
    let bytes = n.checked_shl(shift).filter(|b| b >> shift == n);
    check_stack_size(bytes.unwrap_or(u64::MAX)).map_err(|_| bad("must be between 16K and 4G"))
}

/// Checks a fiber stack size in bytes: within [`STACK_SIZE_RANGE`].
pub(crate) fn check_stack_size(bytes: u64) -> Result<usize, String> {
    let (lo, hi) = STACK_SIZE_RANGE;
    match usize::try_from(bytes) {
        Ok(b) if (lo..=hi).contains(&b) => Ok(b),
        _ => Err(format!("stack size {bytes}: must be between 16K and 4G")),
    }
}

/// A worker count: 1 to [`MAX_WORKERS`].
pub(crate) fn parse_workers(s: &str) -> Result<usize, String> {
    let p = s
        .parse()
        .map_err(|_| format!("workers: '{s}' is not a number of workers"))?;
    check_workers(p)
}

/// Checks a worker count: at least 1, at most [`MAX_WORKERS`].
pub(crate) fn check_workers(p: u64) -> Result<usize, String> {
    if p == 0 {
        Err("workers must be at least 1 (P=0 given)".to_string())
    } else if p > MAX_WORKERS as u64 {
        Err(format!(
            "workers must be at most {MAX_WORKERS} (P={p} given), the limit of every runtime \
             and simulation here"
        ))
    } else {
        Ok(p as usize)
    }
}

/// The settings in `meta.json`, read by the checks of their command-line options: each
/// deserializer takes the value as the file holds it (the command line's text for a named
/// setting, a number for a count) and hands it to its option's check ([`parse_size`],
/// [`count`]'s [`check_range`], [`check_workers`], ...), whose message, with the key, says
/// what is wrong. A named setting is written as the command line spells it. The shard's are
/// beside its type ([`crate::shard::stored`]).
pub(crate) mod stored {
    use super::*;
    use serde::de::Error;
    use serde::{Deserializer, Serializer};

    /// `check`'s message for the value of `key`.
    fn at<E: Error>(key: &'static str) -> impl FnOnce(String) -> E {
        move |e| E::custom(format!("{key}: {e}"))
    }

    /// A count of `key` from `lo` to `hi`.
    fn ranged<'de, D: Deserializer<'de>>(
        d: D,
        key: &'static str,
        lo: u64,
        hi: u64,
    ) -> Result<u64, D::Error> {
        check_range(u64::deserialize(d)?, lo, hi).map_err(at(key))
    }

    /// Writes a setting as the command line spells it (its `Display`).
    pub(crate) fn as_text<T: fmt::Display, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    /// `size`, read by `--size`'s parser.
    pub(crate) fn size<'de, D: Deserializer<'de>>(d: D) -> Result<Size, D::Error> {
        parse_size(&String::deserialize(d)?).map_err(at("size"))
    }

    /// `fence`, read as `STEALBENCH_FENCE_SWITCHING` takes a mode's name.
    pub(crate) fn fence<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<stealbench_schedulers::FenceMode, D::Error> {
        String::deserialize(d)?.parse().map_err(at("fence"))
    }

    /// `pinning`, read by `--pinning`'s parser.
    pub(crate) fn pinning<'de, D: Deserializer<'de>>(d: D) -> Result<Pinning, D::Error> {
        parse_pinning(&String::deserialize(d)?).map_err(at("pinning"))
    }

    /// `reps`: 1 to [`MAX_REPS`] (required: a run stores the repetitions it resolved).
    pub(crate) fn reps<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
        ranged(d, "reps", 1, MAX_REPS as u64).map(|r| Some(r as usize))
    }

    /// `rounds`: 1 to [`MAX_ROUNDS`].
    pub(crate) fn rounds<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
        ranged(d, "rounds", 1, MAX_ROUNDS as u64).map(|r| r as usize)
    }

    /// `timeout_secs`: 0 to [`MAX_TIMEOUT`].
    pub(crate) fn timeout_secs<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        ranged(d, "timeout_secs", 0, MAX_TIMEOUT)
    }

    /// `stack_size` in bytes, by [`check_stack_size`].
    pub(crate) fn stack_size<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
        Option::<u64>::deserialize(d)?
            .map(check_stack_size)
            .transpose()
            .map_err(D::Error::custom)
    }

    /// `workers`: at least one, each by [`check_workers`].
    pub(crate) fn workers<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<usize>, D::Error> {
        let w = Vec::<u64>::deserialize(d)?;
        if w.is_empty() {
            return Err(D::Error::custom("workers: none listed"));
        }
        w.into_iter()
            .map(|p| check_workers(p).map_err(D::Error::custom))
            .collect()
    }

    /// `list` without its repetitions, in order: `--runtimes abp,abp` selects what `abp` does.
    pub(crate) fn dedup<T: PartialEq + Clone>(list: &[T]) -> Vec<T> {
        let mut out: Vec<T> = Vec::new();
        for x in list {
            if !out.contains(x) {
                out.push(x.clone());
            }
        }
        out
    }

    /// The selected runtimes: each arm's spelling (`None`: all).
    pub(crate) fn runtimes_as_text<S: Serializer>(
        arms: &Option<Vec<Arm>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        arms.as_ref()
            .map(|v| v.iter().map(Arm::spec).collect::<Vec<_>>())
            .serialize(s)
    }

    /// The selected runtimes, each read by `--runtimes`' parser in today's spelling
    /// ([`runtimes::upgrade`]: an older build spelt some settings as runtimes of their own),
    /// once each (an older build stored a selection as given, repetitions and all).
    pub(crate) fn runtimes<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<Arm>>, D::Error> {
        let Some(spelt) = Option::<Vec<String>>::deserialize(d)? else {
            return Ok(None);
        };
        let arms = spelt
            .iter()
            .map(|r| parse_arm(&runtimes::upgrade(r, "").0).map_err(D::Error::custom))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(dedup(&arms)))
    }

    /// The selected workloads (`None`: all), once each; checked against the figure's rows
    /// when the run is (`plan::check_settings`).
    pub(crate) fn workloads<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Vec<WorkloadSpec>>, D::Error> {
        Ok(Option::<Vec<WorkloadSpec>>::deserialize(d)?.map(|w| dedup(&w)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_values_name_the_nearest() {
        assert!(
            parse_size("quik")
                .unwrap_err()
                .contains("did you mean 'quick'")
        );
        assert!(
            parse_variant("fjj")
                .unwrap_err()
                .contains("did you mean 'fj'")
        );
        // Older builds' spellings name today's.
        assert_eq!(
            parse_arm("prows-artifact").unwrap_err(),
            "runtime 'prows-artifact' is spelt prows/placement=artifact"
        );
        assert!(
            parse_arm("libfork/pin=scatter")
                .unwrap_err()
                .ends_with("is spelt libfork/pinning=scatter")
        );
        assert_eq!(
            parse_variant("sf-nostack").unwrap_err(),
            "variant 'sf-nostack' is sf on an arm with futures=nostack (e.g. --runtime \
             prows/futures=nostack --variant sf)"
        );
        assert!(
            parse_arm("prows/placement=artefact")
                .unwrap_err()
                .contains("did you mean 'artifact'")
        );
        assert_eq!(parse_stack_size("1M").unwrap(), 1 << 20);
        assert_eq!(parse_stack_size("64KiB").unwrap(), 64 << 10);
        assert_eq!(parse_stack_size("1048576").unwrap(), 1 << 20);
        for bad in ["1", "8G", "12Q", "M", ""] {
            assert!(parse_stack_size(bad).is_err(), "{bad}");
        }
        assert!(check_workers(0).is_err());
        assert_eq!(check_workers(MAX_WORKERS as u64).unwrap(), MAX_WORKERS);
        assert!(parse_workers("1025").unwrap_err().contains("at most 1024"));
        assert!(parse_workers("two").unwrap_err().contains("not a number"));
        assert_eq!(parse_pinning("compact").unwrap(), Pinning::Compact);
    }

    #[test]
    fn a_workload_spec_reads_once_and_spells_back_as_written() {
        for text in [
            "fib",
            "uts/tree=T3L",
            "mapreduce-fib/items=8/latency_ms=1/n=20",
        ] {
            assert_eq!(WorkloadSpec::parse(text).unwrap().to_string(), text);
        }
        let s = WorkloadSpec::parse("mapreduce-fib/items=8/latency_ms=1").unwrap();
        assert_eq!(s.name(), "mapreduce-fib");
        assert_eq!(s.params()[1], ("latency_ms".to_string(), "1".to_string()));
        // Set in place where the spec sets it, else appended.
        assert_eq!(
            s.with("latency_ms", "0"),
            "mapreduce-fib/items=8/latency_ms=0"
        );
        assert_eq!(s.with("n", "20"), "mapreduce-fib/items=8/latency_ms=1/n=20");
        // A bare name selects every spec of its workload; a spec, itself.
        let (uts, t3l) = (
            WorkloadSpec::from("uts"),
            WorkloadSpec::from("uts/tree=T3L"),
        );
        assert!(uts.selects(&t3l) && t3l.selects(&t3l) && !t3l.selects(&uts));
        assert!(!WorkloadSpec::from("fib").selects(&t3l));
        // Specs order as their spellings.
        let mut specs: Vec<WorkloadSpec> = ["uts/tree=T1", "uts-x", "uts", "mm/input=libfork"]
            .map(WorkloadSpec::from)
            .to_vec();
        specs.sort();
        let spelt: Vec<String> = specs.iter().map(ToString::to_string).collect();
        assert_eq!(spelt, ["mm/input=libfork", "uts", "uts-x", "uts/tree=T1"]);
        for (bad, why) in [
            ("", "workload '': no workload name"),
            ("/n=3", "workload '/n=3': no workload name"),
            ("fib/n", "workload 'fib/n': \"n\": expected key=value"),
            ("fib/=3", "workload 'fib/=3': \"=3\": expected key=value"),
        ] {
            assert_eq!(WorkloadSpec::parse(bad).unwrap_err(), why);
        }
    }
}
