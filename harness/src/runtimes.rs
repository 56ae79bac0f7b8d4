//! The harness's side of the runtime registry (`stealbench_schedulers::registry`, the one
//! list of runtimes): arms, and the refusals that come before anything runs.
//!
//! A runtime runs in a configuration: an [`Arm`], spelt `NAME[/key=value]...` (`libfork`,
//! `libfork/idle=busy`, `prows/placement=artifact`). The arm's canonical spelling is the
//! runtime of a point everywhere: `--runtime`, `--runtimes`, result files, tables and plots, so
//! two configurations of one runtime are two rows, never two runtimes. Which settings a runtime
//! takes is read from its `Scheduler::CAPABILITIES`, the table its pool's `start` also obeys.
//! A runtime this build lacks (behind a cargo feature) parses, and is refused before anything
//! runs with the feature that builds it.

use crate::suggest;
use std::fmt;
use stealbench_schedulers::record::Weights;
pub(crate) use stealbench_schedulers::registry::{RUNTIMES, Runtime};
use stealbench_schedulers::{
    Capabilities, FrontEnd, FutureStack, PoolConfig, SETTINGS, Setting, StartError,
};
use stealbench_sim::Model;
use stealbench_workloads::{Shape, Variant};

/// The runtime's registered arms: its default configuration, then each of
/// [`Runtime::arms`] (`bench` measures every one, a figure every one of its baselines, and
/// `--runtimes NAME` selects them with the default).
pub(crate) fn registered_arms(info: &'static Runtime) -> Vec<Arm> {
    std::iter::once(Arm::plain(info))
        .chain(info.arms.iter().map(|a| {
            Arm::parse(&format!("{}/{a}", info.name))
                .unwrap_or_else(|e| panic!("a registered arm: {e}"))
        }))
        .collect()
}

/// Why the arm `arm` refuses `variant`, if it does, by its runtime's capabilities: every
/// variant with futures where it has none (the fork-join-only runtimes), `gf` where a touch
/// cannot suspend (rayon: a touch helps instead, so general futures touched across tasks can
/// deadlock; its measurements would be hangs, not times).
pub(crate) fn unsupported(arm: &Arm, variant: Variant) -> Option<&'static str> {
    let caps = arm.info.capabilities?;
    if !caps.futures {
        return variant
            .uses_futures()
            .then_some("a fork-join runtime without futures: fj variants only");
    }
    (variant == Variant::Gf && !caps.general_futures).then_some(
        "a touch cannot suspend here (it helps), so general futures touched across tasks can deadlock",
    )
}

/// The runtime of T_s: its arm `front=kernel` ([`kernel`]) runs a workload's kernel, the
/// serial code with no runtime and no trait, whose time at P = 1 is T_s; its default arm
/// (`serial`) runs the same program through the closure front-end's traits (the serial
/// elision), and `serial/front=async` through the async one.
pub(crate) const SERIAL: &str = "serial";

/// The arm of T_s in `shape`: [`SERIAL`] with `front=kernel` (and `shape=`, unless plain).
pub(crate) fn kernel(shape: Shape) -> Arm {
    let spelt = match shape {
        Shape::Plain => format!("{SERIAL}/front=kernel"),
        s => format!("{SERIAL}/front=kernel/shape={s}"),
    };
    Arm::parse(&spelt).unwrap_or_else(|e| panic!("the kernel's arm: {e}"))
}

/// A runtime in one configuration: the registry entry and the settings its spelling
/// `NAME[/key=value]...` gives. Its keys are the pool's settings that an arm may give
/// (`stealbench_schedulers::SETTINGS`, each declared once with its values, its parser and
/// spelling, and the capability that admits it), in their declared arm order, then the
/// harness's own (the private table `KEYS`: `front`, `shape`, `sim`). README.md's table of
/// arm keys lists them all, with their values, checked against this list by a test.
///
/// A setting left out stays at the runtime's default (the pinning at the run's). A setting the
/// runtime's capabilities lack is refused here, with the same table its pool's `start` obeys:
/// `idle` and `victim` values it does not honour, `pinning` where there is no worker thread,
/// `steals` without a forced schedule, `placement` without stealable sets, `futures` without
/// fibers, a `front` it is not written for, a `shape` without `front=kernel`.
///
/// `sim=` makes the arm the runtime's simulation: the point records the program's DAG on the
/// `record` runtime (strands of unit weight, or measured in nanoseconds) and replays it in
/// `stealbench-sim`'s [`Model`] of that scheduler at P, one seed per repetition (`abp` and
/// `prows`, either placement, only; no `pinning`, no `futures=nostack`: the model runs every
/// future work-first on a stack of its own).
///
/// Its fields are set only here, by [`Arm::parse`] and [`Arm::plain`], which make `spelt`
/// from them; elsewhere they are read, never assigned.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Arm {
    /// The canonical spelling, made once when the arm is ([`Arm::spec`]): what compares
    /// (equality included), orders and hashes arms, so no comparison builds it and the three
    /// agree.
    spelt: &'static str,
    /// The runtime.
    pub info: &'static Runtime,
    /// The pool's settings: those the arm gives (`given`), the others at their defaults; its
    /// `workers` is no part of the arm.
    pub settings: PoolConfig,
    /// Which of [`SETTINGS`] the arm gives, one bit per setting by its place there.
    given: u32,
    /// `front=`, if given.
    pub front: Option<FrontEnd>,
    /// `shape=`, if given (with `front=kernel` only).
    pub shape: Option<Shape>,
    /// `sim=`: the weights of the simulated DAG's strands, if the arm is a simulation.
    pub sim: Option<Weights>,
}

/// One key of an arm's spelling that is the harness's, not the pool's: how its value is read
/// and spelt, and what the harness refuses of it. [`KEYS`] holds them in their canonical order,
/// after the pool's settings.
struct Key {
    /// The key.
    name: &'static str,
    /// Reads the value into the arm; `Ok(true)` when the key was given already.
    set: fn(&mut Arm, &str) -> Result<bool, String>,
    /// The value's spelling, if the key is given.
    get: fn(&Arm) -> Option<String>,
    /// Forgets the value where it is the runtime's default, so that one configuration has one
    /// spelling (`prows/placement=paper` is `prows`).
    forget_default: fn(&mut Arm),
    /// What the harness refuses of the value: what the simulator does not model, a front-end
    /// the runtime is not written for. `None` if nothing.
    refused: fn(&Arm) -> Option<String>,
}

/// Reads `v` into `slot` (`what`, spelt one of `names`); whether `slot` was set already.
fn put<T: std::str::FromStr>(
    slot: &mut Option<T>,
    what: &str,
    v: &str,
    names: &[&str],
) -> Result<bool, String> {
    let value = v.parse().map_err(|_| suggest::unknown(what, v, names))?;
    Ok(slot.replace(value).is_some())
}

/// The values of `sim=`.
const SIM_WEIGHTS: &[&str] = &["unit", "nanos"];

/// The harness's keys, in the canonical order of an arm's spelling (after the pool's).
const KEYS: &[Key] = &[
    Key {
        name: "front",
        set: |a, v| put(&mut a.front, "front-end", v, FrontEnd::NAMES),
        get: |a| a.front.map(|v| v.to_string()),
        forget_default: |a| a.front = a.front.filter(|&f| f != a.info.front_ends[0]),
        refused: |a| {
            let f = a.front.filter(|f| !a.info.front_ends.contains(f))?;
            Some(format!(
                "{} is not written for the {f} front-end",
                a.info.name
            ))
        },
    },
    Key {
        name: "shape",
        set: |a, v| put(&mut a.shape, "shape", v, Shape::NAMES),
        get: |a| a.shape.map(|v| v.to_string()),
        forget_default: |a| a.shape = a.shape.filter(|&v| v != Shape::default()),
        refused: |a| {
            a.shape?;
            (a.front_end() != FrontEnd::Kernel).then(|| {
                "shape= is the shape of the kernel's serial code: only with front=kernel"
                    .to_string()
            })
        },
    },
    Key {
        name: "sim",
        set: |a, v| {
            let w = match v {
                "unit" => Weights::Unit,
                "nanos" => Weights::Nanos,
                _ => return Err(suggest::unknown("sim weights", v, SIM_WEIGHTS)),
            };
            Ok(a.sim.replace(w).is_some())
        },
        get: |a| {
            a.sim.map(|w| {
                match w {
                    Weights::Unit => "unit",
                    Weights::Nanos => "nanos",
                }
                .to_string()
            })
        },
        forget_default: |_| {},
        refused: |a| {
            a.sim?;
            a.model()
                .is_none()
                .then(|| "the simulator models abp and prows (either placement) only".to_string())
        },
    },
];

/// The pool's settings an arm may give, each with its place in [`SETTINGS`], in their
/// canonical order.
fn arm_settings() -> Vec<(usize, &'static Setting)> {
    let mut settings: Vec<_> = SETTINGS
        .iter()
        .enumerate()
        .filter(|(_, s)| s.arm.is_some())
        .collect();
    settings.sort_by_key(|(_, s)| s.arm);
    settings
}

/// The keys an arm's spelling may set, in their canonical order: the pool's, then the
/// harness's.
pub(crate) fn arm_keys() -> Vec<&'static str> {
    arm_settings()
        .into_iter()
        .map(|(_, s)| s.key)
        .chain(KEYS.iter().map(|k| k.name))
        .collect()
}

impl Arm {
    /// The runtime `info` with no setting given.
    pub(crate) fn plain(info: &'static Runtime) -> Arm {
        Arm {
            spelt: info.name,
            info,
            settings: PoolConfig::with_workers(1),
            given: 0,
            front: None,
            shape: None,
            sim: None,
        }
    }

    /// Parses `NAME[/key=value]...`, built or not; one line naming the nearest
    /// valid name or value, or the capability the runtime lacks, on error.
    pub(crate) fn parse(spec: &str) -> Result<Arm, String> {
        let mut parts = spec.split('/');
        let name = parts.next().unwrap_or_default();
        let info = find(name).ok_or_else(|| suggest::unknown("runtime", name, &names()))?;
        let mut arm = Arm::plain(info);
        for part in parts {
            let Some((key, v)) = part.split_once('=') else {
                return Err(format!(
                    "runtime '{spec}': '{part}' is not key=value (keys: {})",
                    arm_keys().join(", ")
                ));
            };
            let twice = if let Some((i, s)) = arm_settings().into_iter().find(|(_, s)| s.key == key)
            {
                (s.set)(&mut arm.settings, v).map_err(|_| {
                    let e = if s.values.is_empty() {
                        format!("{key}={v} is not a number of {}", s.what)
                    } else {
                        suggest::unknown(s.what, v, s.values)
                    };
                    format!("runtime '{spec}': {e}")
                })?;
                let twice = arm.given & 1 << i != 0;
                arm.given |= 1 << i;
                twice
            } else if let Some(k) = KEYS.iter().find(|k| k.name == key) {
                (k.set)(&mut arm, v).map_err(|e| format!("runtime '{spec}': {e}"))?
            } else {
                return Err(suggest::unknown("runtime setting", key, &arm_keys()));
            };
            if twice {
                return Err(format!("runtime '{spec}': {key} is set twice"));
            }
        }
        // One configuration has one spelling (`prows/placement=paper` is `prows`); but the
        // run's `--pinning` reaches every pool, so `pinning=none` is no default: it replaces it.
        for (i, s) in arm_settings() {
            if s.key != "pinning" && (s.is_default)(&arm.settings) {
                arm.given &= !(1 << i);
            }
        }
        for k in KEYS {
            (k.forget_default)(&mut arm);
        }
        arm.spelt = intern(arm.spelling());
        arm.refusal()
            .map_or(Ok(arm), |why| Err(format!("runtime '{spec}': {why}")))
    }

    /// Why this arm has no worker thread to pin, if it has none (a simulation, a runtime that
    /// runs every task on the calling thread): a pinning given for it, as its `pinning=` or
    /// as `run --pinning`, is refused with this reason.
    pub(crate) fn no_worker_to_pin(&self) -> Option<String> {
        let why = if self.sim.is_some() {
            "a simulation runs no threads".to_string()
        } else if self.info.capabilities.is_some_and(|c| !c.threads) {
            format!("{} runs every task on the calling thread", self.info.name)
        } else {
            return None;
        };
        Some(format!("{why}, so there is no worker to pin"))
    }

    /// Whether the arm gives the pool's setting `key`.
    pub(crate) fn gives(&self, key: &str) -> bool {
        SETTINGS
            .iter()
            .position(|s| s.key == key)
            .is_some_and(|i| self.given & 1 << i != 0)
    }

    /// The spelling of each key the arm gives, in the canonical order (`None`: not given).
    fn values(&self) -> impl Iterator<Item = (&'static str, Option<String>)> + '_ {
        let pool = arm_settings().into_iter().map(|(i, s)| {
            let v = (self.given & 1 << i != 0)
                .then(|| (s.get)(&self.settings))
                .flatten();
            (s.key, v)
        });
        pool.chain(KEYS.iter().map(|k| (k.name, (k.get)(self))))
    }

    /// Why this arm's runtime cannot take its settings, if it cannot: what the harness refuses
    /// beyond what the pool refuses (a worker to pin where there is none: the run's
    /// `--pinning` reaches every pool, so the pool cannot tell; what the simulator does not
    /// model; a harness key's own refusal, [`Key::refused`]), else what the runtime's pool
    /// would refuse of the configuration the arm gives ([`Capabilities::admit`]; nothing for a
    /// runtime this build lacks).
    fn refusal(&self) -> Option<String> {
        if self.gives("pinning")
            && let Some(why) = self.no_worker_to_pin()
        {
            return Some(format!("{why}: drop pinning="));
        }
        if self.sim.is_some() && self.settings.futures == FutureStack::Current {
            return Some(
                "the simulator replays futures work-first, each on a stack of its own: no \
                 futures=nostack"
                    .to_string(),
            );
        }
        if let Some(why) = KEYS.iter().find_map(|k| (k.refused)(self)) {
            return Some(why);
        }
        let caps: Capabilities = self.info.capabilities?;
        let config = self.configure(PoolConfig::with_workers(if caps.threads { 2 } else { 1 }));
        match caps.admit(self.info.name, &config) {
            Ok(()) => None,
            Err(StartError::Unsupported(why) | StartError::Os(why)) => Some(why),
        }
    }

    /// Whether the arm gives no setting: on `--runtimes`, it selects every arm of its runtime.
    pub(crate) fn is_bare(&self) -> bool {
        self.settings_apart(&Arm::plain(self.info)) == 0
    }

    /// The front-end the arm's programs are written for: `front=`, or the runtime's default.
    pub(crate) fn front_end(&self) -> FrontEnd {
        self.front.unwrap_or(self.info.front_ends[0])
    }

    /// The simulator's model of this arm's runtime in its placement, if it has one.
    pub(crate) fn model(&self) -> Option<Model> {
        Model::of(self.info.name, self.settings.placement)
    }

    /// Whether the arm's points run on fixed-size fiber stacks (the ones `--stack-size`
    /// sizes): a fiber runtime, measured rather than simulated.
    pub(crate) fn has_fibers(&self) -> bool {
        self.sim.is_none() && self.info.capabilities.is_some_and(|c| c.fiber_stacks)
    }

    /// How many settings this arm and `other` give differently (a setting left out differs
    /// from one given): 0 for one spelling.
    pub(crate) fn settings_apart(&self, other: &Arm) -> usize {
        self.values()
            .zip(other.values())
            .filter(|(a, b)| a != b)
            .count()
    }

    /// The canonical spelling: the name, then the settings given, in the order of
    /// [`arm_keys`].
    pub(crate) fn spec(&self) -> String {
        self.spelt.to_string()
    }

    /// The canonical spelling, made from the settings.
    fn spelling(&self) -> String {
        self.values()
            .filter_map(|(k, v)| Some(format!("/{k}={}", v?)))
            .fold(self.info.name.to_string(), |s, kv| s + &kv)
    }

    /// `config` with this arm's settings.
    pub(crate) fn configure(&self, mut config: PoolConfig) -> PoolConfig {
        for (i, s) in SETTINGS.iter().enumerate() {
            if self.given & 1 << i != 0 {
                (s.copy)(&self.settings, &mut config);
            }
        }
        config
    }
}

impl fmt::Display for Arm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.spelt)
    }
}

/// `spelling` as a string that lives as long as the process: one copy per distinct arm (a few
/// dozen at most), so an [`Arm`] stays `Copy` and carries its spelling.
fn intern(spelling: String) -> &'static str {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static SPELT: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut set = SPELT
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(&s) = set.get(spelling.as_str()) {
        return s;
    }
    let s: &'static str = Box::leak(spelling.into_boxed_str());
    set.insert(s);
    s
}

/// [`Arm::parse`].
impl std::str::FromStr for Arm {
    type Err = String;
    fn from_str(s: &str) -> Result<Arm, String> {
        Arm::parse(s)
    }
}

/// Tests spell arms as text: a spelling that does not parse is a mistake in the test.
#[cfg(test)]
impl From<&str> for Arm {
    fn from(s: &str) -> Arm {
        Arm::parse(s).unwrap_or_else(|e| panic!("a test's arm: {e}"))
    }
}

/// Arms order as their canonical spellings do (one spelling per arm: the order agrees with
/// `==`).
impl PartialEq for Arm {
    fn eq(&self, other: &Arm) -> bool {
        self.spelt == other.spelt
    }
}

impl Eq for Arm {}

impl Ord for Arm {
    fn cmp(&self, other: &Arm) -> std::cmp::Ordering {
        self.spelt.cmp(other.spelt)
    }
}

impl PartialOrd for Arm {
    fn partial_cmp(&self, other: &Arm) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl std::hash::Hash for Arm {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.spelt.hash(state);
    }
}

/// An arm equals the text of its canonical spelling.
impl PartialEq<str> for Arm {
    fn eq(&self, other: &str) -> bool {
        self.spelt == other
    }
}

impl PartialEq<&str> for Arm {
    fn eq(&self, other: &&str) -> bool {
        self.spelt == *other
    }
}

/// The canonical spelling of an arm written by an older build, which spelt some settings as
/// runtimes or variants of their own: runtime `prows-artifact` (`prows/placement=artifact`),
/// `serial-async` (`serial/front=async`), the key `pin=` (`pinning=`), and variant
/// `sf-nostack` (variant `sf` on `.../futures=nostack`). Returns the arm and the variant; text
/// that names nothing older comes back as it is.
pub(crate) fn upgrade(runtime: &str, variant: &str) -> (String, String) {
    let (name, rest) = runtime
        .split_once('/')
        .map_or((runtime, ""), |(n, r)| (n, r));
    let mut parts: Vec<String> = rest
        .split('/')
        .filter(|p| !p.is_empty())
        .map(|p| match p.strip_prefix("pin=") {
            Some(v) => format!("pinning={v}"),
            None => p.to_string(),
        })
        .collect();
    let name = match name {
        "prows-artifact" => {
            parts.push("placement=artifact".to_string());
            "prows"
        }
        "serial-async" => {
            parts.push("front=async".to_string());
            "serial"
        }
        n => n,
    };
    let variant = if variant == "sf-nostack" {
        parts.push("futures=nostack".to_string());
        "sf"
    } else {
        variant
    };
    let spelt = std::iter::once(name.to_string())
        .chain(parts)
        .collect::<Vec<_>>()
        .join("/");
    let spelt = Arm::parse(&spelt).map_or(spelt, |a| a.spec());
    (spelt, variant.to_string())
}

/// The arm spelt `spec` of a runtime this build has, or a one-line reason (a bad spelling,
/// or the feature that builds the runtime).
pub(crate) fn lookup_arm(spec: &str) -> Result<Arm, String> {
    let arm = Arm::parse(spec)?;
    lookup_built(arm.info.name)?;
    Ok(arm)
}

/// The registry entry named `name`, built or not.
pub(crate) fn find(name: &str) -> Option<&'static Runtime> {
    RUNTIMES.iter().find(|r| r.name == name)
}

/// Every registered name, built or not.
pub(crate) fn names() -> Vec<&'static str> {
    RUNTIMES.iter().map(|r| r.name).collect()
}

/// The runtime named `name` if this build has it, or a one-line reason: an unknown name with
/// the nearest valid one, or `runtime 'tbb' is not built: cargo run --release --features tbb`.
pub(crate) fn lookup_built(name: &str) -> Result<&'static Runtime, String> {
    let r = find(name).ok_or_else(|| suggest::unknown("runtime", name, &names()))?;
    match r.not_built() {
        Some(why) => Err(format!("runtime '{name}' is {why}")),
        None => Ok(r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stealbench_schedulers::{IdlePolicy, Pinning, Placement, VictimPolicy};

    #[test]
    fn serial_is_built_on_every_front_end_and_the_kernel() {
        let s = find(SERIAL).unwrap();
        assert_eq!(
            s.front_ends,
            [FrontEnd::Closure, FrontEnd::Async, FrontEnd::Kernel]
        );
        assert!(s.built());
        let plain = kernel(Shape::Plain);
        assert_eq!(plain.spec(), "serial/front=kernel");
        assert_eq!((plain.front_end(), plain.shape), (FrontEnd::Kernel, None));
        let libfork = kernel(Shape::Libfork);
        assert_eq!(libfork.spec(), "serial/front=kernel/shape=libfork");
        assert_eq!(libfork.shape, Some(Shape::Libfork));
        // The shape is no setting of the pool.
        assert_eq!(
            libfork.configure(PoolConfig::with_workers(1)),
            PoolConfig::with_workers(1)
        );
        for (bad, says) in [
            ("serial/shape=libfork", "only with front=kernel"),
            ("serial/front=async/shape=libfork", "only with front=kernel"),
            (
                "serial/front=kernel/shape=libfrok",
                "did you mean 'libfork'",
            ),
            (
                "abp/front=kernel",
                "abp is not written for the kernel front-end",
            ),
        ] {
            let e = Arm::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        assert_eq!(
            Arm::parse("serial/shape=libfork/front=kernel").unwrap(),
            libfork
        );
        assert_eq!(
            Arm::parse("serial/front=kernel/shape=plain").unwrap(),
            plain
        );
    }

    #[test]
    fn rayon_refuses_general_futures_only() {
        let arm = |s: &str| Arm::parse(s).unwrap();
        assert!(unsupported(&arm("rayon"), Variant::Gf).is_some());
        assert!(unsupported(&arm("rayon"), Variant::Sf).is_none());
        assert!(unsupported(&arm("tokio"), Variant::Gf).is_none());
        assert!(unsupported(&arm("serial"), Variant::Gf).is_none());
    }

    #[test]
    fn libfork_runs_fork_join_only() {
        let libfork = Arm::parse("libfork").unwrap();
        assert!(unsupported(&libfork, Variant::Fj).is_none());
        for v in [Variant::Sf, Variant::Gf, Variant::Lp] {
            assert!(unsupported(&libfork, v).is_some(), "{v}");
        }
        assert!(unsupported(&Arm::parse("tokio").unwrap(), Variant::Sf).is_none());
    }

    #[test]
    fn arms_parse_to_one_spelling() {
        let a = Arm::parse("libfork/pinning=scatter/victim=numa/idle=busy").unwrap();
        assert_eq!(a.info.name, "libfork");
        assert_eq!(a.spec(), "libfork/idle=busy/victim=numa/pinning=scatter");
        assert_eq!(Arm::parse(&a.spec()).unwrap(), a);
        let c = a.configure(PoolConfig {
            pinning: Pinning::Compact,
            ..PoolConfig::with_workers(2)
        });
        assert_eq!(
            (c.idle, c.victim, c.pinning),
            (
                IdlePolicy::Busy,
                VictimPolicy::NumaWeighted,
                Pinning::Scatter
            )
        );
        // Without `pinning=`, the run's pinning stays.
        let c = Arm::parse("libfork/victim=numa")
            .unwrap()
            .configure(PoolConfig {
                pinning: Pinning::Compact,
                ..PoolConfig::with_workers(2)
            });
        assert_eq!(c.pinning, Pinning::Compact);
        assert_eq!(Arm::parse("abp").unwrap().spec(), "abp");
        assert_eq!(
            Arm::parse("abp")
                .unwrap()
                .configure(PoolConfig::with_workers(1)),
            PoolConfig::with_workers(1)
        );
        for (bad, says) in [
            ("libfrok/idle=busy", "did you mean 'libfork'"),
            ("libfork/idle=bsy", "did you mean 'busy'"),
            ("libfork/idel=busy", "did you mean 'idle'"),
            ("libfork/busy", "not key=value"),
            ("libfork/idle=busy/idle=lazy", "set twice"),
            ("libfork/pinning=compat", "did you mean 'compact'"),
            ("libfork/pinning=none/pinning=scatter", "set twice"),
            // Nothing to pin: the serial pool and the simulations refuse pinning=.
            (
                "serial/pinning=compact",
                "serial runs every task on the calling thread",
            ),
            (
                "serial/front=async/pinning=none",
                "no worker to pin: drop pinning=",
            ),
            (
                "abp/pinning=scatter/sim=unit",
                "a simulation runs no threads",
            ),
            // The capabilities refuse what the pool's start would.
            ("rayon/idle=busy", "rayon cannot honour idle policy 'busy'"),
            (
                "tokio/victim=numa",
                "tokio cannot honour victim policy 'numa'",
            ),
            ("abp/victim=numa", "abp cannot honour victim policy 'numa'"),
            ("libfork/steals=1", "libfork cannot hold its steals"),
            ("abp/placement=artifact", "only prows has"),
            (
                "rayon/futures=nostack",
                "no fibers to choose a future stack for",
            ),
            (
                "prows/front=async",
                "prows is not written for the async front-end",
            ),
            ("serial/front=asink", "did you mean 'async'"),
            ("prows/placement=artefact", "did you mean 'artifact'"),
            ("prows/futures=nostack/sim=unit", "no futures=nostack"),
        ] {
            let e = Arm::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        assert!(lookup_arm("fibril/idle=busy").is_ok());
        let s = Arm::parse("prows/sim=unit/placement=artifact").unwrap();
        assert_eq!(s.spec(), "prows/placement=artifact/sim=unit");
        assert_eq!(s.sim, Some(Weights::Unit));
        assert_eq!(s.to_string(), s.model().unwrap().to_string() + "/sim=unit");
        let c = Arm::parse("prows/futures=nostack/placement=artifact")
            .unwrap()
            .configure(PoolConfig::with_workers(2));
        assert_eq!(
            (c.placement, c.futures),
            (Placement::Artifact, FutureStack::Current)
        );
        // A runtime's default spelt out is the default arm: one spelling per configuration.
        for (spelt, is) in [
            ("prows/placement=paper", "prows"),
            ("libfork/idle=lazy/victim=default", "libfork"),
            ("serial/front=closure", "serial"),
            ("rayon/futures=stack", "rayon"),
            ("abp/pinning=none", "abp/pinning=none"),
        ] {
            assert_eq!(Arm::parse(spelt).unwrap().spec(), is, "{spelt}");
        }
        let a = Arm::parse("serial/front=async").unwrap();
        assert_eq!(
            (a.front_end(), Arm::parse("serial").unwrap().front_end()),
            (FrontEnd::Async, FrontEnd::Closure)
        );
        assert!(
            Arm::parse("rayon/sim=unit")
                .unwrap_err()
                .contains("models abp")
        );
        assert!(
            Arm::parse("abp/sim=unti")
                .unwrap_err()
                .contains("did you mean 'unit'")
        );
        let forced = Arm::parse("prows/sim=nanos/steals=1").unwrap();
        assert_eq!(forced.spec(), "prows/steals=1/sim=nanos");
        assert_eq!(
            forced.configure(PoolConfig::with_workers(2)).steals,
            Some(1)
        );
        assert!(
            Arm::parse("abp/steals=one")
                .unwrap_err()
                .contains("not a number")
        );
    }

    #[test]
    fn every_registered_arm_parses() {
        for r in RUNTIMES.iter().filter(|r| r.built()) {
            for (a, setting) in registered_arms(r).iter().skip(1).zip(r.arms) {
                assert_eq!(a.spec(), format!("{}/{setting}", r.name), "not canonical");
                assert_eq!(a.info.name, r.name);
            }
        }
        let spelt = |name| -> Vec<String> {
            registered_arms(find(name).unwrap())
                .iter()
                .map(Arm::spec)
                .collect()
        };
        assert_eq!(spelt("libfork"), ["libfork", "libfork/idle=busy"]);
        assert_eq!(spelt("prows"), ["prows", "prows/placement=artifact"]);
        assert_eq!(
            spelt("serial"),
            [
                "serial",
                "serial/front=async",
                "serial/front=kernel",
                "serial/front=kernel/shape=libfork"
            ]
        );
        assert_eq!(spelt("fibril"), ["fibril", "fibril/unmap=off"]);
    }

    #[test]
    fn older_spellings_are_upgraded_to_the_arms() {
        for (runtime, variant, arm, v) in [
            ("prows-artifact", "gf", "prows/placement=artifact", "gf"),
            (
                "prows-artifact/sim=unit",
                "sf",
                "prows/placement=artifact/sim=unit",
                "sf",
            ),
            ("serial-async", "fj", "serial/front=async", "fj"),
            ("prows", "sf-nostack", "prows/futures=nostack", "sf"),
            (
                "libfork/victim=numa/pin=scatter",
                "fj",
                "libfork/victim=numa/pinning=scatter",
                "fj",
            ),
            ("abp", "fj", "abp", "fj"),
            ("nonesuch", "xx", "nonesuch", "xx"),
        ] {
            assert_eq!(
                upgrade(runtime, variant),
                (arm.to_string(), v.to_string()),
                "{runtime} {variant}"
            );
        }
    }

    /// The README's table of arm keys lists every key, in the canonical order, and each pool
    /// setting's values as `SETTINGS` declares them (`a number K` for a number).
    #[test]
    fn the_readmes_arm_key_table_lists_every_key() {
        let readme = include_str!("../../README.md");
        let table = readme
            .find("| key | values | what it sets |")
            .expect("README.md has the table of arm keys");
        let rows: Vec<Vec<&str>> = readme[table..]
            .lines()
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(|l| l.split('|').skip(1).take(2).map(str::trim).collect())
            .collect();
        let keys: Vec<&str> = rows.iter().map(|r| r[0].trim_matches('`')).collect();
        assert_eq!(keys, arm_keys());
        for (_, s) in arm_settings() {
            let values = if s.values.is_empty() {
                "a number K".to_string()
            } else {
                s.values
                    .iter()
                    .map(|v| format!("`{v}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let row = rows.iter().find(|r| r[0] == format!("`{}`", s.key));
            assert_eq!(row.map(|r| r[1]), Some(values.as_str()), "{}", s.key);
        }
    }

    #[test]
    fn lookups_explain_themselves() {
        assert!(lookup_built("serial").is_ok());
        let e = lookup_built("seriel").unwrap_err();
        assert!(e.contains("did you mean 'serial'"), "{e}");
        for r in RUNTIMES.iter().filter(|r| r.built()) {
            assert!(lookup_built(r.name).is_ok(), "{}", r.name);
        }
        for r in RUNTIMES.iter().filter(|r| !r.built()) {
            let e = lookup_built(r.name).unwrap_err();
            assert!(e.contains("--features"), "{e}");
            // An arm of it still parses: its rows are listed, as not built.
            assert!(Arm::parse(r.name).is_ok(), "{}", r.name);
        }
    }
}
