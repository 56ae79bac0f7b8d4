//! The simulator against the real runtimes: steals and deviations at P = 2 and P = 16, as
//! ranges over seeds (simulator) and over repeated runs (runtimes), per workload variant.
//!
//! `cargo run --release -p stealbench-sim --example validate [-- SIZE [SEEDS [RUNS [COST [ONLY]]]]]`
//! (size `test`, `quick`, `small`; default `quick`; 5 seeds; 3 runs of each runtime; the
//! simulator's steal attempt costs COST ns, default the simulator's default; `ONLY` names one
//! workload). Each variant is
//! recorded once with measured weights (nanoseconds) and replayed under every model (`abp`,
//! `prows`, `prows/placement=artifact`); the runtime each model stands for (`abp`, or `prows`
//! with that placement) runs the same variant on a pool of P workers. A runtime column shows `n/a` for a counter the runtime does not
//! report.
//!
//! The simulator's thieves never sleep, so a pool runs with `idle=busy` where P does not
//! exceed this machine's logical CPUs; above that (P = 16 on a small machine) busy thieves
//! would only measure the operating system's scheduler, and the pool runs with its default
//! (lazy) idle policy: its workers are descheduled at random, which no simulation models.

use stealbench_schedulers::abp::Abp;
use stealbench_schedulers::prows::Prows;
use stealbench_schedulers::record::{Dag, Recorder, Weights};
use stealbench_schedulers::{FutureForkJoin, IdlePolicy, PoolConfig};
use stealbench_sim::{Model, SimConfig, SimReport, simulate_with};
use stealbench_workloads::{Size, Variant, Workload, with_workload};

const PS: [usize; 2] = [2, 16];

fn record<W: Workload>(size: Size, v: Variant) -> Dag {
    let input = W::input_at(size);
    let mut work = W::prepare(&input);
    let rec = Recorder::new(Weights::Nanos);
    let answer = W::run_futures(&rec, v, &input, &mut work);
    W::check(&input, &work, &answer).expect("the recorded run checks");
    rec.take_dag()
}

/// `[steals, deviations]` of `runs` runs of `W`'s variant on a pool `S` started with `config`
/// (`None` for a counter it does not report).
fn real<S: FutureForkJoin, W: Workload>(
    size: Size,
    v: Variant,
    config: &PoolConfig,
    runs: u64,
) -> [Vec<Option<u64>>; 2] {
    let pool = S::start(config).expect("the pool starts");
    let input = W::input_at(size);
    let (mut steals, mut devs) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let mut work = W::prepare(&input);
        pool.reset_stats();
        let answer = W::run_futures(&pool, v, &input, &mut work);
        W::check(&input, &work, &answer).expect("the run checks");
        let st = pool.stats();
        steals.push(st.steals);
        devs.push(
            st.extra
                .iter()
                .find(|(k, _)| *k == "deviations")
                .map(|&(_, x)| x),
        );
    }
    [steals, devs]
}

/// Busy thieves where P fits the machine, else the default.
fn idle(p: usize) -> IdlePolicy {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if p <= cpus {
        IdlePolicy::Busy
    } else {
        IdlePolicy::default()
    }
}

fn range(xs: &[Option<u64>]) -> String {
    let xs: Vec<u64> = xs.iter().flatten().copied().collect();
    match (xs.iter().min(), xs.iter().max()) {
        (Some(lo), Some(hi)) if lo == hi => format!("{lo}"),
        (Some(lo), Some(hi)) => format!("{lo}-{hi}"),
        _ => "n/a".into(),
    }
}

fn row<W: Workload>(size: Size, v: Variant, seeds: u64, runs: u64, cost: Option<u64>) {
    let dag = record::<W>(size, v);
    println!(
        "{} {v}: {} nodes, {} futures, {} touches, T1 {} ns, Tinf {} ns",
        W::NAME,
        dag.len(),
        dag.futures(),
        dag.touches(),
        dag.total_work(),
        dag.span()
    );
    for s in Model::ALL {
        for p in PS {
            let rs: Vec<SimReport> = (0..seeds)
                .map(|seed| {
                    let mut c = SimConfig::new(s, p, seed);
                    c.steal_cost = cost;
                    simulate_with(&dag, &c)
                })
                .collect();
            let sim = |f: fn(&SimReport) -> u64| {
                range(&rs.iter().map(|r| Some(f(r))).collect::<Vec<_>>())
            };
            // The pool the model stands for, idling as `idle(p)` says.
            let config = PoolConfig {
                idle: idle(p),
                ..PoolConfig::with_workers(p)
            };
            let [rst, rdev] = match s {
                Model::Abp => real::<Abp, W>(size, v, &config, runs),
                Model::Prows { placement } => real::<Prows, W>(
                    size,
                    v,
                    &PoolConfig {
                        placement,
                        ..config
                    },
                    runs,
                ),
            };
            println!(
                "  {:<24} P={p:<2} {:<4}  sim steals {:>9}  deviations {:>9}  suspensions {:>8} | runtime steals {:>9}  deviations {:>9}",
                s.to_string(),
                idle(p).to_string(),
                sim(|r| r.steals),
                sim(|r| r.deviations),
                sim(|r| r.suspensions),
                range(&rst),
                range(&rdev),
            );
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let size: Size = args
        .get(1)
        .map_or(Size::Quick, |s| s.parse().expect("a size"));
    let seeds: u64 = args
        .get(2)
        .map_or(5, |s| s.parse().expect("a number of seeds"));
    let runs: u64 = args
        .get(3)
        .map_or(3, |s| s.parse().expect("a number of runs"));
    let cost: Option<u64> = args.get(4).map(|s| s.parse().expect("a steal cost"));
    let only: Option<&str> = args.get(5).map(String::as_str);
    println!(
        "size {size}: simulator over {seeds} seeds (steal cost {}), runtimes over {runs} runs",
        cost.map_or("default".to_string(), |c| format!("{c} ns"))
    );
    let rows: [(&str, &[Variant]); 6] = [
        ("fib", &[Variant::Fj, Variant::Sf]),
        ("hw", &[Variant::Fj, Variant::Sf, Variant::Gf]),
        ("lcs", &[Variant::Fj, Variant::Sf, Variant::Gf]),
        ("sw", &[Variant::Fj, Variant::Sf, Variant::Gf]),
        ("bst", &[Variant::Fj, Variant::Gf]),
        ("hqsort", &[Variant::Gf]),
    ];
    for (name, variants) in rows {
        if only.is_some_and(|o| o != name) {
            continue;
        }
        for &v in variants {
            with_workload!(name, W => row::<W>(size, v, seeds, runs, cost)).expect("a workload");
        }
    }
}
