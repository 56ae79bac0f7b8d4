//! The files the harness makes beside its results (the lock of a run directory, the probe of
//! an output directory, the temporary files renamed into place) are opened so that a symbolic
//! link at their name is refused, never followed: following one would truncate or overwrite
//! the file it points to.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// `e` with `path` in its message.
fn at(path: &Path, e: io::Error) -> io::Error {
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
        Ok(m) if m.is_file() => fs::remove_file(path).map_err(|e| at(path, e))?,
        Ok(_) => {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} exists and is not a regular file", path.display()),
            ));
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(at(path, e)),
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
            _ => at(path, e),
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
                at(path, e)
            }
        })?;
    if !file.metadata().map_err(|e| at(path, e))?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tempdir::TempDir;
    use std::io::Write;

    #[test]
    fn a_link_is_refused_and_its_target_kept() {
        let dir = TempDir::new("files");
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
        let dir = TempDir::new("files-ok");
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
}
