//! What the fib examples share: the best-of timing, every run checked.

use std::time::Instant;

/// The best wall time of `reps` runs of `f`, each checked against the known value `want`.
pub fn best(reps: usize, want: u64, mut f: impl FnMut() -> u64) -> f64 {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            let v = f();
            let s = t.elapsed().as_secs_f64();
            assert_eq!(v, want, "wrong answer");
            s
        })
        .fold(f64::INFINITY, f64::min)
}
