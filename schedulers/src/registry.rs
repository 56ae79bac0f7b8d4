//! The runtime registry: every runtime of stealbench, once, in listing order.
//!
//! [`runtimes!`](crate::runtimes) is the one list. Each entry names the runtime (its name on
//! the command line, in result files and in [`Scheduler::NAME`](crate::Scheduler::NAME)), its
//! pool type, the cargo feature that builds it (`always`: every build has it), its front-ends
//! (the closure front-end with or without [`Futures`](crate::Futures), the async one, and, for
//! `serial` alone, `kernel: yes`: no front-end, the workload's serial code called directly,
//! T_s), one line
//! of description, and its registered arms besides the default configuration (`idle=busy`: the
//! settings `bench` and the figures' baseline rows measure too). Everything else is read from
//! it:
//!
//! * [`RUNTIMES`]: the entries as data, with each built runtime's
//!   [`Capabilities`], for listings and for refusing what a runtime
//!   cannot do; a runtime this build lacks stays listed, with the feature that builds it;
//! * [`with_closure_runtime!`](crate::with_closure_runtime),
//!   [`with_future_runtime!`](crate::with_future_runtime) and
//!   [`with_async_runtime!`](crate::with_async_runtime): from a name to the pool type, for the
//!   harness and the tests to instantiate generic code on every runtime a front-end has.
//!
//! Adding a runtime is its folder (a module of this crate) and one entry. A runtime behind a
//! feature also needs its gate, a pair of `__built_FEATURE` macros below: the dispatch macros
//! expand in the crate that calls them, so whether a feature is on must be decided here, where
//! the features are this crate's.

use crate::config::{Capabilities, FrontEnd};

/// The registry. Calls the macro `$callback` of this crate (one of the `__registry_*` or
/// `__dispatch` macros) with `{ $args }` and every entry.
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
                asynch: yes,
                kernel: yes,
                description: "the serial elision: join runs a then b, a future runs where it is created; /front=async: the cost of the async state machines alone; /front=kernel: the workload's serial code called directly, no trait (T_s; /shape=libfork: libfork's serial fib)",
                arms: ["front=async", "front=kernel", "front=kernel/shape=libfork"],
            }
            rayon {
                pool: $crate::rayon::RayonPool,
                built: __built_always,
                closure: futures,
                asynch: no,
                description: "rayon's work-stealing pool (baseline: join, scope; futures as scope spawns)",
                arms: [],
            }
            chili {
                pool: $crate::chili::ChiliPool,
                built: __built_always,
                closure: fork_join,
                asynch: no,
                description: "chili's heartbeat scheduling (baseline: a join pushes nothing until a heartbeat makes it stealable; fork-join only)",
                arms: [],
            }
            tokio {
                pool: $crate::tokio::TokioPool,
                built: __built_always,
                closure: none,
                asynch: yes,
                description: "tokio's multi-thread runtime, every fork a heap-allocated task (baseline)",
                arms: [],
            }
            tbb {
                pool: $crate::tbb::TbbPool,
                built: __built_tbb,
                closure: fork_join,
                asynch: no,
                description: "Intel oneTBB (the Fibril and libfork papers' TBB): a task_group per join or scope in a task_arena of P threads",
                arms: [],
            }
            openmp {
                pool: $crate::openmp::OpenMpPool,
                built: __built_openmp,
                closure: fork_join,
                asynch: no,
                description: "LLVM's OpenMP runtime (libomp, the libfork paper's OpenMP): untied tasks and taskwait in one parallel region of P threads",
                arms: [],
            }
            abp {
                pool: $crate::abp::Abp,
                built: __built_always,
                closure: futures,
                asynch: no,
                description: "work stealing on stackful fibers, eager futures suspending at get (stands in for Cilk Plus)",
                arms: [],
            }
            prows {
                pool: $crate::prows::Prows,
                built: __built_always,
                closure: futures,
                asynch: no,
                description: "proactive work stealing for futures, ProWS (stands in for Cilk-F); /placement=artifact: the authors' artifact's placement (less loaded of two random workers, no rebalancing)",
                arms: ["placement=artifact"],
            }
            fibril {
                pool: $crate::fibril::Fibril,
                built: __built_always,
                closure: futures,
                asynch: no,
                description: "Fibril's linear stacks: abp's join, suspended stacks' unused pages released, a small stack pool; /unmap=off: Fibril w/o unmap",
                arms: ["unmap=off"],
            }
            libfork {
                pool: $crate::libfork::LibforkPool,
                built: __built_always,
                closure: none,
                asynch: yes,
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
    /// One line for `stealbench list`.
    pub description: &'static str,
    /// The runtime's registered arms besides its default one, as arm settings (`idle=busy`).
    pub arms: &'static [&'static str],
    /// The cargo feature that builds it; `None`: every build has it.
    pub feature: Option<&'static str>,
    /// What it honours (its `Scheduler::CAPABILITIES`), if this build has it.
    pub capabilities: Option<Capabilities>,
}

impl Runtime {
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
            description: $d:literal,
            arms: [$($arm:literal),* $(,)?],
        }
    )*) => {
        &[$($crate::registry::Runtime {
            name: stringify!($rt),
            front_ends: $crate::__registry_table!(@front_ends $closure $asynch $($kernel)?),
            description: $d,
            arms: &[$($arm),*],
            feature: $crate::$built!(@feature),
            capabilities: $crate::$built!(
                { Some(<$pool as $crate::Scheduler>::CAPABILITIES) } else { None }
            ),
        }),*]
    };
    (@front_ends none yes) => { &[$crate::config::FrontEnd::Async] };
    (@front_ends $closure:ident no) => { &[$crate::config::FrontEnd::Closure] };
    (@front_ends $closure:ident yes) => {
        &[$crate::config::FrontEnd::Closure, $crate::config::FrontEnd::Async]
    };
    (@front_ends $closure:ident yes yes) => {
        &[
            $crate::config::FrontEnd::Closure,
            $crate::config::FrontEnd::Async,
            $crate::config::FrontEnd::Kernel,
        ]
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

/// The dispatch behind the `with_*_runtime!` macros: one `if` per entry the mode takes, in a
/// labelled block, each behind its runtime's gate.
#[doc(hidden)]
#[macro_export]
macro_rules! __dispatch {
    ({ $mode:ident, $name:expr, $S:ident, $body:expr } $(
        $rt:ident {
            pool: $pool:ty,
            built: $built:ident,
            closure: $closure:ident,
            asynch: $asynch:ident,
            $(kernel: $kernel:ident,)?
            description: $d:literal,
            arms: [$($arm:literal),* $(,)?],
        }
    )*) => {{
        let name: &str = $name;
        'found: {
            $($crate::__dispatch!(@takes $mode $closure $asynch
                ($built, $rt, $pool, name, 'found, $S, $body));)*
            None
        }
    }};
    (@takes closure futures $a:ident $emit:tt) => { $crate::__dispatch!(@emit $emit) };
    (@takes closure fork_join $a:ident $emit:tt) => { $crate::__dispatch!(@emit $emit) };
    (@takes futures futures $a:ident $emit:tt) => { $crate::__dispatch!(@emit $emit) };
    (@takes asynch $c:ident yes $emit:tt) => { $crate::__dispatch!(@emit $emit) };
    (@takes $mode:ident $c:ident $a:ident $emit:tt) => {};
    (@emit ($built:ident, $rt:ident, $pool:ty, $n:ident, $found:lifetime, $S:ident, $body:expr)) => {
        $crate::$built! {
            {
                if $n == stringify!($rt) {
                    type $S = $pool;
                    break $found Some($body);
                }
            } else {}
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
