//! meta.json: what a run is (figure, command lines, settings), the machine and build that
//! made it, and when it started and finished.

use super::machine::{Build, Machine, Measured};
use crate::runtimes::Arm;
use crate::spec::{Measure, stored};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use stealbench_schedulers::FenceMode;
use stealbench_schedulers::config::{FENCE_SWITCHING_ENV, NO_MEMBARRIER_ENV};
use stealbench_workloads::InputOptions;

/// The resolved settings of a reproduction (`plan::resolve_settings`: the command line's
/// options over the resumed run's settings or the figure's defaults), stored in `meta.json` so
/// `--resume` continues with them. What every point's child process is told is the
/// [`Measure`] they contain, flattened here: `meta.json` keeps one key per setting. Every value
/// is read back by its command-line option's check ([`crate::spec::stored`]), so a file edited
/// or damaged since does not even read; older files read as they were written (a missing
/// `rounds` is 1, a shard stored as `{"index", "count"}` reads, an older arm spelling is
/// today's). What the figure must also agree with (its workloads, runtimes and points) is
/// checked by `plan::check_settings`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Settings {
    /// How each point is measured: size, repetitions (always given here), pinning, fiber
    /// stack size, and the `hw` input files (`--hw-video`, `--hw-points`, absolute paths; the
    /// hw rows' `params` also give the video's fingerprint).
    #[serde(flatten)]
    pub measure: Measure,
    /// Worker counts, ascending, each once.
    #[serde(deserialize_with = "stored::workers")]
    pub workers: Vec<usize>,
    /// Runtimes selected (`None` = all): an arm with no setting selects every arm of its
    /// runtime.
    #[serde(
        serialize_with = "stored::runtimes_as_text",
        deserialize_with = "stored::runtimes"
    )]
    pub runtimes: Option<Vec<Arm>>,
    /// Workloads selected (`None` = all).
    #[serde(deserialize_with = "stored::workloads")]
    pub workloads: Option<Vec<crate::spec::WorkloadSpec>>,
    /// Per-point timeout in seconds (0 = none); a resume may change it.
    #[serde(deserialize_with = "stored::timeout_secs")]
    pub timeout_secs: u64,
    /// Rounds over the grid (`--rounds`): every point runs once per round, the rounds one
    /// after the other, each in a shuffled order.
    #[serde(default = "first_round", deserialize_with = "stored::rounds")]
    pub rounds: usize,
    /// `--figures-dir`: where the table and plots go (absolute path; absent in runs made
    /// before it was stored: `paper-figures`); a resume may change it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figures_dir: Option<PathBuf>,
    /// `--shard`: the part of the grid this run measures (absent: all of it).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::shard::stored_as_text",
        deserialize_with = "crate::shard::stored"
    )]
    pub shard: Option<crate::shard::Shard>,
    /// The deques' fence mode the environment chose for the run's pools
    /// (`STEALBENCH_FENCE_SWITCHING`, `STEALBENCH_NO_MEMBARRIER`; absent in runs made before it
    /// was stored: `adaptive`), given to every point's process as `--fence`. Each point
    /// records the mode its pool applied.
    #[serde(
        default,
        serialize_with = "stored::as_text",
        deserialize_with = "stored::fence"
    )]
    pub fence: FenceMode,
}

/// A setting whose value differs between two [`Settings`]: its `meta.json` key and each
/// value as the command line spells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Difference {
    /// The key in `meta.json` (`stack_size`; its option is `--stack-size`).
    pub key: String,
    /// The value in the first settings.
    pub ours: String,
    /// The value in the second.
    pub theirs: String,
}

impl Difference {
    /// The command-line option of the key.
    pub(crate) fn option(&self) -> String {
        match self.key.as_str() {
            // Not an option: the environment of the command line chooses it.
            "fence" => format!("the fence mode ({FENCE_SWITCHING_ENV}, {NO_MEMBARRIER_ENV})"),
            key => format!("--{}", key.replace('_', "-")),
        }
    }
}

impl Settings {
    /// The `--runtimes` / `--workloads` filters of these settings.
    pub(crate) fn selection(&self) -> crate::grid::Selection {
        crate::grid::Selection {
            runtimes: self.runtimes.clone(),
            workloads: self.workloads.clone(),
        }
    }

    /// The input options these settings give the workloads.
    pub(crate) fn input_options(&self) -> InputOptions {
        InputOptions {
            hw_video: self.measure.hw_video.clone(),
            hw_points: self.measure.hw_points.clone(),
            params: Vec::new(),
        }
    }

    /// The timed repetitions per point and round.
    pub(crate) fn reps(&self) -> usize {
        self.measure.reps()
    }

    /// Every setting, but those keyed in `except`, whose value differs between `self` and
    /// `other`, in key order: the two compared as `meta.json` stores them, so every setting
    /// is compared, those added later too. An absent value (the option's default) is
    /// `default`.
    pub(crate) fn differences(&self, other: &Settings, except: &[&str]) -> Vec<Difference> {
        let (ours, theirs) = (self.as_json(), other.as_json());
        let keys: std::collections::BTreeSet<&String> = ours.keys().chain(theirs.keys()).collect();
        keys.into_iter()
            .filter(|k| !except.contains(&k.as_str()))
            .filter_map(|k| {
                let (a, b) = (spelt(ours.get(k)), spelt(theirs.get(k)));
                (a != b).then(|| Difference {
                    key: k.clone(),
                    ours: a,
                    theirs: b,
                })
            })
            .collect()
    }

    /// The settings as `meta.json` holds them, a map by key.
    fn as_json(&self) -> serde_json::Map<String, serde_json::Value> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(m)) => m,
            other => unreachable!("settings serialize to a JSON object, not {other:?}"),
        }
    }
}

/// A stored setting as the command line spells it: text as is, a list comma-separated, an
/// absent one `default`.
fn spelt(v: Option<&serde_json::Value>) -> String {
    use serde_json::Value;
    match v {
        None | Some(Value::Null) => "default".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| spelt(Some(x)))
            .collect::<Vec<_>>()
            .join(","),
        Some(other) => other.to_string(),
    }
}

/// `meta.json` of a run directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Meta {
    /// Figure or table id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// When the run started (UTC, ISO 8601).
    pub timestamp: String,
    /// The command line that started it.
    pub command_line: String,
    /// Command lines of later `--resume`s, with their times.
    pub resumed: Vec<String>,
    /// Whether every point has been measured and the summary written.
    pub finished: bool,
    /// When it finished.
    pub finished_at: Option<String>,
    /// The settings.
    pub settings: Settings,
    /// The machine.
    pub machine: Machine,
    /// The build.
    pub build: Build,
    /// The run directories `stealbench merge` combined into this one, each with its commit,
    /// size, CPU and start (empty for a run `reproduce` made).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<String>,
    /// Every machine of a run merged with `--force` from runs of different machines, each with
    /// the points it measured (empty when one machine measured them all). A point is judged
    /// against the machine that measured it ([`Meta::machine_of`]): oversubscribed above its
    /// logical CPUs, and a claim whose points come from more than one machine is not judged.
    /// `machine` is then the one with the fewest logical CPUs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub machines: Vec<Measured>,
    /// What each recorded point's process reported it ran (its parameters and pool
    /// configuration), by point (`abp fib-fj P=2`), as raw.csv records it; written when the
    /// run is rendered (absent in runs made before it was recorded).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ran: BTreeMap<String, crate::protocol::Ran>,
}

#[cfg(test)]
use {stealbench_schedulers::Pinning, stealbench_workloads::Size};

#[cfg(test)]
impl Meta {
    /// A run's metadata for the tests: figure `id`, size `test`, P = 1, `reps` repetitions,
    /// this machine and build.
    pub(crate) fn sample(id: &str, reps: usize) -> Meta {
        Meta {
            id: id.into(),
            title: String::new(),
            timestamp: String::new(),
            command_line: String::new(),
            resumed: Vec::new(),
            finished: false,
            finished_at: None,
            settings: Settings {
                measure: Measure {
                    size: Size::Test,
                    reps: Some(reps),
                    pinning: Pinning::None,
                    stack_size: None,
                    hw_video: None,
                    hw_points: None,
                    params: Vec::new(),
                },
                workers: vec![1],
                runtimes: None,
                workloads: None,
                timeout_secs: 0,
                rounds: 1,
                figures_dir: None,
                shard: None,
                fence: FenceMode::default(),
            },
            machine: super::this_machine(),
            build: super::this_build("system"),
            merged_from: Vec::new(),
            machines: Vec::new(),
            ran: BTreeMap::new(),
        }
    }
}

impl Meta {
    /// The machine that measured `point` (spelt as a point is: `abp fib-fj P=2`): its entry in
    /// `machines`, else the run's machine.
    pub(crate) fn machine_of(&self, point: &str) -> &Machine {
        self.machines
            .iter()
            .find(|m| m.points.iter().any(|p| p == point))
            .map_or(&self.machine, |m| &m.machine)
    }

    /// Every machine that measured its points: the run's machine, or each of `machines`.
    pub(crate) fn each_machine(&self) -> Vec<&Machine> {
        if self.machines.is_empty() {
            return vec![&self.machine];
        }
        self.machines.iter().map(|m| &m.machine).collect()
    }

    /// The page's line (Markdown) of the machine, or of every machine of a run merged across
    /// machines with the number of points each measured (`- Machine: ...` or
    /// `- Machines (merged with --force; ...): A (12 points); B (12 points)`).
    pub(crate) fn machine_line(&self) -> String {
        let one = |m: &Machine| crate::escape::md_text(&m.describe());
        if self.machines.is_empty() {
            return format!("- Machine: {}\n", one(&self.machine));
        }
        format!(
            "- Machines (merged with --force; each point is judged on the machine that measured \
             it, with no speedup over a time of another machine, and a claim whose points come \
             from more than one machine is not judged): {}\n",
            self.machines
                .iter()
                .map(|m| format!("{} ({} points)", one(&m.machine), m.points.len()))
                .collect::<Vec<_>>()
                .join("; ")
        )
    }

    /// Reads `meta.json` of `dir`.
    pub(crate) fn read(dir: &Path) -> io::Result<Meta> {
        let path = dir.join("meta.json");
        let bytes = crate::files::read_regular(&path)?;
        let text = String::from_utf8(bytes)
            .map_err(|_| io::Error::other(format!("{}: not UTF-8 text", path.display())))?;
        serde_json::from_str(&text)
            .map_err(|e| io::Error::other(format!("{}: {e}", path.display())))
    }

    /// Writes `meta.json` of `dir` whole ([`crate::files::write_atomic`]: a crash or a full
    /// disk leaves the old one; every error names the file).
    pub(crate) fn write(&self, dir: &Path) -> io::Result<()> {
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        crate::files::write_atomic(&dir.join("meta.json"), text.as_bytes())
    }
}

/// The round of rows and settings written before rounds existed.
fn first_round() -> usize {
    1
}

/// UTC date and time of `t` as (`2026-11-21T20:55:03Z`, `2026-11-21T20-55-03Z`): ISO 8601, and
/// the same without colons for a directory name.
pub(crate) fn timestamps(t: SystemTime) -> (String, String) {
    let t = jiff::Timestamp::try_from(t).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    (
        t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        t.strftime("%Y-%m-%dT%H-%M-%SZ").to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::time::UNIX_EPOCH;
    use tempfile::TempDir;

    #[test]
    fn meta_json_settings_are_read_by_the_command_lines_parsers() {
        let dir = TempDir::with_prefix("stealbench-meta-settings-").unwrap();
        let mut meta = Meta::sample("prows-fig3", 2);
        meta.settings.runtimes = Some(vec!["prows/placement=artifact".into()]);
        meta.write(dir.path()).unwrap();
        let path = dir.path().join("meta.json");
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"size\": \"test\""), "{text}");
        assert_eq!(Meta::read(dir.path()).unwrap(), meta);
        // An older build's spelling selects the same arm.
        let older = text.replace("prows/placement=artifact", "prows-artifact");
        fs::write(&path, older).unwrap();
        assert_eq!(Meta::read(dir.path()).unwrap(), meta);
        let workers = "\"workers\": [\n      1\n    ]";
        let timeout = "\"timeout_secs\": 0";
        for (from, to, says) in [
            (
                "\"size\": \"test\"",
                "\"size\": \"huge\"",
                "size: unknown size 'huge'",
            ),
            (
                "\"pinning\": \"none\"",
                "\"pinning\": \"diagonal\"",
                "'diagonal'",
            ),
            (
                "prows/placement=artifact",
                "nosuch",
                "unknown runtime 'nosuch'",
            ),
            (
                "prows/placement=artifact",
                "abp/placement=artifact",
                "only prows has",
            ),
            // The counts by the bounds of their options.
            ("\"reps\": 2", "\"reps\": 0", "reps: 0 is not in 1..=10000"),
            ("\"reps\": 2", "\"reps\": -1", "expected u64"),
            (
                "\"rounds\": 1",
                "\"rounds\": 101",
                "rounds: 101 is not in 1..=100",
            ),
            (
                timeout,
                "\"timeout_secs\": 18446744073709551615",
                "timeout_secs: 18446744073709551615 is not in 0..=604800",
            ),
            (workers, "\"workers\": []", "workers: none listed"),
            (workers, "\"workers\": [1, 0]", "P=0 given"),
            (workers, "\"workers\": [1025]", "at most 1024"),
            (
                timeout,
                "\"timeout_secs\": 0, \"stack_size\": 1",
                "stack size 1: must be between 16K and 4G",
            ),
            (
                timeout,
                "\"timeout_secs\": 0, \"shard\": \"4/3\"",
                "shard: --shard 4/3: expected i/N",
            ),
            (
                timeout,
                "\"timeout_secs\": 0, \"shard\": {\"index\": 0, \"count\": 3}",
                "shard: 0 of 3",
            ),
        ] {
            assert!(text.contains(from), "{from}: {text}");
            fs::write(&path, text.replace(from, to)).unwrap();
            let e = Meta::read(dir.path()).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("meta.json"), "{to}: {e}");
        }
    }

    /// The settings of a meta.json an older build wrote: no `rounds` (1), the shard as
    /// `{"index", "count"}`, a selection with a repetition (read once), an older arm spelling
    /// (today's); written back in today's form (the shard as `--shard` spells it).
    #[test]
    fn an_older_builds_settings_read() {
        let dir = TempDir::with_prefix("stealbench-meta-older-").unwrap();
        let mut meta = Meta::sample("prows-fig3", 2);
        meta.write(dir.path()).unwrap();
        let path = dir.path().join("meta.json");
        let mut doc: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        let older = serde_json::json!({
            "size": "quick", "reps": 3, "workers": [1, 2], "pinning": "none",
            "runtimes": ["prows-artifact", "abp", "abp"], "workloads": ["fib", "fib"],
            "timeout_secs": 300, "shard": {"index": 2, "count": 3}
        });
        doc["settings"] = older;
        fs::write(&path, doc.to_string()).unwrap();
        let s = Meta::read(dir.path()).unwrap().settings;
        assert_eq!((s.measure.size, s.reps(), s.rounds), (Size::Quick, 3, 1));
        assert_eq!(
            s.runtimes,
            Some(vec!["prows/placement=artifact".into(), "abp".into()])
        );
        assert_eq!(s.workloads, Some(vec!["fib".into()]));
        assert_eq!(s.shard, Some("2/3".parse().unwrap()));
        meta.settings = s;
        meta.write(dir.path()).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"shard\": \"2/3\""), "{text}");
        assert_eq!(Meta::read(dir.path()).unwrap(), meta);
    }

    /// Every run committed under paper-figures/runs reads, and its settings are written back
    /// with the same keys and values, and the fence mode of the runs made before it was
    /// stored, `adaptive`.
    #[test]
    fn the_committed_runs_settings_read_and_write_back_unchanged() {
        let runs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../paper-figures/runs");
        let mut seen = 0;
        for fig in fs::read_dir(&runs).unwrap() {
            for run in fs::read_dir(fig.unwrap().path()).unwrap() {
                let dir = run.unwrap().path();
                let Ok(text) = fs::read_to_string(dir.join("meta.json")) else {
                    continue;
                };
                let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
                let meta = Meta::read(&dir).unwrap();
                let mut back = serde_json::to_value(&meta.settings).unwrap();
                if doc["settings"].get("fence").is_none() {
                    let fence = back.as_object_mut().unwrap().remove("fence");
                    assert_eq!(fence, Some("adaptive".into()), "{}", dir.display());
                }
                assert_eq!(back, doc["settings"], "{}", dir.display());
                seen += 1;
            }
        }
        assert!(seen > 0, "no committed run under {}", runs.display());
    }

    #[test]
    fn differences_name_each_setting_with_both_values() {
        let a = Meta::sample("prows-fig3", 2).settings;
        let mut b = a.clone();
        assert!(a.differences(&b, &[]).is_empty());
        b.workers = vec![1, 2];
        b.measure.stack_size = Some(1 << 20);
        b.timeout_secs = 9;
        b.shard = Some("1/2".parse().unwrap());
        let d: Vec<String> = a
            .differences(&b, &["timeout_secs"])
            .iter()
            .map(|d| format!("{} {} {}", d.option(), d.ours, d.theirs))
            .collect();
        assert_eq!(
            d,
            [
                "--shard default 1/2",
                "--stack-size default 1048576",
                "--workers 1 1,2"
            ]
        );
    }

    #[test]
    fn timestamps_are_utc_civil_dates() {
        let t = UNIX_EPOCH + std::time::Duration::from_secs(951_782_400 + 3661); // 2000-02-29
        assert_eq!(
            timestamps(t),
            (
                "2000-02-29T01:01:01Z".to_string(),
                "2000-02-29T01-01-01Z".to_string()
            )
        );
        assert_eq!(timestamps(UNIX_EPOCH).0, "1970-01-01T00:00:00Z");
    }
}
