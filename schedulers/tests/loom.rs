//! loom models of the lock-free protocols: the Chase-Lev deque (`src/deque.rs`), the rendezvous
//! (`src/fiberpool/rendezvous.rs`), the signal (`src/fiberpool/signal.rs`), the sleep/wake
//! handshake of idle workers (`src/fiberpool/sleep.rs`), libfork's join counter
//! (`src/libfork/frame.rs`) and `prows`'s future state, the list of what is suspended on a
//! future (`src/prows/future.rs`). Each model is the smallest scenario that exercises the
//! protocol's race, and says the property it checks. Besides the assertions, loom checks every
//! access to a `loom::cell::UnsafeCell` for a data race (no happens-before between a write and
//! another access) and reports a deadlock (every thread blocked: a lost wake-up).
//!
//! Only in a `--cfg loom` build (`src/sync.rs` then gives the protocols loom's atomics):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p stealbench-schedulers --release \
//!     --test loom --target-dir target/loom
//! ```
//!
//! The preemption bound is 2 unless `LOOM_MAX_PREEMPTIONS` says otherwise. Under loom the
//! deque's asymmetric fence is its fallback, `fence(SeqCst)` on both sides (loom cannot model
//! `membarrier`): see "Model checking" in `src/deque.rs`.
#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use stealbench_schedulers::deque::{self, Entry, FenceCounts, Owner, Stolen, Switching, Thief};
use stealbench_schedulers::internals::{
    AbpPolicy, FiberBox, FiberNode, FutState, JoinCounter, Rendezvous, RvPool, Signal, Sleepers,
};
use stealbench_schedulers::stack::Stack;

/// Writes a model's plain (non-atomic) data: loom checks that no other access races with it.
fn write(c: &UnsafeCell<usize>, v: usize) {
    // SAFETY: loom checks the access: a racing one fails the model.
    c.with_mut(|p| unsafe { *p = v });
}

/// Reads a model's plain data (see [`write`]).
fn read(c: &UnsafeCell<usize>) -> usize {
    // SAFETY: as in `write`.
    c.with(|p| unsafe { *p })
}

/// Runs `f` under loom at the preemption bound of `LOOM_MAX_PREEMPTIONS`, 2 if it is not set,
/// and says how many executions it explored (seen with `--nocapture`).
fn model(f: impl Fn() + Sync + Send + 'static) {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(2);
    }
    let runs = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&runs);
    b.check(move || {
        counted.fetch_add(1, Relaxed);
        f()
    });
    eprintln!(
        "{}: {} executions at preemption bound {}",
        std::thread::current().name().unwrap_or("model"),
        runs.load(Relaxed),
        b.preemption_bound.unwrap_or(0)
    );
}

// ---------------------------------------------------------------------------------------------
// The deque
// ---------------------------------------------------------------------------------------------

/// What a deque entry stands for: a task record the owner fills in before the push and whoever
/// takes the entry reads (a race on it is a missing happens-before from push to take).
struct Tasks(Vec<UnsafeCell<usize>>);

impl Tasks {
    fn new(n: usize) -> Arc<Tasks> {
        Arc::new(Tasks((0..n).map(|_| UnsafeCell::new(0)).collect()))
    }

    /// The owner writes task `i` and pushes its entry, `[i, !i]` (two words, to catch a torn
    /// read).
    fn push(&self, o: &Owner, i: usize) {
        write(&self.0[i], 100 + i);
        o.push([i, !i]);
    }

    /// The entry `e` was taken: it is whole, and its task's record is the one written.
    fn took(&self, e: Entry) -> usize {
        let i = e[0];
        assert_eq!(e[1], !i, "torn entry {e:?}");
        let v = read(&self.0[i]);
        assert_eq!(v, 100 + i, "task {i} taken without the owner's write");
        i
    }
}

/// One steal attempt; the index of the entry it took, if any.
fn steal_once(t: &Thief, tasks: &Tasks) -> Option<usize> {
    match t.steal() {
        Stolen::Entry(e) => Some(tasks.took(e)),
        Stolen::Empty | Stolen::Retry => None,
    }
}

/// The owner pops until the deque is empty; the indices it took.
fn pop_all(o: &Owner, tasks: &Tasks) -> Vec<usize> {
    let mut got = Vec::new();
    while let Some(e) = o.pop() {
        got.push(tasks.took(e));
    }
    got
}

/// Every one of `0..n` was taken exactly once.
fn each_once(mut taken: Vec<usize>, n: usize) {
    taken.sort_unstable();
    assert_eq!(
        taken,
        (0..n).collect::<Vec<_>>(),
        "lost or duplicated entries"
    );
}

/// Owner push then pop against one thief's steal of that last entry (the race `pop` settles
/// with its compare-and-swap of `top`, after the fence pair). Property: exactly one of them
/// takes the entry, whole and with its task visible; the deque is empty and usable after.
#[test]
fn deque_pop_and_steal_race_for_the_last_entry() {
    model(|| {
        let (o, t) = deque::new(2);
        let tasks = Tasks::new(2);
        tasks.push(&o, 0);
        let thief = {
            let tasks = Arc::clone(&tasks);
            thread::spawn(move || steal_once(&t, &tasks))
        };
        let mut taken = pop_all(&o, &tasks);
        taken.extend(thief.join().unwrap());
        each_once(taken, 1);
        assert!(o.is_empty());
        // `bottom` was restored: the next push and pop work.
        tasks.push(&o, 1);
        assert_eq!(o.pop().map(|e| tasks.took(e)), Some(1));
    });
}

/// Two entries, the owner popping both against a thief's two steals: the thief takes the top
/// one while the owner pops the bottom one, then the thief tries the bottom one too. This is
/// where the fence pair matters: an owner that read `top` from before the first steal and a
/// thief that read `bottom` from before the pop would both take the bottom entry. Property:
/// each entry is taken exactly once, whole and with its task visible.
#[test]
fn deque_pops_and_two_steals_take_each_entry_once() {
    model(|| pops_and_two_steals(deque::new(2)));
}

/// The scenario of `deque_pops_and_two_steals_take_each_entry_once` on the deque `(o, t)`.
fn pops_and_two_steals((o, t): (Owner, Thief)) {
    let tasks = Tasks::new(2);
    tasks.push(&o, 0);
    tasks.push(&o, 1);
    let thief = {
        let tasks = Arc::clone(&tasks);
        thread::spawn(move || {
            let first = steal_once(&t, &tasks);
            first
                .into_iter()
                .chain(steal_once(&t, &tasks))
                .collect::<Vec<_>>()
        })
    };
    let mut taken = pop_all(&o, &tasks);
    taken.extend(thief.join().unwrap());
    each_once(taken, 2);
}

/// A thief steals while the owner pushes (the thief started before either push): the push's
/// Release store of `bottom` is what makes the entry and its task visible to a thief that
/// sees the new `bottom`. Property: the thief takes nothing or a whole entry whose task it
/// sees; with the owner's pops after, each entry is taken exactly once.
#[test]
fn deque_steal_during_pushes() {
    model(|| {
        let (o, t) = deque::new(2);
        let tasks = Tasks::new(2);
        let thief = {
            let tasks = Arc::clone(&tasks);
            thread::spawn(move || steal_once(&t, &tasks))
        };
        tasks.push(&o, 0);
        tasks.push(&o, 1);
        let mut taken: Vec<usize> = thief.join().unwrap().into_iter().collect();
        taken.extend(pop_all(&o, &tasks));
        each_once(taken, 2);
    });
}

/// The membarrier-free owner's push path against a steal: capacity 2, two entries pushed, a
/// thief steals while the owner pushes a third, which reaches `limit` and reads `top` again
/// (`make_room`): it reuses the slot the thief took (if the steal is done) or grows the buffer
/// while the thief may still read the old one. Property: each entry is taken exactly once,
/// whole and with its task visible, whichever buffer the thief read.
#[test]
fn deque_push_reuses_or_grows_during_a_steal() {
    model(|| {
        let (o, t) = deque::new(2);
        let tasks = Tasks::new(3);
        tasks.push(&o, 0);
        tasks.push(&o, 1);
        let thief = {
            let tasks = Arc::clone(&tasks);
            thread::spawn(move || steal_once(&t, &tasks))
        };
        tasks.push(&o, 2);
        let mut taken = pop_all(&o, &tasks);
        taken.extend(thief.join().unwrap());
        each_once(taken, 3);
    });
}

/// Two thieves and the owner race for one entry. Property: exactly one of the three takes it.
#[test]
fn deque_two_thieves_and_the_owner_race_for_one_entry() {
    model(|| two_thieves_and_the_owner(deque::new(2)));
}

/// The scenario of `deque_two_thieves_and_the_owner_race_for_one_entry` on the deque `(o, t)`.
fn two_thieves_and_the_owner((o, t): (Owner, Thief)) {
    let tasks = Tasks::new(1);
    tasks.push(&o, 0);
    let thieves: Vec<_> = (0..2)
        .map(|_| {
            let (t, tasks) = (t.clone(), Arc::clone(&tasks));
            thread::spawn(move || steal_once(&t, &tasks))
        })
        .collect();
    let mut taken = pop_all(&o, &tasks);
    for h in thieves {
        taken.extend(h.join().unwrap());
    }
    each_once(taken, 1);
}

/// A deque whose owner switches its fence mode at every pop ([`Switching::EVERY_POP`]), so a
/// thief's two reads of the mode can see two generations.
fn switching_deque() -> (Owner, Thief) {
    deque::with(
        2,
        std::sync::Arc::new(FenceCounts::new()),
        Switching::EVERY_POP,
    )
}

/// As `deque_pops_and_two_steals_take_each_entry_once`, with the owner switching modes before
/// each of its pops: a thief may read the symmetric generation first and a new one after its
/// read of `bottom` (then it issues the heavy fence and reads `bottom` again), or the
/// asymmetric one. Property: each entry is taken exactly once, whole and with its task
/// visible.
#[test]
fn deque_mode_switches_during_pops_and_two_steals() {
    model(|| pops_and_two_steals(switching_deque()));
}

/// Two thieves and the switching owner race for one entry, the owner switching before its
/// pop. Property: exactly one of the three takes it.
#[test]
fn deque_mode_switch_two_thieves_and_the_owner_race_for_one_entry() {
    model(|| two_thieves_and_the_owner(switching_deque()));
}

// ---------------------------------------------------------------------------------------------
// The rendezvous
// ---------------------------------------------------------------------------------------------

/// A forked child and its continuation (taken by another worker) arrive at their rendezvous
/// from two threads, each having written its side's data first (the child also its last
/// strand's mark). Property: exactly one arrives second and gets the other's word; it sees
/// the first side's data (and, if it is the parent, the child's mark); it can reuse the
/// rendezvous (the child resets its own, the parent recycles it into its pool), which then
/// starts empty.
#[test]
fn rendezvous_two_sides_arrive_once_each() {
    const CHILD: usize = 1;
    const PARENT: usize = 2;
    model(|| {
        let rv = RvPool::new().take() as usize;
        // The child's boxed result and the parent's result cell.
        let data = Arc::new([UnsafeCell::new(0usize), UnsafeCell::new(0usize)]);
        let child = {
            let data = Arc::clone(&data);
            thread::spawn(move || {
                let rv = rv as *const Rendezvous;
                write(&data[0], 42);
                // SAFETY: the rendezvous is alive until the second side is done with it.
                unsafe { (*rv).set_child_end(7) };
                // SAFETY: the child arrives once.
                match unsafe { (*rv).arrive(CHILD) } {
                    None => false,
                    Some(w) => {
                        assert_eq!(w, PARENT);
                        assert_eq!(read(&data[1]), 5);
                        // SAFETY: both arrived; the child keeps it and forks again.
                        unsafe {
                            (*rv).reset();
                            assert_eq!((*rv).arrive(CHILD), None);
                        }
                        true
                    }
                }
            })
        };
        let rvp = rv as *const Rendezvous;
        write(&data[1], 5);
        // SAFETY: the parent arrives once.
        let parent_second = match unsafe { (*rvp).arrive(PARENT) } {
            None => false,
            Some(w) => {
                assert_eq!(w, CHILD);
                assert_eq!(read(&data[0]), 42);
                // SAFETY: the child arrived first, after setting its mark.
                assert_eq!(unsafe { (*rvp).child_end() }, 7);
                let mut pool = RvPool::new();
                // SAFETY: both arrived; the parent recycles it, and takes it for its next fork.
                unsafe {
                    pool.give(rvp);
                    let again = pool.take();
                    assert_eq!(again, rvp);
                    assert_eq!((*again).arrive(PARENT), None);
                }
                true
            }
        };
        let child_second = child.join().unwrap();
        assert!(parent_second != child_second, "exactly one side is second");
        // SAFETY: both threads are done with it.
        unsafe { RvPool::new().give(rvp) };
    });
}

// ---------------------------------------------------------------------------------------------
// The signal
// ---------------------------------------------------------------------------------------------

type Node = FiberBox<AbpPolicy>;

/// A fiber node as a driver parks it: its stack, and its saved context in `ctx` (which whoever
/// resumes the fiber reads).
fn node(ctx: &UnsafeCell<usize>, id: usize) -> Node {
    write(ctx, id);
    Box::new(FiberNode {
        sp: id,
        stack: Stack::new(1).expect("a one-page stack"),
        top: 0,
        next: std::ptr::null_mut(),
        fork_rv: std::ptr::null(),
        rv: std::ptr::null(),
    })
}

/// Two fibers park on a signal (two drivers, racing each other's push onto the list) while a
/// third thread writes the result and sets it. Property: each fiber is resumed exactly once,
/// either by its own driver (the signal was set: `park` gives it back) or by the setter (from
/// the list it took), and whoever resumes it sees both the fiber's context, written before it
/// was parked, and the result, written before the set.
#[test]
fn signal_set_races_two_parks() {
    model(|| {
        let sig = Arc::new(Signal::<AbpPolicy>::new());
        // The join's result, and each fiber's saved context.
        let cells = Arc::new([
            UnsafeCell::new(0usize),
            UnsafeCell::new(0),
            UnsafeCell::new(0),
        ]);
        let resume = |cells: &[UnsafeCell<usize>; 3], f: Node| {
            let id = f.sp;
            assert_eq!(read(&cells[id]), id, "context not visible");
            assert_eq!(read(&cells[0]), 9, "result not visible");
            id
        };
        let waiters: Vec<_> = (1..=2)
            .map(|id| {
                let (sig, cells) = (Arc::clone(&sig), Arc::clone(&cells));
                thread::spawn(move || {
                    let f = node(&cells[id], id);
                    sig.park(f).map(|back| resume(&cells, back))
                })
            })
            .collect();
        write(&cells[0], 9);
        let mut resumed = Vec::new();
        // SAFETY: set once, while `sig` is alive (the `Arc`).
        let n = unsafe { sig.set(|f| resumed.push(resume(&cells, f))) };
        assert_eq!(n, resumed.len());
        for h in waiters {
            resumed.extend(h.join().unwrap());
        }
        assert!(sig.is_set() && !sig.has_waiter());
        resumed.sort_unstable();
        assert_eq!(resumed, [1, 2], "a fiber lost or resumed twice");
    });
}

// ---------------------------------------------------------------------------------------------
// Sleep and wake-up
// ---------------------------------------------------------------------------------------------

/// A worker that found nothing goes to sleep while another pushes a task and notifies, as
/// `Local::push` does (push, the light side of the fence, `notify`); the sleeper's last look
/// is `work_visible` after the heavy side. Property: no lost wake-up (loom reports a deadlock
/// if the sleeper parks and nobody unparks it), and once `sleep` returns the task is visible:
/// the sleeper's steal takes it.
#[test]
fn sleep_and_push_no_lost_wakeup() {
    model(|| {
        let (o, t) = deque::new(2);
        let tasks = Tasks::new(1);
        let sleepers = Arc::new(Sleepers::new(1));
        let sleeper = {
            let (s, tasks) = (Arc::clone(&sleepers), Arc::clone(&tasks));
            thread::spawn(move || {
                s.register(0);
                s.sleep(0, || !t.is_empty(), || {});
                assert_eq!(steal_once(&t, &tasks), Some(0), "woken without the task");
            })
        };
        tasks.push(&o, 0);
        o.light_fence();
        sleepers.notify();
        sleeper.join().unwrap();
    });
}

/// A worker goes to sleep while the pool shuts down (`Sleepers::terminate`, the pool's drop).
/// Property: the sleeper does not sleep through the shutdown (no deadlock), and when `sleep`
/// returns it sees the pool terminating.
#[test]
fn sleep_and_shutdown_no_lost_wakeup() {
    model(|| {
        let sleepers = Arc::new(Sleepers::new(1));
        let sleeper = {
            let s = Arc::clone(&sleepers);
            thread::spawn(move || {
                s.register(0);
                s.sleep(0, || false, || {});
                assert!(s.terminating());
            })
        };
        sleepers.terminate();
        sleeper.join().unwrap();
    });
}

// ---------------------------------------------------------------------------------------------
// libfork's join counter
// ---------------------------------------------------------------------------------------------

/// A parent frame whose continuation was stolen twice (so two forked children find it gone
/// when they return) reaches its join while both children return, on three threads; each side
/// writes its result first (the parent: the called child's). Property: exactly one of the three
/// arrivals is the last; it sees all three results, and its reset leaves the counter ready for
/// the next join.
#[test]
fn join_counter_two_children_and_the_parent() {
    model(|| {
        let joins = Arc::new(JoinCounter::new());
        let results = Arc::new([
            UnsafeCell::new(0usize),
            UnsafeCell::new(0),
            UnsafeCell::new(0),
        ]);
        // The last arrival goes on with the parent: reads every result, resets the counter.
        let go_on = |joins: &JoinCounter, results: &[UnsafeCell<usize>; 3]| {
            for (i, r) in results.iter().enumerate() {
                assert_eq!(read(r), i + 1, "result {i} not visible");
            }
            joins.reset();
        };
        let children: Vec<_> = (0..2)
            .map(|i| {
                let (joins, results) = (Arc::clone(&joins), Arc::clone(&results));
                thread::spawn(move || {
                    write(&results[i], i + 1);
                    let last = joins.child_arrives();
                    if last {
                        go_on(&joins, &results);
                    }
                    last
                })
            })
            .collect();
        write(&results[2], 3);
        let mut lasts = usize::from(joins.parent_arrives(2));
        if lasts == 1 {
            go_on(&joins, &results);
        }
        for h in children {
            lasts += usize::from(h.join().unwrap());
        }
        assert_eq!(lasts, 1, "not exactly one last arrival");
        // Reset: a join with no steal finds every child done.
        assert!(joins.parent_arrives(0));
    });
}

// ---------------------------------------------------------------------------------------------
// prows's future state
// ---------------------------------------------------------------------------------------------

/// What a suspension records on a future (its deque, in `prows`): `id`, and a record its adder
/// writes before the add and whoever gets the entry (the put, from its list) reads. A loom
/// `Arc`, so that loom reports one never dropped (a leaked list).
struct Payload {
    id: usize,
    data: UnsafeCell<usize>,
}

type Fut = FutState<Arc<Payload>>;

/// A new entry `id` whose record its adder (the calling thread) has written.
fn payload(id: usize) -> Arc<Payload> {
    let p = Arc::new(Payload {
        id,
        data: UnsafeCell::new(0),
    });
    write(&p.data, 100 + id);
    p
}

/// The put took entry `p` out of the list: its adder's record is visible.
fn put_took(p: &Payload) -> usize {
    assert_eq!(
        read(&p.data),
        100 + p.id,
        "entry {} without its record",
        p.id
    );
    p.id
}

/// The future's value, which the put writes before `complete` and a touch reads once it sees
/// the future done.
const VALUE: usize = 7;

/// A suspension's add, as `prows`'s touch: an add refused because the future is done gives the
/// entry back, and the touch then reads the future's value (in `value`), which must be visible.
/// The id of the entry given back, if any.
fn add_or_resume(fut: &Fut, value: &UnsafeCell<usize>, id: usize) -> Option<usize> {
    match fut.add_suspended(payload(id)) {
        Ok(()) => None,
        Err(back) => {
            assert_eq!(back.id, id, "another entry given back");
            assert_eq!(read(value), VALUE, "a refused add without the value");
            Some(id)
        }
    }
}

/// One thread adds an entry while another writes the value and puts. Property: either the add
/// is refused (the future is done) and the adder gets its entry back and sees the value, or
/// the put's list holds the entry, with its record visible; never both, never neither.
#[test]
fn future_state_add_races_the_put() {
    model(|| {
        let fut = Arc::new(Fut::new(false));
        let value = Arc::new(UnsafeCell::new(0usize));
        let adder = {
            let (fut, value) = (Arc::clone(&fut), Arc::clone(&value));
            thread::spawn(move || add_or_resume(&fut, &value, 1))
        };
        write(&value, VALUE);
        let mut got: Vec<usize> = fut.complete().iter().map(|p| put_took(p)).collect();
        got.extend(adder.join().unwrap());
        assert_eq!(got, [1], "the entry lost or both put and refused");
        assert!(fut.is_done());
    });
}

/// Two threads add an entry each (racing each other's compare-and-swap) while a third writes
/// the value and puts. Property: each entry is either in the put's list, with its record
/// visible (also the earlier adder's, linked behind the later one's node), or given back to
/// its adder with the value visible; exactly once.
#[test]
fn future_state_two_adds_race_the_put() {
    model(|| {
        let fut = Arc::new(Fut::new(false));
        let value = Arc::new(UnsafeCell::new(0usize));
        let adders: Vec<_> = (1..=2)
            .map(|id| {
                let (fut, value) = (Arc::clone(&fut), Arc::clone(&value));
                thread::spawn(move || add_or_resume(&fut, &value, id))
            })
            .collect();
        write(&value, VALUE);
        let mut got: Vec<usize> = fut.complete().iter().map(|p| put_took(p)).collect();
        for h in adders {
            got.extend(h.join().unwrap());
        }
        got.sort_unstable();
        assert_eq!(got, [1, 2], "an entry lost or taken twice");
    });
}

/// A future never put (its task panicked out of the scope, say): two threads add an entry each
/// and let go of the state, as does the main thread; whichever is last drops it. Property: the
/// drop frees the list: every entry is dropped exactly once (the main thread's reference is
/// then the only one; loom also reports an entry `Arc` never dropped).
#[test]
fn future_state_dropped_unput_frees_its_list() {
    model(|| {
        let fut = Arc::new(Fut::new(false));
        let entries: Vec<_> = (1..=2).map(payload).collect();
        let adders: Vec<_> = entries
            .iter()
            .map(|p| {
                let (fut, p) = (Arc::clone(&fut), Arc::clone(p));
                thread::spawn(move || {
                    assert!(fut.add_suspended(p).is_ok(), "refused by an unput future");
                })
            })
            .collect();
        drop(fut);
        for h in adders {
            h.join().unwrap();
        }
        for p in &entries {
            assert_eq!(
                Arc::strong_count(p),
                1,
                "entry {} leaked or dropped twice",
                p.id
            );
        }
    });
}

/// A touch checks `is_done` while another thread writes the value and puts. Property: a touch
/// that sees the future done sees the value; after the put the future stays done; a future
/// made done is done.
#[test]
fn future_state_is_done_after_the_put() {
    model(|| {
        let fut = Arc::new(Fut::new(false));
        let value = Arc::new(UnsafeCell::new(0usize));
        let toucher = {
            let (fut, value) = (Arc::clone(&fut), Arc::clone(&value));
            thread::spawn(move || {
                if fut.is_done() {
                    assert_eq!(read(&value), VALUE, "done without the value");
                }
            })
        };
        write(&value, VALUE);
        assert!(fut.complete().is_empty());
        assert!(fut.is_done());
        toucher.join().unwrap();
        assert!(Fut::new(true).is_done());
    });
}
