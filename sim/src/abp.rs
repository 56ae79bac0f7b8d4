//! ABP: parsimonious work stealing with futures (Spoonhower et al., Figure 2; Arora, Blumofe
//! and Plaxton's scheduler).
//!
//! One deque per worker. A worker that finishes a node takes the nodes it enabled: it runs the
//! first in serial order and pushes the others at the bottom of its deque so that they pop in
//! serial order, which is Figure 2's "push the continuation, push the spawned task, pop the
//! bottom" with the push and pop of the node it runs next folded together (a thief can never
//! take that node in between, as in every implementation):
//!
//! * fork (`join`, spawn) and future creation: runs the child (or the future task), pushes the
//!   continuation;
//! * the end of a branch, a spawned task or a future task: the sync node, if this was its last
//!   predecessor, runs next; otherwise nothing ("else do nothing");
//! * a touch: the future-join node runs next if the future is done; otherwise the toucher is
//!   *suspended on the future* (counted in `suspensions`) and the worker goes on with its deque;
//! * a put: every future-join node whose toucher is suspended on this future is pushed (and so
//!   is the scope's sync if the put was its last predecessor); they run in serial order.
//!
//! With nothing enabled the worker pops its deque's bottom; with an empty deque it steals: a
//! uniformly random *other* worker, the top of its deque (Figure 2: "select another deque").

use crate::engine::{Core, Policy};
use std::collections::VecDeque;
use stealbench_schedulers::record::Kind;

/// The workers' deques.
pub(crate) struct Abp {
    deques: Vec<VecDeque<u32>>,
}

impl Abp {
    pub(crate) fn new(p: usize) -> Abp {
        Abp {
            deques: (0..p).map(|_| VecDeque::new()).collect(),
        }
    }
}

impl Policy for Abp {
    fn complete(&mut self, core: &mut Core, w: usize, v: u32) -> Option<u32> {
        let node = core.nodes[v as usize];
        let dag = core.dag;
        let mut buf = std::mem::take(&mut core.buf);
        buf.clear();
        match node.kind() {
            Kind::Fork | Kind::Future => {
                let (child, cont) = (core.dec(v + 1), core.dec(node.target()));
                debug_assert!(child && cont, "a fork's children have one predecessor");
                buf.extend([v + 1, node.target()]);
            }
            Kind::Seq => {
                if core.dec(v + 1) {
                    buf.push(v + 1);
                }
            }
            Kind::Touch => {
                if core.dec(v + 1) {
                    buf.push(v + 1);
                } else {
                    core.c.suspensions += 1;
                }
            }
            Kind::Jump => {
                if core.dec(node.target()) {
                    buf.push(node.target());
                }
            }
            Kind::Put => {
                for &j in dag.touch_joins(node.future()) {
                    if core.dec(j) {
                        buf.push(j);
                    }
                }
                if core.dec(node.target()) {
                    buf.push(node.target());
                }
                buf.sort_unstable();
            }
            Kind::End => {}
        }
        let dq = &mut self.deques[w];
        let next = if let Some((&first, rest)) = buf.split_first() {
            dq.extend(rest.iter().rev());
            core.ready += rest.len() as u64;
            Some(first)
        } else {
            let x = dq.pop_back();
            core.ready -= u64::from(x.is_some());
            x
        };
        core.buf = buf;
        next
    }

    fn attempt(&mut self, core: &mut Core, w: usize) -> Option<u32> {
        if core.p < 2 {
            return None;
        }
        let mut v = core.rng.index(core.p - 1);
        if v >= w {
            v += 1;
        }
        let x = self.deques[v].pop_front()?;
        core.ready -= 1;
        core.c.steals += 1;
        Some(x)
    }

    fn max_deques(&self) -> u64 {
        self.deques.len() as u64
    }

    fn max_stealable(&self) -> u64 {
        0
    }
}
