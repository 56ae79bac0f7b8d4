//! ProWS: proactive work stealing (Singer, Xu and Lee, PPoPP 2019, Algorithms 1 and 2).
//!
//! Deque objects move between workers: each worker has at most one *active* deque and a
//! *stealable set*. The owner works at the bottom of its active deque exactly as in ABP
//! (Algorithm 1, lines 20-28: push the right node, push the left node, pop the bottom), so
//! fork-join code is scheduled as in ABP apart from the victim choice. Futures:
//!
//! * **touch** of an unfinished future (lines 29-35): the future-join node is kept as the
//!   deque's implicit bottom (`pushBottomImplicit`), the deque is *suspended*: if it holds ready
//!   nodes it goes into the stealable set of the placement's worker, else into none; it is
//!   recorded with the future; the worker has no active deque and steals (`suspensions`).
//! * **put** (lines 36-42): the enabled nodes other than future-joins are pushed first (a
//!   scope's sync); every deque suspended on the future becomes *resumable*, its join node
//!   pushed at its bottom, and one in no stealable set goes into the placement's worker's set
//!   (`deques_resumable`); then, if the worker's active deque is empty, one of them, uniformly
//!   at random, becomes its active deque (`setToActive`; `resumptions`).
//! * **steal** (Algorithm 2): a uniformly random victim *including the thief*, then a uniformly
//!   random deque among the victim's active deque and stealable deques (the thief's own active
//!   deque, empty, fails). A *muggable* deque is taken whole and its bottom runs (`muggings`,
//!   also counted in `steals`, as the runtime does); otherwise the thief pops the top. A
//!   stealable deque left without ready nodes leaves its set (a resumable one is freed, a
//!   suspended one stays with its future); a resumable deque stolen from becomes muggable.
//! * **placement**: [`Placement::Paper`] puts a deque that becomes stealable into a uniformly
//!   random worker's set and calls `rebalanceStealables(v)` on every removal from v's set (a
//!   random v' other than v gives v its last stealable deque, if it has one); the artifact's
//!   [`Placement::Artifact`] takes the less loaded of two random workers (the first on ties)
//!   and never rebalances. These are `schedulers/src/prows`'s random choices, made in the same
//!   order.
//!
//! A worker gets a new deque when it steals without having an active one (after a
//! suspension); the active deque it leaves for a mugged or resumed one is freed.

use crate::Placement;
use crate::engine::{Core, Policy};
use std::collections::{HashMap, VecDeque};
use stealbench_schedulers::record::{Kind, NONE};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Active,
    Suspended,
    Resumable,
    Muggable,
}

/// A deque object.
#[derive(Debug)]
struct Dq {
    /// Ready nodes; the top is the front.
    items: VecDeque<u32>,
    status: Status,
    /// The worker whose stealable set holds it, or [`NONE`].
    home: u32,
    /// Its index in that set.
    pos: u32,
}

pub(crate) struct Prows {
    choices: usize,
    rebalance: bool,
    dqs: Vec<Dq>,
    free: Vec<u32>,
    /// Per worker: its active deque, or [`NONE`].
    active: Vec<u32>,
    /// Per worker: its stealable set.
    stealable: Vec<Vec<u32>>,
    stealable_now: u64,
    stealable_max: u64,
    live: u64,
    live_max: u64,
    /// A suspended future-join node -> the deque it is the implicit bottom of.
    suspended: HashMap<u32, u32, BuildIdHash>,
    /// Scratch: the deques a put resumes.
    resumed: Vec<u32>,
}

impl Prows {
    pub(crate) fn new(p: usize, placement: Placement) -> Prows {
        let mut s = Prows {
            choices: placement.choices(),
            rebalance: placement.rebalances(),
            dqs: Vec::new(),
            free: Vec::new(),
            active: vec![NONE; p],
            stealable: vec![Vec::new(); p],
            stealable_now: 0,
            stealable_max: 0,
            live: 0,
            live_max: 0,
            suspended: HashMap::default(),
            resumed: Vec::new(),
        };
        // The worker that takes the root task gets a deque for it.
        s.active[0] = s.alloc();
        s
    }

    fn alloc(&mut self) -> u32 {
        self.live += 1;
        self.live_max = self.live_max.max(self.live);
        if let Some(d) = self.free.pop() {
            let q = &mut self.dqs[d as usize];
            q.status = Status::Active;
            q.home = NONE;
            return d;
        }
        self.dqs.push(Dq {
            items: VecDeque::new(),
            status: Status::Active,
            home: NONE,
            pos: 0,
        });
        (self.dqs.len() - 1) as u32
    }

    fn release(&mut self, d: u32) {
        debug_assert!(
            self.dqs[d as usize].items.is_empty(),
            "freed a deque with nodes"
        );
        debug_assert_eq!(self.dqs[d as usize].home, NONE);
        self.live -= 1;
        self.free.push(d);
    }

    fn push(&mut self, core: &mut Core, d: u32, x: u32) {
        self.dqs[d as usize].items.push_back(x);
        core.ready += 1;
    }

    fn pop_bottom(&mut self, core: &mut Core, d: u32) -> Option<u32> {
        let x = self.dqs[d as usize].items.pop_back();
        core.ready -= u64::from(x.is_some());
        x
    }

    /// The worker whose set receives a deque that becomes stealable.
    fn place(&self, core: &mut Core) -> usize {
        let mut best = core.rng.index(core.p);
        for _ in 1..self.choices {
            let v = core.rng.index(core.p);
            if self.stealable[v].len() < self.stealable[best].len() {
                best = v;
            }
        }
        best
    }

    fn add_stealable(&mut self, v: usize, d: u32) {
        let q = &mut self.dqs[d as usize];
        debug_assert_eq!(q.home, NONE, "a deque in two stealable sets");
        q.home = v as u32;
        q.pos = self.stealable[v].len() as u32;
        self.stealable[v].push(d);
        self.stealable_now += 1;
        self.stealable_max = self.stealable_max.max(self.stealable_now);
    }

    /// Removes `d` from its home's set (swap-remove, as the runtime does).
    fn remove_stealable(&mut self, d: u32) {
        let (h, i) = {
            let q = &mut self.dqs[d as usize];
            let hp = (q.home as usize, q.pos as usize);
            q.home = NONE;
            hp
        };
        let set = &mut self.stealable[h];
        debug_assert_eq!(set[i], d);
        set.swap_remove(i);
        if let Some(&moved) = set.get(i) {
            self.dqs[moved as usize].pos = i as u32;
        }
        self.stealable_now -= 1;
    }

    /// `rebalanceStealables(v)`: a random worker v' other than v gives v its last stealable
    /// deque, if it has one. Nothing with the artifact's placement.
    fn rebalance(&mut self, core: &mut Core, v: usize) {
        if !self.rebalance {
            return;
        }
        let v2 = core.rng.index(core.p);
        if v2 == v {
            return;
        }
        if let Some(d) = self.stealable[v2].pop() {
            let q = &mut self.dqs[d as usize];
            q.home = v as u32;
            q.pos = self.stealable[v].len() as u32;
            self.stealable[v].push(d);
            core.c.rebalances += 1;
        }
    }

    /// `setToActive(d)` for worker `w`: out of its stealable set (rebalancing first), active;
    /// `w`'s previous active deque, empty, is freed.
    fn set_to_active(&mut self, core: &mut Core, w: usize, d: u32) {
        let home = self.dqs[d as usize].home;
        if home != NONE {
            self.rebalance(core, home as usize);
            self.remove_stealable(d);
        }
        self.dqs[d as usize].status = Status::Active;
        let old = std::mem::replace(&mut self.active[w], d);
        if old != NONE {
            self.release(old);
        }
    }

    /// Lines 29-35 and `suspend`: `w`'s active deque suspends with the join node `j` as its
    /// implicit bottom.
    fn suspend(&mut self, core: &mut Core, w: usize, j: u32) {
        let d = std::mem::replace(&mut self.active[w], NONE);
        self.dqs[d as usize].status = Status::Suspended;
        if !self.dqs[d as usize].items.is_empty() {
            let v = self.place(core);
            self.add_stealable(v, d);
        }
        self.suspended.insert(j, d);
        core.c.suspensions += 1;
    }

    /// Lines 36-42 after the put's other successors were pushed: the deques in `resumed`
    /// become resumable, and one becomes `w`'s active deque if that is empty.
    fn resume(&mut self, core: &mut Core, w: usize, resumed: &mut Vec<u32>) {
        for &d in resumed.iter() {
            // The caller pushed each deque's join node at its bottom.
            self.dqs[d as usize].status = Status::Resumable;
            if self.dqs[d as usize].home == NONE {
                let v = self.place(core);
                self.add_stealable(v, d);
            }
        }
        core.c.deques_resumable += resumed.len() as u64;
        let a = self.active[w];
        if !resumed.is_empty() && self.dqs[a as usize].items.is_empty() {
            let d = resumed.swap_remove(core.rng.index(resumed.len()));
            self.set_to_active(core, w, d);
            core.c.resumptions += 1;
        }
        resumed.clear();
    }
}

impl Policy for Prows {
    fn complete(&mut self, core: &mut Core, w: usize, v: u32) -> Option<u32> {
        let node = core.nodes[v as usize];
        let a = self.active[w];
        debug_assert_ne!(a, NONE, "a worker ran a node without an active deque");
        match node.kind() {
            Kind::Fork | Kind::Future => {
                let (child, cont) = (core.dec(v + 1), core.dec(node.target()));
                debug_assert!(child && cont, "a fork's children have one predecessor");
                self.push(core, a, node.target());
                self.push(core, a, v + 1);
            }
            Kind::Seq => {
                if core.dec(v + 1) {
                    self.push(core, a, v + 1);
                }
            }
            Kind::Jump => {
                if core.dec(node.target()) {
                    self.push(core, a, node.target());
                }
            }
            Kind::Touch => {
                if core.dec(v + 1) {
                    self.push(core, a, v + 1);
                } else {
                    self.suspend(core, w, v + 1);
                    return None;
                }
            }
            Kind::Put => {
                if core.dec(node.target()) {
                    self.push(core, a, node.target());
                }
                let mut resumed = std::mem::take(&mut self.resumed);
                for &j in core.dag.touch_joins(node.future()) {
                    if core.dec(j) {
                        // Its toucher suspended: the join node is ready at its deque's bottom.
                        let d = self
                            .suspended
                            .remove(&j)
                            .expect("a future-join enabled by a put had suspended");
                        self.push(core, d, j);
                        resumed.push(d);
                    }
                }
                self.resume(core, w, &mut resumed);
                self.resumed = resumed;
            }
            Kind::End => {}
        }
        let a = self.active[w];
        self.pop_bottom(core, a)
    }

    fn attempt(&mut self, core: &mut Core, w: usize) -> Option<u32> {
        let v = core.rng.index(core.p);
        let has_active = usize::from(self.active[v] != NONE);
        let n = has_active + self.stealable[v].len();
        if n == 0 {
            return None;
        }
        let k = core.rng.index(n);
        if v == w && k < has_active {
            return None; // the thief's own active deque: empty, which is why it steals
        }
        let d = if k < has_active {
            self.active[v]
        } else {
            self.stealable[v][k - has_active]
        };
        let status = self.dqs[d as usize].status;
        if status == Status::Muggable {
            self.set_to_active(core, w, d);
            core.c.muggings += 1;
            core.c.steals += 1;
            let x = self.pop_bottom(core, d);
            debug_assert!(x.is_some(), "a muggable deque without nodes");
            return x;
        }
        let x = self.dqs[d as usize].items.pop_front();
        core.ready -= u64::from(x.is_some());
        if status != Status::Active {
            if self.dqs[d as usize].items.is_empty() {
                if self.dqs[d as usize].home != NONE {
                    self.remove_stealable(d);
                    self.rebalance(core, v);
                }
                if status == Status::Resumable {
                    self.release(d);
                }
            } else if status == Status::Resumable {
                self.dqs[d as usize].status = Status::Muggable;
            }
        }
        let x = x?;
        core.c.steals += 1;
        if self.active[w] == NONE {
            self.active[w] = self.alloc();
        }
        Some(x)
    }

    fn max_deques(&self) -> u64 {
        self.live_max
    }

    fn max_stealable(&self) -> u64 {
        self.stealable_max
    }
}

/// Hashes a node index by one multiplication (the keys are distinct `u32`s; no adversary).
#[derive(Default, Clone, Copy)]
pub(crate) struct BuildIdHash;

impl std::hash::BuildHasher for BuildIdHash {
    type Hasher = IdHash;
    fn build_hasher(&self) -> IdHash {
        IdHash(0)
    }
}

pub(crate) struct IdHash(u64);

impl std::hash::Hasher for IdHash {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u32(&mut self, x: u32) {
        self.0 = u64::from(x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}
