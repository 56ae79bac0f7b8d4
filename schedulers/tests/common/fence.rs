//! The pools' fence mode in the tests: the one the command line's environment chooses
//! (`STEALBENCH_FENCE_SWITCHING`, `STEALBENCH_NO_MEMBARRIER`, parsed as the command line
//! parses them), so that CI runs the same tests under every mode.

use stealbench_schedulers::{FenceMode, PoolConfig};

/// The mode the environment chooses; a malformed setting fails the test with its line.
pub fn mode() -> FenceMode {
    FenceMode::from_env().unwrap_or_else(|e| panic!("{e}"))
}

/// `PoolConfig::with_workers(workers)` in the environment's fence mode.
pub fn config(workers: usize) -> PoolConfig {
    PoolConfig {
        fence: mode(),
        ..PoolConfig::with_workers(workers)
    }
}
