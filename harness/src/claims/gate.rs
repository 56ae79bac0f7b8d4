//! The gates: why a run cannot decide a claim, whatever its points measure.
//!
//! A stand-in, a runtime this build lacks, points that more than one machine measured (a run
//! merged across machines), a time at a P beyond the cores or over fewer than
//! [`MIN_TIME_ROUNDS`] rounds, a size below the claim's ([`gates_before_run`] asks them before
//! anything runs).

use super::{Claim, MIN_TIME_ROUNDS, Run, Verdict, quantity};
use crate::results::{Machine, Summaries};
use stealbench_workloads::Size;

/// Why a run of `rounds` rounds at `size` on a machine of `cores` cores cannot decide a claim,
/// before anything runs (`stealbench plan`), every reason at once: the gates of [`judge`] on a
/// run with no points yet (a stand-in, a runtime not built, a time at a P beyond the cores, a
/// size below the claim's), then the rounds a time claim needs. Empty when it can.
pub(crate) fn gates_before_run(
    claim: &Claim,
    cores: usize,
    size: Size,
    rounds: usize,
) -> Vec<Verdict> {
    let none = Summaries::default();
    let mut out = gates(
        claim,
        &Run {
            summaries: &none,
            cores,
            size,
        },
    );
    if claim.reads_time() && rounds < MIN_TIME_ROUNDS {
        out.push(too_few_rounds(&rounds.to_string()));
    }
    out
}

/// `inconclusive`: a time read over `rounds` rounds (`N`, or `QUANTITY: N`), fewer than a
/// time claim needs.
fn too_few_rounds(rounds: &str) -> Verdict {
    Verdict::Inconclusive(format!(
        "{rounds} round(s); a time claim needs {MIN_TIME_ROUNDS} (--rounds {MIN_TIME_ROUNDS}): \
         times move between processes"
    ))
}

/// The machines that measured the points `claim` reads in `run`, each once, where the run
/// names one per point (a run merged across machines); empty otherwise.
pub(super) fn machines_of<'a>(claim: &Claim, run: &Run<'a>) -> Vec<&'a Machine> {
    let mut out: Vec<&Machine> = Vec::new();
    for q in claim.check.quantities() {
        for s in q.measured(run.summaries) {
            if let Some(m) = run.summaries.machine_of(&s.key)
                && !out.contains(&m)
            {
                out.push(m);
            }
        }
    }
    out
}

/// The cores of the machine that measured `pt` in `run`: its own where the run names one per
/// point (a run merged across machines), else the run's.
pub(super) fn cores_of(pt: &quantity::Pt, run: &Run<'_>) -> usize {
    run.summaries
        .machine_of(&pt.key())
        .map_or(run.cores, |m| m.cores)
}

/// Whether `pt` is a simulated row's (its arm has `sim=`), which runs no worker threads.
pub(super) fn simulated(pt: &quantity::Pt) -> bool {
    pt.runtime.sim.is_some()
}

/// The verdict a claim gets before its check decides, if the run cannot decide it.
pub(super) fn gate(claim: &Claim, run: &Run<'_>) -> Option<Verdict> {
    gates(claim, run).into_iter().next()
}

/// Every gate that says the run cannot decide a claim, in the order [`gate`] gives the first.
fn gates(claim: &Claim, run: &Run<'_>) -> Vec<Verdict> {
    let mut out = Vec::new();
    if let Some(why) = claim.stand_in {
        out.push(Verdict::NotApplicable(why.to_string()));
    }
    // A point of a runtime this build lacks, of which the run holds nothing (a run made by a
    // build with it is judged on its data whatever build reads it).
    let missing = claim.points().into_iter().find_map(|(pt, _)| {
        let arm = pt.runtime;
        let why = arm.info.not_built()?;
        let measured = run.summaries.iter().any(|s| s.key.runtime == arm);
        (!measured).then(|| format!("{} is {why}", arm.info.name))
    });
    if let Some(why) = missing {
        out.push(Verdict::NotApplicable(why));
    }
    // Points of different machines are not comparable.
    let machines = machines_of(claim, run);
    if machines.len() > 1 {
        let models: Vec<String> = machines
            .iter()
            .map(|m| format!("{} ({} logical CPUs)", m.cpu_model, m.logical_cpus))
            .collect();
        out.push(Verdict::Inconclusive(format!(
            "its points come from {} machines: {}",
            machines.len(),
            models.join(", ")
        )));
    }
    // The cores gate is for times only: a count or memory point is measured beyond the cores,
    // oversubscribed.
    let max_p = claim.max_time_p();
    if claim.reads_time() && max_p > run.cores {
        out.push(Verdict::Inconclusive(format!(
            "a time claim at P = {max_p}; this machine has {} cores",
            run.cores
        )));
    }
    if let Some((size, why)) = claim.min_size
        && rank(run.size) < rank(size)
    {
        out.push(Verdict::Inconclusive(format!(
            "this run's size is {}; the effect shows from size {} on: {why}",
            run.size, size
        )));
    }
    for q in claim.check.quantities().iter().flat_map(|q| q.times()) {
        let rounds = q.samples(run.summaries).ok().map(|s| s.values.len());
        if let Some(n) = rounds.filter(|&n| n < MIN_TIME_ROUNDS) {
            out.push(too_few_rounds(&format!("{q}: {n}")));
            break;
        }
    }
    out
}

/// The rank of a size: test < quick < small < paper.
fn rank(s: Size) -> u8 {
    match s {
        Size::Test => 0,
        Size::Quick => 1,
        Size::Small => 2,
        Size::Paper => 3,
    }
}
