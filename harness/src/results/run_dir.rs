//! Run directories `results/<id>/<timestamp>/`: making one, finding the latest unfinished one,
//! and the lock a process holds on the one it works in.

use super::meta::Meta;
use crate::files::with_path;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
/// An exclusive lock on a run directory, held for as long as a `reproduce` works in it, so
/// that a `--resume` cannot write into a run that another process is still making. The lock
/// is an exclusive `File::try_lock` (`flock(2)`) of `<dir>/.lock`: the kernel releases it when the process ends, however it
/// ends, so a crashed run never leaves a stale lock behind.
#[derive(Debug)]
pub(crate) struct RunLock {
    _file: File,
}

impl RunLock {
    /// Takes the lock of `dir`, or says which process is using the run (an error of kind
    /// `ResourceBusy`); any other error names the lock's file, with its own kind.
    pub(crate) fn acquire(dir: &Path) -> io::Result<RunLock> {
        let path = dir.join(".lock");
        let cannot = |what: &str, e: io::Error| {
            io::Error::new(e.kind(), format!("cannot {what} {}: {e}", path.display()))
        };
        let mut file = crate::files::open_regular(&path).map_err(|e| {
            // open_regular's errors name the file already.
            io::Error::new(e.kind(), format!("cannot lock the run: {e}"))
        })?;
        if let Err(e) = file.try_lock() {
            if let fs::TryLockError::Error(e) = e {
                return Err(cannot("lock", e));
            }
            let holder = fs::read_to_string(&path).unwrap_or_default();
            return Err(io::Error::new(
                io::ErrorKind::ResourceBusy,
                format!(
                    "{} is in use by another stealbench process{}; wait for it or stop it first",
                    dir.display(),
                    match holder.trim() {
                        "" => String::new(),
                        pid => format!(" (pid {pid})"),
                    }
                ),
            ));
        }
        file.set_len(0)
            .and_then(|()| write!(file, "{}", std::process::id()))
            .map_err(|e| cannot("write", e))?;
        Ok(RunLock { _file: file })
    }
}

/// Creates a new run directory `<root>/<id>/<timestamp>/` (suffixed `-2`, `-3`, ... if taken).
pub(crate) fn create_run_dir(root: &Path, id: &str, stamp: &str) -> io::Result<PathBuf> {
    let parent = root.join(id);
    fs::create_dir_all(&parent).map_err(|e| with_path(&parent, e))?;
    for i in 1.. {
        let name = if i == 1 {
            stamp.to_string()
        } else {
            format!("{stamp}-{i}")
        };
        let dir = parent.join(name);
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(with_path(&dir, e)),
        }
    }
    unreachable!("an unbounded range ends only by returning")
}

/// The most recent run directory of `id` under `root` whose `meta.json` says it is unfinished.
pub(crate) fn latest_unfinished(root: &Path, id: &str) -> io::Result<Option<PathBuf>> {
    let parent = root.join(id);
    if !parent.is_dir() {
        return Ok(None);
    }
    let mut dirs: Vec<PathBuf> = fs::read_dir(&parent)
        .map_err(|e| with_path(&parent, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    // Directory names are timestamps: the lexical order is the time order.
    dirs.sort();
    Ok(dirs
        .into_iter()
        .rev()
        .find(|d| Meta::read(d).is_ok_and(|m| m.id == id && !m.finished)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Store;
    use tempfile::TempDir;

    #[test]
    fn a_run_directory_is_locked_while_in_use() {
        let tmp = TempDir::with_prefix("stealbench-lock-").unwrap();
        let dir = tmp.path();
        let held = RunLock::acquire(dir).unwrap();
        let e = RunLock::acquire(dir).unwrap_err();
        // Busy is bad input (exit code 2), not a failed point.
        assert_eq!(e.kind(), io::ErrorKind::ResourceBusy);
        assert_eq!(crate::failure::Failure::of_lock(e).exit_code(), 2);
        let e = RunLock::acquire(dir).unwrap_err().to_string();
        assert!(e.contains("in use by another stealbench process"), "{e}");
        assert!(e.contains(&std::process::id().to_string()), "{e}");
        drop(held);
        RunLock::acquire(dir).unwrap();
        // A lock that cannot be opened (here: a directory at its name) is I/O, exit code 3.
        let other = TempDir::with_prefix("stealbench-lock-io-").unwrap();
        fs::create_dir(other.path().join(".lock")).unwrap();
        let e = RunLock::acquire(other.path()).unwrap_err();
        assert!(e.to_string().starts_with("cannot lock the run: "), "{e}");
        assert_eq!(crate::failure::Failure::of_lock(e).exit_code(), 3);
    }

    #[test]
    fn the_lock_refuses_a_planted_link_and_no_temporary_file_follows_one() {
        let dir = TempDir::with_prefix("stealbench-results-planted-").unwrap();
        let target = dir.path().join("target");
        fs::write(&target, b"precious").unwrap();
        let plant = |name: &str| std::os::unix::fs::symlink(&target, dir.path().join(name));
        // The lock of a run directory.
        plant(".lock").unwrap();
        let e = RunLock::acquire(dir.path()).unwrap_err().to_string();
        assert!(e.contains(".lock is a symbolic link"), "{e}");
        // The temporary files of meta.json and raw.csv have names of their own
        // (`crate::files`): a link planted at a name of theirs is never written through.
        plant(".tmp-meta.json").unwrap();
        Meta::write(&Meta::sample("prows-fig3", 1), dir.path()).unwrap();
        plant(".tmp-raw.csv").unwrap();
        Store::create(&dir.path().join("raw.csv"), &[], &[]).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"precious");
        assert!(
            dir.path()
                .join("meta.json")
                .symlink_metadata()
                .unwrap()
                .is_file()
        );
    }

    #[test]
    fn run_dirs_and_latest_unfinished() {
        let dir = TempDir::with_prefix("stealbench-run-dirs-").unwrap();
        let a = create_run_dir(dir.path(), "fig", "2020-01-01T00-00-00Z").unwrap();
        let b = create_run_dir(dir.path(), "fig", "2020-01-01T00-00-00Z").unwrap();
        assert_ne!(a, b);
        assert!(latest_unfinished(dir.path(), "fig").unwrap().is_none());
        let mut meta = Meta::sample("fig", 2);
        meta.write(&a).unwrap();
        assert_eq!(
            latest_unfinished(dir.path(), "fig").unwrap(),
            Some(a.clone())
        );
        meta.write(&b).unwrap();
        assert_eq!(
            latest_unfinished(dir.path(), "fig").unwrap(),
            Some(b.clone())
        );
        meta.finished = true;
        meta.write(&b).unwrap();
        assert_eq!(latest_unfinished(dir.path(), "fig").unwrap(), Some(a));
        assert_eq!(Meta::read(&b).unwrap(), meta);
    }
}
