//! The papers' figures and tables: the registry of ids, the reference CSVs (embedded from
//! `paper-figures/reference/`) and the lookup of a benchmark's number in one, and what every
//! figure shares (its constructor with the usual settings, baseline rows, the ProWS runtime
//! mapping and time figures). A figure is one
//! module: its rows (runtime arm, workload, variant, with the paper's values), its [`Metric`]
//! (what its table's cells and plot's lines show) and its caption; the table, the plot and the
//! Markdown page are rendered by shared code. Adding a figure is adding its module and one line
//! in `figures!`'s list below.

use crate::claims::{self, Claim};
use crate::grid::{PaperValues, Row, workload_info};
use crate::runtimes;
use stealbench_schedulers::registry::{Paper, baselines};
use stealbench_workloads::{Shape, Variant};

pub(crate) mod counters;
pub(crate) mod memory;
pub(crate) mod metric;
pub(crate) mod ratio;
pub(crate) mod stacks;
pub(crate) mod suites;

pub(crate) use metric::{Metric, SpeedupBase};

/// The rounds a figure of times runs by default: each point's process once per round, the
/// rounds in shuffled orders. A VM's times move by up to 2x from one process to the next, so a
/// claim about times is judged on the median over rounds with the rounds' spread beside it,
/// and one round cannot decide one: a figure runs by default the rounds its time claims need
/// ([`claims::MIN_TIME_ROUNDS`]).
pub(crate) const TIME_ROUNDS: usize = claims::MIN_TIME_ROUNDS;

/// A figure this build can reproduce.
#[derive(Debug, Clone)]
pub(crate) struct Figure {
    /// Its id on the command line.
    pub id: &'static str,
    /// Its title.
    pub title: &'static str,
    /// The paper's caption and setting, for the Markdown file.
    pub caption: &'static str,
    /// The reference CSV's path in the repository; empty when the paper gives no numbers to
    /// set beside ours (a plot without values).
    pub reference_path: &'static str,
    /// The parsed reference CSV.
    pub reference: Reference,
    /// The paper's worker counts.
    pub paper_workers: &'static [usize],
    /// What the table's cells and the plot's lines show.
    pub metric: &'static dyn Metric,
    /// Rounds over the grid when `--rounds` is not given: [`TIME_ROUNDS`] where the figure
    /// compares times ([`Metric::compares_times`]), 1 for counts and memory.
    pub rounds: usize,
    /// Worker counts beyond the measured ones for the simulated rows (arms with `sim=`).
    pub sim_workers: &'static [usize],
    /// The plot's x axis.
    pub x_axis: XAxis,
    /// Timed repetitions per point when `--reps` is not given, where the paper's number is
    /// part of the metric (ProWS Figure 4: the maximum of 3 runs); `None`: the size's default.
    pub reps: Option<usize>,
    /// Every row: the paper's, then the baselines, grouped by benchmark.
    pub rows: Vec<Row>,
    /// The paper's claims the figure tests, each judged on every run (`claims/mod.rs`).
    pub claims: Vec<Claim>,
    /// The shape of the serial code T_s times: the paper's ([`ts_note`]); the plain kernel
    /// unless its benchmark fixes another ([`Figure::with_ts`]).
    pub ts: Shape,
}

impl Figure {
    /// The figure of `rows` at the paper's `paper_workers`, its cells and lines `metric`'s, as
    /// most figures are: no reference CSV, one round, no simulated P beyond the measured ones,
    /// plotted against P, the size's repetitions. A figure that differs sets its fields by
    /// struct update (`Figure { reps: Some(3), ..Figure::new(..) }`) or, for its reference
    /// CSV, [`Figure::with_reference`].
    pub(crate) fn new(
        id: &'static str,
        title: &'static str,
        caption: &'static str,
        paper_workers: &'static [usize],
        metric: &'static dyn Metric,
        rows: Vec<Row>,
    ) -> Figure {
        Figure {
            id,
            title,
            caption,
            reference_path: "",
            reference: Reference::default(),
            paper_workers,
            metric,
            rounds: if metric.compares_times() {
                TIME_ROUNDS
            } else {
                1
            },
            sim_workers: &[],
            x_axis: XAxis::Workers,
            reps: None,
            rows,
            claims: Vec::new(),
            ts: Shape::Plain,
        }
    }

    /// The figure with T_s the serial code in `shape`, where its paper's benchmark fixes one.
    pub(crate) fn with_ts(self, shape: Shape) -> Figure {
        Figure { ts: shape, ..self }
    }

    /// The figure with `claims`.
    pub(crate) fn with_claims(self, claims: Vec<Claim>) -> Figure {
        Figure { claims, ..self }
    }

    /// The figure with the reference CSV `csv`: its path and its parsed text.
    pub(crate) fn with_reference(self, csv: ReferenceCsv) -> Figure {
        Figure {
            reference_path: csv.path,
            reference: csv.parse(),
            ..self
        }
    }

    /// Its claims under its id, as the verdicts and listings of [`crate::claims`] read them.
    pub(crate) fn claimed(&self) -> claims::Claimed<'_> {
        claims::Claimed {
            id: self.id,
            claims: &self.claims,
        }
    }
}

#[cfg(test)]
impl Figure {
    /// The row of benchmark `bench` on runtime arm `runtime` (the first, in a figure of several
    /// variants); panics when there is none.
    pub(crate) fn row(&self, bench: &str, runtime: &str) -> &Row {
        self.rows
            .iter()
            .find(|r| r.bench == bench && r.runtime == runtime)
            .unwrap_or_else(|| panic!("{}: no row of {bench} on {runtime}", self.id))
    }

    /// The paper's cell of [`Figure::row`]`(bench, runtime)` at `p`.
    pub(crate) fn paper_cell(&self, bench: &str, runtime: &str, p: usize) -> String {
        self.metric.paper_cell(self.row(bench, runtime), p)
    }
}

/// Which T_s a figure divides by, for its page: the kernel arm in `shape` and the serial code
/// it times.
pub(crate) fn ts_note(shape: Shape) -> String {
    let arm = runtimes::kernel(shape);
    match shape {
        Shape::Plain => format!(
            "`{arm}`, each workload's kernel: its serial code called directly, with no runtime \
             and no trait (the serial elision of the Cilk code, the serial version ProWS and \
             Fibril divide by), at P = 1. The `serial` runtime runs the same program through \
             the closure front-end's traits (`stealbench bench` shows their cost)."
        ),
        Shape::Libfork => format!(
            "`{arm}`, the serial code of libfork's benchmark (its `bench/source/*/serial.cpp`), \
             at P = 1: fib never inlined, its result written through an out-parameter (slower \
             than the plain recursion, which the compiler may inline); integrate, nqueens, \
             matmul and UTS as the plain kernel, libfork's serial versions of them being plain \
             recursions and loops. No runtime and no trait in either."
        ),
    }
}

/// What a figure's plot puts on its x axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum XAxis {
    /// The workers P: a line per row through its points at every P.
    Workers,
    /// The workload parameter that each row's workload spec sets last (`touchchain/d=64`:
    /// `d`): one panel per workload, and the rows of one (variant, runtime) make one line
    /// through their specs' values, at every P.
    SpecParam,
}

/// One entry of the registry of figures and tables.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FigureEntry {
    /// Its id on the command line.
    pub id: &'static str,
    /// Its title.
    pub title: &'static str,
    /// Builds the figure.
    pub build: fn() -> Figure,
}

/// Declares the figure modules (each with `ID`, `TITLE` and `figure()`) and lists them in
/// [`FIGURES`].
macro_rules! figures {
    ($($module:ident),* $(,)?) => {
        $(pub(crate) mod $module;)*

        /// Every figure and table, in listing order.
        pub(crate) const FIGURES: &[FigureEntry] = &[
            $(FigureEntry {
                id: $module::ID,
                title: $module::TITLE,
                build: $module::figure,
            },)*
        ];
    };
}

figures! {
    prows_fig2,
    prows_fig3,
    prows_fig4,
    spoonhower_fig5,
    spoonhower_fig6,
    fibril_fig3,
    fibril_fig4,
    fibril_table2,
    fibril_table3,
    fibril_table4,
    libfork_fig5,
    libfork_fig6,
    libfork_fig7,
    libfork_table2,
    lh_mapreduce,
    steal_scaling,
}

/// The entry with id `id`.
pub(crate) fn find(id: &str) -> Option<&'static FigureEntry> {
    FIGURES.iter().find(|f| f.id == id)
}

/// A reference CSV of `paper-figures/reference/`, embedded so the binary works from any
/// directory (made by `reference_csv!`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReferenceCsv {
    /// Its path in the repository.
    pub path: &'static str,
    /// Its text.
    pub text: &'static str,
}

impl ReferenceCsv {
    /// The parsed text.
    pub(crate) fn parse(&self) -> Reference {
        Reference::parse(self.text)
    }
}

/// The [`ReferenceCsv`] of file `$file` of `paper-figures/reference/`, its name spelt once for
/// its path and the embedded text (for the modules of this folder: the path of `include_str!`
/// is relative to the file that invokes it).
macro_rules! reference_csv {
    ($file:literal) => {
        $crate::figures::ReferenceCsv {
            path: concat!("paper-figures/reference/", $file),
            text: include_str!(concat!("../../../paper-figures/reference/", $file)),
        }
    };
}
pub(crate) use reference_csv;

/// A reference CSV: its `#` comment lines and its records under a header.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Reference {
    /// The comment lines, without `# `.
    pub comments: Vec<String>,
    /// The header.
    pub header: Vec<String>,
    /// The records.
    pub records: Vec<Vec<String>>,
}

impl Reference {
    /// Parses a reference CSV: leading `#` lines are comments, then a header and records.
    pub(crate) fn parse(text: &str) -> Reference {
        let comments = text
            .lines()
            .filter(|l| l.starts_with('#'))
            .map(|l| l.trim_start_matches('#').trim().to_string())
            .collect();
        let body: String = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| format!("{l}\n"))
            .collect();
        let mut r = csv::ReaderBuilder::new().from_reader(body.as_bytes());
        let header = r
            .headers()
            .expect("reference CSV has a header")
            .iter()
            .map(str::to_string)
            .collect();
        let records = r
            .records()
            .map(|rec| {
                rec.expect("reference CSV record")
                    .iter()
                    .map(|s| s.trim().to_string())
                    .collect()
            })
            .collect();
        Reference {
            comments,
            header,
            records,
        }
    }

    /// The value of column `col` in `record`, if present and not empty.
    pub(crate) fn field<'a>(&self, record: &'a [String], col: &str) -> Option<&'a str> {
        let i = self.header.iter().position(|h| h == col)?;
        record.get(i).map(String::as_str).filter(|s| !s.is_empty())
    }

    /// A row per record, with the record's paper values ([`Reference::paper_values`]), on the
    /// runtime arm `runtime` gives its variant. The record's benchmark, also the workload, is
    /// its `bench` and its variant its `variant`; in a CSV without a `variant` column, `bench`
    /// is `workload-variant` (`fib-sf`), and `workload-variant-nostack` (ProWS's "-stack"
    /// row, `fib-sf-nostack`) is that variant on the arm with `futures=nostack`.
    pub(crate) fn paper_rows(&self, runtime: fn(Variant) -> &'static str) -> Vec<Row> {
        let has_variant = self.header.iter().any(|h| h == "variant");
        self.records
            .iter()
            .map(|rec| {
                let bench = self.field(rec, "bench").expect("bench column");
                let (workload, variant) = if has_variant {
                    (bench, self.field(rec, "variant").expect("variant column"))
                } else {
                    bench.split_once('-').expect("bench is workload-variant")
                };
                // The paper's "-stack" row (`fib-sf-nostack`) is the sf program on an arm
                // whose futures get no stack of their own.
                let (variant, settings) = variant
                    .strip_suffix("-nostack")
                    .map_or((variant, ""), |v| (v, "/futures=nostack"));
                let variant: Variant = variant.parse().expect("the reference names known variants");
                Row {
                    paper: Some(self.paper_values(rec)),
                    ..Row::new(
                        workload,
                        workload,
                        variant,
                        format!("{}{settings}", runtime(variant)),
                    )
                }
            })
            .collect()
    }

    /// The paper's values of `record`: `Ts`, and every `T<P>` column.
    pub(crate) fn paper_values(&self, record: &[String]) -> PaperValues {
        let num = |s: Option<&str>| s.and_then(|s| s.parse::<f64>().ok());
        let times = self
            .header
            .iter()
            .filter_map(|h| h.strip_prefix('T')?.parse::<usize>().ok())
            .map(|p| (p, num(self.field(record, &format!("T{p}")))))
            .collect();
        PaperValues {
            ts: num(self.field(record, "Ts")),
            values: times,
        }
    }
}

/// The text of column `col` in the record of benchmark `bench` (column `bench`) of the
/// reference CSV `csv`, if present and not empty.
pub(crate) fn paper_text(csv: &str, bench: &str, col: &str) -> Option<String> {
    let r = Reference::parse(csv);
    let rec = r
        .records
        .iter()
        .find(|rec| r.field(rec, "bench") == Some(bench))?;
    r.field(rec, col).map(str::to_string)
}

/// The number in column `col` of benchmark `bench`'s record of `csv`.
pub(crate) fn paper_number(csv: &str, bench: &str, col: &str) -> Option<f64> {
    paper_text(csv, bench, col)?.parse().ok()
}

/// Adds, after each benchmark's paper rows, the ProWS paper's baselines (the registry's
/// [`baselines`] of [`Paper::Prows`], with no paper value): one row per baseline arm (each in
/// every arm the registry lists for it) and per variant of those rows that the workload offers
/// on the arm's front-end (a fork-join-only runtime gets the fj rows alone). A variant the
/// baseline refuses otherwise (rayon's gf) stays, as a row that says why. For a workload that
/// does not exist yet every variant is listed (and shown as not yet implemented).
pub(crate) fn with_baselines(paper_rows: Vec<Row>) -> Vec<Row> {
    let mut out: Vec<Row> = Vec::new();
    let mut i = 0;
    while i < paper_rows.len() {
        let bench = paper_rows[i].bench.clone();
        let group: Vec<Row> = paper_rows[i..]
            .iter()
            .take_while(|r| r.bench == bench)
            .cloned()
            .collect();
        i += group.len();
        let workload = group[0].workload.clone();
        let mut variants: Vec<Variant> = Vec::new();
        for r in &group {
            if !variants.contains(&r.variant) {
                variants.push(r.variant);
            }
        }
        out.extend(group);
        let info = workload_info(&workload);
        for entry in baselines(Paper::Prows) {
            let fork_join_only = entry.capabilities.is_some_and(|c| !c.futures);
            for &v in &variants {
                if v != Variant::Fj && fork_join_only {
                    continue;
                }
                for arm in runtimes::registered_arms(entry) {
                    if info
                        .as_ref()
                        .is_none_or(|w| crate::grid::offers(w, v, arm.front_end()))
                    {
                        out.push(Row::on(&bench, workload.clone(), v, arm));
                    }
                }
            }
        }
    }
    out
}

/// A ProWS figure of times (Figures 2 and 3): a row per record of its reference CSV `csv` on
/// the runtime [`prows_runtime`] gives its variant ([`Reference::paper_rows`]), then the
/// baselines, at the paper's P (1 to its 16 cores).
pub(crate) fn prows_time_figure(
    id: &'static str,
    title: &'static str,
    caption: &'static str,
    csv: ReferenceCsv,
    metric: &'static metric::Time,
) -> Figure {
    let rows = with_baselines(csv.parse().paper_rows(prows_runtime));
    Figure::new(id, title, caption, &[1, 2, 4, 8, 16], metric, rows).with_reference(csv)
}

/// The ProWS mapping of a paper variant to our runtime: Cilk Plus (fj, lp) is stood in for by
/// [`suites::CILK_PLUS`] (`abp`), Cilk-F (sf, gf) is `prows`.
pub(crate) fn prows_runtime(v: Variant) -> &'static str {
    match v {
        Variant::Fj | Variant::Lp => suites::CILK_PLUS,
        Variant::Sf | Variant::Gf => "prows",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_papers_figures_divide_by_its_serial_code() {
        for e in FIGURES {
            let f = (e.build)();
            // libfork's benchmark fixes its serial fib's shape; every other paper divides by
            // the serial elision of its Cilk code, the plain kernel.
            let want = if f.id.starts_with("libfork-") {
                Shape::Libfork
            } else {
                Shape::Plain
            };
            assert_eq!(f.ts, want, "{}", f.id);
        }
        assert!(ts_note(Shape::Plain).starts_with("`serial/front=kernel`, each workload's kernel"));
    }

    #[test]
    fn reference_parsing_reads_comments_and_blanks() {
        let r = Reference::parse("# one\n# two\nbench,Ts,T1,T2\nfib-sf,2.46,,17.09\n");
        assert_eq!(r.comments, ["one", "two"]);
        let v = r.paper_values(&r.records[0]);
        assert_eq!(v.ts, Some(2.46));
        assert_eq!(v.value(1), None);
        assert_eq!(v.value(2), Some(17.09));
        assert_eq!(v.value(4), None);
    }

    #[test]
    fn lookups_find_the_benchmark_and_column() {
        let csv = "# c\nbench,x,y\nfib,1.5,\nmatmul,2,3\n";
        assert_eq!(paper_number(csv, "fib", "x"), Some(1.5));
        assert_eq!(paper_number(csv, "fib", "y"), None);
        assert_eq!(paper_number(csv, "matmul", "y"), Some(3.0));
        assert_eq!(paper_number(csv, "lu", "x"), None);
        assert_eq!(paper_text(csv, "matmul", "nosuch"), None);
    }

    #[test]
    fn registry_ids_are_unique_and_every_figure_builds() {
        for (i, f) in FIGURES.iter().enumerate() {
            assert!(FIGURES[i + 1..].iter().all(|g| g.id != f.id), "{}", f.id);
            let fig = (f.build)();
            assert_eq!(fig.id, f.id);
            assert!(!fig.rows.is_empty());
        }
    }

    #[test]
    fn baselines_follow_their_benchmark() {
        let row = |b: &str, v| Row {
            bench: b.into(),
            workload: b.into(),
            variant: v,
            runtime: prows_runtime(v).into(),
            paper: Some(PaperValues::default()),
        };
        let nostack = Row {
            runtime: "prows/futures=nostack".into(),
            ..row("fib", Variant::Sf)
        };
        let rows = with_baselines(vec![
            row("fib", Variant::Fj),
            nostack,
            row("nosuch", Variant::Gf),
        ]);
        let names: Vec<String> = rows
            .iter()
            .map(|r| format!("{}-{}-{}", r.bench, r.variant, r.runtime))
            .collect();
        // A configuration of prows's sf is the program sf for the baselines (fib offers fj
        // and sf on both front-ends); `nosuch` does not exist: all its variants but those a
        // fork-join-only baseline refuses.
        let mut want: Vec<String> =
            vec!["fib-fj-abp".into(), "fib-sf-prows/futures=nostack".into()];
        want.extend(baseline_rows(&[Variant::Fj, Variant::Sf]).map(|r| format!("fib-{r}")));
        want.push("nosuch-gf-prows".into());
        want.extend(baseline_rows(&[Variant::Gf]).map(|r| format!("nosuch-{r}")));
        assert_eq!(names, want);
        assert!(names.contains(&"fib-fj-libfork/idle=busy".to_string()));
    }

    /// The ProWS figures' baseline rows of a benchmark with `variants`, each offered on every
    /// front-end, spelt `VARIANT-ARM`: per baseline in listing order, per variant (fj alone
    /// where it has no futures), per registered arm.
    pub(crate) fn baseline_rows(variants: &[Variant]) -> impl Iterator<Item = String> {
        baselines(Paper::Prows).flat_map(move |r| {
            let futures = r.capabilities.is_none_or(|c| c.futures);
            variants
                .iter()
                .filter(move |&&v| futures || v == Variant::Fj)
                .flat_map(move |v| {
                    runtimes::registered_arms(r)
                        .into_iter()
                        .map(move |a| format!("{v}-{a}"))
                })
        })
    }
}
