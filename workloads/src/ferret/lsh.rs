//! The index of `ferret`'s query stage: locality-sensitive hashing of descriptors (p-stable
//! LSH, Datar, Immorlica, Indyk, Mirrokni 2004), then a shortlist by descriptor distance.
//!
//! Each of [`TABLES`] tables hashes a descriptor `v` with [`HASHES`] functions
//! `h(v) = floor((a·v + b) / W)` (`a` Gaussian, `b` uniform in `[0, W)`, all seeded) and files
//! the image id under the combined key. A query collects the ids of its bucket in every table
//! ([`LshIndex::candidates`]: sorted, without duplicates), then keeps the [`SHORTLIST`] nearest
//! by Euclidean descriptor distance (ties by id, [`shortlist`]); the ranking stage computes the
//! EMD only for those. PARSEC's ferret does the same with its own LSH library (cass).

use super::features::{DESCRIPTOR_LEN, Descriptor};
use crate::rng::SplitMix64;
use std::collections::HashMap;

/// Number of hash tables.
pub const TABLES: usize = 8;
/// Hash functions per table (concatenated into one key).
pub const HASHES: usize = 4;
/// Bucket width of each hash function.
pub const W: f64 = 2.0;
/// Candidates kept for the EMD ranking.
pub const SHORTLIST: usize = 256;

/// One table: its hash functions and buckets.
#[derive(Debug, Clone)]
struct Table {
    a: Vec<Descriptor>,
    b: Vec<f64>,
    buckets: HashMap<u64, Vec<u32>>,
}

impl Table {
    fn key(&self, v: &Descriptor) -> u64 {
        let mut key = 0xCBF2_9CE4_8422_2325u64;
        for (a, &b) in self.a.iter().zip(&self.b) {
            let mut dot = b;
            for k in 0..DESCRIPTOR_LEN {
                dot += a[k] * v[k];
            }
            let h = (dot / W).floor() as i64;
            key = (key ^ h as u64).wrapping_mul(0x0000_0100_0000_01B3);
        }
        key
    }
}

/// The LSH index over a database of descriptors.
#[derive(Debug, Clone)]
pub struct LshIndex {
    tables: Vec<Table>,
}

/// A standard normal value (Box-Muller).
fn gaussian(r: &mut SplitMix64) -> f64 {
    let u1 = ((r.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64;
    let u2 = (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

impl LshIndex {
    /// Builds the index of `descriptors` (image `i` has descriptor `descriptors[i]`), with hash
    /// functions drawn from `seed`.
    pub fn build(descriptors: &[Descriptor], seed: u64) -> LshIndex {
        let mut r = SplitMix64::new(seed);
        let tables = (0..TABLES)
            .map(|_| {
                let a = (0..HASHES)
                    .map(|_| std::array::from_fn(|_| gaussian(&mut r)))
                    .collect();
                let b = (0..HASHES)
                    .map(|_| W * (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
                    .collect();
                let mut t = Table {
                    a,
                    b,
                    buckets: HashMap::new(),
                };
                for (id, d) in descriptors.iter().enumerate() {
                    let key = t.key(d);
                    t.buckets.entry(key).or_default().push(id as u32);
                }
                t
            })
            .collect();
        LshIndex { tables }
    }

    /// The ids sharing a bucket with `query` in at least one table, ascending, each once.
    pub fn candidates(&self, query: &Descriptor) -> Vec<u32> {
        let mut out = Vec::new();
        for t in &self.tables {
            if let Some(ids) = t.buckets.get(&t.key(query)) {
                out.extend_from_slice(ids);
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Squared Euclidean distance of two descriptors.
#[inline]
pub fn descriptor_distance2(a: &Descriptor, b: &Descriptor) -> f64 {
    let mut s = 0.0;
    for k in 0..DESCRIPTOR_LEN {
        let d = a[k] - b[k];
        s += d * d;
    }
    s
}

/// The at most `keep` candidates nearest to `query` by descriptor distance, nearest first,
/// ties by id.
pub fn shortlist(
    query: &Descriptor,
    candidates: &[u32],
    descriptors: &[Descriptor],
    keep: usize,
) -> Vec<u32> {
    let mut scored: Vec<(f64, u32)> = candidates
        .iter()
        .map(|&id| (descriptor_distance2(query, &descriptors[id as usize]), id))
        .collect();
    let by = |x: &(f64, u32), y: &(f64, u32)| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1));
    if scored.len() > keep && keep > 0 {
        scored.select_nth_unstable_by(keep - 1, by);
    }
    scored.truncate(keep);
    scored.sort_unstable_by(by);
    scored.into_iter().map(|(_, id)| id).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random_descriptor(r: &mut SplitMix64) -> Descriptor {
        std::array::from_fn(|_| r.below(1000) as f64 / 1000.0)
    }

    #[test]
    fn an_indexed_descriptor_finds_itself_and_near_copies() {
        let mut r = SplitMix64::new(11);
        let db: Vec<Descriptor> = (0..500).map(|_| random_descriptor(&mut r)).collect();
        let index = LshIndex::build(&db, 1);
        for (id, d) in db.iter().enumerate().take(50) {
            let c = index.candidates(d);
            assert!(c.binary_search(&(id as u32)).is_ok());
            assert!(c.windows(2).all(|w| w[0] < w[1]));
            // A near copy (every coordinate moved by 0.01) is found too.
            let near = d.map(|x| x + 0.01);
            assert!(index.candidates(&near).contains(&(id as u32)));
        }
        // Far from everything in the unit cube: few or no candidates.
        let far = [5.0; DESCRIPTOR_LEN];
        assert!(index.candidates(&far).len() < 50);
    }

    #[test]
    fn shortlist_matches_a_full_sort() {
        let mut r = SplitMix64::new(12);
        let db: Vec<Descriptor> = (0..300).map(|_| random_descriptor(&mut r)).collect();
        let mut db2 = db.clone();
        // Duplicates to exercise the tie break.
        db2.extend_from_slice(&db[..30]);
        let q = random_descriptor(&mut r);
        let all: Vec<u32> = (0..db2.len() as u32).collect();
        let mut want: Vec<(f64, u32)> = all
            .iter()
            .map(|&i| (descriptor_distance2(&q, &db2[i as usize]), i))
            .collect();
        want.sort_by(|x, y| x.0.partial_cmp(&y.0).unwrap().then(x.1.cmp(&y.1)));
        for keep in [0, 1, 10, 64, 400] {
            let got = shortlist(&q, &all, &db2, keep);
            let w: Vec<u32> = want.iter().take(keep).map(|x| x.1).collect();
            assert_eq!(got, w, "keep {keep}");
        }
    }
}
