//! A parallel loop over an index range by recursive halving (Cilk's divide-and-conquer loop),
//! on both front-ends: the range is split in two halves under a `join`, down to single
//! indices, each of which runs the loop's body. The loops of `heat` (the rows of a step),
//! `fft` (the chunk pairs of a butterfly range), `cholesky` (the tasks of a phase), the
//! wavefront driver (the tiles of an anti-diagonal) and `touchtree`'s gate.
//!
//! The first half of `lo..hi` is `lo..lo + len/2`, so it is never the larger one: a range
//! of two is a join of two bodies, a range of three a join of a body and a range of two.
//! Span `O(log len)` joins plus the longest body.

use std::future::Future;
use std::ops::Range;
use stealbench_schedulers::{AsyncWorker, Worker};

/// Runs `body(w, i)` for every `i` in `range`, halves under [`Worker::join`]; a range of one
/// index is the body called directly, an empty range does nothing.
pub fn fj<W: Worker>(w: &W, range: Range<usize>, body: &(impl Fn(&W, usize) + Sync)) {
    match range.len() {
        0 => {}
        1 => body(w, range.start),
        len => {
            let mid = range.start + len / 2;
            w.join(
                |w| fj(w, range.start..mid, body),
                |w| fj(w, mid..range.end, body),
            );
        }
    }
}

/// [`fj`] on the async front-end: halves under [`AsyncWorker::join`], a half of one index
/// being the body's future itself (not a loop of one around it), a whole range of one the
/// body under [`AsyncWorker::call`]. The body may itself start this loop again (a recursion
/// through it), since it is never awaited inside the loop's own future.
pub fn fj_async<'s, C, F, Fut>(
    c: C,
    range: Range<usize>,
    body: F,
) -> impl Future<Output = ()> + Send + 's
where
    C: AsyncWorker<'s>,
    F: Fn(C, usize) -> Fut + Copy + Send + Sync + 's,
    Fut: Future<Output = ()> + Send + 's,
{
    async move {
        let (lo, hi) = (range.start, range.end);
        match hi - lo {
            0 => {}
            1 => c.call(move |c| body(c, lo)).await,
            2 => {
                c.join(move |c| body(c, lo), move |c| body(c, lo + 1)).await;
            }
            3 => {
                c.join(move |c| body(c, lo), move |c| fj_async(c, lo + 1..hi, body))
                    .await;
            }
            len => {
                let mid = lo + len / 2;
                c.join(
                    move |c| fj_async(c, lo..mid, body),
                    move |c| fj_async(c, mid..hi, body),
                )
                .await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{Pools, serial};
    use std::sync::Mutex;
    use stealbench_schedulers::{AsyncForkJoin, ForkJoin};

    /// The indices visited, in order.
    fn visited(m: &Mutex<Vec<usize>>) -> Vec<usize> {
        std::mem::take(&mut *m.lock().unwrap())
    }

    #[test]
    fn every_index_once_in_order_on_one_worker() {
        let pool = serial();
        let seen = Mutex::new(Vec::new());
        for n in [0, 1, 2, 3, 4, 5, 17] {
            let want: Vec<usize> = (3..3 + n).collect();
            pool.run(|w| fj(w, 3..3 + n, &|_, i| seen.lock().unwrap().push(i)));
            assert_eq!(visited(&seen), want, "fj n={n}");
            let s = &seen;
            pool.run_async(|c| {
                fj_async(
                    c,
                    3..3 + n,
                    move |_, i| async move { s.lock().unwrap().push(i) },
                )
            });
            assert_eq!(visited(&seen), want, "fj_async n={n}");
        }
    }

    #[test]
    fn every_index_once_on_two_workers() {
        let Pools { abp, libfork, .. } = Pools::start();
        let seen = Mutex::new(Vec::new());
        let want: Vec<usize> = (0..100).collect();
        abp.run(|w| fj(w, 0..100, &|_, i| seen.lock().unwrap().push(i)));
        let mut got = visited(&seen);
        got.sort_unstable();
        assert_eq!(got, want);
        let s = &seen;
        libfork.run_async(|c| {
            fj_async(
                c,
                0..100,
                move |_, i| async move { s.lock().unwrap().push(i) },
            )
        });
        let mut got = visited(&seen);
        got.sort_unstable();
        assert_eq!(got, want);
    }
}
