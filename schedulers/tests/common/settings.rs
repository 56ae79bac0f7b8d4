//! The configurations a suite runs a runtime in, read from its capabilities: its defaults at
//! P = 1, and at P = 2 where it runs worker threads; then, at P = 2, each setting that changes
//! how its tasks run and that its `Scheduler::CAPABILITIES` admit (futures without a stack of
//! their own, the artifact's placement, busy idle workers, NUMA-weighted victims, Fibril w/o
//! unmap). A new runtime is run in each setting it declares, with no list to extend.

use stealbench_schedulers::{
    FutureStack, IdlePolicy, Placement, PoolConfig, Scheduler, Unmap, VictimPolicy,
};

/// `S`'s configurations, each `at(P)` with its settings applied.
pub fn configs<S: Scheduler>(at: impl Fn(usize) -> PoolConfig) -> Vec<PoolConfig> {
    let caps = S::CAPABILITIES;
    let mut out = vec![at(1)];
    if caps.threads {
        out.push(at(2));
        let settings = [
            PoolConfig {
                futures: FutureStack::Current,
                ..at(2)
            },
            PoolConfig {
                placement: Placement::Artifact,
                ..at(2)
            },
            PoolConfig {
                idle: IdlePolicy::Busy,
                ..at(2)
            },
            PoolConfig {
                victim: VictimPolicy::NumaWeighted,
                ..at(2)
            },
            PoolConfig {
                unmap: Unmap::Off,
                ..at(2)
            },
        ];
        out.extend(
            settings
                .into_iter()
                .filter(|c| *c != at(2) && caps.admit(S::NAME, c).is_ok()),
        );
    }
    out
}
