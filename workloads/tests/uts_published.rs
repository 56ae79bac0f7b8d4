//! UTS's published counts of T1L, T1XXL and T3XXL, the trees that only `paper`-size runs visit
//! whole: each tree walked whole, serially, and compared with the counts UTS publishes for it
//! (`uts::NAMED`, from UTS's `sample_trees.sh`; also
//! `paper-figures/reference/libfork_table1_inputs.csv`). T1 and T3 are checked whole by
//! `uts::tests::published_t1_and_t3_counts_and_quick`; T3L's counts were reproduced by the
//! independent transcription of the generator that `uts`'s tests are checked against.
//!
//! Each test walks its tree with [`uts::walk`], the iterative depth-first count that the
//! workload's check uses for trees without published counts: its stack is the path from the
//! root, on the heap, so T3XXL (99,049 deep) cannot overflow the thread's stack. It visits
//! every node once, one SHA-1 per node, as [`uts::serial`] does. They are `#[ignore]`d for
//! their length (minutes for T1XXL and T3XXL); run them alone, in release, one at a time:
//!
//! ```sh
//! cargo test --release -p stealbench-workloads --test uts_published -- --ignored --nocapture t1l
//! cargo test --release -p stealbench-workloads --test uts_published -- --ignored --nocapture t1xxl
//! cargo test --release -p stealbench-workloads --test uts_published -- --ignored --nocapture t3xxl
//! ```
//!
//! Their wall times: `paper-figures/measurements.md`.

use std::time::Instant;
use stealbench_workloads::uts::{self, Count};

/// Walks the named tree `name` whole and asserts UTS's published counts; prints the time.
fn walk_whole(name: &str) -> Count {
    let named = uts::named(name).unwrap_or_else(|| panic!("no tree {name}"));
    let tree = named.tree();
    assert_eq!(tree.cut, None, "{name} is walked whole");
    let start = Instant::now();
    let got = uts::walk(&tree);
    eprintln!("{name}: {got} in {:.1?}", start.elapsed());
    assert_eq!(got, named.count, "{name}: ours, then UTS's");
    got
}

/// T1L: 102,181,082 nodes, about 7 s.
#[test]
#[ignore = "the whole T1L: about 7 s in release"]
fn published_t1l_counts() {
    let c = walk_whole("T1L");
    assert_eq!((c.nodes, c.depth, c.leaves), (102_181_082, 13, 81_746_377));
}

/// T1XXL: 4,230,646,601 nodes, about 5 minutes.
#[test]
#[ignore = "the whole T1XXL: about 5 minutes in release"]
fn published_t1xxl_counts() {
    let c = walk_whole("T1XXL");
    assert_eq!(
        (c.nodes, c.depth, c.leaves),
        (4_230_646_601, 15, 3_384_495_738)
    );
}

/// T3XXL: 2,793,220,501 nodes and 99,049 deep, about 3 minutes.
#[test]
#[ignore = "the whole T3XXL: about 3 minutes in release"]
fn published_t3xxl_counts() {
    let c = walk_whole("T3XXL");
    assert_eq!(
        (c.nodes, c.depth, c.leaves),
        (2_793_220_501, 99_049, 1_396_611_250)
    );
}
