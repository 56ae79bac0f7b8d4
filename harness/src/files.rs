//! How the harness writes files: never through a symbolic link, never torn.
//!
//! The files it makes beside its results (the lock of a run directory, the probe of an output
//! directory, the temporary files renamed into place) are opened so that a symbolic link at
//! their name is refused, never followed: following one would truncate or overwrite the file
//! it points to. A file it writes whole (a summary, a figure, a page) is written beside its
//! name and renamed over it ([`write_atomic`], [`replace_with`]): a link at the name is replaced,
//! not followed, and a full disk or a crash leaves the old file or none, never half of one.
//! The temporary name is unique to the process and the write, so that writers of one file
//! never take each other's, and the writers of a figures directory hold its lock ([`lock_dir`])
//! while they write a figure's files.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// `e` with `path` in its message: how every error of the harness's file I/O names its file.
pub(crate) fn with_path(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// The error for a symbolic link found at `path`.
fn link_error(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!(
            "{} is a symbolic link: stealbench does not write through it (remove it)",
            path.display()
        ),
    )
}

/// Creates `path` anew for writing (`O_CREAT | O_EXCL`: neither a symbolic link there nor an
/// existing file is followed or truncated). A regular file left at `path` (a temporary file of
/// a process that crashed) is removed first; a symbolic link there is refused. Every error
/// names `path`.
pub(crate) fn create_fresh(path: &Path) -> io::Result<File> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => return Err(link_error(path)),
        Ok(m) if m.is_file() => fs::remove_file(path).map_err(|e| with_path(path, e))?,
        Ok(_) => {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} exists and is not a regular file", path.display()),
            ));
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(with_path(path, e)),
    }
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| match e.kind() {
            // Made between the check and the open: whatever it is, it is not ours.
            io::ErrorKind::AlreadyExists => io::Error::new(
                e.kind(),
                format!("{} appeared while it was being made", path.display()),
            ),
            _ => with_path(path, e),
        })
}

/// Opens the regular file `path` for reading and writing, creating it if missing and never
/// truncating it, without following a symbolic link at `path` (`O_NOFOLLOW`): a link, or
/// anything but a regular file, is refused. Every error names `path`.
pub(crate) fn open_regular(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                link_error(path)
            } else {
                with_path(path, e)
            }
        })?;
    if !file.metadata().map_err(|e| with_path(path, e))?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    Ok(file)
}

/// The most bytes [`read_regular`] reads: far above any run's `raw.csv` or `meta.json`, far
/// below what would exhaust the memory.
pub(crate) const READ_LIMIT: u64 = 1 << 30;

/// The bytes of the regular file `path` (a symbolic link to one is followed), read whole.
/// Anything else is refused before it is read: a FIFO (opened without blocking, so that no
/// writer is waited for), a device such as `/dev/zero`, a directory; so is a file of more than
/// [`READ_LIMIT`] bytes, or one that grows past it while it is read. Every error names `path`
/// and keeps the kind of the error met (`NotFound` for a missing file).
pub(crate) fn read_regular(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read as _;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| with_path(path, e))?;
    let len = file.metadata().map_err(|e| with_path(path, e))?;
    let refuse = |why: String| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: {why}", path.display()),
        )
    };
    if !len.is_file() {
        return Err(refuse("not a regular file".to_string()));
    }
    let too_large = || refuse(format!("larger than {} bytes, the most read", READ_LIMIT));
    if len.len() > READ_LIMIT {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len.len()).unwrap_or(0));
    file.take(READ_LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| with_path(path, e))?;
    if bytes.len() as u64 > READ_LIMIT {
        return Err(too_large());
    }
    Ok(bytes)
}

/// A fresh temporary name beside `path` for [`replace_with`]: `.tmp-PID-N-NAME` (hidden,
/// unique to this process and this write, so that two writers of one file never write into or
/// remove each other's temporary file, and with `NAME`'s extension, which some writers read to
/// choose the format).
fn beside(path: &Path) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut name = std::ffi::OsString::from(format!(".tmp-{}-{n}-", std::process::id()));
    name.push(path.file_name().unwrap_or_default());
    path.with_file_name(name)
}

/// The longest name [`beside`] makes for a file named `name`: `.tmp-`, a pid, a count, `name`.
fn longest_beside(name: &str) -> usize {
    ".tmp-".len() + u32::MAX.to_string().len() + 1 + u64::MAX.to_string().len() + 1 + name.len()
}

/// `Err` (one line) when a file of `names` written whole into `dir` ([`replace_with`]) would
/// have a path too long for the system (`PATH_MAX` bytes, its temporary name's), so that a
/// command refuses such a directory before its work, not when it writes its results.
pub(crate) fn check_fits(dir: &Path, names: &[&str]) -> Result<(), String> {
    let longest = names.iter().copied().max_by_key(|n| longest_beside(n));
    let Some(name) = longest else { return Ok(()) };
    let dir_len = dir.as_os_str().len();
    let path_len = dir_len + 1 + longest_beside(name);
    // PATH_MAX counts the terminating NUL.
    let path_max = libc::PATH_MAX as usize - 1;
    if path_len > path_max {
        return Err(format!(
            "{}: the path is too long for the files written in it ({dir_len} bytes; {name} \
             and its temporary file need {path_len} with it, the limit is {path_max})",
            dir.display()
        ));
    }
    Ok(())
}

/// An exclusive lock on a directory that files are written into (a figures directory), held
/// while it lives: writers that each hold it write their set of files one after another, so
/// that a page and its plots come from one writer. It is `flock(2)` on the directory itself,
/// which leaves no file behind and is released by the kernel when the process ends.
#[derive(Debug)]
pub(crate) struct DirLock {
    _dir: File,
}

/// Waits for and takes the lock of directory `dir` ([`DirLock`]). Every error names `dir`.
pub(crate) fn lock_dir(dir: &Path) -> io::Result<DirLock> {
    let file = File::open(dir).map_err(|e| with_path(dir, e))?;
    file.lock().map_err(|e| with_path(dir, e))?;
    Ok(DirLock { _dir: file })
}

/// Writes `path` whole: `write` fills a fresh temporary file beside it (made by
/// [`create_fresh`] and handed over by its path), which is synced and renamed over `path`. A
/// symbolic link at `path` is replaced, never followed; on any error the temporary file is
/// removed and `path` keeps what it had. Every error names the file it concerns.
pub(crate) fn replace_with(
    path: &Path,
    write: impl FnOnce(&Path) -> io::Result<()>,
) -> io::Result<()> {
    let tmp = beside(path);
    let result = (|| {
        drop(create_fresh(&tmp)?);
        write(&tmp).map_err(|e| named(path, &tmp, e))?;
        File::open(&tmp)
            .and_then(|f| f.sync_all())
            .map_err(|e| with_path(&tmp, e))?;
        fs::rename(&tmp, path).map_err(|e| with_path(path, e))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Writes `bytes` as the whole of `path` ([`replace_with`]).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace_with(path, |tmp| {
        OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(tmp)?
            .write_all(bytes)
    })
}

/// `e`, met while writing `path` through `tmp`, naming `path` (the file the user asked for)
/// in place of `tmp`, or in front where it names neither.
fn named(path: &Path, tmp: &Path, e: io::Error) -> io::Error {
    let (text, tmp_text) = (e.to_string(), tmp.to_string_lossy());
    if text.contains(&*tmp_text) {
        io::Error::new(e.kind(), text.replace(&*tmp_text, &path.to_string_lossy()))
    } else if text.contains(&*path.to_string_lossy()) {
        e
    } else {
        with_path(path, e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tempfile::TempDir;

    #[test]
    fn a_link_is_refused_and_its_target_kept() {
        let dir = TempDir::with_prefix("stealbench-files-").unwrap();
        let target = dir.path().join("target");
        fs::write(&target, b"precious").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = create_fresh(&link).unwrap_err().to_string();
        assert!(e.contains("is a symbolic link"), "{e}");
        let e = open_regular(&link).unwrap_err().to_string();
        assert!(e.contains("is a symbolic link"), "{e}");
        assert_eq!(fs::read(&target).unwrap(), b"precious");
        // A dangling link is refused too (O_CREAT alone would create its target).
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        assert!(create_fresh(&dangling).is_err());
        assert!(open_regular(&dangling).is_err());
        assert!(!dir.path().join("nowhere").exists());
    }

    #[test]
    fn files_are_made_and_reopened() {
        let dir = TempDir::with_prefix("stealbench-files-ok-").unwrap();
        let p = dir.path().join("f");
        create_fresh(&p).unwrap().write_all(b"old").unwrap();
        // A stale file is replaced, not appended to.
        create_fresh(&p).unwrap().write_all(b"new").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        // open_regular keeps the content.
        drop(open_regular(&p).unwrap());
        assert_eq!(fs::read(&p).unwrap(), b"new");
        let e = open_regular(dir.path()).unwrap_err().to_string();
        assert!(!e.is_empty());
        let e = create_fresh(dir.path()).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }

    #[test]
    fn a_whole_file_replaces_a_link_and_never_its_target() {
        let dir = TempDir::with_prefix("stealbench-files-atomic-").unwrap();
        let target = dir.path().join("victim");
        fs::write(&target, b"precious").unwrap();
        let link = dir.path().join("summary.csv");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"precious");
        assert!(
            !fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(&link).unwrap(), b"new");
        // A failed write leaves the old file and no temporary file.
        let e = replace_with(&link, |_| Err(io::Error::other("disk full"))).unwrap_err();
        assert_eq!(e.to_string(), format!("{}: disk full", link.display()));
        assert_eq!(fs::read(&link).unwrap(), b"new");
        let left: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().starts_with(".tmp-"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn only_regular_files_are_read() {
        let dir = TempDir::with_prefix("stealbench-files-read-").unwrap();
        let p = dir.path().join("raw.csv");
        fs::write(&p, b"a,b\n").unwrap();
        assert_eq!(read_regular(&p).unwrap(), b"a,b\n");
        let link = dir.path().join("link.csv");
        std::os::unix::fs::symlink(&p, &link).unwrap();
        assert_eq!(read_regular(&link).unwrap(), b"a,b\n");
        let missing = read_regular(&dir.path().join("none")).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        // A FIFO with no writer (it would block), a device read forever, a directory.
        let fifo = dir.path().join("fifo.csv");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        let zero = dir.path().join("zero.csv");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        for p in [&fifo, &zero, &dir.path().to_path_buf()] {
            let e = read_regular(p).unwrap_err().to_string();
            assert_eq!(e, format!("{}: not a regular file", p.display()));
        }
    }

    #[test]
    fn a_directory_too_deep_for_its_files_is_refused() {
        let names = ["raw.csv", "prows-fig3.png"];
        check_fits(Path::new("results/prows-fig3/2026"), &names).unwrap();
        let deep = PathBuf::from("d".repeat(libc::PATH_MAX as usize - 40));
        let e = check_fits(&deep, &names).unwrap_err();
        assert!(
            e.contains("the path is too long for the files written in it"),
            "{e}"
        );
        assert!(e.contains("prows-fig3.png"), "{e}");
        // The check is of the whole temporary name: the real one always fits under it.
        let real = deep.join(beside(Path::new("prows-fig3.png")));
        assert!(
            real.as_os_str().len() <= deep.as_os_str().len() + 1 + longest_beside("prows-fig3.png")
        );
    }

    /// Threads writing one file at once never take each other's temporary file: every write
    /// succeeds and the file is one writer's whole.
    #[test]
    fn concurrent_writers_of_one_file_never_tear_it() {
        let dir = TempDir::with_prefix("stealbench-files-concurrent-").unwrap();
        let path = dir.path().join("page.md");
        assert_ne!(beside(&path), beside(&path));
        assert!(beside(&path).to_string_lossy().ends_with("-page.md"));
        std::thread::scope(|s| {
            for t in 0..4u8 {
                let path = &path;
                s.spawn(move || {
                    for _ in 0..50 {
                        write_atomic(path, &[b'a' + t; 4096]).unwrap();
                    }
                });
            }
        });
        let bytes = fs::read(&path).unwrap();
        assert_eq!(bytes.len(), 4096);
        assert!(bytes.iter().all(|&b| b == bytes[0]));
        // The directory lock is exclusive across open files, and released when dropped.
        let held = lock_dir(dir.path()).unwrap();
        let other = File::open(dir.path()).unwrap();
        assert!(other.try_lock().is_err());
        drop(held);
        assert!(other.try_lock().is_ok());
    }
}
