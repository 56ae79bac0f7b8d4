//! The recorded computation DAG ([`Dag`]): strands in serial order, each with its work and the
//! operation that ended it, in one `Vec` of 12-byte records with `u32` indices.
//!
//! # The model
//!
//! A node is a *strand*: what a task runs between two parallel operations. Nodes are numbered in
//! the serial (one-worker, eager, left-to-right depth-first) order of the papers, so node `v + 1`
//! runs right after node `v` serially, and every edge goes from a lower to a higher index (the
//! serial order is a topological order). What ended a strand says where its out-edges go:
//!
//! | [`Kind`] | ended by | out-edges |
//! |---|---|---|
//! | [`Kind::Fork`] | `join` (its first branch starts) or `Scope::spawn` | `v + 1` (the child, left) and `target` (the continuation, right) |
//! | [`Kind::Future`] | `Futures::future` / `shared_future` (fut-create, work-first) | `v + 1` (the future task) and `target` (the creator's continuation) |
//! | [`Kind::Seq`] | the end of a `join`'s second branch, a scope body whose scope has children, or a run followed by another run | `v + 1` (a sync node) |
//! | [`Kind::Touch`] | `get` of a future handle (the *local parent* of the future-join node) | `v + 1` (the future-join node) |
//! | [`Kind::Jump`] | the end of a `join`'s first branch, or of a spawned task | `target` (the join's or the scope's sync node) |
//! | [`Kind::Put`] | the end of a future task (the *put* node) | every touch's future-join node, and `target` (the scope's sync node) |
//! | [`Kind::End`] | the end of the last run | none |
//!
//! A sync node (after a `join`, or at the end of a scope that spawned or created anything) has
//! one in-edge per branch, spawned task and future task; a future-join node has two, from its
//! local parent and from the put. Every other node has one. A scope waits for its futures'
//! tasks too (as every runtime here does), hence the edge from a put to its scope's sync: it is
//! redundant when the future is touched inside the scope, which the structured variants do.
//! A multi-touch future's put has one out-edge per touch (the papers' chain of put nodes,
//! collapsed).

/// No node: an absent target or future.
pub const NONE: u32 = u32::MAX;

/// Bits of a node's tag that hold its future id; the kind sits above them.
const FUTURE_BITS: u32 = 29;
const FUTURE_MASK: u32 = (1 << FUTURE_BITS) - 1;

/// The largest number of futures one recording can hold (ids must fit the tag).
pub const MAX_FUTURES: u32 = FUTURE_MASK;

/// What a strand's weight measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Weights {
    /// Every strand weighs 1 (plus what the program adds with
    /// [`RecordWorker::work`](super::RecordWorker::work)): the DAG's shape alone, and a
    /// recording that is the same on every machine.
    #[default]
    Unit,
    /// Nanoseconds measured with the monotonic clock between the events that delimit the strand
    /// (at least 1, plus what the program adds). Includes the recorder's own bookkeeping of one
    /// event, tens of nanoseconds: strands shorter than that are measured long.
    Nanos,
}

/// What ended a strand, which says where its out-edges go (see the [module](self) table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// Fork of a `join`'s first branch or of a spawned task: child `v + 1`, continuation `target`.
    Fork = 0,
    /// Future creation: future task `v + 1`, continuation `target`.
    Future = 1,
    /// Continues into the sync node `v + 1`.
    Seq = 2,
    /// A touch: the future-join node `v + 1` also waits for the future's put.
    Touch = 3,
    /// Ends a branch or a spawned task: continues into the sync node `target`.
    Jump = 4,
    /// Ends a future task: enables its touches' join nodes and the scope's sync `target`.
    Put = 5,
    /// The sink: the end of the last run.
    End = 6,
}

impl Kind {
    const ALL: [Kind; 7] = [
        Kind::Fork,
        Kind::Future,
        Kind::Seq,
        Kind::Touch,
        Kind::Jump,
        Kind::Put,
        Kind::End,
    ];
}

/// One strand: its work, the operation that ended it and the node it jumps to, in 12 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    work: u32,
    target: u32,
    /// `kind << 29 | future id` (the id is [`FUTURE_MASK`] when absent).
    tag: u32,
}

impl Node {
    pub(crate) const PLACEHOLDER: Node = Node {
        work: 0,
        target: NONE,
        tag: (Kind::End as u32) << FUTURE_BITS | FUTURE_MASK,
    };

    pub(crate) fn new(work: u32, kind: Kind, target: u32, future: u32) -> Node {
        let fut = if future == NONE { FUTURE_MASK } else { future };
        assert!(fut <= FUTURE_MASK, "more than {MAX_FUTURES} futures");
        Node {
            work,
            target,
            tag: (kind as u32) << FUTURE_BITS | fut,
        }
    }

    /// The strand's weight (at least 1 in a finished recording).
    #[inline]
    pub fn work(&self) -> u32 {
        self.work
    }

    /// What ended the strand.
    #[inline]
    pub fn kind(&self) -> Kind {
        Kind::ALL[(self.tag >> FUTURE_BITS) as usize]
    }

    /// The continuation of a fork or future creation, or the sync node a branch, spawned task or
    /// future task ends into; [`NONE`] for the other kinds.
    #[inline]
    pub fn target(&self) -> u32 {
        self.target
    }

    /// The future a [`Kind::Touch`] touches or a [`Kind::Put`] completes; [`NONE`] otherwise.
    #[inline]
    pub fn future(&self) -> u32 {
        let f = self.tag & FUTURE_MASK;
        if f == FUTURE_MASK { NONE } else { f }
    }

    pub(crate) fn set_target(&mut self, target: u32) {
        self.target = target;
    }

    pub(crate) fn set_kind(&mut self, kind: Kind) {
        self.tag = (kind as u32) << FUTURE_BITS | (self.tag & FUTURE_MASK);
    }
}

/// A recorded computation: nodes in serial order, and for each future its put node and its
/// touches' join nodes. Made by [`Recorder`](super::Recorder).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Dag {
    pub(crate) nodes: Vec<Node>,
    /// Future id -> its put node.
    pub(crate) puts: Vec<u32>,
    /// Future id -> the range of `touches` holding its touches' join nodes (`futures + 1`
    /// offsets; empty when there are no futures).
    pub(crate) touch_start: Vec<u32>,
    /// The future-join nodes, grouped by future, in serial order within a future.
    pub(crate) touches: Vec<u32>,
    pub(crate) weights: Weights,
}

impl Dag {
    /// Number of nodes (strands).
    #[inline]
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Node `v` (serial index).
    #[inline]
    pub fn node(&self, v: u32) -> Node {
        self.nodes[v as usize]
    }

    /// Every node, in serial order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// What the weights measure.
    pub fn weights(&self) -> Weights {
        self.weights
    }

    /// Number of futures created.
    pub fn futures(&self) -> usize {
        self.puts.len()
    }

    /// Number of touches (`get`s).
    pub fn touches(&self) -> usize {
        self.touches.len()
    }

    /// The put node of future `f`.
    pub fn put(&self, f: u32) -> u32 {
        self.puts[f as usize]
    }

    /// The future-join nodes of future `f`'s touches, in serial order.
    #[inline]
    pub fn touch_joins(&self, f: u32) -> &[u32] {
        let (a, b) = (
            self.touch_start[f as usize] as usize,
            self.touch_start[f as usize + 1] as usize,
        );
        &self.touches[a..b]
    }

    /// The work T_1: the sum of every strand's weight.
    pub fn total_work(&self) -> u64 {
        self.nodes.iter().map(|n| u64::from(n.work)).sum()
    }

    /// Appends the successors of `v` to `out`, in increasing order.
    pub fn successors(&self, v: u32, out: &mut Vec<u32>) {
        let n = self.node(v);
        let start = out.len();
        match n.kind() {
            Kind::Fork | Kind::Future => out.extend([v + 1, n.target]),
            Kind::Seq | Kind::Touch => out.push(v + 1),
            Kind::Jump => out.push(n.target),
            Kind::Put => {
                out.extend_from_slice(self.touch_joins(n.future()));
                out.push(n.target);
            }
            Kind::End => {}
        }
        out[start..].sort_unstable();
    }

    /// Every node's in-degree (the number of its predecessors).
    pub fn in_degrees(&self) -> Vec<u32> {
        let mut deg = vec![0u32; self.len()];
        let mut out = Vec::new();
        for v in 0..self.len() as u32 {
            out.clear();
            self.successors(v, &mut out);
            for &s in &out {
                deg[s as usize] += 1;
            }
        }
        deg
    }

    /// The span T_∞: the heaviest path's total weight. One pass in serial order, which is a
    /// topological order.
    pub fn span(&self) -> u64 {
        let mut finish = vec![0u64; self.len()];
        let mut out = Vec::new();
        let mut span = 0;
        for v in 0..self.len() as u32 {
            let f = finish[v as usize] + u64::from(self.node(v).work);
            span = span.max(f);
            out.clear();
            self.successors(v, &mut out);
            for &s in &out {
                let e = &mut finish[s as usize];
                *e = (*e).max(f);
            }
        }
        span
    }

    /// Checks the invariants the simulator relies on: every edge goes forward, node 0 is the
    /// only source and the last node the only sink, every node weighs at least 1, forks and
    /// future creations have a continuation, every put belongs to its future, and a future-join
    /// node has exactly its local parent and its put as predecessors.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.len() as u32;
        if n == 0 {
            return Ok(());
        }
        let mut out = Vec::new();
        for v in 0..n {
            let node = self.node(v);
            if node.work == 0 {
                return Err(format!("node {v} weighs 0"));
            }
            if (node.kind() == Kind::End) != (v == n - 1) {
                return Err(format!(
                    "node {v} is {:?}; only the last node ends",
                    node.kind()
                ));
            }
            if matches!(node.kind(), Kind::Touch | Kind::Put) {
                let f = node.future();
                if f == NONE || f as usize >= self.futures() {
                    return Err(format!("node {v} names no recorded future"));
                }
                if node.kind() == Kind::Put && self.put(f) != v {
                    return Err(format!("node {v} is not the put of its future {f}"));
                }
                if node.kind() == Kind::Touch && !self.touch_joins(f).contains(&(v + 1)) {
                    return Err(format!("touch {v} is not listed with future {f}"));
                }
            }
            out.clear();
            self.successors(v, &mut out);
            for &s in &out {
                if s <= v || s >= n {
                    return Err(format!("edge {v} -> {s} does not go forward"));
                }
            }
        }
        let deg = self.in_degrees();
        if deg[0] != 0 {
            return Err("node 0 has a predecessor".into());
        }
        if let Some(v) = (1..n as usize).find(|&v| deg[v] == 0) {
            return Err(format!("node {v} has no predecessor"));
        }
        for f in 0..self.futures() as u32 {
            for &j in self.touch_joins(f) {
                let lp = self.node(j - 1);
                if lp.kind() != Kind::Touch || lp.future() != f || deg[j as usize] != 2 {
                    return Err(format!("future-join {j} of future {f} is malformed"));
                }
            }
        }
        Ok(())
    }
}
