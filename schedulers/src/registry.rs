//! The runtime registry: every runtime of stealbench, once, in listing order.
//!
//! [`runtimes!`](crate::runtimes) is the one list. Each entry names the runtime (its name on
//! the command line, in result files and in [`Scheduler::NAME`](crate::Scheduler::NAME)), its
//! pool type, the cargo feature that builds it (`always`: every build has it), its front-ends
//! (`closure:` the closure front-end with [`Futures`](crate::Futures), fork-join only, or
//! none; `asynch:` the async one with futures, fork-join only, or none; and, for `serial`
//! alone, `kernel: yes`: no front-end, the workload's serial code called directly, T_s), its
//! [`Role`] in the papers' figures (the serial elision; a baseline no paper ran; a paper's
//! system; a stand-in, and for which system), one line of description, and its registered arms
//! besides the default configuration (`idle=busy`: the settings `bench` and the figures'
//! baseline rows measure too). Everything else is read from it:
//!
//! * [`RUNTIMES`]: the entries as data, with each built runtime's
//!   [`Capabilities`], for listings and for refusing what a runtime
//!   cannot do; a runtime this build lacks stays listed, with the feature that builds it;
//! * [`baselines`]: the runtimes a paper's figures add after its systems, in the order of
//!   their rows;
//! * [`with_closure_runtime!`](crate::with_closure_runtime),
//!   [`with_future_runtime!`](crate::with_future_runtime) and
//!   [`with_async_runtime!`](crate::with_async_runtime): from a name to the pool type, for the
//!   harness and the tests to instantiate generic code on every runtime a front-end has;
//! * [`for_each_built_runtime!`](crate::for_each_built_runtime): a macro of the caller's called
//!   with every built runtime's pool type, for suites of tests instantiated per runtime.
//!
//! The listing order puts the closure runtimes before the async-only ones (`tokio`,
//! `libfork`); a paper's baselines follow it.
//!
//! Adding a runtime is its folder (a module of this crate) and one entry. A runtime behind a
//! feature also needs its gate, a pair of `__built_FEATURE` macros below: the dispatch macros
//! expand in the crate that calls them, so whether a feature is on must be decided here, where
//! the features are this crate's.

use crate::config::{Capabilities, FrontEnd};

/// The registry. Calls the macro `$callback` of this crate (`__registry_table`, `__for_each`
/// or `__dispatch`) with `{ $args }` and every entry. Every entry gives its fields
/// in this order, so a callback that reads only the first four (`pool`, `built`, `closure`,
/// `asynch`) takes the rest as tokens.
#[doc(hidden)]
#[macro_export]
macro_rules! runtimes {
    ($callback:ident { $($args:tt)* }) => {
        $crate::$callback! {
            { $($args)* }
            serial {
                pool: $crate::serial::Serial,
                built: __built_always,
                closure: futures,
                asynch: futures,
                kernel: yes,
                role: serial,
                description: "the serial elision: join runs a then b, a future runs where it is created; /front=async: the cost of the async state machines alone; /front=kernel: the workload's serial code called directly, no trait (T_s; /shape=libfork: libfork's serial fib)",
                arms: ["front=async", "front=kernel", "front=kernel/shape=libfork"],
            }
            rayon {
                pool: $crate::rayon::RayonPool,
                built: __built_always,
                closure: futures,
                asynch: no,
                role: baseline,
                description: "rayon's work-stealing pool (baseline: join, scope; futures as scope spawns)",
                arms: [],
            }
            chili {
                pool: $crate::chili::ChiliPool,
                built: __built_always,
                closure: fork_join,
                asynch: no,
                role: baseline,
                description: "chili's heartbeat scheduling (baseline: a join pushes nothing until a heartbeat makes it stealable; fork-join only)",
                arms: [],
            }
            tbb {
                pool: $crate::tbb::TbbPool,
                built: __built_tbb,
                closure: fork_join,
                asynch: no,
                role: system { of: [Fibril, Libfork], baseline_in: [] },
                description: "Intel oneTBB (the Fibril and libfork papers' TBB): a task_group per join or scope in a task_arena of P threads",
                arms: [],
            }
            openmp {
                pool: $crate::openmp::OpenMpPool,
                built: __built_openmp,
                closure: fork_join,
                asynch: no,
                role: system { of: [Libfork], baseline_in: [] },
                description: "LLVM's OpenMP runtime (libomp, the libfork paper's OpenMP): untied tasks and taskwait in one parallel region of P threads",
                arms: [],
            }
            abp {
                pool: $crate::abp::Abp,
                built: __built_always,
                closure: futures,
                asynch: no,
                role: stand_in { for: "Cilk Plus", of: [Fibril, Prows], baseline_in: [Libfork] },
                description: "work stealing on stackful fibers, eager futures suspending at get (stands in for Cilk Plus)",
                arms: [],
            }
            prows {
                pool: $crate::prows::Prows,
                built: __built_always,
                closure: futures,
                asynch: no,
                role: stand_in { for: "Cilk-F", of: [Prows], baseline_in: [] },
                description: "proactive work stealing for futures, ProWS (stands in for Cilk-F); /placement=artifact: the authors' artifact's placement (less loaded of two random workers, no rebalancing)",
                arms: ["placement=artifact"],
            }
            fibril {
                pool: $crate::fibril::Fibril,
                built: __built_always,
                closure: futures,
                asynch: no,
                role: system { of: [Fibril], baseline_in: [Libfork] },
                description: "Fibril's linear stacks: abp's join, suspended stacks' unused pages released, a small stack pool; /unmap=off: Fibril w/o unmap",
                arms: ["unmap=off"],
            }
            tokio {
                pool: $crate::tokio::TokioPool,
                built: __built_tokio,
                closure: none,
                asynch: futures,
                role: baseline,
                description: "tokio's multi-thread runtime, every fork a heap-allocated task (baseline)",
                arms: [],
            }
            libfork {
                pool: $crate::libfork::LibforkPool,
                built: __built_always,
                closure: none,
                asynch: fork_join,
                role: system { of: [Libfork], baseline_in: [Fibril, Prows] },
                description: "libfork: continuation stealing, task frames on segmented stacks (lazy pool; busy arm: /idle=busy)",
                arms: ["idle=busy"],
            }
        }
    };
}

/// One runtime of the registry, as data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Runtime {
    /// Name on the command line and in result files.
    pub name: &'static str,
    /// The front-ends the harness can run it through; the first is its default (`front=`
    /// chooses another).
    pub front_ends: &'static [FrontEnd],
    /// What it is to the papers' figures.
    pub role: Role,
    /// One line for `stealbench list`.
    pub description: &'static str,
    /// The runtime's registered arms besides its default one, as arm settings (`idle=busy`).
    pub arms: &'static [&'static str],
    /// The cargo feature that builds it; `None`: every build has it.
    pub feature: Option<&'static str>,
    /// What it honours (its `Scheduler::CAPABILITIES`), if this build has it.
    pub capabilities: Option<Capabilities>,
}

/// The papers whose figures set their systems beside baselines (ProWS, Fibril, libfork): the
/// papers a [`Role`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paper {
    /// Singer et al., proactive work stealing for futures (ProWS).
    Prows,
    /// Yang and Mellor-Crummey, Fibril (SPAA'16).
    Fibril,
    /// Williams and Elliott, libfork.
    Libfork,
}

/// What a runtime is to the papers' figures: where its rows come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The serial elision and, as its kernel arm, T_s: every figure's denominator, no system.
    Serial,
    /// A baseline no paper ran: every paper's figures add its rows after the paper's systems.
    Baseline,
    /// A system the papers `of` ran: the library itself (oneTBB, libomp) or ours implementing
    /// the paper's design; the figures of the papers `baseline_in` add it as a baseline.
    System {
        of: &'static [Paper],
        baseline_in: &'static [Paper],
    },
    /// Ours, standing in for the papers' system `system`, which cannot run here; the papers
    /// `of` have it in that system's place, and those `baseline_in` add it as a baseline.
    StandIn {
        system: &'static str,
        of: &'static [Paper],
        baseline_in: &'static [Paper],
    },
}

impl Runtime {
    /// Whether `paper`'s figures add this runtime's rows as a baseline: every [`Role::Baseline`],
    /// and a paper's system or stand-in that names `paper` in `baseline_in`.
    pub fn baseline_in(&self, paper: Paper) -> bool {
        match self.role {
            Role::Serial => false,
            Role::Baseline => true,
            Role::System { baseline_in, .. } | Role::StandIn { baseline_in, .. } => {
                baseline_in.contains(&paper)
            }
        }
    }

    /// Whether this runtime is (or stands in for) a system `paper` ran.
    pub fn of(&self, paper: Paper) -> bool {
        match self.role {
            Role::Serial | Role::Baseline => false,
            Role::System { of, .. } | Role::StandIn { of, .. } => of.contains(&paper),
        }
    }

    /// Whether this build has the runtime.
    pub fn built(&self) -> bool {
        self.capabilities.is_some()
    }

    /// Why this build cannot run it, if it cannot: `not built: cargo run --release --features
    /// FEATURE`.
    pub fn not_built(&self) -> Option<String> {
        match (self.built(), self.feature) {
            (true, _) => None,
            (false, Some(f)) => Some(format!("not built: cargo run --release --features {f}")),
            (false, None) => Some("not built".to_string()),
        }
    }
}

/// Every runtime, built or not, in listing order.
pub const RUNTIMES: &[Runtime] = runtimes!(__registry_table {});

/// The baselines of `paper`'s figures, built or not, in listing order (the order of their rows).
pub fn baselines(paper: Paper) -> impl Iterator<Item = &'static Runtime> {
    RUNTIMES.iter().filter(move |r| r.baseline_in(paper))
}

/// The entries as [`Runtime`]s (the callback behind [`RUNTIMES`]).
#[doc(hidden)]
#[macro_export]
macro_rules! __registry_table {
    ({} $(
        $rt:ident {
            pool: $pool:ty,
            built: $built:ident,
            closure: $closure:ident,
            asynch: $asynch:ident,
            $(kernel: $kernel:ident,)?
            role: $role:ident $({ $($role_args:tt)* })?,
            description: $d:literal,
            arms: [$($arm:literal),* $(,)?],
        }
    )*) => {
        &[$($crate::registry::Runtime {
            name: stringify!($rt),
            front_ends: $crate::__registry_table!(@front_ends $closure $asynch $($kernel)?),
            role: $crate::__registry_table!(@role $role $({ $($role_args)* })?),
            description: $d,
            arms: &[$($arm),*],
            feature: $crate::$built!(@feature),
            capabilities: $crate::$built!(
                { Some(<$pool as $crate::Scheduler>::CAPABILITIES) } else { None }
            ),
        }),*]
    };
    (@front_ends $closure:ident no) => { &[$crate::config::FrontEnd::Closure] };
    (@front_ends none $asynch:ident) => { &[$crate::config::FrontEnd::Async] };
    (@front_ends $closure:ident $asynch:ident) => {
        &[$crate::config::FrontEnd::Closure, $crate::config::FrontEnd::Async]
    };
    (@front_ends $closure:ident $asynch:ident yes) => {
        &[
            $crate::config::FrontEnd::Closure,
            $crate::config::FrontEnd::Async,
            $crate::config::FrontEnd::Kernel,
        ]
    };
    (@role serial) => { $crate::registry::Role::Serial };
    (@role baseline) => { $crate::registry::Role::Baseline };
    (@role system { of: [$($of:ident),*], baseline_in: [$($in:ident),*] }) => {
        $crate::registry::Role::System {
            of: &[$($crate::registry::Paper::$of),*],
            baseline_in: &[$($crate::registry::Paper::$in),*],
        }
    };
    (@role stand_in {
        for: $system:literal,
        of: [$($of:ident),*],
        baseline_in: [$($in:ident),*]
    }) => {
        $crate::registry::Role::StandIn {
            system: $system,
            of: &[$($crate::registry::Paper::$of),*],
            baseline_in: &[$($crate::registry::Paper::$in),*],
        }
    };
}

/// Evaluates to `Some($body)` with `$S` the pool type of the built runtime named `$name` on
/// the closure front-end (with futures or without), or `None` when this build has no such
/// runtime.
#[macro_export]
macro_rules! with_closure_runtime {
    ($name:expr, $S:ident => $body:expr) => {
        $crate::runtimes!(__dispatch {
            closure,
            $name,
            $S,
            $body
        })
    };
}

/// As [`with_closure_runtime!`](crate::with_closure_runtime), for the closure runtimes whose
/// workers have [`Futures`](crate::Futures): `$S` is a
/// [`FutureForkJoin`](crate::FutureForkJoin).
#[macro_export]
macro_rules! with_future_runtime {
    ($name:expr, $S:ident => $body:expr) => {
        $crate::runtimes!(__dispatch {
            futures,
            $name,
            $S,
            $body
        })
    };
}

/// Calls the macro `$callback` once per runtime this build has, in listing order, as
/// `$callback! { NAME, POOL, closure: C, asynch: A }`: `NAME` the runtime's name (an
/// identifier), `POOL` its pool type, `C` its closure front-end (`futures`, `fork_join` or
/// `none`), `A` its async one (`futures`, `fork_join` or `no`). For generic code that needs the
/// pool type at compile time on every runtime, such as the semantics suite's tests.
#[macro_export]
macro_rules! for_each_built_runtime {
    ($callback:ident) => {
        $crate::runtimes!(__for_each { __to_caller ($callback) });
    };
}

/// Declares a runtime's module (`src/NAME/mod.rs`): the callback of [`__for_each!`] that
/// `lib.rs` calls.
#[doc(hidden)]
#[macro_export]
macro_rules! __module {
    (() $rt:ident, $pool:ty, closure: $closure:ident, asynch: $asynch:ident) => {
        pub mod $rt;
    };
}

/// The one walk over the entries that needs no more of them than their pool types and
/// front-ends: calls this crate's macro `$callback` once per runtime this build has, behind its
/// gate, as `$callback! { $args NAME, POOL, closure: C, asynch: A }` (`$args` one group of the
/// caller's). Behind [`for_each_built_runtime!`](crate::for_each_built_runtime), the modules
/// `lib.rs` declares, and the dispatch macros.
#[doc(hidden)]
#[macro_export]
macro_rules! __for_each {
    ({ $callback:ident $args:tt } $(
        $rt:ident {
            pool: $pool:ty,
            built: $built:ident,
            closure: $closure:ident,
            asynch: $asynch:ident,
            $($rest:tt)*
        }
    )*) => {
        $($crate::$built! {
            {
                $crate::$callback! { $args $rt, $pool, closure: $closure, asynch: $asynch }
            } else {}
        })*
    };
}

/// The callback of [`for_each_built_runtime!`](crate::for_each_built_runtime): hands the
/// runtime to the caller's macro.
#[doc(hidden)]
#[macro_export]
macro_rules! __to_caller {
    (($callback:ident) $rt:ident, $pool:ty, closure: $closure:ident, asynch: $asynch:ident) => {
        $callback! { $rt, $pool, closure: $closure, asynch: $asynch }
    };
}

/// As [`with_closure_runtime!`](crate::with_closure_runtime), on the async front-end: `$S`
/// is an [`AsyncForkJoin`](crate::AsyncForkJoin).
#[macro_export]
macro_rules! with_async_runtime {
    ($name:expr, $S:ident => $body:expr) => {
        $crate::runtimes!(__dispatch {
            asynch,
            $name,
            $S,
            $body
        })
    };
}

/// The dispatch behind the `with_*_runtime!` macros: one `if` per built runtime the mode
/// takes, in a labelled block.
#[doc(hidden)]
#[macro_export]
macro_rules! __dispatch {
    ({ $mode:ident, $name:expr, $S:ident, $body:expr } $($entries:tt)*) => {{
        let name: &str = $name;
        'found: {
            $crate::__for_each! { { __dispatch_one ($mode, name, 'found, $S, $body) } $($entries)* }
            None
        }
    }};
}

/// One runtime of [`__dispatch!`]: its `if`, where the mode takes its front-ends.
#[doc(hidden)]
#[macro_export]
macro_rules! __dispatch_one {
    (($mode:ident, $n:ident, $found:lifetime, $S:ident, $body:expr)
        $rt:ident, $pool:ty, closure: $closure:ident, asynch: $asynch:ident) => {
        $crate::__dispatch_one!(@takes $mode $closure $asynch ($n, $found, $S, $body, $rt, $pool));
    };
    (@takes closure futures $a:ident $emit:tt) => { $crate::__dispatch_one!(@emit $emit) };
    (@takes closure fork_join $a:ident $emit:tt) => { $crate::__dispatch_one!(@emit $emit) };
    (@takes futures futures $a:ident $emit:tt) => { $crate::__dispatch_one!(@emit $emit) };
    (@takes asynch $c:ident futures $emit:tt) => { $crate::__dispatch_one!(@emit $emit) };
    (@takes asynch $c:ident fork_join $emit:tt) => { $crate::__dispatch_one!(@emit $emit) };
    (@takes $mode:ident $c:ident $a:ident $emit:tt) => {};
    (@emit ($n:ident, $found:lifetime, $S:ident, $body:expr, $rt:ident, $pool:ty)) => {
        if $n == stringify!($rt) {
            type $S = $pool;
            break $found Some($body);
        }
    };
}

/// The gate of the runtimes every build has.
#[doc(hidden)]
#[macro_export]
macro_rules! __built_always {
    (@feature) => { None };
    ({ $($yes:tt)* } else { $($no:tt)* }) => { $($yes)* };
}

/// The gate of `tokio`: every build has it but a `--cfg loom` one, under which tokio drops part
/// of its builder's API (`on_thread_start`); nothing of this runtime is modelled.
#[cfg(not(loom))]
#[doc(hidden)]
#[macro_export]
macro_rules! __built_tokio {
    (@feature) => { None };
    ({ $($yes:tt)* } else { $($no:tt)* }) => { $($yes)* };
}

/// The gate of `tokio` in a `--cfg loom` build: left out.
#[cfg(loom)]
#[doc(hidden)]
#[macro_export]
macro_rules! __built_tokio {
    (@feature) => { None };
    ({ $($yes:tt)* } else { $($no:tt)* }) => { $($no)* };
}

/// The gate of the runtimes behind `--features tbb`: this build has them.
#[cfg(feature = "tbb")]
#[doc(hidden)]
#[macro_export]
macro_rules! __built_tbb {
    (@feature) => { Some("tbb") };
    ({ $($yes:tt)* } else { $($no:tt)* }) => { $($yes)* };
}

/// The gate of the runtimes behind `--features tbb`: this build lacks them.
#[cfg(not(feature = "tbb"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __built_tbb {
    (@feature) => { Some("tbb") };
    ({ $($yes:tt)* } else { $($no:tt)* }) => { $($no)* };
}

/// The gate of the runtimes behind `--features openmp`: this build has them.
#[cfg(feature = "openmp")]
#[doc(hidden)]
#[macro_export]
macro_rules! __built_openmp {
    (@feature) => { Some("openmp") };
    ({ $($yes:tt)* } else { $($no:tt)* }) => { $($yes)* };
}

/// The gate of the runtimes behind `--features openmp`: this build lacks them.
#[cfg(not(feature = "openmp"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __built_openmp {
    (@feature) => { Some("openmp") };
    ({ $($yes:tt)* } else { $($no:tt)* }) => { $($no)* };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scheduler;

    #[test]
    fn every_dispatched_pool_reports_its_registry_name() {
        for r in RUNTIMES {
            let closure = with_closure_runtime!(r.name, S => <S as Scheduler>::NAME);
            let futures = with_future_runtime!(r.name, S => <S as Scheduler>::NAME);
            let asynch = with_async_runtime!(r.name, S => <S as Scheduler>::NAME);
            for found in [closure, futures, asynch].into_iter().flatten() {
                assert_eq!(found, r.name);
            }
            let fronts = r.front_ends;
            assert_eq!(
                closure.is_some(),
                r.built() && fronts.contains(&FrontEnd::Closure),
                "{}",
                r.name
            );
            assert_eq!(
                asynch.is_some(),
                r.built() && fronts.contains(&FrontEnd::Async),
                "{}",
                r.name
            );
            // A closure runtime dispatches with futures exactly when it declares them.
            assert_eq!(
                futures.is_some(),
                closure.is_some() && r.capabilities.is_some_and(|c| c.futures),
                "{}",
                r.name
            );
        }
        assert!(with_closure_runtime!("nope", S => <S as Scheduler>::NAME).is_none());
    }

    /// Every built runtime's front-end tokens, as `for_each_built_runtime!` hands them over,
    /// against its capabilities: `futures` exactly where it declares futures.
    #[test]
    fn each_front_end_says_whether_it_has_futures() {
        let mut seen = Vec::new();
        macro_rules! front_ends {
            ($rt:ident, $pool:ty, closure: $closure:ident, asynch: $asynch:ident) => {
                let futures = <$pool as Scheduler>::CAPABILITIES.futures;
                for front in [stringify!($closure), stringify!($asynch)] {
                    if front == "futures" || front == "fork_join" {
                        assert_eq!(front == "futures", futures, "{} {front}", stringify!($rt));
                    }
                }
                assert_eq!(<$pool as Scheduler>::NAME, stringify!($rt));
                seen.push(stringify!($rt));
            };
        }
        for_each_built_runtime!(front_ends);
        let built: Vec<&str> = RUNTIMES
            .iter()
            .filter(|r| r.built())
            .map(|r| r.name)
            .collect();
        assert_eq!(seen, built);
    }

    /// A paper's baselines are never its own systems, and the serial elision is no one's.
    #[test]
    fn a_papers_baselines_are_not_its_systems() {
        for paper in [Paper::Prows, Paper::Fibril, Paper::Libfork] {
            assert!(baselines(paper).count() > 0, "{paper:?}");
            for r in baselines(paper) {
                assert!(!r.of(paper), "{} is {paper:?}'s and its baseline", r.name);
                assert_ne!(r.role, Role::Serial, "{paper:?}");
            }
            assert!(
                RUNTIMES.iter().any(|r| r.of(paper)),
                "{paper:?} has no system"
            );
        }
    }

    /// `schedulers/README.md`'s capability table has each built runtime's row (and the
    /// recorder's) as its `CAPABILITIES` say.
    #[test]
    fn the_readmes_capability_table_is_the_code() {
        fn row(name: &str, c: &Capabilities) -> String {
            let yn = |b: bool| if b { "yes" } else { "no" };
            let list = |names: Vec<String>| {
                let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
                quoted.join(", ")
            };
            let cells = [
                format!("`{name}`"),
                yn(c.threads).into(),
                yn(c.futures).into(),
                yn(c.general_futures).into(),
                yn(c.fiber_stacks).into(),
                yn(c.steals).into(),
                yn(c.placement).into(),
                list(c.victims.iter().map(|v| v.to_string()).collect()),
                list(c.idle.iter().map(|i| i.to_string()).collect()),
                yn(c.pinning).into(),
                yn(c.unmap).into(),
                yn(c.fence_modes).into(),
            ];
            format!("| {} |", cells.join(" | "))
        }
        let readme = include_str!("../README.md");
        let lines: Vec<&str> = readme.lines().collect();
        let built = RUNTIMES
            .iter()
            .filter_map(|r| Some((r.name, r.capabilities?)));
        let record = ("record", crate::record::Recorder::CAPABILITIES);
        for (name, caps) in built.chain([record]) {
            let want = row(name, &caps);
            assert!(lines.contains(&want.as_str()), "README.md lacks {want}");
        }
        let rows = lines.iter().filter(|l| {
            RUNTIMES.iter().map(|r| r.name).chain(["record"]).any(|n| {
                l.starts_with(&format!("| `{n}` | no |"))
                    || l.starts_with(&format!("| `{n}` | yes |"))
            })
        });
        assert_eq!(rows.count(), RUNTIMES.len() + 1, "one row per runtime");
    }

    #[test]
    fn a_runtime_not_built_names_its_feature() {
        for r in RUNTIMES {
            match r.not_built() {
                None => assert!(r.built()),
                Some(why) => {
                    let f = r.feature.expect("only a feature's runtime can be missing");
                    assert_eq!(
                        why,
                        format!("not built: cargo run --release --features {f}")
                    );
                }
            }
        }
        let serial = RUNTIMES.iter().find(|r| r.name == "serial").unwrap();
        assert_eq!((serial.feature, serial.built()), (None, true));
    }
}
