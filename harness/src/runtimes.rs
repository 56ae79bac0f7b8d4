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
    Capabilities, FrontEnd, FutureStack, IdlePolicy, Pinning, Placement, PoolConfig, StartError,
    Unmap, VictimPolicy,
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
/// `NAME[/key=value]...` gives, each a [`PoolConfig`] field of the same name or a setting of
/// the harness. Each key is one entry of the private table `KEYS` (how it is read and spelt,
/// what it needs of the runtime's capabilities, what it sets); adding a setting is a field
/// here, an entry there, and on the pool's side its `PoolConfig` field and `Capabilities`
/// line:
///
/// | key | values | what it sets |
/// |---|---|---|
/// | `idle` | busy, lazy | `PoolConfig::idle` |
/// | `victim` | uniform, numa, default | `PoolConfig::victim` |
/// | `pinning` | none, compact, scatter | `PoolConfig::pinning`, in place of the run's `--pinning` |
/// | `steals` | a number K | `PoolConfig::steals`: the forced schedule, at most K steals while another worker runs |
/// | `placement` | paper, artifact | `PoolConfig::placement` (prows's stealable sets) |
/// | `unmap` | on, off | `PoolConfig::unmap` (`fibril/unmap=off`: Fibril w/o unmap) |
/// | `futures` | stack, nostack | `PoolConfig::futures`: whether a future gets a fiber of its own |
/// | `front` | closure, async, kernel | the front-end the program is written for (`serial` has all three; `kernel`: none, the workload's serial code called directly, T_s) |
/// | `shape` | plain, libfork | with `front=kernel`: the serial code's shape, where a paper's benchmark fixes one ([`Shape`]) |
/// | `sim` | unit, nanos | the point is the runtime's *simulation* |
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
    /// `idle=`, if given.
    pub idle: Option<IdlePolicy>,
    /// `victim=`, if given.
    pub victim: Option<VictimPolicy>,
    /// `pinning=`, if given.
    pub pinning: Option<Pinning>,
    /// `steals=`: the steal budget of a forced schedule, if given.
    pub steals: Option<u64>,
    /// `placement=`, if given.
    pub placement: Option<Placement>,
    /// `unmap=`, if given.
    pub unmap: Option<Unmap>,
    /// `futures=`, if given.
    pub futures: Option<FutureStack>,
    /// `front=`, if given.
    pub front: Option<FrontEnd>,
    /// `shape=`, if given (with `front=kernel` only).
    pub shape: Option<Shape>,
    /// `sim=`: the weights of the simulated DAG's strands, if the arm is a simulation.
    pub sim: Option<Weights>,
}

/// One key of an arm's spelling: how its value is read and spelt, what of the runtime's
/// capabilities it needs, and what it sets in the pool's configuration. [`KEYS`] holds them in
/// their canonical order: a setting is a field of [`Arm`] and one entry there.
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
    /// What the harness refuses of the value beyond what the pool refuses
    /// ([`Capabilities::admit`], which [`Arm::parse`] asks too): a worker to pin where there is
    /// none (the run's `--pinning` reaches every pool, so the pool cannot tell), what the
    /// simulator does not model, a front-end the runtime is not written for. `None` if nothing.
    refused: fn(&Arm, Option<Capabilities>) -> Option<String>,
    /// Puts the value given into the pool's configuration.
    configure: fn(&Arm, &mut PoolConfig),
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

/// Every key, in the canonical order of an arm's spelling.
const KEYS: &[Key] = &[
    Key {
        name: "idle",
        set: |a, v| put(&mut a.idle, "idle policy", v, IdlePolicy::NAMES),
        get: |a| a.idle.map(|v| v.to_string()),
        forget_default: |a| a.idle = a.idle.filter(|&v| v != IdlePolicy::default()),
        refused: |_, _| None,
        configure: |a, c| c.idle = a.idle.unwrap_or(c.idle),
    },
    Key {
        name: "victim",
        set: |a, v| put(&mut a.victim, "victim policy", v, VictimPolicy::NAMES),
        get: |a| a.victim.map(|v| v.to_string()),
        forget_default: |a| a.victim = a.victim.filter(|&v| v != VictimPolicy::default()),
        refused: |_, _| None,
        configure: |a, c| c.victim = a.victim.unwrap_or(c.victim),
    },
    Key {
        name: "pinning",
        set: |a, v| put(&mut a.pinning, "pinning", v, Pinning::NAMES),
        get: |a| a.pinning.map(|v| v.to_string()),
        // `pinning=none` is not the default: it replaces the run's `--pinning`.
        forget_default: |_| {},
        refused: |a, _| {
            a.pinning?;
            a.no_worker_to_pin()
                .map(|why| format!("{why}: drop pinning="))
        },
        configure: |a, c| c.pinning = a.pinning.unwrap_or(c.pinning),
    },
    Key {
        name: "steals",
        set: |a, v| {
            let k = v
                .parse()
                .map_err(|_| format!("steals={v} is not a number of steals"))?;
            Ok(a.steals.replace(k).is_some())
        },
        get: |a| a.steals.map(|v| v.to_string()),
        forget_default: |_| {},
        refused: |_, _| None,
        configure: |a, c| c.steals = a.steals.or(c.steals),
    },
    Key {
        name: "placement",
        set: |a, v| put(&mut a.placement, "placement", v, Placement::NAMES),
        get: |a| a.placement.map(|v| v.to_string()),
        forget_default: |a| a.placement = a.placement.filter(|&v| v != Placement::default()),
        refused: |_, _| None,
        configure: |a, c| c.placement = a.placement.unwrap_or(c.placement),
    },
    Key {
        name: "unmap",
        set: |a, v| put(&mut a.unmap, "unmap", v, Unmap::NAMES),
        get: |a| a.unmap.map(|v| v.to_string()),
        forget_default: |a| a.unmap = a.unmap.filter(|&v| v != Unmap::default()),
        refused: |_, _| None,
        configure: |a, c| c.unmap = a.unmap.unwrap_or(c.unmap),
    },
    Key {
        name: "futures",
        set: |a, v| put(&mut a.futures, "futures", v, FutureStack::NAMES),
        get: |a| a.futures.map(|v| v.to_string()),
        forget_default: |a| a.futures = a.futures.filter(|&v| v != FutureStack::default()),
        refused: |a, _| {
            (a.sim.is_some() && a.futures? == FutureStack::Current).then(|| {
                "the simulator replays futures work-first, each on a stack of its own: no \
                 futures=nostack"
                    .to_string()
            })
        },
        configure: |a, c| c.futures = a.futures.unwrap_or(c.futures),
    },
    Key {
        name: "front",
        set: |a, v| put(&mut a.front, "front-end", v, FrontEnd::NAMES),
        get: |a| a.front.map(|v| v.to_string()),
        forget_default: |a| a.front = a.front.filter(|&f| f != a.info.front_ends[0]),
        refused: |a, _| {
            let f = a.front.filter(|f| !a.info.front_ends.contains(f))?;
            Some(format!(
                "{} is not written for the {f} front-end",
                a.info.name
            ))
        },
        // The front-end is the harness's: which trait the program is run through.
        configure: |_, _| {},
    },
    Key {
        name: "shape",
        set: |a, v| put(&mut a.shape, "shape", v, Shape::NAMES),
        get: |a| a.shape.map(|v| v.to_string()),
        forget_default: |a| a.shape = a.shape.filter(|&v| v != Shape::default()),
        refused: |a, _| {
            a.shape?;
            (a.front_end() != FrontEnd::Kernel).then(|| {
                "shape= is the shape of the kernel's serial code: only with front=kernel"
                    .to_string()
            })
        },
        // The shape is the program's: which serial code the point times.
        configure: |_, _| {},
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
        refused: |a, _| {
            a.sim?;
            a.model()
                .is_none()
                .then(|| "the simulator models abp and prows (either placement) only".to_string())
        },
        // A simulation starts no pool: the point replays the recorded DAG in the model.
        configure: |_, _| {},
    },
];

/// The keys an arm's spelling may set, in their canonical order.
pub(crate) fn arm_keys() -> Vec<&'static str> {
    KEYS.iter().map(|k| k.name).collect()
}

impl Arm {
    /// The runtime `info` with no setting given.
    pub(crate) fn plain(info: &'static Runtime) -> Arm {
        Arm {
            spelt: info.name,
            info,
            idle: None,
            victim: None,
            pinning: None,
            steals: None,
            placement: None,
            unmap: None,
            futures: None,
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
            let Some(k) = KEYS.iter().find(|k| k.name == key) else {
                return Err(suggest::unknown("runtime setting", key, &arm_keys()));
            };
            let twice = (k.set)(&mut arm, v).map_err(|e| format!("runtime '{spec}': {e}"))?;
            if twice {
                return Err(format!("runtime '{spec}': {key} is set twice"));
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

    /// Why this arm's runtime cannot take its settings, if it cannot: the first key's own
    /// refusal ([`Key::refused`]), else what the runtime's pool would refuse of the
    /// configuration the arm gives ([`Capabilities::admit`]; nothing for a runtime this build
    /// lacks).
    fn refusal(&self) -> Option<String> {
        let caps = self.info.capabilities;
        if let Some(why) = KEYS.iter().find_map(|k| (k.refused)(self, caps)) {
            return Some(why);
        }
        let caps = caps?;
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
        Model::of(self.info.name, self.placement.unwrap_or_default())
    }

    /// Whether the arm's points run on fixed-size fiber stacks (the ones `--stack-size`
    /// sizes): a fiber runtime, measured rather than simulated.
    pub(crate) fn has_fibers(&self) -> bool {
        self.sim.is_none() && self.info.capabilities.is_some_and(|c| c.fiber_stacks)
    }

    /// How many settings this arm and `other` give differently (a setting left out differs
    /// from one given): 0 for one spelling.
    pub(crate) fn settings_apart(&self, other: &Arm) -> usize {
        KEYS.iter()
            .filter(|k| (k.get)(self) != (k.get)(other))
            .count()
    }

    /// The canonical spelling: the name, then the settings given, in the order of `KEYS`.
    pub(crate) fn spec(&self) -> String {
        self.spelt.to_string()
    }

    /// The canonical spelling, made from the settings.
    fn spelling(&self) -> String {
        KEYS.iter()
            .filter_map(|k| Some(format!("/{}={}", k.name, (k.get)(self)?)))
            .fold(self.info.name.to_string(), |s, kv| s + &kv)
    }

    /// `config` with this arm's settings.
    pub(crate) fn configure(&self, mut config: PoolConfig) -> PoolConfig {
        for k in KEYS {
            (k.configure)(self, &mut config);
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

    /// The README's table of arm keys lists every key, in the canonical order.
    #[test]
    fn the_readmes_arm_key_table_lists_every_key() {
        let readme = include_str!("../../README.md");
        let table = readme
            .find("| key | values | what it sets |")
            .expect("README.md has the table of arm keys");
        let keys: Vec<&str> = readme[table..]
            .lines()
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(|l| l.split('|').nth(1).unwrap_or("").trim().trim_matches('`'))
            .collect();
        assert_eq!(keys, arm_keys());
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
