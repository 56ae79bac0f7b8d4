//! The ranking stage of `ferret`: the exact Earth Mover's Distance between signatures, and the
//! top-k of the shortlisted images by it.
//!
//! # EMD
//!
//! The EMD (Rubner, Tomasi, Guibas 2000) between signatures `{(w_i, f_i)}` and `{(v_j, g_j)}`
//! of equal total weight `W` is `min Σ x_ij · d(f_i, g_j) / W` over flows `x ≥ 0` with row sums
//! `w_i` and column sums `v_j`: a balanced transportation problem. Weights are integer pixel
//! counts, so [`transport`] solves it exactly by **successive shortest paths**: repeatedly send
//! flow from a source to a sink along a cheapest residual path, found by a dense Dijkstra on
//! reduced costs with Johnson potentials (at most `2·16 + 2` nodes). Each augmentation
//! saturates a supply, a demand or a reverse arc, so it terminates after a few dozen paths.
//! Costs are `f64`; reduced costs that rounding makes slightly negative are taken as 0. The
//! computation is a fixed sequence of floating-point operations, so every variant and runtime
//! gets bit-identical distances.
//!
//! # Top-k
//!
//! [`rank`] computes the EMD to every shortlisted image and keeps the [`TOP_K`] smallest,
//! ordered by distance, ties by image id.

use super::features::{Signature, ground_distance};
use super::segment::MAX_SEGMENTS;

/// Results per query (ferret's top-k).
pub const TOP_K: usize = 10;

/// One result: a database image and its EMD to the query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// The database image.
    pub id: u32,
    /// The EMD between the query's signature and the image's.
    pub dist: f64,
}

/// A cost matrix for [`transport`]: `cost[i][j]` for supply `i`, demand `j`.
pub type CostMatrix = [[f64; MAX_SEGMENTS]; MAX_SEGMENTS];

const NODES: usize = 2 * MAX_SEGMENTS + 2;

/// The minimum total cost `Σ x_ij · cost[i][j]` of a transportation plan moving the integer
/// `supply` (at most [`MAX_SEGMENTS`] sources) onto the integer `demand` (at most
/// [`MAX_SEGMENTS`] sinks) of the same total. Panics if the totals differ.
pub fn transport(supply: &[u32], demand: &[u32], cost: &CostMatrix) -> f64 {
    let (n, m) = (supply.len(), demand.len());
    assert!(
        n <= MAX_SEGMENTS && m <= MAX_SEGMENTS,
        "too many sources or sinks"
    );
    let total: u64 = supply.iter().map(|&x| u64::from(x)).sum();
    assert_eq!(
        total,
        demand.iter().map(|&x| u64::from(x)).sum::<u64>(),
        "unbalanced transportation problem"
    );
    // Nodes: 0 = source, 1..=n supplies, n+1..=n+m demands, n+m+1 = sink.
    let (src, sink) = (0, n + m + 1);
    let v = n + m + 2;
    let mut supply_left = [0u32; MAX_SEGMENTS];
    supply_left[..n].copy_from_slice(supply);
    let mut demand_left = [0u32; MAX_SEGMENTS];
    demand_left[..m].copy_from_slice(demand);
    let mut flow = [[0u32; MAX_SEGMENTS]; MAX_SEGMENTS];
    let mut pot = [0.0f64; NODES];
    let mut left = total;
    while left > 0 {
        let mut dist = [f64::INFINITY; NODES];
        let mut prev = [usize::MAX; NODES];
        let mut done = [false; NODES];
        dist[src] = 0.0;
        loop {
            let mut u = usize::MAX;
            let mut best = f64::INFINITY;
            for x in 0..v {
                if !done[x] && dist[x] < best {
                    best = dist[x];
                    u = x;
                }
            }
            if u == usize::MAX || u == sink {
                break;
            }
            done[u] = true;
            let mut relax = |x: usize, c: f64| {
                let nd = best + (c + pot[u] - pot[x]).max(0.0);
                if nd < dist[x] {
                    dist[x] = nd;
                    prev[x] = u;
                }
            };
            if u == src {
                for (i, &left) in supply_left[..n].iter().enumerate() {
                    if left > 0 {
                        relax(1 + i, 0.0);
                    }
                }
            } else if u <= n {
                let i = u - 1;
                for (j, &c) in cost[i][..m].iter().enumerate() {
                    relax(1 + n + j, c);
                }
            } else {
                let j = u - 1 - n;
                for i in 0..n {
                    if flow[i][j] > 0 {
                        relax(1 + i, -cost[i][j]);
                    }
                }
                if demand_left[j] > 0 {
                    relax(sink, 0.0);
                }
            }
        }
        let reach = dist[sink];
        assert!(
            reach.is_finite(),
            "no augmenting path in a balanced problem"
        );
        for x in 0..v {
            pot[x] += dist[x].min(reach);
        }
        // The path: sink <- demand j <- supply i <- (demand <- supply)* <- source.
        let mut amount = u32::MAX;
        let mut x = sink;
        while x != src {
            let u = prev[x];
            if u == src {
                amount = amount.min(supply_left[x - 1]);
            } else if x == sink {
                amount = amount.min(demand_left[u - 1 - n]);
            } else if u > n {
                // Reverse arc demand u -> supply x: undo flow.
                amount = amount.min(flow[x - 1][u - 1 - n]);
            }
            x = u;
        }
        let mut x = sink;
        while x != src {
            let u = prev[x];
            if u == src {
                supply_left[x - 1] -= amount;
            } else if x == sink {
                demand_left[u - 1 - n] -= amount;
            } else if u > n {
                flow[x - 1][u - 1 - n] -= amount;
            } else {
                flow[u - 1][x - 1 - n] += amount;
            }
            x = u;
        }
        left -= u64::from(amount);
    }
    let mut sum = 0.0;
    for i in 0..n {
        for j in 0..m {
            if flow[i][j] > 0 {
                sum += f64::from(flow[i][j]) * cost[i][j];
            }
        }
    }
    sum
}

/// The EMD between two signatures of equal total weight, with [`ground_distance`].
pub fn emd(a: &Signature, b: &Signature) -> f64 {
    let mut cost = [[0.0; MAX_SEGMENTS]; MAX_SEGMENTS];
    for (row, fa) in cost.iter_mut().zip(&a.features[..a.len]) {
        for (c, fb) in row.iter_mut().zip(&b.features[..b.len]) {
            *c = ground_distance(fa, fb);
        }
    }
    transport(&a.weights[..a.len], &b.weights[..b.len], &cost) / a.total_weight() as f64
}

/// The [`TOP_K`] images of `shortlist` nearest to `query` by EMD (`database[id]` is image
/// `id`'s signature), nearest first, ties by id.
pub fn rank(query: &Signature, shortlist: &[u32], database: &[Signature]) -> Vec<Hit> {
    let mut hits: Vec<Hit> = shortlist
        .iter()
        .map(|&id| Hit {
            id,
            dist: emd(query, &database[id as usize]),
        })
        .collect();
    hits.sort_unstable_by(|x, y| x.dist.total_cmp(&y.dist).then(x.id.cmp(&y.id)));
    hits.truncate(TOP_K);
    hits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    /// Brute force: the minimum over every integer plan with the given margins (an optimal
    /// plan of a transportation problem with integer margins is integral).
    fn brute(supply: &[u32], demand: &[u32], cost: &CostMatrix) -> f64 {
        fn go(
            i: usize,
            j: usize,
            supply: &mut Vec<u32>,
            demand: &mut Vec<u32>,
            cost: &CostMatrix,
            acc: f64,
            best: &mut f64,
        ) {
            let (n, m) = (supply.len(), demand.len());
            if i == n {
                if demand.iter().all(|&d| d == 0) {
                    *best = best.min(acc);
                }
                return;
            }
            if j == m {
                if supply[i] == 0 {
                    go(i + 1, 0, supply, demand, cost, acc, best);
                }
                return;
            }
            for x in 0..=supply[i].min(demand[j]) {
                supply[i] -= x;
                demand[j] -= x;
                go(
                    i,
                    j + 1,
                    supply,
                    demand,
                    cost,
                    acc + f64::from(x) * cost[i][j],
                    best,
                );
                supply[i] += x;
                demand[j] += x;
            }
        }
        let mut best = f64::INFINITY;
        go(
            0,
            0,
            &mut supply.to_vec(),
            &mut demand.to_vec(),
            cost,
            0.0,
            &mut best,
        );
        best
    }

    fn split(r: &mut SplitMix64, total: u32, parts: usize) -> Vec<u32> {
        let mut v = vec![0; parts];
        for _ in 0..total {
            v[r.below(parts as u64) as usize] += 1;
        }
        v
    }

    #[test]
    fn transport_matches_brute_force() {
        let mut r = SplitMix64::new(21);
        for _ in 0..300 {
            let n = 1 + r.below(4) as usize;
            let m = 1 + r.below(4) as usize;
            let total = 1 + r.below(7) as u32;
            let supply = split(&mut r, total, n);
            let demand = split(&mut r, total, m);
            let mut cost = [[0.0; MAX_SEGMENTS]; MAX_SEGMENTS];
            for row in cost.iter_mut().take(n) {
                for c in row.iter_mut().take(m) {
                    *c = r.below(100) as f64 / 7.0;
                }
            }
            let got = transport(&supply, &demand, &cost);
            let want = brute(&supply, &demand, &cost);
            assert!(
                (got - want).abs() <= 1e-9 * want.max(1.0),
                "{supply:?} {demand:?}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn emd_on_a_line_is_the_area_between_cumulative_distributions() {
        // On a line with cost |x - y|, EMD = ∫ |F - G| (known closed form).
        let mut r = SplitMix64::new(22);
        for _ in 0..100 {
            let n = 1 + r.below(MAX_SEGMENTS as u64) as usize;
            let m = 1 + r.below(MAX_SEGMENTS as u64) as usize;
            let total = 50 + r.below(200) as u32;
            let (wa, wb) = (split(&mut r, total, n), split(&mut r, total, m));
            let pos = |i: usize, k: usize| i as f64 / k as f64;
            let mk = |w: &[u32], k: usize| {
                let e: Vec<(u32, [f64; 5])> = (0..k)
                    .map(|i| (w[i], [pos(i, k), 0.0, 0.0, 0.0, 0.0]))
                    .collect();
                Signature::new(&e)
            };
            let (a, b) = (mk(&wa, n), mk(&wb, m));
            // Merge the breakpoints and integrate |F - G|.
            let mut pts: Vec<(f64, f64)> = (0..n)
                .map(|i| (pos(i, n), f64::from(wa[i])))
                .chain((0..m).map(|j| (pos(j, m), -f64::from(wb[j]))))
                .collect();
            pts.sort_by(|x, y| x.0.partial_cmp(&y.0).unwrap());
            let mut want = 0.0;
            let mut diff = 0.0;
            for k in 0..pts.len() {
                diff += pts[k].1;
                if k + 1 < pts.len() {
                    want += diff.abs() * (pts[k + 1].0 - pts[k].0);
                }
            }
            want /= f64::from(total);
            let got = emd(&a, &b);
            assert!((got - want).abs() < 1e-9, "{got} vs {want}");
        }
    }

    #[test]
    fn emd_is_zero_on_itself_and_symmetric() {
        let e = |x: f64| (1u32, [x, 0.0, 0.0, 0.0, 0.0]);
        let a = Signature::new(&[(3, [0.0, 0.0, 0.0, 0.0, 0.0]), e(1.0)]);
        let b = Signature::new(&[e(0.5), e(0.5), (2, [0.0, 1.0, 0.0, 0.0, 0.0])]);
        assert_eq!(emd(&a, &a), 0.0);
        assert!((emd(&a, &b) - emd(&b, &a)).abs() < 1e-12);
    }

    #[test]
    fn rank_orders_by_distance_then_id() {
        let e = |x: f64| Signature::new(&[(4, [x, 0.0, 0.0, 0.0, 0.0])]);
        let db: Vec<Signature> = [0.5, 0.1, 0.3, 0.1, 0.9, 0.2, 0.25, 0.7, 0.8, 0.6, 0.4, 1.0]
            .into_iter()
            .map(e)
            .collect();
        let all: Vec<u32> = (0..db.len() as u32).collect();
        let hits = rank(&e(0.0), &all, &db);
        let ids: Vec<u32> = hits.iter().map(|h| h.id).collect();
        assert_eq!(ids, vec![1, 3, 5, 6, 2, 10, 0, 9, 7, 8]);
        assert_eq!(hits[0].dist, 0.1);
        assert_eq!(rank(&e(0.0), &all[..3], &db).len(), 3);
    }
}
