//! How claims and their verdicts are shown: the terminal's lines and tally, the "Claims"
//! section of a figure's page, `claims.csv`, and the listings of `stealbench claims`.

use super::{Claimed, Judgement, Kind, Verdict};
use std::io;
use std::path::Path;

/// The claim's id with its kind when not a paper's: `FIGURE/ID [ours]`, `FIGURE/ID
/// [regression check]`.
fn tagged(j: &Judgement) -> String {
    match j.claim.kind {
        Kind::Paper => j.id.clone(),
        Kind::Ours => format!("{} [ours]", j.id),
        Kind::Regression(_) => format!("{} [regression check]", j.id),
    }
}

/// One line per verdict, for the terminal, then a line of its cases, band and paper's number.
pub(crate) fn text(judgements: &[Judgement]) -> String {
    let mut out = String::new();
    for j in judgements {
        out.push_str(&format!("claim {}: {}\n", tagged(j), j.verdict_text()));
        out.push_str(&format!(
            "  ours {} | band {} | paper {}\n",
            j.cases_text(),
            j.claim.check.band(),
            j.claim.paper
        ));
        if let Kind::Regression(why) = j.claim.kind {
            out.push_str(&format!("  holds by construction: {why}\n"));
        }
    }
    out
}

/// The verdicts in a line: `3 holds, 1 fails, 2 inconclusive, 1 n/a`.
pub(crate) fn tally(judgements: &[Judgement]) -> String {
    let count = |w: &str| judgements.iter().filter(|j| j.verdict.word() == w).count();
    format!(
        "{} holds, {} fails, {} inconclusive, {} n/a",
        count("holds"),
        count("fails"),
        count("inconclusive"),
        count("n/a")
    )
}

/// The judgements of the kind `word` ([`Kind::word`]).
pub(crate) fn of_kind(judgements: &[Judgement], word: &str) -> Vec<Judgement> {
    judgements
        .iter()
        .filter(|j| j.claim.kind.word() == word)
        .cloned()
        .collect()
}

/// The papers' claims' count and tally, then the others' apart: `12 claims of the papers: 3
/// holds, ...; apart, 2 of ours (...) and 1 regression check (...)`. Every tally that a run or
/// a report prints is this one.
pub(crate) fn summary(judgements: &[Judgement]) -> String {
    let papers = of_kind(judgements, "paper");
    let mut out = if papers.is_empty() {
        "no claim of a paper".to_string()
    } else {
        format!("{} claims of the papers: {}", papers.len(), tally(&papers))
    };
    if let Some(others) = apart(judgements) {
        out.push_str(&format!("; apart, {others}"));
    }
    out
}

/// The claims of ours and the regression checks among `judgements`, counted and tallied
/// (`2 of ours (...) and 1 regression check (...)`); `None` when there are none.
pub(crate) fn apart(judgements: &[Judgement]) -> Option<String> {
    let others: Vec<String> = [("ours", "of ours"), ("regression", "regression check")]
        .iter()
        .filter_map(|(word, what)| {
            let js = of_kind(judgements, word);
            let s = if js.len() == 1 || *word == "ours" {
                ""
            } else {
                "s"
            };
            (!js.is_empty()).then(|| format!("{} {what}{s} ({})", js.len(), tally(&js)))
        })
        .collect();
    (!others.is_empty()).then(|| others.join(" and "))
}

/// `s` with its first letter in upper case, to open a sentence.
fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// Escapes `|` for a Markdown table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The "Claims" section of a figure's Markdown page: the papers' claims, then ours and the
/// regression checks, each kind under its own heading.
pub(crate) fn markdown(judgements: &[Judgement]) -> String {
    if judgements.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "## Claims\n\n{}. Each claim is checked on this run's points against its band, case by \
         case: a case `holds` when our whole spread (the smallest to the largest round for a \
         time, repetition for a count) lies inside it, `fails` when it lies outside, \
         `inconclusive` when it crosses the band's edge, `n/a` when the run did not measure \
         it. The claim's verdict is the worst of its cases', unless the run cannot decide it \
         (`inconclusive`: a time at a P beyond this machine's cores, fewer than 3 rounds, an \
         input below the size where the effect shows; `n/a`: the paper's system only stood \
         in for here or not in this build), when it says what its cases would give. A failure \
         names its cause where one is measured; a verdict decided on oversubscribed points \
         says so. `stealbench claims` lists every check.\n\n",
        capitalized(&summary(judgements))
    );
    for word in Kind::WORDS {
        let js = of_kind(judgements, word);
        if js.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "### {} ({})\n\n| claim | paper | check | cases | verdict |\n|---|---|---|---|---|\n",
            Kind::heading(word),
            tally(&js)
        ));
        for j in &js {
            let id = match j.claim.kind {
                Kind::Regression(why) => format!("`{}` (by construction: {why})", j.id),
                _ => format!("`{}`", j.id),
            };
            out.push_str(&format!(
                "| {} | {} ({}) | {} | {} | {} |\n",
                cell(&id),
                cell(j.claim.quote),
                cell(&j.claim.paper),
                cell(&j.claim.check.band()),
                cell(&j.cases_text()),
                cell(&j.verdict_markdown())
            ));
        }
        out.push('\n');
    }
    out
}

/// The columns of `claims.csv`: one row per case of each claim, the claim's columns repeated
/// on each of its rows.
pub(crate) const CSV_HEADER: [&str; 17] = [
    "claim",
    "kind",
    "kind_reason",
    "verdict",
    "reason",
    "would",
    "cause",
    "oversubscribed",
    "caveat",
    "build",
    "case",
    "case_verdict",
    "case_reason",
    "ours",
    "band",
    "paper",
    "quote",
];

/// Writes `claims.csv` whole ([`crate::files::replace_with`]): one row per case of each claim
/// of the run.
pub(crate) fn write_csv(path: &Path, judgements: &[Judgement]) -> io::Result<()> {
    crate::files::replace_with(path, |tmp| write_rows(tmp, judgements))
}

/// The reason of a regression check, else nothing.
fn kind_reason(kind: Kind) -> &'static str {
    match kind {
        Kind::Regression(why) => why,
        _ => "",
    }
}

/// The rows of `claims.csv` into the fresh file `path`.
fn write_rows(path: &Path, judgements: &[Judgement]) -> io::Result<()> {
    let mut w = csv::Writer::from_path(path).map_err(io::Error::other)?;
    w.write_record(CSV_HEADER).map_err(io::Error::other)?;
    for j in judgements {
        let fails = j.verdict == Verdict::Fails || j.would == Some(Verdict::Fails);
        let cause = match (fails, j.claim.cause) {
            (false, _) => String::new(),
            (true, Some(c)) => c.to_string(),
            (true, None) => "unknown".to_string(),
        };
        let oversubscribed = j
            .oversubscribed
            .map(|p| format!("P = {p} on {} cores", j.cores))
            .unwrap_or_default();
        for (i, c) in j.cases.iter().enumerate() {
            w.write_record([
                j.id.as_str(),
                j.claim.kind.word(),
                kind_reason(j.claim.kind),
                j.verdict.word(),
                j.verdict.reason(),
                j.would.as_ref().map_or("", Verdict::word),
                &cause,
                &oversubscribed,
                j.caveat.as_deref().unwrap_or(""),
                j.build.as_deref().unwrap_or(""),
                &c.label,
                c.verdict.word(),
                c.verdict.reason(),
                &c.ours,
                &j.claim.check.case_band(i),
                &j.claim.paper,
                j.claim.quote,
            ])
            .map_err(io::Error::other)?;
        }
    }
    w.flush()
}

/// The number of claims of each kind in `figures`, in [`Kind::WORDS`]' order.
fn kind_counts(figures: &[Claimed<'_>]) -> [usize; 3] {
    Kind::WORDS.map(|w| {
        figures
            .iter()
            .flat_map(|f| f.claims)
            .filter(|c| c.kind.word() == w)
            .count()
    })
}

/// Every claim of `figures`, with its kind, check and band, for `stealbench claims`.
pub(crate) fn listing(figures: &[Claimed<'_>]) -> String {
    let mut out = String::new();
    for f in figures {
        out.push_str(&format!("{} ({} claims)\n", f.id, f.claims.len()));
        for c in f.claims {
            out.push_str(&format!("  {}/{}\n", f.id, c.id));
            match c.kind {
                Kind::Paper => {}
                Kind::Ours => out.push_str("    kind:  ours (no paper states it)\n"),
                Kind::Regression(why) => out.push_str(&format!(
                    "    kind:  regression check (holds by construction: {why})\n"
                )),
            }
            out.push_str(&format!("    paper: \"{}\" ({})\n", c.quote, c.paper));
            out.push_str(&format!("    check: {}\n", c.check.describe()));
            out.push_str(&format!("    band:  {}\n", c.check.band()));
            if let Some(why) = c.stand_in {
                out.push_str(&format!("    n/a here: {why}\n"));
            }
            if let Some((size, why)) = c.min_size {
                out.push_str(&format!("    decides from size {size} on: {why}\n"));
            }
            if let Some(why) = c.cause {
                out.push_str(&format!("    cause of a failure: {why}\n"));
            }
        }
    }
    let [paper, ours, regression] = kind_counts(figures);
    out.push_str(&format!(
        "\n{} claims in {} figures: {paper} of the papers, {ours} of ours, {regression} \
         regression checks\n",
        paper + ours + regression,
        figures.len()
    ));
    out
}

/// The columns of `stealbench claims --format csv`: one row per case of each claim, the
/// claim's columns repeated on each of its rows.
pub(crate) const LISTING_CSV_HEADER: [&str; 13] = [
    "figure",
    "id",
    "kind",
    "kind_reason",
    "quote",
    "paper",
    "check",
    "band",
    "case",
    "quantities",
    "stand_in",
    "decides_from",
    "cause",
];

/// Every claim of `figures` as CSV ([`LISTING_CSV_HEADER`]), for `stealbench claims --format
/// csv`.
pub(crate) fn listing_csv(figures: &[Claimed<'_>]) -> io::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(LISTING_CSV_HEADER)
        .map_err(io::Error::other)?;
    for f in figures {
        for c in f.claims {
            let decides_from = c
                .min_size
                .map(|(size, why)| format!("{size}: {why}"))
                .unwrap_or_default();
            for (i, (label, qs)) in c.check.cases().into_iter().enumerate() {
                let quantities = qs
                    .iter()
                    .map(|q| q.to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                w.write_record([
                    f.id,
                    c.id,
                    c.kind.word(),
                    kind_reason(c.kind),
                    c.quote,
                    &c.paper,
                    &c.check.describe(),
                    &c.check.case_band(i),
                    &label,
                    &quantities,
                    c.stand_in.unwrap_or(""),
                    &decides_from,
                    c.cause.unwrap_or(""),
                ])
                .map_err(io::Error::other)?;
            }
        }
    }
    let bytes = w.into_inner().map_err(io::Error::other)?;
    String::from_utf8(bytes).map_err(io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::Band;
    use crate::claims::tests::{judged, two_cases};
    use crate::figures::Figure;
    use stealbench_workloads::Size;

    #[test]
    fn only_the_papers_claims_are_tallied_as_theirs() {
        let (claim, pts) = two_cases(2, Band::at_least(1.0));
        let js: Vec<Judgement> = [
            claim.clone(),
            claim.clone().ours(),
            claim.clone().regression("by construction"),
            claim,
        ]
        .into_iter()
        .map(|c| judged(c, pts.clone(), Size::Quick))
        .collect();
        assert_eq!(of_kind(&js, "paper").len(), 2);
        assert_eq!(
            summary(&js),
            "2 claims of the papers: 2 holds, 0 fails, 0 inconclusive, 0 n/a; apart, 1 of \
             ours (1 holds, 0 fails, 0 inconclusive, 0 n/a) and 1 regression check (1 holds, \
             0 fails, 0 inconclusive, 0 n/a)"
        );
        assert!(
            markdown(&js[1..3]).starts_with("## Claims\n\nNo claim of a paper; apart, 1 of ours")
        );
        let md = markdown(&js);
        let headings: Vec<&str> = md.lines().filter(|l| l.starts_with("### ")).collect();
        assert_eq!(headings.len(), 3, "{md}");
        assert!(
            headings[0].starts_with("### The papers' claims (2 holds"),
            "{md}"
        );
        assert!(md.contains("(by construction: by construction)"), "{md}");
        assert!(text(&js).contains("claim prows-fig3/few [regression check]: holds"));
    }

    #[test]
    fn claims_csv_has_a_row_per_case_with_the_claims_kind() {
        let dir = tempfile::TempDir::with_prefix("stealbench-claims-csv-").unwrap();
        let path = dir.path().join("claims.csv");
        let (claim, pts) = two_cases(2, Band::at_most(10.0));
        let js = [
            judged(claim.clone(), pts.clone(), Size::Quick),
            judged(claim.ours(), pts, Size::Quick),
        ];
        write_csv(&path, &js).unwrap();
        let mut r = csv::Reader::from_path(&path).unwrap();
        assert_eq!(r.headers().unwrap().iter().collect::<Vec<_>>(), CSV_HEADER);
        let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        let col = |row: &csv::StringRecord, name: &str| {
            let i = CSV_HEADER.iter().position(|h| *h == name).unwrap();
            row[i].to_string()
        };
        assert_eq!(rows.len(), 4);
        let first: Vec<String> = ["claim", "kind", "verdict", "cause", "case", "case_verdict"]
            .iter()
            .map(|c| col(&rows[0], c))
            .collect();
        assert_eq!(
            first,
            [
                "prows-fig3/few",
                "paper",
                "fails",
                "unknown",
                "abp",
                "fails"
            ]
        );
        assert_eq!(col(&rows[1], "case_verdict"), "holds");
        assert_eq!(col(&rows[3], "kind"), "ours");
    }

    #[test]
    fn the_listing_as_csv_has_every_case_and_kind() {
        let figures: Vec<Figure> = crate::figures::FIGURES
            .iter()
            .map(|f| (f.build)())
            .collect();
        let claimed: Vec<Claimed<'_>> = figures.iter().map(Figure::claimed).collect();
        let text = listing_csv(&claimed).unwrap();
        let mut r = csv::Reader::from_reader(text.as_bytes());
        assert_eq!(
            r.headers().unwrap().iter().collect::<Vec<_>>(),
            LISTING_CSV_HEADER
        );
        let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        let cases: usize = figures
            .iter()
            .flat_map(|f| &f.claims)
            .map(|c| c.check.cases().len())
            .sum();
        assert_eq!(rows.len(), cases);
        for kind in Kind::WORDS {
            assert!(rows.iter().any(|row| &row[2] == kind), "no {kind} claim");
        }
        let listed = listing(&claimed);
        let [paper, ours, regression] = kind_counts(&claimed);
        assert!(
            listed.ends_with(&format!(
                "{paper} of the papers, {ours} of ours, {regression} regression checks\n"
            )),
            "{listed}"
        );
    }

    #[test]
    fn claims_csv_replaces_a_planted_link_and_never_writes_its_target() {
        let dir = tempfile::TempDir::with_prefix("stealbench-claims-csv-").unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let path = dir.path().join("claims.csv");
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        write_csv(&path, &[]).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.trim_end(), CSV_HEADER.join(","));
    }
}
