//! The workloads of stealbench: one module per workload, each with its kernel (written once),
//! its parallel variants on the closure front-end ([`ForkJoin`]) and, where the workload offers
//! them, on the async front-end ([`AsyncForkJoin`]), and the check of its answer.
//!
//! Every run checks its answer against the serial version or a known value
//! ([`Workload::check`]), which says what the answer is and what it was checked against
//! ([`Checked`]); the harness refuses a timing whose check failed.

// The async workload functions return `impl Future<Output = T> + Send + 's` from an
// `async move` block rather than being `async fn`s: the compiler cannot infer `Send` of a
// future whose type contains itself (a recursive child made through a closure), so the bound
// is written out (see `stealbench_schedulers::AsyncForkJoin`). Clippy would turn them back
// into `async fn`s, which then fail to compile.
#![allow(clippy::manual_async_fn)]

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use stealbench_schedulers::{AsyncForkJoin, ForkJoin, FutureForkJoin};

pub mod bst;
pub mod cholesky;
pub mod ferret;
pub mod fft;
pub mod fib;
pub mod heat;
pub mod hqsort;
pub mod hw;
pub mod integrate;
pub mod knapsack;
pub mod lcs;
pub mod lu;
pub mod mapreduce_fib;
pub mod mm;
pub mod nqueens;
pub mod params;
mod parfor;
pub mod quicksort;
pub use params::Params;
pub mod rectmul;
pub use stealbench_schedulers::rng;
pub mod smm;
pub mod sort;
pub mod sw;
#[cfg(test)]
mod testing;
pub mod touchchain;
pub mod touchtree;
pub mod uts;
pub mod wavefront;
pub mod zorder;

/// How a workload expresses its parallelism (the papers' suffixes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// Fork-join: spawn and sync (`join` / scope).
    Fj,
    /// Structured futures: single touch, touched by a task in series with the creator.
    Sf,
    /// General futures: multi-touch handles, touched from other tasks.
    Gf,
    /// Linear pipeline (Piper).
    Lp,
}

impl Variant {
    /// Every variant, in the order tables list them.
    pub const ALL: [Variant; 4] = [Variant::Fj, Variant::Sf, Variant::Gf, Variant::Lp];

    /// The spelling used on the command line and in result files.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Fj => "fj",
            Variant::Sf => "sf",
            Variant::Gf => "gf",
            Variant::Lp => "lp",
        }
    }

    /// Does this variant create futures? Every variant but `fj` does (`lp`'s pipeline stages
    /// are futures); a runtime without futures runs `fj` only.
    pub fn uses_futures(self) -> bool {
        self != Variant::Fj
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Variant {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Variant::ALL
            .iter()
            .copied()
            .find(|v| v.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
                format!(
                    "unknown variant '{s}' (expected one of: {})",
                    names.join(", ")
                )
            })
    }
}

/// Input size presets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Size {
    /// The papers' inputs (`paper-figures/reference/*_inputs.csv`).
    Paper,
    /// About a tenth of the paper's work: minutes per figure on a small machine.
    Small,
    /// A few hundred milliseconds per point: a whole figure in about two minutes on 2 cores.
    Quick,
    /// Tiny inputs for tests: milliseconds per run.
    Test,
}

impl Size {
    /// The presets a user may choose (`test` is for the test suite but also accepted).
    pub const NAMES: [&'static str; 4] = ["paper", "small", "quick", "test"];

    /// The spelling used on the command line and in result files.
    pub fn name(self) -> &'static str {
        match self {
            Size::Paper => "paper",
            Size::Small => "small",
            Size::Quick => "quick",
            Size::Test => "test",
        }
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Size {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "paper" => Ok(Size::Paper),
            "small" => Ok(Size::Small),
            "quick" => Ok(Size::Quick),
            "test" => Ok(Size::Test),
            _ => Err(format!(
                "unknown size '{s}' (expected one of: {})",
                Size::NAMES.join(", ")
            )),
        }
    }
}

/// Inputs given by the user instead of a workload's preset ones (files named on the command
/// line, parameter overrides). The default (no field set) is every workload's own
/// deterministic input.
///
/// Each field belongs to one workload; [`InputOptions::workloads`] says which workloads the
/// set fields concern, so a caller can refuse options that no selected workload reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InputOptions {
    /// `hw`: an uncompressed AVI to track instead of the synthetic video (see
    /// [`hw`] and [`hw::avi`]).
    pub hw_video: Option<PathBuf>,
    /// `hw`: the initial sample points, one `row col` pair (0-based, row 0 at the top) per
    /// line (`#` starts a comment). Only with `hw_video`; without it the points of
    /// [`hw::points_for`] are used.
    pub hw_points: Option<PathBuf>,
    /// `--param key=value` overrides of the workload's parameters ([`Params::set`]), in the
    /// order given. Only `run`, which runs one workload, takes them.
    pub params: params::Overrides,
}

impl InputOptions {
    /// Whether no option is set (every workload generates its input).
    pub fn is_default(&self) -> bool {
        *self == InputOptions::default()
    }

    /// The workloads that read the options set (empty when none is set).
    /// Parameter overrides are not counted here: they concern whichever workload `run` runs.
    pub fn workloads(&self) -> Vec<&'static str> {
        if self.hw_video.is_some() || self.hw_points.is_some() {
            vec!["hw"]
        } else {
            vec![]
        }
    }
}

/// A benchmark: input generation, the timed computation on any runtime, and its check.
///
/// The harness calls, per process: [`input`] once; then per repetition [`prepare`] (untimed),
/// [`run`] or [`run_async`] (timed), [`check`] (untimed).
///
/// [`input`]: Workload::input
/// [`prepare`]: Workload::prepare
/// [`run`]: Workload::run
/// [`run_async`]: Workload::run_async
/// [`check`]: Workload::check
pub trait Workload {
    /// Name on the command line and in tables (`fib`, `mm`, `sort`, ...).
    const NAME: &'static str;
    /// One line for `stealbench list`.
    const DESCRIPTION: &'static str;
    /// Variants on the closure front-end.
    const VARIANTS: &'static [Variant];
    /// Variants on the async front-end (may be empty).
    const ASYNC_VARIANTS: &'static [Variant];

    /// The input, generated deterministically (seeded) from the size. Never timed.
    type Input: Sync;
    /// Per-repetition state the computation reads and writes (an output buffer, a copy of the
    /// array to sort). Made fresh by `prepare`, outside the timed region.
    type Work: Send;
    /// What the computation returns.
    type Answer: Send;

    /// The parameters of a size preset, named as the paper names them (`n=42`, `n=4096 b=32`).
    /// Every tunable of the input (sizes, seeds, cutoffs) is one, so `run --param` can
    /// override it.
    fn preset(size: Size) -> Params;
    /// Generates the input from parameters (a preset, maybe overridden). Never timed. `Err`
    /// says in one line which value is unusable.
    fn input(params: &Params) -> Result<Self::Input, String>;
    /// The input of a size preset, for tests and examples. Panics if the preset is unusable,
    /// which is a bug.
    fn input_at(size: Size) -> Self::Input {
        Self::input(&Self::preset(size))
            .unwrap_or_else(|e| panic!("{} preset {size}: {e}", Self::NAME))
    }
    /// What a result row records of the input: the parameters, and the user's input files
    /// `options` where the workload reads some (their names). `Err` when an option's file
    /// cannot be used. The default prints the parameters: only workloads that read an option
    /// override this (and [`input_with`]).
    ///
    /// [`input_with`]: Workload::input_with
    fn params_with(params: &Params, options: &InputOptions) -> Result<String, String> {
        let _ = options;
        Ok(params.to_string())
    }
    /// The input from parameters with the user's input files `options`; `Err` says why a file
    /// cannot be used. The default ignores `options` and calls [`input`](Workload::input).
    fn input_with(params: &Params, options: &InputOptions) -> Result<Self::Input, String> {
        let _ = options;
        Self::input(params)
    }
    /// Fresh per-repetition state.
    fn prepare(input: &Self::Input) -> Self::Work;
    /// The timed computation on the closure front-end, for the variants of `VARIANTS` that
    /// create no futures (`fj`): every closure runtime runs them. Panics on any other variant
    /// ([`not_without_futures`]).
    fn run<S: ForkJoin>(
        pool: &S,
        variant: Variant,
        input: &Self::Input,
        work: &mut Self::Work,
    ) -> Self::Answer;
    /// The timed computation on a closure runtime with futures ([`FutureForkJoin`]): every
    /// variant of `VARIANTS`. A workload with future variants runs them here and hands the
    /// others to [`run`](Workload::run); the default, kept by the workloads without future
    /// variants, is `run`.
    fn run_futures<S: FutureForkJoin>(
        pool: &S,
        variant: Variant,
        input: &Self::Input,
        work: &mut Self::Work,
    ) -> Self::Answer {
        Self::run(pool, variant, input, work)
    }
    /// The timed computation on the async front-end. Panics on a variant not in
    /// `ASYNC_VARIANTS`.
    fn run_async<S: AsyncForkJoin>(
        pool: &S,
        variant: Variant,
        input: &Self::Input,
        work: &mut Self::Work,
    ) -> Self::Answer;
    /// The kernel: the workload's serial code called directly, with no runtime and no trait
    /// (the serial elision of every variant written as a plain function). Its time at P = 1
    /// is T_s, the time every speedup and overhead divides by; the `serial` runtime runs the
    /// same program through the front-ends' traits, and the difference is their cost. It
    /// reads and writes what a parallel variant does (`prepare`'s fresh work), and its answer
    /// passes [`check`](Workload::check) as every variant's must.
    fn kernel(input: &Self::Input, work: &mut Self::Work) -> Self::Answer;
    /// The serial code of a paper's benchmark where it fixes a shape of its own ([`Shape`]);
    /// the default, kept by every workload whose paper's serial code is the plain recursion or
    /// loop nest, is [`kernel`](Workload::kernel). Its answer passes `check` too.
    fn kernel_shaped(shape: Shape, input: &Self::Input, work: &mut Self::Work) -> Self::Answer {
        let _ = shape;
        Self::kernel(input, work)
    }
    /// Checks the answer against the serial version or a known value: `Ok` says what the
    /// answer is and what it was checked against (`run` prints it, `raw.csv` records it), `Err`
    /// what is wrong.
    fn check(
        input: &Self::Input,
        work: &Self::Work,
        answer: &Self::Answer,
    ) -> Result<Checked, String>;
}

/// The shape of the serial code T_s times ([`Workload::kernel_shaped`]): each paper divides
/// by its own benchmark's serial code, and where that code has a shape of its own, a figure of
/// that paper times that shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Shape {
    /// The plain kernel ([`Workload::kernel`]): the serial elision of the Cilk code, the
    /// serial version ProWS and Fibril divide by.
    #[default]
    Plain,
    /// libfork's benchmark's serial code (its `bench/source/*/serial.cpp`): fib never inlined
    /// and returning through an out-parameter ([`fib::serial_out`]); its integrate, nqueens,
    /// matmul and UTS are plain recursions and loops, the plain kernel.
    Libfork,
}

impl Shape {
    /// Every shape, in the order listings give them.
    pub const ALL: [Shape; 2] = [Shape::Plain, Shape::Libfork];
    /// The spellings of [`Shape::ALL`].
    pub const NAMES: &'static [&'static str] = &["plain", "libfork"];

    /// The spelling used on the command line and in result files.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Plain => "plain",
            Shape::Libfork => "libfork",
        }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Shape {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Shape::ALL
            .iter()
            .copied()
            .find(|v| v.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown shape '{s}' (expected one of: {})",
                    Shape::NAMES.join(", ")
                )
            })
    }
}

/// What [`Workload::run`] does with a variant it does not run: panics, saying whether the
/// variant is one of the workload's future variants (they run through
/// [`Workload::run_futures`], on a runtime with futures) or none of its variants.
pub fn not_without_futures<W: Workload + ?Sized>(variant: Variant) -> ! {
    if W::VARIANTS.contains(&variant) {
        panic!(
            "{} {variant} creates futures: it runs through run_futures, on a runtime with futures",
            W::NAME
        )
    }
    panic!("{} has no {variant} variant", W::NAME)
}

/// What a checked answer is, as the original benchmark prints it (UTS's node count, depth and
/// leaves; nqueens' solutions; a residual), and what it was checked against (a published
/// count, the serial version's answer, a bound).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// The answer (`4130071 nodes, depth 13, 3305118 leaves`).
    pub answer: String,
    /// What the check compared it with (`UTS's published counts of T1`).
    pub against: String,
}

impl Checked {
    /// The answer `answer`, checked against `against`.
    pub fn new(answer: impl Into<String>, against: impl Into<String>) -> Self {
        Checked {
            answer: answer.into(),
            against: against.into(),
        }
    }
}

impl fmt::Display for Checked {
    /// `answer; checked against against`, one line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; checked against {}", self.answer, self.against)
    }
}

/// Name, description and variants of a workload, for listings and argument checks.
#[derive(Debug, Clone, Copy)]
pub struct WorkloadInfo {
    /// As [`Workload::NAME`].
    pub name: &'static str,
    /// As [`Workload::DESCRIPTION`].
    pub description: &'static str,
    /// As [`Workload::VARIANTS`].
    pub variants: &'static [Variant],
    /// As [`Workload::ASYNC_VARIANTS`].
    pub async_variants: &'static [Variant],
    /// As [`Workload::preset`].
    pub preset: fn(Size) -> Params,
    /// [`resolve`]d parameters and then [`Workload::params_with`].
    pub describe: fn(Size, &InputOptions) -> Result<String, String>,
}

impl WorkloadInfo {
    /// The info of workload `W`.
    pub fn of<W: Workload>() -> Self {
        WorkloadInfo {
            name: W::NAME,
            description: W::DESCRIPTION,
            variants: W::VARIANTS,
            async_variants: W::ASYNC_VARIANTS,
            preset: W::preset,
            describe: |size, options| W::params_with(&resolve::<W>(size, options)?, options),
        }
    }
}

/// The parameters of a run of `W`: the preset of `size` with the user's `--param` overrides
/// (`options.params`) applied in order. `Err` names an unknown key or a malformed value.
pub fn resolve<W: Workload>(size: Size, options: &InputOptions) -> Result<Params, String> {
    W::preset(size).apply(&options.params)
}

/// Calls `$body` with `$W` bound to the workload type named `$name`; evaluates to
/// `Some(body)`, or `None` for an unknown name. The one place that lists every workload.
#[macro_export]
macro_rules! with_workload {
    ($name:expr, $W:ident => $body:expr) => {{
        match $name {
            "fib" => {
                type $W = $crate::fib::Fib;
                Some($body)
            }
            "mm" => {
                type $W = $crate::mm::Mm;
                Some($body)
            }
            "smm" => {
                type $W = $crate::smm::Smm;
                Some($body)
            }
            "sort" => {
                type $W = $crate::sort::Sort;
                Some($body)
            }
            "hw" => {
                type $W = $crate::hw::Hw;
                Some($body)
            }
            "lcs" => {
                type $W = $crate::lcs::Lcs;
                Some($body)
            }
            "sw" => {
                type $W = $crate::sw::Sw;
                Some($body)
            }
            "bst" => {
                type $W = $crate::bst::Bst;
                Some($body)
            }
            "ferret" => {
                type $W = $crate::ferret::Ferret;
                Some($body)
            }
            "hqsort" => {
                type $W = $crate::hqsort::Hqsort;
                Some($body)
            }
            "touchchain" => {
                type $W = $crate::touchchain::Touchchain;
                Some($body)
            }
            "touchtree" => {
                type $W = $crate::touchtree::Touchtree;
                Some($body)
            }
            "nqueens" => {
                type $W = $crate::nqueens::Nqueens;
                Some($body)
            }
            "integrate" => {
                type $W = $crate::integrate::Integrate;
                Some($body)
            }
            "knapsack" => {
                type $W = $crate::knapsack::Knapsack;
                Some($body)
            }
            "quicksort" => {
                type $W = $crate::quicksort::Quicksort;
                Some($body)
            }
            "uts" => {
                type $W = $crate::uts::Uts;
                Some($body)
            }
            "heat" => {
                type $W = $crate::heat::Heat;
                Some($body)
            }
            "lu" => {
                type $W = $crate::lu::Lu;
                Some($body)
            }
            "rectmul" => {
                type $W = $crate::rectmul::Rectmul;
                Some($body)
            }
            "cholesky" => {
                type $W = $crate::cholesky::Cholesky;
                Some($body)
            }
            "fft" => {
                type $W = $crate::fft::Fft;
                Some($body)
            }
            "mapreduce-fib" => {
                type $W = $crate::mapreduce_fib::MapReduceFib;
                Some($body)
            }
            _ => None,
        }
    }};
}

/// Every workload, in listing order.
pub fn all() -> Vec<WorkloadInfo> {
    [
        "fib",
        "mm",
        "smm",
        "sort",
        "hw",
        "lcs",
        "sw",
        "bst",
        "ferret",
        "hqsort",
        "touchchain",
        "touchtree",
        "nqueens",
        "integrate",
        "knapsack",
        "quicksort",
        "uts",
        "heat",
        "lu",
        "rectmul",
        "fft",
        "cholesky",
        "mapreduce-fib",
    ]
    .iter()
    .map(|n| with_workload!(*n, W => WorkloadInfo::of::<W>()).expect("listed workload"))
    .collect()
}

/// The four quarters of a slice, the last one taking the remainder: lengths `len/4` three
/// times, then `len - 3·(len/4)`. The divide step of `mm` and `sort`.
pub(crate) fn quarters<T>(x: &[T]) -> [&[T]; 4] {
    let q = x.len() / 4;
    let (x0, rest) = x.split_at(q);
    let (x1, rest) = rest.split_at(q);
    let (x2, x3) = rest.split_at(q);
    [x0, x1, x2, x3]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_maps_each_name_to_its_workload() {
        let names: Vec<&str> = all().iter().map(|w| w.name).collect();
        for name in ["fib", "mm", "sort"] {
            assert_eq!(names.iter().filter(|&&n| n == name).count(), 1, "{name}");
        }
        for info in all() {
            assert_eq!(with_workload!(info.name, W => W::NAME), Some(info.name));
        }
        assert!(with_workload!("nope", W => W::NAME).is_none());
    }

    /// Runs `W`'s kernel in every shape on its `test` input, each on fresh work, and panics
    /// when an answer fails its check.
    fn check_kernel<W: Workload>() {
        let input = W::input_at(Size::Test);
        for shape in Shape::ALL {
            let mut work = W::prepare(&input);
            let answer = W::kernel_shaped(shape, &input, &mut work);
            if let Err(e) = W::check(&input, &work, &answer) {
                panic!("{} kernel, shape {shape}: {e}", W::NAME);
            }
        }
    }

    #[test]
    fn every_kernel_passes_its_check() {
        for info in all() {
            with_workload!(info.name, W => check_kernel::<W>()).expect("a listed workload");
        }
    }

    #[test]
    fn shapes_parse_as_they_are_spelt() {
        for s in Shape::ALL {
            assert_eq!(s.name().parse::<Shape>(), Ok(s));
        }
        assert_eq!(Shape::NAMES, Shape::ALL.map(Shape::name));
        assert!(
            "libfrok"
                .parse::<Shape>()
                .unwrap_err()
                .contains("plain, libfork")
        );
    }

    #[test]
    fn quarters_cover_the_slice() {
        let v: Vec<u32> = (0..10).collect();
        let [a, b, c, d] = quarters(&v);
        assert_eq!((a, b, c, d), (&v[0..2], &v[2..4], &v[4..6], &v[6..10]));
        assert!(quarters::<u32>(&[]).iter().all(|q| q.is_empty()));
    }
}
