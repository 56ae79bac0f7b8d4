//! The module docs of the workspace say what the code does and why: measured results, which
//! carry a date and a machine, live in `paper-figures/measurements.md`, and no doc speaks of
//! work still to do. This test reads the module docs (`//!` lines) of every source file of
//! every crate (this one's aside, which names the patterns) and refuses a date (`YYYY-MM-DD`),
//! a measurement "on this 2-core machine", an issue number, and plans ("still to come",
//! "planned").

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Whether `line` holds a date `YYYY-MM-DD`.
fn has_date(line: &str) -> bool {
    let b = line.as_bytes();
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    b.windows(10).any(|w| {
        digits(&w[..4]) && w[4] == b'-' && digits(&w[5..7]) && w[7] == b'-' && digits(&w[8..])
    })
}

/// Whether `line` names an issue by its number ("issue 15").
fn names_an_issue(line: &str) -> bool {
    let lower = line.to_lowercase();
    lower
        .match_indices("issue ")
        .any(|(i, m)| lower[i + m.len()..].starts_with(|c: char| c.is_ascii_digit()))
}

#[test]
fn module_docs_hold_no_measurements_or_plans() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for krate in [".", "schedulers", "workloads", "sim", "harness"] {
        for dir in ["src", "tests", "examples", "benches"] {
            let dir = root.join(krate).join(dir);
            if dir.is_dir() {
                sources(&dir, &mut files);
            }
        }
    }
    assert!(files.len() > 150, "{}", files.len());
    let mut found = Vec::new();
    for file in files
        .iter()
        .filter(|f| !f.ends_with("tests/module_docs.rs"))
    {
        let text = std::fs::read_to_string(file).unwrap();
        for (i, line) in text.lines().enumerate() {
            let Some(doc) = line.trim_start().strip_prefix("//!") else {
                continue;
            };
            let lower = doc.to_lowercase();
            let stale = [
                "still to come",
                "planned",
                "measured on this",
                "this 2-core machine",
            ]
            .iter()
            .any(|p| lower.contains(p));
            if stale || has_date(doc) || names_an_issue(doc) {
                found.push(format!("{}:{}: {doc}", file.display(), i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "module docs with a measurement or a plan:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_patterns_match_what_they_refuse() {
    assert!(has_date("measured 2026-11-27 on"));
    assert!(!has_date("n = 10^4, 2.6·10^7 leaves, 0.45 s"));
    assert!(names_an_issue("The closing measurement (Issue 15)"));
    assert!(!names_an_issue("an issue of ordering"));
}
