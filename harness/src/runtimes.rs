//! The runtime registry: every runtime's name, front-end, description and state (implemented
//! or planned), and the dispatch from a name to its concrete type for each front-end.
//!
//! Adding a runtime is one line in `with_closure_runtime!` or `with_async_runtime!`; its
//! entry in [`RUNTIMES`] (name, front-end, description) is already there for the planned ones.
//! Whether a runtime is implemented is read from those two macros, never written twice.
//!
//! A runtime runs in a configuration: an [`Arm`], spelt `NAME[/key=value]...` (`libfork`,
//! `libfork/idle=busy`). The arm's canonical spelling is the runtime of a point everywhere:
//! `--runtime`, `--runtimes`, result files, tables and plots, so two configurations of one
//! runtime are two rows, never two runtimes.

use crate::suggest;
use std::fmt;
use stealbench_schedulers::record::Weights;
use stealbench_schedulers::{IdlePolicy, Pinning, PoolConfig, VictimPolicy};
use stealbench_workloads::Variant;

/// How a runtime takes its tasks (see `stealbench_schedulers::api`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontEnd {
    /// The closure front-end, `ForkJoin`.
    Closure,
    /// The async front-end, `AsyncForkJoin`.
    Async,
}

impl FrontEnd {
    /// `closure` or `async`.
    pub fn name(self) -> &'static str {
        match self {
            FrontEnd::Closure => "closure",
            FrontEnd::Async => "async",
        }
    }
}

impl fmt::Display for FrontEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One runtime of the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuntimeInfo {
    /// Name on the command line and in result files.
    pub name: &'static str,
    /// The front-end the harness runs it through.
    pub front_end: FrontEnd,
    /// One line for `stealbench list`.
    pub description: &'static str,
    /// The configurations the figures and `bench` measure besides the default one, as arm
    /// settings (`idle=busy`): the paper's other arms of this runtime.
    pub arms: &'static [&'static str],
}

impl RuntimeInfo {
    /// The runtime's arms in the figures: its default configuration, then each of
    /// [`RuntimeInfo::arms`], spelt as [`Arm::spec`] spells them.
    pub fn arm_specs(&self) -> Vec<String> {
        std::iter::once(self.name.to_string())
            .chain(self.arms.iter().map(|a| format!("{}/{a}", self.name)))
            .collect()
    }

    /// Whether this build has the runtime (it is dispatched by one of the `with_*` macros).
    pub fn implemented(&self) -> bool {
        match self.front_end {
            FrontEnd::Closure => {
                with_closure_runtime!(self.name, S => std::any::type_name::<S>()).is_some()
            }
            FrontEnd::Async => {
                with_async_runtime!(self.name, S => std::any::type_name::<S>()).is_some()
            }
        }
    }
}

/// Why `runtime` refuses `variant`, if it does: `gf` on a closure runtime whose
/// `ForkJoin::GENERAL_FUTURES` is false (rayon: a touch helps instead of suspending, so general
/// futures touched across tasks can deadlock; its measurements would be hangs, not times),
/// `sf-nostack` on a closure runtime whose `ForkJoin::FUTURE_STACK_CHOICE` is false (only the
/// fiber runtimes can run a future without a stack of its own), and every variant with futures
/// on an async runtime whose `AsyncForkJoin::FUTURES` is false (libfork: fork-join only, as in
/// its paper).
pub fn unsupported(runtime: &str, variant: Variant) -> Option<&'static str> {
    if fork_join_only(runtime) {
        return (variant != Variant::Fj)
            .then_some("a fork-join runtime without futures (as in its paper): fj variants only");
    }
    let (general, stack_choice) = with_closure_runtime!(runtime, S => {
        (
            <S as stealbench_schedulers::ForkJoin>::GENERAL_FUTURES,
            <S as stealbench_schedulers::ForkJoin>::FUTURE_STACK_CHOICE,
        )
    })?;
    match variant {
        Variant::Gf if !general => Some(
            "a touch cannot suspend here (it helps), so general futures touched across tasks can deadlock",
        ),
        Variant::SfNostack if !stack_choice => {
            Some("only the fiber runtimes choose where a future runs (no stack of its own)")
        }
        _ => None,
    }
}

/// Whether `runtime` runs fork-join only, without futures (an async runtime whose
/// `AsyncForkJoin::FUTURES` is false: libfork).
pub fn fork_join_only(runtime: &str) -> bool {
    with_async_runtime!(runtime, S => <S as stealbench_schedulers::AsyncForkJoin>::FUTURES)
        == Some(false)
}

/// The runtime whose fork-join time at P = 1 is T_s, the serial elision.
pub const SERIAL: &str = "serial";

/// Every runtime, implemented or planned, in listing order.
pub const RUNTIMES: &[RuntimeInfo] = &[
    RuntimeInfo {
        name: "serial",
        front_end: FrontEnd::Closure,
        description: "the serial elision: join runs a then b, a future runs where it is created (T_s)",
        arms: &[],
    },
    RuntimeInfo {
        name: "serial-async",
        front_end: FrontEnd::Async,
        description: "the serial pool on the async front-end: the cost of the async state machines alone",
        arms: &[],
    },
    RuntimeInfo {
        name: "rayon",
        front_end: FrontEnd::Closure,
        description: "rayon's work-stealing pool (baseline: join, scope; futures as scope spawns)",
        arms: &[],
    },
    RuntimeInfo {
        name: "tokio",
        front_end: FrontEnd::Async,
        description: "tokio's multi-thread runtime, every fork a heap-allocated task (baseline)",
        arms: &[],
    },
    RuntimeInfo {
        name: "abp",
        front_end: FrontEnd::Closure,
        description: "work stealing on stackful fibers, eager futures suspending at get (stands in for Cilk Plus)",
        arms: &[],
    },
    RuntimeInfo {
        name: "prows",
        front_end: FrontEnd::Closure,
        description: "proactive work stealing for futures, ProWS (stands in for Cilk-F)",
        arms: &[],
    },
    RuntimeInfo {
        name: "prows-artifact",
        front_end: FrontEnd::Closure,
        description: "prows with the authors' artifact placement: less loaded of two random workers, no rebalancing",
        arms: &[],
    },
    RuntimeInfo {
        name: "fibril",
        front_end: FrontEnd::Closure,
        description: "Fibril's linear stacks: abp's join, suspended stacks' unused pages released, a small stack pool",
        arms: &[],
    },
    RuntimeInfo {
        name: "libfork",
        front_end: FrontEnd::Async,
        description: "libfork: continuation stealing, task frames on segmented stacks (lazy pool; busy arm: /idle=busy)",
        arms: &["idle=busy"],
    },
];

/// Calls `$body` with `$S` bound to the type of the closure-front-end runtime named `$name`;
/// evaluates to `Some(body)`, or `None` when no implemented closure runtime has that name.
/// One line per runtime.
macro_rules! with_closure_runtime {
    ($name:expr, $S:ident => $body:expr) => {
        $crate::runtimes::dispatch!($name, $S => $body;
            "serial" => stealbench_schedulers::serial::Serial,
            "rayon" => stealbench_schedulers::rayon::RayonPool,
            "abp" => stealbench_schedulers::abp::Abp,
            "fibril" => stealbench_schedulers::fibril::Fibril,
            "prows" => stealbench_schedulers::prows::Prows,
            "prows-artifact" => stealbench_schedulers::prows::ProwsArtifact,
        )
    };
}

/// Calls `$body` with `$S` bound to the type of the async-front-end runtime named `$name`;
/// evaluates to `Some(body)`, or `None` when no implemented async runtime has that name.
/// One line per runtime.
macro_rules! with_async_runtime {
    ($name:expr, $S:ident => $body:expr) => {
        $crate::runtimes::dispatch!($name, $S => $body;
            "serial-async" => stealbench_schedulers::serial::Serial,
            "tokio" => stealbench_schedulers::tokio::TokioPool,
            "libfork" => stealbench_schedulers::libfork::LibforkPool,
        )
    };
}

/// The match behind the two `with_*_runtime!` macros: one arm per `name => Type`.
macro_rules! dispatch {
    ($name:expr, $S:ident => $body:expr; $($n:literal => $T:ty),* $(,)?) => {{
        match $name {
            $($n => {
                type $S = $T;
                Some($body)
            })*
            _ => None,
        }
    }};
}

pub(crate) use {dispatch, with_async_runtime, with_closure_runtime};

/// A runtime in one configuration: the registry entry and the pool settings its spelling
/// `NAME[/key=value]...` gives. Keys: `idle` (busy, lazy), `victim` (uniform, numa,
/// default), `pin` (none, compact, scatter: the pool's pinning, in place of the run's
/// `--pinning`; refused where there is no worker to pin, on the serial pool and on a
/// simulation) and `steals` (a number K: the forced schedule of `PoolConfig::steal_budget`,
/// at most K steals while another worker runs); a setting left out stays at the runtime's
/// default (the pinning at the run's). Whether the runtime honours a setting is its own
/// decision when the pool starts (rayon refuses `idle=busy`, say).
///
/// `sim` (`unit`, `nanos`) makes the arm the runtime's *simulation*: the point records the
/// program's DAG on the `record` runtime (strands of unit weight, or measured in
/// nanoseconds) and replays it in `stealbench-sim`'s model of that scheduler at P, one seed
/// per repetition (`abp`, `prows`, `prows-artifact` only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arm {
    /// The runtime.
    pub info: &'static RuntimeInfo,
    /// `idle=`, if given.
    pub idle: Option<IdlePolicy>,
    /// `victim=`, if given.
    pub victim: Option<VictimPolicy>,
    /// `pin=`, if given.
    pub pin: Option<Pinning>,
    /// `steals=`: the steal budget of a forced schedule, if given.
    pub steals: Option<u64>,
    /// `sim=`: the weights of the simulated DAG's strands, if the arm is a simulation.
    pub sim: Option<Weights>,
}

/// The keys an arm's spelling may set, in their canonical order.
pub const ARM_KEYS: &[&str] = &["idle", "victim", "pin", "steals", "sim"];

/// The values of `sim=`.
pub const SIM_WEIGHTS: &[&str] = &["unit", "nanos"];

/// Whether the runtime named `name` runs its tasks on fixed-size fiber stacks (the ones
/// `--stack-size` sizes): the closure runtimes that choose where a future runs.
pub fn has_fibers(name: &str) -> bool {
    with_closure_runtime!(name, S => <S as stealbench_schedulers::ForkJoin>::FUTURE_STACK_CHOICE)
        == Some(true)
}

/// Whether the runtime named `name` is the serial pool, on either front-end (`serial`,
/// `serial-async`): it runs every task on the calling thread.
fn is_serial_pool(name: &str) -> bool {
    use stealbench_schedulers::Scheduler;
    with_closure_runtime!(name, S => <S as Scheduler>::NAME)
        .or_else(|| with_async_runtime!(name, S => <S as Scheduler>::NAME))
        == Some(SERIAL)
}

/// Whether the arm spelt `spec` is a simulation (`sim=`): its points run no worker threads.
pub fn is_simulated(spec: &str) -> bool {
    Arm::parse(spec).is_ok_and(|a| a.sim.is_some())
}

/// The simulator's model of the runtime named `name`, if it has one.
pub fn simulated(name: &str) -> Option<stealbench_sim::Scheduler> {
    stealbench_sim::Scheduler::ALL
        .into_iter()
        .find(|s| s.name() == name)
}

impl Arm {
    /// Parses `NAME[/key=value]...`, implemented or planned; one line naming the nearest
    /// valid name or value on error.
    pub fn parse(spec: &str) -> Result<Arm, String> {
        let mut parts = spec.split('/');
        let name = parts.next().unwrap_or_default();
        let info = find(name).ok_or_else(|| suggest::unknown("runtime", name, &names()))?;
        let mut arm = Arm {
            info,
            idle: None,
            victim: None,
            pin: None,
            steals: None,
            sim: None,
        };
        for part in parts {
            let Some((key, value)) = part.split_once('=') else {
                return Err(format!(
                    "runtime '{spec}': '{part}' is not key=value (keys: {})",
                    ARM_KEYS.join(", ")
                ));
            };
            let twice = || format!("runtime '{spec}': {key} is set twice");
            match key {
                "idle" => {
                    let v = value
                        .parse()
                        .map_err(|_| suggest::unknown("idle policy", value, IdlePolicy::NAMES))?;
                    if arm.idle.replace(v).is_some() {
                        return Err(twice());
                    }
                }
                "victim" => {
                    let v = value.parse().map_err(|_| {
                        suggest::unknown("victim policy", value, VictimPolicy::NAMES)
                    })?;
                    if arm.victim.replace(v).is_some() {
                        return Err(twice());
                    }
                }
                "pin" => {
                    let v = value
                        .parse()
                        .map_err(|_| suggest::unknown("pinning", value, Pinning::NAMES))?;
                    if arm.pin.replace(v).is_some() {
                        return Err(twice());
                    }
                }
                "steals" => {
                    let k = value.parse().map_err(|_| {
                        format!("runtime '{spec}': steals={value} is not a number of steals")
                    })?;
                    if arm.steals.replace(k).is_some() {
                        return Err(twice());
                    }
                }
                "sim" => {
                    if simulated(name).is_none() {
                        return Err(format!(
                            "runtime '{spec}': the simulator models abp, prows and \
                             prows-artifact only"
                        ));
                    }
                    let w = match value {
                        "unit" => Weights::Unit,
                        "nanos" => Weights::Nanos,
                        _ => return Err(suggest::unknown("sim weights", value, SIM_WEIGHTS)),
                    };
                    if arm.sim.replace(w).is_some() {
                        return Err(twice());
                    }
                }
                _ => return Err(suggest::unknown("runtime setting", key, ARM_KEYS)),
            }
        }
        if arm.pin.is_some() {
            let why = if arm.sim.is_some() {
                Some("a simulation runs no threads")
            } else if is_serial_pool(name) {
                Some("the serial pool runs every task on the calling thread")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(format!(
                    "runtime '{spec}': {why}, so there is no worker to pin: drop pin="
                ));
            }
        }
        Ok(arm)
    }

    /// How many settings this arm and `other` give differently (a setting left out differs
    /// from one given): 0 for one spelling.
    pub fn settings_apart(&self, other: &Arm) -> usize {
        [
            self.idle != other.idle,
            self.victim != other.victim,
            self.pin != other.pin,
            self.steals != other.steals,
            self.sim != other.sim,
        ]
        .into_iter()
        .filter(|&d| d)
        .count()
    }

    /// The canonical spelling: the name, then the settings given, in [`ARM_KEYS`] order.
    pub fn spec(&self) -> String {
        let mut s = self.info.name.to_string();
        if let Some(v) = self.idle {
            s += &format!("/idle={v}");
        }
        if let Some(v) = self.victim {
            s += &format!("/victim={v}");
        }
        if let Some(p) = self.pin {
            s += &format!("/pin={p}");
        }
        if let Some(k) = self.steals {
            s += &format!("/steals={k}");
        }
        match self.sim {
            Some(Weights::Unit) => s += "/sim=unit",
            Some(Weights::Nanos) => s += "/sim=nanos",
            None => {}
        }
        s
    }

    /// `config` with this arm's settings.
    pub fn configure(&self, config: PoolConfig) -> PoolConfig {
        PoolConfig {
            idle: self.idle.unwrap_or(config.idle),
            victim: self.victim.unwrap_or(config.victim),
            pinning: self.pin.unwrap_or(config.pinning),
            steal_budget: self.steals.or(config.steal_budget),
            ..config
        }
    }
}

/// The implemented runtime of the arm spelt `spec`, or a one-line reason (a bad spelling,
/// or a runtime planned but not implemented yet).
pub fn lookup_arm(spec: &str) -> Result<Arm, String> {
    let arm = Arm::parse(spec)?;
    lookup_implemented(arm.info.name)?;
    Ok(arm)
}

/// The registry entry named `name`, implemented or not.
pub fn find(name: &str) -> Option<&'static RuntimeInfo> {
    RUNTIMES.iter().find(|r| r.name == name)
}

/// Every registered name, implemented or not.
pub fn names() -> Vec<&'static str> {
    RUNTIMES.iter().map(|r| r.name).collect()
}

/// The implemented runtime named `name`, or a one-line reason (unknown name with the nearest
/// valid one, or planned but not implemented yet).
pub fn lookup_implemented(name: &str) -> Result<&'static RuntimeInfo, String> {
    match find(name) {
        None => Err(suggest::unknown("runtime", name, &names())),
        Some(r) if !r.implemented() => Err(format!(
            "runtime '{name}' is planned but not implemented yet (implemented: {})",
            RUNTIMES
                .iter()
                .filter(|r| r.implemented())
                .map(|r| r.name)
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Some(r) => Ok(r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stealbench_schedulers::Scheduler;

    #[test]
    fn serial_is_implemented_on_the_closure_front_end() {
        let s = find(SERIAL).unwrap();
        assert_eq!(s.front_end, FrontEnd::Closure);
        assert!(s.implemented());
        assert_eq!(
            with_closure_runtime!("serial", S => <S as Scheduler>::NAME),
            Some("serial")
        );
    }

    #[test]
    fn dispatch_agrees_with_the_table() {
        // Every name a macro dispatches is in the table with that front-end, and vice versa.
        for r in RUNTIMES {
            let closure = with_closure_runtime!(r.name, S => std::any::type_name::<S>()).is_some();
            let asynch = with_async_runtime!(r.name, S => std::any::type_name::<S>()).is_some();
            assert!(!(closure && asynch), "{} dispatched twice", r.name);
            if closure {
                assert_eq!(r.front_end, FrontEnd::Closure, "{}", r.name);
            }
            if asynch {
                assert_eq!(r.front_end, FrontEnd::Async, "{}", r.name);
            }
        }
        assert!(with_closure_runtime!("nope", S => std::any::type_name::<S>()).is_none());
    }

    #[test]
    fn every_dispatched_type_reports_its_registry_name() {
        for r in RUNTIMES {
            let name = match r.front_end {
                FrontEnd::Closure => with_closure_runtime!(r.name, S => <S as Scheduler>::NAME),
                FrontEnd::Async => with_async_runtime!(r.name, S => <S as Scheduler>::NAME),
            };
            // serial-async is the serial pool on the other front-end: same type, same NAME.
            if let Some(n) = name.filter(|_| r.name != "serial-async") {
                assert_eq!(n, r.name);
            }
        }
        assert!(find("prows-artifact").unwrap().implemented());
    }

    #[test]
    fn rayon_refuses_general_futures_only() {
        assert!(unsupported("rayon", Variant::Gf).is_some());
        assert!(unsupported("rayon", Variant::Sf).is_none());
        assert!(unsupported("tokio", Variant::Gf).is_none());
        assert!(unsupported("serial", Variant::Gf).is_none());
    }

    #[test]
    fn libfork_runs_fork_join_only() {
        assert!(unsupported("libfork", Variant::Fj).is_none());
        for v in [Variant::Sf, Variant::Gf, Variant::Lp] {
            assert!(unsupported("libfork", v).is_some(), "{v}");
        }
        assert!(unsupported("tokio", Variant::Sf).is_none());
    }

    #[test]
    fn arms_parse_to_one_spelling() {
        let a = Arm::parse("libfork/pin=scatter/victim=numa/idle=busy").unwrap();
        assert_eq!(a.info.name, "libfork");
        assert_eq!(a.spec(), "libfork/idle=busy/victim=numa/pin=scatter");
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
        // Without `pin=`, the run's pinning stays.
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
            ("libfork/pin=compat", "did you mean 'compact'"),
            ("libfork/pin=none/pin=scatter", "set twice"),
            // Nothing to pin: the serial pool and the simulations refuse pin=.
            (
                "serial/pin=compact",
                "the serial pool runs every task on the calling thread",
            ),
            ("serial-async/pin=none", "no worker to pin: drop pin="),
            ("abp/pin=scatter/sim=unit", "a simulation runs no threads"),
        ] {
            let e = Arm::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        assert!(lookup_arm("fibril/idle=busy").is_ok());
        let s = Arm::parse("prows-artifact/sim=unit").unwrap();
        assert_eq!(s.spec(), "prows-artifact/sim=unit");
        assert_eq!(s.sim, Some(Weights::Unit));
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
            forced.configure(PoolConfig::with_workers(2)).steal_budget,
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
        for r in RUNTIMES {
            for spec in r.arm_specs() {
                let a = Arm::parse(&spec).unwrap();
                assert_eq!(a.spec(), spec, "{spec} is not canonical");
                assert_eq!(a.info.name, r.name);
            }
        }
        assert_eq!(
            find("libfork").unwrap().arm_specs(),
            ["libfork", "libfork/idle=busy"]
        );
    }

    #[test]
    fn lookups_explain_themselves() {
        assert!(lookup_implemented("serial").is_ok());
        let e = lookup_implemented("seriel").unwrap_err();
        assert!(e.contains("did you mean 'serial'"), "{e}");
        assert!(lookup_implemented("fibril").is_ok());
        assert!(lookup_implemented("libfork").is_ok());
    }
}
