//! Pool configuration: worker count, pinning, victim and idle policies, where futures run, and
//! the fence mode of the work-stealing deques.

use crate::api::StartError;
use crate::deque::{self, Switching};
use std::ffi::OsStr;
use std::fmt;
use std::str::FromStr;

/// How workers are bound to CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pinning {
    /// The operating system places threads.
    #[default]
    None,
    /// Worker i on the i-th CPU in (NUMA node, core, hyperthread) order: fill a node first.
    Compact,
    /// Workers dealt round-robin over NUMA nodes, then over cores: spread over the machine.
    Scatter,
}

/// How a thief chooses its victim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VictimPolicy {
    /// Uniformly at random among the other workers (the papers' choice).
    Uniform,
    /// libfork's NUMA-aware weighting, its paper's Eq. 6 ([`crate::victims`]): the other
    /// workers in levels by topological distance r, each weighing 1 / (n r^2), n being how many
    /// are at that distance. `libfork` only; the other runtimes refuse it.
    NumaWeighted,
    /// The runtime's own default: uniform for the papers' runtimes, whatever rayon and tokio
    /// do for them (their only choice).
    #[default]
    RuntimeDefault,
}

/// What an idle worker does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IdlePolicy {
    /// Keep trying to steal (libfork's busy pool).
    Busy,
    /// Back off, then sleep until work appears (libfork's lazy pool).
    #[default]
    Lazy,
}

/// Where the task of a future (`Futures::future`, `Futures::shared_future`) runs on the fiber
/// runtimes (`abp`, `prows`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FutureStack {
    /// Work-first, as Cilk-F: the task runs at once on a new fiber (its own stack) while the
    /// creator's continuation waits in the deque, stealable.
    #[default]
    New,
    /// No stack switch per future (the ProWS paper's "-stack" row of Figure 3): the task is a
    /// stealable job on the creator's deque, as a join's second branch, and runs on the stack
    /// of whoever takes it; a touch that finds it still at its deque's bottom runs it inline.
    /// Correct for every program, but not eager: the creator goes on first.
    Current,
}

/// Where `prows` puts a deque that becomes stealable (suspended with ready nodes, or made
/// resumable by a put while in no stealable set), and whether a removal from a stealable set
/// calls `rebalanceStealables`. Only `prows` and its simulation have stealable sets; the
/// others accept only the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Placement {
    /// The paper's Algorithm 1: a uniformly random worker's stealable set, and
    /// `rebalanceStealables` on every removal.
    #[default]
    Paper,
    /// The authors' artifact (Cilk-F): the less loaded of two uniformly random workers (fewer
    /// stealable deques; ties go to the first draw), and no rebalancing.
    Artifact,
}

impl Placement {
    /// How many uniformly random workers are drawn (independently, so possibly the same one
    /// twice); the deque goes to the one whose stealable set is smallest, the first on ties.
    /// 1 is a uniformly random worker.
    pub fn choices(self) -> usize {
        match self {
            Placement::Paper => 1,
            Placement::Artifact => 2,
        }
    }

    /// Whether every removal from a stealable set calls `rebalanceStealables`.
    pub fn rebalances(self) -> bool {
        self == Placement::Paper
    }
}

/// The stack size of every worker thread of the library runtimes (`rayon`, `tokio`, `tbb`,
/// `openmp`): 256 MiB of address space, so that recursions (nested joins, helping chains,
/// chains of nested awaits) of tens of thousands of levels fit, as UTS's deepest trees need.
/// Untouched pages cost nothing.
pub const THREAD_STACK_BYTES: usize = 256 << 20;

/// Whether a runtime that gives a suspended stack's unused pages back to the OS (`fibril`, the
/// paper's `stack_uninstall`) does so: Fibril's Figure 4 compares it with "Fibril w/o unmap".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unmap {
    /// Pages below a suspended frame are released (`madvise(MADV_DONTNEED)`).
    #[default]
    On,
    /// Nothing is released: a suspended stack keeps every page it touched.
    Off,
}

/// Where the SeqCst fence pair of a pool's work-stealing deques goes ([`crate::deque`]): the
/// setting of the runtimes built on this crate's deque (`abp`, `fibril`, `prows`, `libfork`);
/// the others ignore it (their libraries have deques of their own). A pool applies one mode to
/// all its deques and to its workers' sleep handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FenceMode {
    /// Each deque's owner switches between the asymmetric pair (a compiler fence per pop, a
    /// `membarrier` per steal) and the symmetric one (`fence(SeqCst)` on both sides) by the
    /// steal pressure it sees ([`Switching::ADAPTIVE`]).
    #[default]
    Adaptive,
    /// As `adaptive`, but switching at every steal and every quiet stretch of 8 pops
    /// ([`Switching::EAGER`]): for stress tests that must cross mode switches often.
    Eager,
    /// Always the asymmetric pair: a `membarrier` for every steal that gets past the cheap look.
    Asymmetric,
    /// Always `fence(SeqCst)` on both sides, and no `membarrier` anywhere in the pool: the
    /// fallback where the kernel refuses `membarrier`.
    Fenced,
}

/// The environment variable that chooses the deques' switching on the command line (see
/// [`FenceMode::from_env_values`]).
pub const FENCE_SWITCHING_ENV: &str = "STEALBENCH_FENCE_SWITCHING";
/// The environment variable that turns `membarrier` off on the command line (see
/// [`FenceMode::from_env_values`]).
pub const NO_MEMBARRIER_ENV: &str = "STEALBENCH_NO_MEMBARRIER";

impl FenceMode {
    /// When the pool's deque owners switch modes: never for `asymmetric` and `fenced`.
    pub fn switching(self) -> Switching {
        match self {
            FenceMode::Adaptive => Switching::ADAPTIVE,
            FenceMode::Eager => Switching::EAGER,
            FenceMode::Asymmetric | FenceMode::Fenced => Switching::NEVER,
        }
    }

    /// The mode a pool given this one applies on this machine: `fenced` where the kernel
    /// refuses `membarrier` (every mode but `fenced` needs it), else this one.
    pub fn applied(self) -> FenceMode {
        if deque::heavy_fence_is_membarrier() {
            self
        } else {
            FenceMode::Fenced
        }
    }

    /// Whether the mode's heavy fence is a `membarrier` (else `fence(SeqCst)`, and the light
    /// one is a full fence too). Of the mode as given; see [`FenceMode::applied`].
    pub fn uses_membarrier(self) -> bool {
        self != FenceMode::Fenced
    }

    /// The mode that the command line's environment chooses ([`FenceMode::from_env_values`]
    /// on this process's [`FENCE_SWITCHING_ENV`] and [`NO_MEMBARRIER_ENV`]).
    pub fn from_env() -> Result<FenceMode, String> {
        FenceMode::from_env_values(
            std::env::var_os(FENCE_SWITCHING_ENV).as_deref(),
            std::env::var_os(NO_MEMBARRIER_ENV).as_deref(),
        )
    }

    /// The mode that these values of [`FENCE_SWITCHING_ENV`] and [`NO_MEMBARRIER_ENV`]
    /// choose (`None`: unset), or one line saying what is wrong:
    ///
    /// * `STEALBENCH_FENCE_SWITCHING`: a mode's name (`adaptive`, `eager`, `asymmetric`,
    ///   `fenced`), or `0` for `asymmetric` (never switch); unset or empty: `adaptive`.
    /// * `STEALBENCH_NO_MEMBARRIER`: `1` for `fenced`; `0`, empty or unset: no effect. With
    ///   `1`, a switching setting other than `fenced` contradicts it and is refused.
    ///
    /// Anything else is refused, so that a misspelt value never measures another mode.
    pub fn from_env_values(
        switching: Option<&OsStr>,
        no_membarrier: Option<&OsStr>,
    ) -> Result<FenceMode, String> {
        let text = |name: &str, v: &OsStr| {
            v.to_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("{name} is not valid UTF-8: {v:?}"))
        };
        let chosen = match switching {
            None => None,
            Some(v) => match text(FENCE_SWITCHING_ENV, v)?.as_str() {
                "" => None,
                "0" => Some(FenceMode::Asymmetric),
                t => Some(t.parse::<FenceMode>().map_err(|_| {
                    format!(
                        "{FENCE_SWITCHING_ENV}='{t}' is not a fence mode (expected one of: {}, \
                         or 0 for asymmetric)",
                        FenceMode::NAMES.join(", ")
                    )
                })?),
            },
        };
        let fenced = match no_membarrier {
            None => false,
            Some(v) => match text(NO_MEMBARRIER_ENV, v)?.as_str() {
                "" | "0" => false,
                "1" => true,
                t => {
                    return Err(format!(
                        "{NO_MEMBARRIER_ENV}='{t}' must be 1 (no membarrier: fenced deques) \
                         or 0 (the default)"
                    ));
                }
            },
        };
        match (chosen, fenced) {
            (Some(m), true) if m != FenceMode::Fenced => Err(format!(
                "{NO_MEMBARRIER_ENV}=1 fences every pop, which contradicts \
                 {FENCE_SWITCHING_ENV}={m}; set one of them"
            )),
            (_, true) => Ok(FenceMode::Fenced),
            (m, false) => Ok(m.unwrap_or_default()),
        }
    }
}

/// How a runtime takes its tasks (see [`crate::api`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrontEnd {
    /// The closure front-end, [`ForkJoin`](crate::ForkJoin) (with
    /// [`Futures`](crate::Futures) or without).
    Closure,
    /// The async front-end, [`AsyncForkJoin`](crate::AsyncForkJoin).
    Async,
    /// No front-end: the workload's kernel, its serial code called directly, with no runtime
    /// and no trait in it (T_s). Only the `serial` runtime lists it: its pool is started, as
    /// every point's is, and never called.
    Kernel,
}

/// Declares the pool's settings, each once: `PoolConfig`'s field and [`SETTINGS`]' entry come
/// from one entry of the table below,
///
/// ```text
/// /// The field's doc.
/// key: value Type,            (or `maybe Type`: an `Option<Type>`, `None` by default)
///     what "what a value is, in an error", values Type::NAMES (or `&[]`: a number),
///     arm Some(place among an arm's keys) (or `None`: not an arm's),
///     record |config, caps| the value a pool with `caps` applies, if it records one,
///     refuse |config, caps| why a pool with `caps` refuses the value, if it does;
/// ```
///
/// the default being the type's `Default` (the enums' `#[default]`).
macro_rules! pool_settings {
    ($(
        $(#[doc = $doc:literal])+
        $field:ident: $kind:ident $ty:ty, what $what:literal, values $values:expr,
        arm $arm:expr,
        record |$rc:ident, $rk:ident| $record:expr,
        refuse |$fc:ident, $fk:ident| $refuse:expr;
    )+) => {
        /// Everything a runtime needs to start a pool: its workers and the settings of
        /// [`SETTINGS`], each declared once, in `pool_settings!` below.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct PoolConfig {
            /// Number of workers P (at least 1).
            pub workers: usize,
            $($(#[doc = $doc])+ pub $field: pool_settings!(@type $kind $ty),)+
        }

        impl PoolConfig {
            /// `workers` workers, every setting at its default.
            pub fn with_workers(workers: usize) -> Self {
                PoolConfig { workers, $($field: Default::default(),)+ }
            }
        }

        /// Every setting of a pool but its workers, in the order a pool's record spells them.
        pub const SETTINGS: &[Setting] = &[$(Setting {
            key: stringify!($field),
            what: $what,
            values: $values,
            arm: $arm,
            set: |c, v| {
                let v: $ty = v.parse().map_err(|e: <$ty as FromStr>::Err| e.to_string())?;
                c.$field = pool_settings!(@wrap $kind v);
                Ok(())
            },
            get: |c| pool_settings!(@get $kind c.$field),
            is_default: |c| PartialEq::eq(&c.$field, &Default::default()),
            copy: |from, to| to.$field = from.$field,
            record: |from, caps, to| {
                let ($rc, $rk): (&PoolConfig, &Capabilities) = (from, caps);
                let applied: Option<$ty> = $record;
                applied.map(|v| to.$field = pool_settings!(@wrap $kind v)).is_some()
            },
            refuse: |caps, config| {
                let ($fk, $fc): (&Capabilities, &PoolConfig) = (caps, config);
                $refuse
            },
        }),+];
    };
    (@type value $ty:ty) => { $ty };
    (@type maybe $ty:ty) => { Option<$ty> };
    (@wrap value $v:expr) => { $v };
    (@wrap maybe $v:expr) => { Some($v) };
    (@get value $v:expr) => { Some($v.to_string()) };
    (@get maybe $v:expr) => { $v.map(|v| v.to_string()) };
}

/// One setting of a pool, declared once in `pool_settings!`: its [`PoolConfig`] field, its
/// values and their spelling, what it records of a pool, and the capability that admits it.
/// An arm's `key=value` (the harness), a pool's record (`raw.csv`, `meta.json`) and
/// [`Capabilities::admit`] all read it from [`SETTINGS`].
pub struct Setting {
    /// The key: the field's name, the arm's and the record's `key=`.
    pub key: &'static str,
    /// What a value is, in an error (`idle policy`).
    pub what: &'static str,
    /// The values' spellings; empty for a number.
    pub values: &'static [&'static str],
    /// Its place in an arm's canonical spelling, if an arm may give it (`None`: the command
    /// line's alone).
    pub arm: Option<u8>,
    /// Reads a value into the configuration, by the value type's parser.
    pub set: fn(&mut PoolConfig, &str) -> Result<(), String>,
    /// The value's spelling (`None`: a setting that is `None`).
    pub get: fn(&PoolConfig) -> Option<String>,
    /// Whether the value is the default.
    pub is_default: fn(&PoolConfig) -> bool,
    /// Copies the value from one configuration to another.
    pub copy: fn(&PoolConfig, &mut PoolConfig),
    /// Puts the value a pool of a runtime with these capabilities applies into the record;
    /// whether the record has the setting (a setting the runtime ignores is no part of what
    /// ran).
    pub record: fn(&PoolConfig, &Capabilities, &mut PoolConfig) -> bool,
    /// Why a runtime with these capabilities refuses the value, after its name, if it does.
    pub refuse: fn(&Capabilities, &PoolConfig) -> Option<String>,
}

pool_settings! {
    /// CPU binding.
    pinning: value Pinning, what "pinning", values Pinning::NAMES, arm Some(2),
    record |config, c| (c.threads && c.pinning).then_some(config.pinning),
    refuse |config, c| beyond_default(c.pinning, config.pinning, |p| format!(
        "starts threads of its own that it cannot pin; pinning '{p}' cannot be honoured"
    ));

    /// Victim selection.
    victim: value VictimPolicy, what "victim policy",
    values VictimPolicy::NAMES, arm Some(1),
    record |config, c| policy_recorded(c, c.victims, config.victim),
    refuse |config, c| policy_refused("victim policy", config.victim, c.victims);

    /// Idle behaviour.
    idle: value IdlePolicy, what "idle policy", values IdlePolicy::NAMES,
    arm Some(0),
    record |config, c| policy_recorded(c, c.idle, config.idle),
    refuse |config, c| policy_refused("idle policy", config.idle, c.idle);

    /// Where future tasks run (only the fiber runtimes have a choice; the others accept only
    /// the default).
    futures: value FutureStack, what "futures", values FutureStack::NAMES,
    arm Some(6),
    record |config, c| c.fiber_stacks.then_some(config.futures),
    refuse |config, c| beyond_default(c.fiber_stacks, config.futures, |f| format!(
        "has no fibers to choose a future stack for; futures '{f}' cannot be honoured"
    ));

    /// Usable bytes of every fiber stack (`None`: the runtime's default). Only the fiber
    /// runtimes (`abp`, `fibril`, `prows`) have fixed-size stacks; the others refuse a size.
    /// A record holds the default's size too.
    stack_size: maybe usize, what "stack size", values &[], arm None,
    record |config, c| c.fiber_stacks.then(|| {
        config.stack_size.unwrap_or(crate::fiberpool::DEFAULT_STACK_SIZE)
    }),
    refuse |config, c| beyond_default(c.fiber_stacks, config.stack_size, |_| {
        "has no fixed-size fiber stacks to size (only abp, fibril, prows do)".to_string()
    });

    /// A forced schedule (`None`: none): after the first `k` steals of a `run`, an idle worker
    /// takes work from nowhere but its own deque while any other worker is running a task, and
    /// steals again only when no worker is (so every program ends that does not spin-wait for
    /// another task); those steals are counted like the others. It reproduces the schedules
    /// of the papers' lower-bound constructions ("one steal, one touch"), where the thief
    /// holds its steals. Exact at two workers, where one is idle at a time; with more, idle
    /// workers that check the budget together may all steal, a few past `k`. Only the fiber
    /// runtimes (`abp`, `fibril`, `prows`) and the simulator honour it; the others refuse it.
    steals: maybe u64, what "steals", values &[], arm Some(3),
    record |config, c| config.steals.filter(|_| c.steals),
    refuse |config, c| beyond_default(c.steals, config.steals, |_| {
        "cannot hold its steals to force a schedule (only abp, fibril, prows and their \
         simulations can)"
            .to_string()
    });

    /// Where `prows` puts a deque that becomes stealable ([`Placement`]); only `prows` and
    /// its simulation have a choice, the others accept only the default.
    placement: value Placement, what "placement", values Placement::NAMES,
    arm Some(4),
    record |config, c| c.placement.then_some(config.placement),
    refuse |config, c| beyond_default(c.placement, config.placement, |p| format!(
        "has no stealable sets to place; placement '{p}' cannot be honoured (only prows has)"
    ));

    /// Whether a suspended stack's unused pages go back to the OS ([`Unmap`]); only `fibril`
    /// gives pages back, and only it can be told not to.
    unmap: value Unmap, what "unmap", values Unmap::NAMES, arm Some(5),
    record |config, c| c.unmap.then_some(config.unmap),
    refuse |config, c| beyond_default(c.unmap, config.unmap, |u| format!(
        "gives no stack pages back; unmap '{u}' means nothing here (only fibril does)"
    ));

    /// The fence mode of the pool's deques ([`FenceMode`]); the runtimes without this crate's
    /// deques (see [`Capabilities::fence_modes`]) ignore it. A record holds the mode applied
    /// ([`FenceMode::applied`]).
    fence: value FenceMode, what "fence mode", values FenceMode::NAMES,
    arm None,
    record |config, c| c.fence_applied(config),
    refuse |_config, _c| None;
}

/// What a runtime can honour, of a [`PoolConfig`] and of a program: declared once per runtime
/// as [`Scheduler::CAPABILITIES`](crate::Scheduler::CAPABILITIES). Every pool's `start` refuses
/// a configuration its capabilities lack with [`Capabilities::admit`], and the harness reads the
/// same table to refuse a setting or a variant before anything starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// It runs `config.workers` worker threads (to pin, to steal between); `false`: the
    /// serial elision, exactly one worker, the calling thread.
    pub threads: bool,
    /// Futures at all (`Futures::future`, `AsyncWorker::spawn`); `false`: fork-join only
    /// (libfork, as in its paper).
    pub futures: bool,
    /// General futures are safe: a touch of an unfinished future suspends the toucher. `false`
    /// where it runs other work on top of the toucher's stack instead (rayon), which can then
    /// wait for a frame buried below it: the harness runs no `gf` variant there.
    pub general_futures: bool,
    /// Tasks run on fixed-size fiber stacks: [`PoolConfig::stack_size`] sizes them and
    /// [`PoolConfig::futures`] chooses whether a future gets one of its own.
    pub fiber_stacks: bool,
    /// It can hold its steals to force a schedule ([`PoolConfig::steals`]).
    pub steals: bool,
    /// It has stealable sets whose [`PoolConfig::placement`] can be chosen.
    pub placement: bool,
    /// The victim policies it honours.
    pub victims: &'static [VictimPolicy],
    /// The idle policies it honours.
    pub idle: &'static [IdlePolicy],
    /// It can pin its worker threads ([`PoolConfig::pinning`]); `false` where the library
    /// starts threads of its own that nothing can reach (the heartbeat scheduling baseline).
    pub pinning: bool,
    /// It gives a suspended stack's unused pages back to the OS and can be told not to
    /// ([`PoolConfig::unmap`]: Fibril w/o unmap).
    pub unmap: bool,
    /// Its work-stealing deques are this crate's, whose [`PoolConfig::fence`] it applies;
    /// `false`: it ignores the setting, which is then no part of what it ran.
    pub fence_modes: bool,
}

impl Capabilities {
    /// A pool with its own policies only (rayon's, tokio's): worker threads and futures, its
    /// own victims (`default`) and sleeping idle workers (`lazy`), no fibers, no forced
    /// schedule, no stealable sets to place.
    pub const OWN_POLICIES: Capabilities = Capabilities {
        threads: true,
        futures: true,
        general_futures: true,
        fiber_stacks: false,
        steals: false,
        placement: false,
        victims: &[VictimPolicy::RuntimeDefault],
        idle: &[IdlePolicy::Lazy],
        pinning: true,
        unmap: false,
        fence_modes: false,
    };

    /// The serial elision: one worker, the calling thread, every future (general or not) run
    /// where it is created; it accepts every victim and idle policy, having no thief and no idle
    /// worker to apply them to.
    pub const SERIAL_ELISION: Capabilities = Capabilities {
        threads: false,
        futures: true,
        general_futures: true,
        fiber_stacks: false,
        steals: false,
        placement: false,
        victims: VictimPolicy::ALL,
        idle: IdlePolicy::ALL,
        pinning: true,
        unmap: false,
        fence_modes: false,
    };

    /// The fence mode a pool of this runtime applies for `config`: `None` where it has none of
    /// this crate's deques, else [`FenceMode::applied`].
    pub fn fence_applied(&self, config: &PoolConfig) -> Option<FenceMode> {
        self.fence_modes.then(|| config.fence.applied())
    }

    /// Refuses what `config` asks of the runtime named `runtime` that these capabilities lack,
    /// with one line naming the setting.
    pub fn admit(&self, runtime: &str, config: &PoolConfig) -> Result<(), StartError> {
        let refuse = |why: String| Err(StartError::Unsupported(format!("{runtime} {why}")));
        if self.threads && config.workers == 0 {
            return refuse("needs at least 1 worker".into());
        }
        if !self.threads && config.workers != 1 {
            return refuse(format!(
                "runs on exactly 1 worker, the calling thread, not {}",
                config.workers
            ));
        }
        match SETTINGS.iter().find_map(|s| (s.refuse)(self, config)) {
            Some(why) => refuse(why),
            None => Ok(()),
        }
    }
}

/// Checks that `start` refuses, each with its line, every setting a pool with only its own
/// policies ([`Capabilities::OWN_POLICIES`]) lacks: the runtime's `start` goes through
/// [`Capabilities::admit`].
#[cfg(test)]
pub(crate) fn assert_refuses_all_but_own_policies<T>(
    name: &str,
    start: impl Fn(&PoolConfig) -> Result<T, StartError>,
) {
    let two = PoolConfig::with_workers(2);
    for (config, says) in [
        (
            PoolConfig {
                victim: VictimPolicy::Uniform,
                ..two
            },
            "cannot honour victim policy 'uniform' (it honours: default)",
        ),
        (
            PoolConfig {
                idle: IdlePolicy::Busy,
                ..two
            },
            "cannot honour idle policy 'busy'",
        ),
        (PoolConfig::with_workers(0), "needs at least 1 worker"),
        (
            PoolConfig {
                futures: FutureStack::Current,
                ..two
            },
            "futures 'nostack' cannot be honoured",
        ),
        (
            PoolConfig {
                stack_size: Some(1 << 20),
                ..two
            },
            "no fixed-size fiber stacks",
        ),
        (
            PoolConfig {
                steals: Some(1),
                ..two
            },
            "cannot hold its steals",
        ),
        (
            PoolConfig {
                placement: Placement::Artifact,
                ..two
            },
            "placement 'artifact' cannot be honoured",
        ),
    ] {
        match start(&config) {
            Err(StartError::Unsupported(m)) => {
                assert!(m.starts_with(name) && m.contains(says), "{m}")
            }
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("{name} accepted {config:?}"),
        }
    }
}

/// A policy of a thief or of an idle worker as a runtime that honours `honoured` of them
/// records it: where it has worker threads and more than one policy (the serial elision takes
/// every policy and has no thief or idle worker to apply one to).
fn policy_recorded<T: Copy>(c: &Capabilities, honoured: &[T], policy: T) -> Option<T> {
    (c.threads && honoured.len() > 1).then_some(policy)
}

/// Why a runtime that honours `honoured` of the policies called `what` refuses `policy`.
fn policy_refused<T: PartialEq + fmt::Display>(
    what: &str,
    policy: T,
    honoured: &[T],
) -> Option<String> {
    (!honoured.contains(&policy)).then(|| {
        format!(
            "cannot honour {what} '{policy}' (it honours: {})",
            names_of(honoured)
        )
    })
}

/// Why a runtime refuses `value` of a setting it honours only where `honours`: `why` of a
/// value other than the default, which every runtime takes.
fn beyond_default<T: PartialEq + Default>(
    honours: bool,
    value: T,
    why: impl FnOnce(T) -> String,
) -> Option<String> {
    (!honours && value != T::default()).then(|| why(value))
}

/// `a, b, c`.
fn names_of<T: fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

macro_rules! names {
    ($ty:ty { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// Every accepted spelling, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($name),+];
            /// Every value, in declaration order.
            pub const ALL: &'static [$ty] = &[$(<$ty>::$variant),+];
            /// The spelling `FromStr` accepts.
            pub fn name(self) -> &'static str {
                match self { $(<$ty>::$variant => $name),+ }
            }
        }
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
        impl FromStr for $ty {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $($name => Ok(<$ty>::$variant),)+
                    _ => Err(format!(
                        "unknown {} '{}' (expected one of: {})",
                        stringify!($ty), s, Self::NAMES.join(", ")
                    )),
                }
            }
        }
    };
}

names!(FrontEnd { Closure => "closure", Async => "async", Kernel => "kernel" });
names!(Pinning { None => "none", Compact => "compact", Scatter => "scatter" });
names!(VictimPolicy { Uniform => "uniform", NumaWeighted => "numa", RuntimeDefault => "default" });
names!(IdlePolicy { Busy => "busy", Lazy => "lazy" });
names!(FutureStack { New => "stack", Current => "nostack" });
names!(Placement { Paper => "paper", Artifact => "artifact" });
names!(Unmap { On => "on", Off => "off" });
names!(FenceMode {
    Adaptive => "adaptive",
    Eager => "eager",
    Asymmetric => "asymmetric",
    Fenced => "fenced",
});

#[cfg(test)]
mod tests {
    use super::*;

    const OWN: Capabilities = Capabilities {
        general_futures: false,
        ..Capabilities::OWN_POLICIES
    };

    #[test]
    fn admit_refuses_what_the_capabilities_lack() {
        let two = PoolConfig::with_workers(2);
        assert!(OWN.admit("rayon", &two).is_ok());
        assert_refuses_all_but_own_policies("rayon", |c| OWN.admit("rayon", c));
        let serial = Capabilities {
            threads: false,
            ..OWN
        };
        assert!(serial.admit("serial", &PoolConfig::with_workers(1)).is_ok());
        let e = serial.admit("serial", &two).unwrap_err().to_string();
        assert!(e.contains("exactly 1 worker"), "{e}");
    }

    /// The command line's two variables: each value has one meaning or is refused.
    #[test]
    fn fence_mode_from_the_environment_is_strict() {
        let m = |sw: Option<&str>, nm: Option<&str>| {
            FenceMode::from_env_values(sw.map(OsStr::new), nm.map(OsStr::new))
        };
        assert_eq!(m(None, None), Ok(FenceMode::Adaptive));
        assert_eq!(m(Some(""), Some("")), Ok(FenceMode::Adaptive));
        assert_eq!(m(Some("0"), None), Ok(FenceMode::Asymmetric));
        assert_eq!(m(Some("eager"), Some("0")), Ok(FenceMode::Eager));
        for mode in FenceMode::ALL {
            assert_eq!(m(Some(mode.name()), None), Ok(*mode));
        }
        assert_eq!(m(None, Some("1")), Ok(FenceMode::Fenced));
        assert_eq!(m(Some("fenced"), Some("1")), Ok(FenceMode::Fenced));
        let e = m(Some("bogus"), None).unwrap_err();
        assert!(
            e.contains("STEALBENCH_FENCE_SWITCHING='bogus'") && e.contains("eager"),
            "{e}"
        );
        for bad in ["yes", "2", " 1", "true"] {
            let e = m(None, Some(bad)).unwrap_err();
            assert!(e.starts_with("STEALBENCH_NO_MEMBARRIER="), "{e}");
        }
        let e = m(Some("eager"), Some("1")).unwrap_err();
        assert!(e.contains("contradicts"), "{e}");
        use std::os::unix::ffi::OsStrExt;
        let e = FenceMode::from_env_values(Some(OsStr::from_bytes(b"\xff")), None).unwrap_err();
        assert!(e.contains("not valid UTF-8"), "{e}");
    }

    #[test]
    fn fence_modes_switch_as_named() {
        assert_eq!(FenceMode::default().switching(), Switching::ADAPTIVE);
        assert_eq!(FenceMode::Eager.switching(), Switching::EAGER);
        assert_eq!(FenceMode::Fenced.switching(), Switching::NEVER);
        assert!(!FenceMode::Fenced.uses_membarrier());
        assert_eq!(FenceMode::Fenced.applied(), FenceMode::Fenced);
        if !deque::heavy_fence_is_membarrier() {
            assert_eq!(FenceMode::Eager.applied(), FenceMode::Fenced);
        }
    }

    #[test]
    fn names_round_trip() {
        for n in Pinning::NAMES {
            assert_eq!(n.parse::<Pinning>().unwrap().name(), *n);
        }
        for n in VictimPolicy::NAMES {
            assert_eq!(n.parse::<VictimPolicy>().unwrap().name(), *n);
        }
        for n in IdlePolicy::NAMES {
            assert_eq!(n.parse::<IdlePolicy>().unwrap().name(), *n);
        }
        for n in FutureStack::NAMES {
            assert_eq!(n.parse::<FutureStack>().unwrap().name(), *n);
        }
        for n in Placement::NAMES {
            assert_eq!(n.parse::<Placement>().unwrap().name(), *n);
        }
        for n in FenceMode::NAMES {
            assert_eq!(n.parse::<FenceMode>().unwrap().name(), *n);
        }
        assert!(
            "sideways"
                .parse::<Pinning>()
                .unwrap_err()
                .contains("compact")
        );
    }
}
