//! `ferret`: content-based image similarity search as a pipeline (PARSEC ferret; ProWS Figure 2
//! category C, `ferret-lp` on Piper against `ferret-gf` on general futures).
//!
//! # The pipeline
//!
//! Each query image goes through six stages, as in PARSEC's ferret:
//!
//! 1. **load** ([`load`], serial, in query order): decode the query's PPM file ([`image`]);
//! 2. **segment** ([`segment::segment`]): colour-quantised connected regions, at most 16;
//! 3. **extract** ([`features::extract`]): the EMD signature (area-weighted mean colour and
//!    centroid of each segment) and a 48-value descriptor for the index;
//! 4. **query** ([`lsh`]): LSH buckets of the descriptor, shortlisted to the 256 nearest by
//!    descriptor distance;
//! 5. **rank** ([`rank::rank`]): the exact EMD to each shortlisted image, top 10;
//! 6. **output** (serial, in query order): append the query's result list to the answer.
//!
//! Stages 2 to 5 ([`search`]) depend only on the query, so they run in parallel across
//! queries; stages 1 and 6 are serial.
//!
//! # Input
//!
//! Seeded synthetic images ([`image`]): a database of N scenes and Q queries, each query a
//! perturbed copy of a random database scene. [`Ferret::input`] renders, segments and extracts
//! every database image and builds the LSH index (untimed), stores the queries as PPM files,
//! and computes the expected answer with the serial code ([`search`] per query), also untimed
//! (input generation and the reference use plain threads on every core to save time).
//!
//! # Variants
//!
//! * `lp` ([`lp`]): Piper's linear pipeline with its throttle of 8P iterations in flight. The
//!   main task loads query `i`, creates a future running stages 2-5 for it, and keeps the
//!   futures of the at most 8P queries in flight in a FIFO; before loading query `i` it touches
//!   the future of query `i - 8P` (the oldest) and outputs its result, so the output is in query
//!   order and at most 8P queries are in flight. Every future is touched once, by its creator:
//!   structured futures (safe on rayon).
//! * `gf` ([`gf`]): one general (multi-touch) future per query, no throttle: the main task
//!   loads query `i` and creates its future, which runs stages 2-5, then touches the *previous
//!   query's* future and then outputs (appends its result), so outputs happen in query order
//!   through a chain of futures; the main task touches the last one. A future's task waits for
//!   a future created by a sibling, so rayon (which helps instead of suspending) cannot run it
//!   safely: with 3 or more workers, a thief whose query-`i` task waits for query `i - 1` can
//!   steal query `i + 1` and run it on top of itself, where it waits for `i` forever (see
//!   `schedulers/src/rayon/mod.rs`). With 2 workers the only thief steals in query order and it
//!   did not hang in our runs, but that is not a guarantee; (rayon, gf) is not supported.
//! * Async (tokio): the same two shapes, [`lp_async`] with spawned tasks awaited in order and
//!   [`gf_async`] with a chain of shared tasks.
//!
//! The serial elision is the plain loop over queries ([`serial`]); T_s is the `lp` variant on
//! the serial runtime (ferret has no fork-join variant).
//!
//! # Check
//!
//! Every query's result list (ids and distances) must equal the serial one exactly: all
//! variants compute the same floating-point operations in the same order per query, and ties
//! are broken by image id, so the answer has exactly one correct value.

pub mod features;
pub mod image;
pub mod lsh;
pub mod rank;
pub mod segment;

use crate::params::check_memory;
use crate::rng::SplitMix64;
use crate::{Checked, Params, Size, Variant, Workload};
use features::{Descriptor, Signature, extract};
use image::{Image, Scene, load_ppm};
use lsh::{LshIndex, SHORTLIST, shortlist};
pub use rank::{Hit, TOP_K};
use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};
use stealbench_schedulers::{
    AsyncForkJoin, AsyncShared, AsyncWorker, ForkJoin, FutureForkJoin, FutureHandle, Futures,
    SharedHandle,
};

/// The workload marker type.
#[derive(Debug)]
pub struct Ferret;

/// Queries in flight per worker in `lp` (Piper's throttle, set to 8P in the paper).
pub const THROTTLE_PER_WORKER: usize = 8;

/// The sizes of an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    /// Database images.
    pub images: usize,
    /// Query images.
    pub queries: usize,
    /// Seed of the image generator.
    pub seed: u64,
}

impl Spec {
    /// The sizes of a preset.
    pub fn of(size: Size) -> Spec {
        let (images, queries) = match size {
            Size::Paper => (59_695, 3_500),
            Size::Small => (15_000, 120),
            Size::Quick => (4_000, 25),
            Size::Test => (300, 24),
        };
        Spec {
            images,
            queries,
            seed: 0x00FE_22E7_2019,
        }
    }
}

/// The searchable database: per image its signature and descriptor, and the LSH index.
#[derive(Debug, Clone)]
pub struct Database {
    /// EMD signature of each image.
    pub signatures: Vec<Signature>,
    /// Descriptor of each image.
    pub descriptors: Vec<Descriptor>,
    /// The index over the descriptors.
    pub index: LshIndex,
}

impl Database {
    /// Segments and extracts every scene's image (on all cores: input generation, untimed) and
    /// indexes the descriptors.
    pub fn build(scenes: &[Scene], seed: u64) -> Database {
        let (signatures, descriptors): (Vec<Signature>, Vec<Descriptor>) =
            untimed_par_map(scenes, |scene| {
                let img = scene.render();
                extract(&img, &segment::segment(&img))
            })
            .into_iter()
            .unzip();
        let index = LshIndex::build(&descriptors, seed);
        Database {
            signatures,
            descriptors,
            index,
        }
    }
}

/// `items.iter().map(f).collect()` on every core with plain threads: for input generation and
/// the reference answer only (never timed). Results are in item order and each is computed by
/// the same code as serially, so they are the same values.
fn untimed_par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = items.len().div_ceil(threads).max(1);
    let f = &f;
    std::thread::scope(|s| {
        let parts: Vec<_> = items
            .chunks(chunk)
            .map(|c| s.spawn(move || c.iter().map(f).collect::<Vec<R>>()))
            .collect();
        parts
            .into_iter()
            .flat_map(|h| h.join().expect("input generation thread panicked"))
            .collect()
    })
}

/// The input of `ferret`.
#[derive(Debug)]
pub struct Input {
    /// The sizes and seed.
    pub params: Spec,
    /// The database.
    pub db: Database,
    /// The query images as PPM files.
    pub queries: Vec<Vec<u8>>,
    /// The database image each query was made from.
    pub sources: Vec<u32>,
    /// The serial answer.
    pub expected: Vec<Vec<Hit>>,
}

/// Generates the input of `p`: database, index, queries and the serial answer.
pub fn generate(p: Spec) -> Input {
    let mut r = SplitMix64::new(p.seed);
    let scenes: Vec<Scene> = (0..p.images).map(|_| Scene::random(&mut r)).collect();
    let mut sources = Vec::with_capacity(p.queries);
    let queries = (0..p.queries)
        .map(|_| {
            let src = r.below(p.images as u64) as usize;
            sources.push(src as u32);
            scenes[src].perturbed(&mut r).render().to_ppm()
        })
        .collect();
    let db = Database::build(&scenes, r.next_u64());
    let mut input = Input {
        params: p,
        db,
        queries,
        sources,
        expected: Vec::new(),
    };
    // The serial elision's answer, query by query on all cores (each query's computation is
    // the same sequence of operations wherever it runs).
    input.expected = untimed_par_map(&input.queries, |q| search(&input.db, &load(q)));
    input
}

/// Stage 1: decodes a query file. The files are generated by [`generate`], so a decoding
/// error is a bug (a panic).
pub fn load(file: &[u8]) -> Image {
    load_ppm(file).expect("query files are well-formed PPM")
}

/// Stages 2-5 for one query: segment, extract, query the index, rank. Its result list.
pub fn search(db: &Database, img: &Image) -> Vec<Hit> {
    let seg = segment::segment(img);
    let (sig, desc) = extract(img, &seg);
    let candidates = db.index.candidates(&desc);
    let short = shortlist(&desc, &candidates, &db.descriptors, SHORTLIST);
    rank::rank(&sig, &short, &db.signatures)
}

/// The serial elision: the plain loop over the queries.
pub fn serial(db: &Database, queries: &[Vec<u8>]) -> Vec<Vec<Hit>> {
    queries.iter().map(|q| search(db, &load(q))).collect()
}

/// The linear pipeline with at most `window` queries in flight (see the module doc).
pub fn lp<W: Futures>(w: &W, db: &Database, queries: &[Vec<u8>], window: usize) -> Vec<Vec<Hit>> {
    assert!(window > 0, "the throttle window must be positive");
    let mut out = Vec::with_capacity(queries.len());
    w.scope(|s, w| {
        let mut in_flight = VecDeque::with_capacity(window);
        for q in queries {
            if in_flight.len() == window {
                let oldest: W::Future<'_, Vec<Hit>> = in_flight.pop_front().expect("a full window");
                out.push(oldest.get(w));
            }
            let img = load(q);
            in_flight.push_back(w.future(s, move |_, _| search(db, &img)));
        }
        while let Some(f) = in_flight.pop_front() {
            out.push(f.get(w));
        }
    });
    out
}

/// Appends `hits` to the output (the output stage of `gf`). The chain of futures orders the
/// calls, so the lock is never contended.
fn output(out: &Mutex<Vec<Vec<Hit>>>, hits: Vec<Hit>) {
    out.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(hits);
}

/// General futures: one future per query, each touching the previous one before its output
/// (see the module doc). The answer is appended to `out`.
pub fn gf<W: Futures>(w: &W, db: &Database, queries: &[Vec<u8>], out: &Mutex<Vec<Vec<Hit>>>) {
    w.scope(|s, w| {
        let mut prev: Option<W::SharedFuture<'_, ()>> = None;
        for q in queries {
            let img = load(q);
            let before = prev.take();
            prev = Some(w.shared_future(s, move |_, w| {
                let hits = search(db, &img);
                if let Some(before) = before {
                    before.get(w);
                }
                output(out, hits);
            }));
        }
        if let Some(last) = prev {
            last.get(w);
        }
    });
}

/// `lp` on the async front-end: spawned tasks, awaited in order, at most `window` in flight.
pub async fn lp_async<'s, C: AsyncWorker<'s>>(
    c: C,
    db: &'s Database,
    queries: &'s [Vec<u8>],
    window: usize,
) -> Vec<Vec<Hit>> {
    assert!(window > 0, "the throttle window must be positive");
    let mut out = Vec::with_capacity(queries.len());
    let mut in_flight: VecDeque<C::Handle<Vec<Hit>>> = VecDeque::with_capacity(window);
    for q in queries {
        if in_flight.len() == window {
            out.push(in_flight.pop_front().expect("a full window").await);
        }
        let img = load(q);
        in_flight.push_back(c.spawn(move |_| async move { search(db, &img) }).await);
    }
    while let Some(f) = in_flight.pop_front() {
        out.push(f.await);
    }
    out
}

/// `gf` on the async front-end: a chain of shared tasks, each awaiting the previous one before
/// its output.
pub async fn gf_async<'s, C: AsyncWorker<'s>>(
    c: C,
    db: &'s Database,
    queries: &'s [Vec<u8>],
    out: &'s Mutex<Vec<Vec<Hit>>>,
) {
    let mut prev: Option<C::Shared<()>> = None;
    for q in queries {
        let img = load(q);
        let before = prev.take();
        let f = c
            .spawn_shared(move |_| async move {
                let hits = search(db, &img);
                if let Some(before) = before {
                    before.get().await;
                }
                output(out, hits);
            })
            .await;
        prev = Some(f);
    }
    if let Some(last) = prev {
        last.get().await;
    }
}

impl Workload for Ferret {
    const NAME: &'static str = "ferret";
    const DESCRIPTION: &'static str =
        "image similarity search pipeline: segment, extract, LSH query, EMD rank (PARSEC)";
    const VARIANTS: &'static [Variant] = &[Variant::Lp, Variant::Gf];
    const ASYNC_VARIANTS: &'static [Variant] = &[Variant::Lp, Variant::Gf];

    type Input = Input;
    type Work = ();
    type Answer = Vec<Vec<Hit>>;

    fn preset(size: Size) -> Params {
        let s = Spec::of(size);
        Params::new()
            .int("db", s.images as u64)
            .int("queries", s.queries as u64)
            .int("side", image::SIDE as u64)
            .int("top-k", TOP_K as u64)
            .int("seed", s.seed)
    }

    fn input(params: &Params) -> Result<Input, String> {
        params.fixed("side", image::SIDE as u64)?;
        params.fixed("top-k", TOP_K as u64)?;
        let (images, queries) = (params.get_usize("db")?, params.get_usize("queries")?);
        if images == 0 || queries == 0 {
            return Err(format!("db={images} queries={queries}: both need an image"));
        }
        // Per database image: its scene (up to 8 blobs), signature and descriptor, and its
        // entry in every LSH table (with its share of the table's buckets: about 128 bytes, as
        // measured at 40,000 images, 2.3 KiB an image in all); per query: its PPM file, its
        // source and its answer.
        let per_image = size_of::<Scene>()
            + 8 * size_of::<image::Blob>()
            + size_of::<Signature>()
            + size_of::<Descriptor>()
            + lsh::TABLES * 128;
        let per_query = 3 * image::SIDE * image::SIDE + 64 + TOP_K * size_of::<Hit>();
        check_memory(
            &format!("db={images} queries={queries}"),
            images as f64 * per_image as f64 + queries as f64 * per_query as f64,
        )?;
        Ok(generate(Spec {
            images,
            queries,
            seed: params.get_int("seed"),
        }))
    }

    fn prepare(_input: &Input) {}

    fn run<S: ForkJoin>(
        _pool: &S,
        variant: Variant,
        _input: &Input,
        _work: &mut (),
    ) -> Self::Answer {
        crate::not_without_futures::<Self>(variant)
    }

    fn run_futures<S: FutureForkJoin>(
        pool: &S,
        variant: Variant,
        input: &Input,
        _work: &mut (),
    ) -> Self::Answer {
        let (db, queries) = (&input.db, &input.queries[..]);
        match variant {
            Variant::Lp => {
                let window = THROTTLE_PER_WORKER * pool.workers();
                pool.run(|w| lp(w, db, queries, window))
            }
            Variant::Gf => {
                let out = Mutex::new(Vec::with_capacity(queries.len()));
                pool.run(|w| gf(w, db, queries, &out));
                out.into_inner().unwrap_or_else(PoisonError::into_inner)
            }
            v => panic!("ferret has no {v} variant"),
        }
    }

    fn run_async<S: AsyncForkJoin>(
        pool: &S,
        variant: Variant,
        input: &Input,
        _work: &mut (),
    ) -> Self::Answer {
        let (db, queries) = (&input.db, &input.queries[..]);
        match variant {
            Variant::Lp => {
                let window = THROTTLE_PER_WORKER * pool.workers();
                pool.run_async(|c| lp_async(c, db, queries, window))
            }
            Variant::Gf => {
                let out = Mutex::new(Vec::with_capacity(queries.len()));
                pool.run_async(|c| gf_async(c, db, queries, &out));
                out.into_inner().unwrap_or_else(PoisonError::into_inner)
            }
            v => panic!("ferret has no async {v} variant"),
        }
    }

    fn kernel(input: &Input, _work: &mut ()) -> Self::Answer {
        serial(&input.db, &input.queries)
    }

    fn check(input: &Input, _work: &(), answer: &Self::Answer) -> Result<Checked, String> {
        compare(&input.expected, answer)
    }
}

/// Compares result lists exactly (ids and the bits of the distances); `Ok` gives their
/// number, their hits and the first query's nearest image.
pub fn compare(expected: &[Vec<Hit>], answer: &[Vec<Hit>]) -> Result<Checked, String> {
    if answer.len() != expected.len() {
        return Err(format!(
            "{} result lists, expected {}",
            answer.len(),
            expected.len()
        ));
    }
    for (q, (got, want)) in answer.iter().zip(expected).enumerate() {
        let same = got.len() == want.len()
            && got
                .iter()
                .zip(want)
                .all(|(a, b)| a.id == b.id && a.dist.to_bits() == b.dist.to_bits());
        if !same {
            return Err(format!("query {q}: results {got:?}, expected {want:?}"));
        }
    }
    let hits: usize = answer.iter().map(Vec::len).sum();
    let nearest = match answer.first().and_then(|l| l.first()) {
        Some(h) => format!(
            " (query 0's nearest: image {} at distance {:.6})",
            h.id, h.dist
        ),
        None => String::new(),
    };
    Ok(Checked::new(
        format!("{} queries ranked, {hits} results{nearest}", answer.len()),
        "the serial search's lists, ids and distances bit for bit",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    #[test]
    fn the_search_finds_the_source_of_most_queries() {
        let input = Ferret::input_at(Size::Test);
        assert_eq!(input.expected.len(), input.params.queries);
        compare(&input.expected, &serial(&input.db, &input.queries)).unwrap();
        let top1 = input
            .expected
            .iter()
            .zip(&input.sources)
            .filter(|(hits, src)| hits.first().is_some_and(|h| h.id == **src))
            .count();
        assert!(
            top1 * 10 >= input.params.queries * 9,
            "only {top1} of {} queries find their source first",
            input.params.queries
        );
        for hits in &input.expected {
            assert!(hits.len() <= TOP_K);
            assert!(
                hits.windows(2)
                    .all(|w| (w[0].dist, w[0].id) < (w[1].dist, w[1].id))
            );
        }
    }

    #[test]
    fn check_rejects_wrong_answers() {
        let pool = testing::serial();
        let input = Ferret::input_at(Size::Test);
        let good = Ferret::run_futures(&pool, Variant::Lp, &input, &mut ());
        assert_eq!(
            Ferret::check(&input, &(), &good).unwrap().answer,
            format!(
                "{} queries ranked, {} results (query 0's nearest: image {} at distance {:.6})",
                good.len(),
                good.iter().map(Vec::len).sum::<usize>(),
                good[0][0].id,
                good[0][0].dist
            )
        );
        let mut bad = good.clone();
        bad.swap(0, 1);
        assert!(Ferret::check(&input, &(), &bad).is_err());
        let mut bad = good.clone();
        bad[3][0].dist = f64::from_bits(bad[3][0].dist.to_bits() + 1);
        assert!(Ferret::check(&input, &(), &bad).is_err());
        let mut bad = good.clone();
        bad[5].pop();
        assert!(Ferret::check(&input, &(), &bad).is_err());
        assert!(Ferret::check(&input, &(), &good[1..].to_vec()).is_err());
    }

    #[test]
    fn lp_outputs_in_order_with_any_window() {
        let pool = testing::serial();
        let input = Ferret::input_at(Size::Test);
        for window in [1, 3, 100] {
            let a = pool.run(|w| lp(w, &input.db, &input.queries, window));
            compare(&input.expected, &a).unwrap();
        }
    }
}
