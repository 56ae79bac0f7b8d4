//! Deque entries and what a fiber and its driver pass each other: job records, forks, fiber
//! nodes, and the messages of a resume ([`Input`]) and a suspension ([`Yield`]).

use super::Policy;
use super::handle::FiberWorker;
use super::rendezvous::Rendezvous;
use super::signal::Signal;
use super::worker::Local;
use crate::deque;
use crate::stack::Stack;

/// A type-erased task: a pointer to a job record and the function that runs it.
pub struct JobRef<P: Policy> {
    /// The job record.
    pub data: *const (),
    /// Runs the record's job.
    pub exec: unsafe fn(*const (), &FiberWorker<P>),
}

impl<P: Policy> Clone for JobRef<P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P: Policy> Copy for JobRef<P> {}

// SAFETY: a `JobRef` is a pointer to a job record whose closure is `Send`; the records stay
// alive until their job has run (a join, scope or `run` does not return before that).
unsafe impl<P: Policy> Send for JobRef<P> {}

impl<P: Policy> JobRef<P> {
    /// Runs the job.
    ///
    /// # Safety
    /// `self.data` must still be alive and not yet executed.
    #[inline]
    pub unsafe fn execute(self, w: &FiberWorker<P>) {
        // SAFETY: forwarded from the caller.
        unsafe { (self.exec)(self.data, w) }
    }
}

/// What a switch passes to a fiber: the worker that continues it, and for a fiber that starts
/// a round of work (new, or idle and started over: see `worker::fiber_entry`) the task of that
/// round. `repr(C)`: a suspended fiber, which is never given a task, reads the first field
/// only. (A forked child gets the fork record instead: see `future::start_fork`.)
#[repr(C)]
pub struct Input<P: Policy>(pub *const Local<P>, pub Option<JobRef<P>>);

// SAFETY: the pointer is only dereferenced by the fiber the resuming worker runs, on that
// worker's thread, while the worker waits in `resume`; a `JobRef` is `Send`.
unsafe impl<P: Policy> Send for Input<P> {}

/// What a fiber asks its driver for when it switches to it.
pub enum Yield<P: Policy> {
    /// Record me on this signal (or resume me at once if it is already set).
    Park(*const Signal<P>),
    /// I touched this unfinished future: do what the policy does with a touching fiber
    /// ([`Policy::suspend_touch`]), or resume me at once if the future is done by now.
    Touch(*const P::Fut),
    /// My tasks are done: keep me as an idle fiber, and go on as `Exit` says.
    Done(Exit<P>),
}

/// What a fiber passes its driver: itself (a running fiber owns its node) and its request.
pub struct ToDriver<P: Policy>(pub FiberBox<P>, pub Yield<P>);

// SAFETY: the pointers are read by the driver on the thread the fiber switched away on, while
// the fiber (whose frame holds the pointees) is suspended and not yet published.
unsafe impl<P: Policy> Send for ToDriver<P> {}

/// How a fiber's round of work ends.
pub enum Exit<P: Policy> {
    /// The deque is empty: back to the driver, which steals.
    Idle,
    /// The deque bottom was this fiber: the driver resumes it.
    SwitchTo(FiberBox<P>),
}

/// A fiber of a pool with policy `P`: its stack, the context saved on it, and intrusive links.
///
/// Who owns the node: the fiber itself while it runs (it hands itself over in the messages
/// of its switches), else whoever holds the box: a deque entry, a waiter list, a driver, a
/// child that will switch back to its parent, or the worker's idle list.
pub struct FiberNode<P: Policy> {
    /// The fiber's saved context ([`crate::fiber::switch`]) while it is suspended.
    pub sp: usize,
    /// The stack the fiber runs on.
    pub stack: Stack,
    /// Where every round of work starts on the stack ([`crate::fiber::restart`]); the fiber's
    /// handle (a `FiberWorker`) lives just above, at this address, for the fiber's whole life.
    pub top: usize,
    /// The next node of a waiter list, or of its worker's idle list while the fiber is idle.
    pub next: *mut FiberNode<P>,
    /// While this fiber waits in a deque as the continuation of a fork: that fork's rendezvous
    /// (unique among unfinished forks), so the child recognises its own parent when it pops
    /// it back. Cleared by the fiber whenever it is continued after a fork.
    pub fork_rv: *const Rendezvous,
    /// The rendezvous of the fork this fiber runs (or will run next) as the child, owned by
    /// the node: a fork takes no rendezvous of its own, so the usual fork, whose child hands
    /// its result back directly, costs none. A child that parted and arrives first leaves it
    /// to its parent (who recycles it) and takes another; one that arrives second keeps it.
    /// So it is unique among unfinished forks. Given back when the fiber ends.
    pub rv: *const Rendezvous,
}

// SAFETY: the stack is `Send`; its contents are task data, `Send` by the trait bounds (see
// `Local::new_fiber`); `next` is only followed by the one thread that took the whole waiter
// list out of a signal, `fork_rv` is only compared, never followed, and `rv` is a rendezvous,
// which is `Sync`.
unsafe impl<P: Policy> Send for FiberNode<P> {}

/// A fiber node: its address is the fiber's identity in deques and waiter lists.
pub type FiberBox<P> = Box<FiberNode<P>>;

/// A deque entry.
pub enum Job<P: Policy> {
    /// A task to run (a join's `b`, or a root task).
    Run(JobRef<P>),
    /// A suspended fiber that is ready to continue.
    Resume(FiberBox<P>),
}

impl<P: Policy> Job<P> {
    /// The two deque words: `[data, exec]` for a task, `[fiber, 0]` for a fiber.
    #[inline(always)]
    pub fn encode(self) -> deque::Entry {
        match self {
            Job::Run(j) => [j.data as usize, j.exec as usize],
            Job::Resume(f) => [Box::into_raw(f) as usize, 0],
        }
    }

    /// The entry back as a job.
    ///
    /// # Safety
    /// `e` must come from `encode`, and each encoded entry is decoded once.
    #[inline(always)]
    pub unsafe fn decode(e: deque::Entry) -> Job<P> {
        if e[1] == 0 {
            // SAFETY: a zero second word marks a fiber box given up by `encode`.
            Job::Resume(unsafe { Box::from_raw(e[0] as *mut FiberNode<P>) })
        } else {
            Job::Run(JobRef {
                data: e[0] as *const (),
                // SAFETY: a non-zero second word is a job's `exec` function pointer.
                exec: unsafe {
                    std::mem::transmute::<usize, unsafe fn(*const (), &FiberWorker<P>)>(e[1])
                },
            })
        }
    }
}
