//! meta.json: what a run is (figure, command lines, settings), the machine and build that
//! made it, and when it started and finished.

use super::machine::{Build, Machine};
use super::store::with_path;
use crate::runtimes::Arm;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use stealbench_schedulers::Pinning;
use stealbench_workloads::{InputOptions, Size};
/// The settings of a reproduction, stored in `meta.json` so `--resume` continues with them.
/// The typed ones are stored as the text the command line takes, and read back with their
/// `FromStr` (an arm with `Arm::parse`, older spellings upgraded), which names a value it
/// refuses; the counts and lists are checked by `reproduce::check_stored_settings`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Settings {
    /// Size preset.
    #[serde(with = "as_text")]
    pub size: Size,
    /// Timed repetitions per point.
    pub reps: usize,
    /// Worker counts.
    pub workers: Vec<usize>,
    /// Runtimes selected (`None` = all): an arm with no setting selects every arm of its
    /// runtime.
    #[serde(with = "arms_as_text")]
    pub runtimes: Option<Vec<Arm>>,
    /// Workloads selected (`None` = all).
    pub workloads: Option<Vec<String>>,
    /// Per-point timeout in seconds (0 = none).
    pub timeout_secs: u64,
    /// Thread pinning.
    #[serde(with = "as_text")]
    pub pinning: Pinning,
    /// `--hw-video`: the AVI the `hw` points tracked (absolute path; absent = the synthetic
    /// video). The hw rows' `params` also give its fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hw_video: Option<PathBuf>,
    /// `--hw-points`: the initial points file of `hw_video` (absolute path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hw_points: Option<PathBuf>,
    /// Rounds over the grid (`--rounds`): every point runs once per round, the rounds one
    /// after the other, each in a shuffled order.
    #[serde(default = "first_round")]
    pub rounds: usize,
    /// `--stack-size` in bytes (absent: the runtimes' default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_size: Option<usize>,
    /// `--figures-dir`: where the table and plots go (absolute path; absent in runs made
    /// before it was stored: `paper-figures`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figures_dir: Option<PathBuf>,
    /// `--shard`: the part of the grid this run measures (absent: all of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shard::Shard>,
}

/// A setting in `meta.json` as the command line spells it: written with `Display`, read with
/// `FromStr` (the command line's parser), whose message names a value it refuses.
mod as_text {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};
    use std::fmt::Display;
    use std::str::FromStr;

    pub(super) fn serialize<T: Display, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    pub(super) fn deserialize<'de, T, D>(d: D) -> Result<T, D::Error>
    where
        T: FromStr<Err = String>,
        D: Deserializer<'de>,
    {
        String::deserialize(d)?.parse().map_err(D::Error::custom)
    }
}

/// The selected runtimes in `meta.json`: each arm's spelling, read in today's spelling
/// ([`crate::runtimes::upgrade`]: an older build spelt some settings as runtimes of their
/// own).
mod arms_as_text {
    use crate::runtimes::{self, Arm};
    use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error};

    pub(super) fn serialize<S: Serializer>(
        arms: &Option<Vec<Arm>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        arms.as_ref()
            .map(|v| v.iter().map(Arm::spec).collect::<Vec<_>>())
            .serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Vec<Arm>>, D::Error> {
        let Some(spelt) = Option::<Vec<String>>::deserialize(d)? else {
            return Ok(None);
        };
        spelt
            .iter()
            .map(|r| Arm::parse(&runtimes::upgrade(r, "").0).map_err(D::Error::custom))
            .collect::<Result<_, _>>()
            .map(Some)
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
            hw_video: self.hw_video.clone(),
            hw_points: self.hw_points.clone(),
            params: Vec::new(),
        }
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
    /// What each recorded point's process reported it ran (its parameters and pool
    /// configuration), by point (`abp fib-fj P=2`), as raw.csv records it; written when the
    /// run is rendered (absent in runs made before it was recorded).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ran: BTreeMap<String, crate::point::Ran>,
}

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
                size: Size::Test,
                reps,
                workers: vec![1],
                runtimes: None,
                workloads: None,
                timeout_secs: 0,
                pinning: Pinning::None,
                hw_video: None,
                hw_points: None,
                rounds: 1,
                stack_size: None,
                figures_dir: None,
                shard: None,
            },
            machine: super::this_machine(),
            build: super::this_build("system"),
            merged_from: Vec::new(),
            ran: BTreeMap::new(),
        }
    }
}

impl Meta {
    /// Reads `meta.json` of `dir`.
    pub(crate) fn read(dir: &Path) -> io::Result<Meta> {
        let path = dir.join("meta.json");
        let text = fs::read_to_string(&path).map_err(|e| with_path(&path, e))?;
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
        for (from, to, says) in [
            (
                "\"size\": \"test\"",
                "\"size\": \"huge\"",
                "unknown size 'huge'",
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
        ] {
            fs::write(&path, text.replace(from, to)).unwrap();
            let e = Meta::read(dir.path()).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("meta.json"), "{to}: {e}");
        }
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
