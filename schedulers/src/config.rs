//! Pool configuration: worker count, pinning, victim and idle policies, and where futures run.

use crate::api::StartError;
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

/// Where the task of a future (`Scope::future`, `Scope::shared_future`) runs on the fiber
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

/// Everything a runtime needs to start a pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolConfig {
    /// Number of workers P (at least 1).
    pub workers: usize,
    /// CPU binding.
    pub pinning: Pinning,
    /// Victim selection.
    pub victim: VictimPolicy,
    /// Idle behaviour.
    pub idle: IdlePolicy,
    /// Where future tasks run (only the fiber runtimes have a choice; the others accept only
    /// the default).
    pub future_stack: FutureStack,
    /// Usable bytes of every fiber stack (`None`: the runtime's default). Only the fiber
    /// runtimes (`abp`, `fibril`, `prows`) have fixed-size stacks; the others refuse a size.
    pub stack_size: Option<usize>,
    /// A forced schedule (`None`: none): after the first `k` steals of a `run`, an idle worker
    /// takes work from nowhere but its own deque while any other worker is running a task, and
    /// steals again only when no worker is (so every program ends that does not spin-wait for
    /// another task); those steals are counted like the others. It reproduces the schedules
    /// of the papers' lower-bound constructions ("one steal, one touch"), where the thief
    /// holds its steals. Exact at two workers, where one is idle at a time; with more, idle
    /// workers that check the budget together may all steal, a few past `k`. Only the fiber
    /// runtimes (`abp`, `fibril`, `prows`) and the simulator honour it; the others refuse it.
    pub steal_budget: Option<u64>,
}

impl PoolConfig {
    /// `workers` workers, every policy at its default.
    pub fn with_workers(workers: usize) -> Self {
        PoolConfig {
            workers,
            pinning: Pinning::default(),
            victim: VictimPolicy::default(),
            idle: IdlePolicy::default(),
            future_stack: FutureStack::default(),
            stack_size: None,
            steal_budget: None,
        }
    }

    /// Refuses a stack size for `runtime`, whose stacks are not fixed-size fibers, and a
    /// steal budget, which only the fiber pools enforce.
    pub(crate) fn refuse_fiber_settings(&self, runtime: &str) -> Result<(), StartError> {
        if self.stack_size.is_some() {
            return Err(StartError::Unsupported(format!(
                "{runtime} has no fixed-size fiber stacks to size (only abp, fibril, prows do)"
            )));
        }
        if self.steal_budget.is_some() {
            return Err(StartError::Unsupported(format!(
                "{runtime} cannot hold its steals to force a schedule (only abp, fibril, prows \
                 and their simulations can)"
            )));
        }
        Ok(())
    }
}

impl PoolConfig {
    /// For runtimes that only have their own policies (rayon, tokio): rejects zero workers, any
    /// victim policy but [`VictimPolicy::RuntimeDefault`], and [`IdlePolicy::Busy`] (both
    /// runtimes put idle workers to sleep). `runtime` names the runtime in the message.
    pub(crate) fn require_runtime_policies(&self, runtime: &str) -> Result<(), StartError> {
        if self.workers == 0 {
            return Err(StartError::Unsupported(format!(
                "{runtime} needs at least 1 worker"
            )));
        }
        if self.victim != VictimPolicy::RuntimeDefault {
            return Err(StartError::Unsupported(format!(
                "{runtime} chooses its victims itself; victim policy '{}' cannot be honoured \
                 (use '{}')",
                self.victim,
                VictimPolicy::RuntimeDefault
            )));
        }
        if self.idle == IdlePolicy::Busy {
            return Err(StartError::Unsupported(format!(
                "{runtime} puts idle workers to sleep; idle policy '{}' cannot be honoured",
                self.idle
            )));
        }
        self.refuse_fiber_settings(runtime)?;
        if self.future_stack != FutureStack::New {
            return Err(StartError::Unsupported(format!(
                "{runtime} has no fibers to choose a stack for; future stack '{}' cannot be \
                 honoured",
                self.future_stack
            )));
        }
        Ok(())
    }
}

macro_rules! names {
    ($ty:ty { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// Every accepted spelling, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($name),+];
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

names!(Pinning { None => "none", Compact => "compact", Scatter => "scatter" });
names!(VictimPolicy { Uniform => "uniform", NumaWeighted => "numa", RuntimeDefault => "default" });
names!(IdlePolicy { Busy => "busy", Lazy => "lazy" });
names!(FutureStack { New => "new", Current => "current" });

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_fiber_runtimes_take_a_stack_size_or_a_steal_budget() {
        let sized = PoolConfig {
            stack_size: Some(1 << 20),
            ..PoolConfig::with_workers(2)
        };
        let e = sized.require_runtime_policies("rayon").unwrap_err();
        assert!(e.to_string().contains("no fixed-size fiber stacks"), "{e}");
        let budget = PoolConfig {
            steal_budget: Some(1),
            ..PoolConfig::with_workers(2)
        };
        let e = budget.require_runtime_policies("rayon").unwrap_err();
        assert!(e.to_string().contains("cannot hold its steals"), "{e}");
        assert!(
            PoolConfig::with_workers(2)
                .refuse_fiber_settings("serial")
                .is_ok()
        );
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
        assert!(
            "sideways"
                .parse::<Pinning>()
                .unwrap_err()
                .contains("compact")
        );
    }
}
