//! `fibril`: work-first fork-join on linear stacks whose suspended stacks give their unused
//! pages back to the OS (Yang and Mellor-Crummey, "A practical solution to the cactus stack
//! problem", SPAA 2016).
//!
//! # What Fibril does
//!
//! A fork calls the child on the parent's stack and leaves the parent's continuation stealable;
//! a thief resumes the continuation on a fresh stack from a pool while the parent's frame stays
//! where it is (it reaches the frame through `%rbp`, which Fibril requires every function to
//! keep). At a join whose children are not all done, the frame is suspended: if it is at the
//! top of the worker's stack, the pages of that stack below the frame are *unmapped*
//! (`madvise(MADV_DONTNEED)`, the paper's `stack_uninstall`) and the worker steals with a new
//! stack. The last child to arrive resumes the parent on its original stack. A stack whose
//! suspended frames hold at most the frames of one root-to-leaf path keeps its pages only for
//! that path, which gives Fibril's bound S_P <= P (S_1 + D).
//!
//! # What `fibril` does
//!
//! Rust gives a library no control over where a frame lives, so `fibril` cannot move a
//! continuation to a new stack while leaving its frame behind. It is `abp`'s deque policy
//! ([`AbpPolicy`]: one Chase-Lev deque per worker, parsimonious stealing from a uniform
//! victim, the join of `fiberpool`) with Fibril's stacks (`fiberpool::StackUse`):
//!
//! * `join(a, b)` pushes `b`'s record (the continuation after forking `a` is exactly "run `b`,
//!   then join") and runs `a` inline on the caller's stack; a thief takes `b` and runs it on a
//!   fiber with a stack from the pool: the stolen continuation runs on a new stack, the
//!   parent's frame stays on its own, as in Fibril.
//! * At the join, if `b` was taken and is not done, the fiber suspends; before it is published
//!   (so before anyone can resume it) its driver gives back the pages of its stack below the
//!   page that holds its saved stack pointer (counter `unmaps`: Fibril's unmap, which calls
//!   `madvise` on every suspension of a frame on its own stack, as every suspension here is):
//!   `mincore` finds the resident ones, and if there are any, one `madvise(MADV_DONTNEED)`
//!   releases the range (counters `unmaps_resident`, `pages_released`). Nothing is needed to
//!   resume: a released page reads as zero when touched again.
//! * Whoever finishes `b` last resumes the parked parent on its original stack (it pushes the
//!   fiber onto its deque and switches to it).
//! * The stack pool: each worker keeps 4 idle fibers and 4 free stacks ([`FIBRIL_STACKS`]);
//!   past that, stacks go to one free list shared by all workers (instead of being unmapped),
//!   which a worker with none left takes from before it maps a new stack.
//! * Stack size: `Fibril::with_stack_size` (the paper ran 1 MiB stacks); `start` gives
//!   [`DEFAULT_STACK_SIZE`]. Stacks are mapped `MAP_NORESERVE`, so the size is address space.
//! * Fibril w/o unmap (its Figure 4's third line): the same pool started with
//!   [`Unmap::Off`](crate::config::Unmap) (the arm `fibril/unmap=off`) releases nothing, so a
//!   suspended stack keeps every page it touched.
//!
//! A suspension at a touch of an unfinished future releases pages the same way. Futures are
//! outside Fibril's model (it has fork-join only); `fibril` inherits `abp`'s (work-first on a
//! new fiber, a touch parks the toucher), so every variant of the closure front-end runs.
//!
//! # Statistics
//!
//! Those of every fiber pool (see [`crate::abp`]), among them `steals`, `suspensions`,
//! `unmaps` (every release of a suspending fiber's stack: Fibril's unmaps, what its Table 2
//! counts; a release before a park that finds `b` just finished counts one without a
//! suspension), `unmaps_resident` (those that found resident pages and called `madvise`:
//! Fibril calls it on every unmap, `fibril` only where `mincore` finds a page to give back),
//! `pages_released`, `minor_faults` (of the worker threads since the last reset), and the
//! gauges `stacks_mapped` (stacks created since the last reset), `stacks_in_use`,
//! `stacks_high_water`, `stack_pages_resident` (exact, `mincore` over every stack the pool
//! has mapped, when the statistics are read), `stack_pages_touched` (the stack pages touched
//! at least once since the pool started, each one first-touch page fault: what Fibril's S_P
//! counts; a released page touched again is not counted again; see [`crate::stack`]) and
//! `stack_depth_pages_high_water` (the deepest stack in pages: the lowest resident page seen
//! by a release or by that scan).

use crate::abp::{AbpPolicy, Flavor};
use crate::fiberpool::future::{FiberFuture, FiberScope, FiberShared};
use crate::fiberpool::handle::FiberWorker;
use crate::fiberpool::pool::FiberPool;
use crate::fiberpool::{Names, StackUse};

pub use crate::fiberpool::DEFAULT_STACK_SIZE;

/// Fibril's stacks: a small per-worker pool spilling to a shared one, and the pages of a
/// suspended stack below its frame given back to the OS.
pub const FIBRIL_STACKS: StackUse = StackUse {
    idle: 4,
    free: 4,
    spill: true,
    release_suspended: true,
};

/// The `fibril` flavour of [`AbpPolicy`].
#[derive(Debug)]
pub struct FibrilStacks;

impl Flavor for FibrilStacks {
    const NAME: &'static str = "fibril";
    const NAMES: Names = Names {
        pool: "Fibril",
        worker: "FibrilWorker",
        scope: "FibrilScope",
        future: "FibrilFuture",
        shared: "FibrilShared",
    };
    const STACKS: StackUse = FIBRIL_STACKS;
}

/// The `fibril` pool: `abp`'s deques and join with Fibril's stacks.
pub type Fibril = FiberPool<AbpPolicy<FibrilStacks>>;
/// The handle of one fiber of [`Fibril`].
pub type FibrilWorker = FiberWorker<AbpPolicy<FibrilStacks>>;
/// A scope of [`FibrilWorker::scope`](crate::api::Worker::scope).
pub type FibrilScope<'s> = FiberScope<'s, AbpPolicy<FibrilStacks>>;
/// A single-touch future of `fibril` (an extension: Fibril has none).
pub type FibrilFuture<T> = FiberFuture<AbpPolicy<FibrilStacks>, T>;
/// A multi-touch future of `fibril` (an extension: Fibril has none).
pub type FibrilShared<T> = FiberShared<AbpPolicy<FibrilStacks>, T>;
