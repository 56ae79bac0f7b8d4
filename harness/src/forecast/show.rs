//! A plan in words: its one-line estimate, and each claim it cannot decide, why and from when.
//!
//! The estimate is the line `reproduce` prints at its start; a claim this run cannot decide
//! here is listed with every reason and the size from which it would decide.

use super::FigurePlan;
use std::fmt::Write as _;

/// A duration in words: `42 s`, `3 min 20 s`, `2 h 05 min`.
pub(crate) fn duration(seconds: f64) -> String {
    let s = seconds.round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

/// Bytes in words.
pub(super) fn bytes(b: f64) -> String {
    if b < 1024.0 * 1024.0 {
        format!("{:.0} KiB", (b / 1024.0).ceil())
    } else {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    }
}

/// The one-line estimate of a figure's run (what `reproduce` prints at its start).
pub(crate) fn estimate_line(p: &FigurePlan) -> String {
    let s = &p.settings;
    format!(
        "{} at {}: {} points x {} round(s), {} rep(s) + a warm-up each; expected {} here, {} of disk; {} of {} claims decided here",
        p.id,
        s.measure.size,
        p.points,
        s.rounds,
        s.reps(),
        duration(p.seconds),
        bytes(p.bytes),
        p.decided(),
        p.claims.len()
    )
}

/// The plan of a figure in words: the estimate, then each claim this run cannot decide, why,
/// and from which size it would.
pub(crate) fn text(p: &FigurePlan) -> String {
    let mut out = estimate_line(p);
    out.push('\n');
    for n in &p.unmodelled {
        let _ = writeln!(
            out,
            "  an input the model cannot scale (counted at the reference's): {n}"
        );
    }
    for c in &p.claims {
        if c.undecided.is_empty() {
            continue;
        }
        let why: Vec<String> = c.undecided.iter().map(ToString::to_string).collect();
        let from = match c.decides_from {
            Some(s) => format!("decides here from --size {s}"),
            None => "no size decides it here".to_string(),
        };
        let _ = writeln!(
            out,
            "  undecidable here: {}: {}; {from}",
            c.id,
            why.join("; ")
        );
    }
    out
}
