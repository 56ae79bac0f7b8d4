//! Why a command failed, and the exit code that says so (the README's exit codes).

/// Why a command failed; decides the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// Bad input: one line on stderr, exit code 2.
    Usage(String),
    /// The command could not do its work (a failed point or check): exit code 1.
    Runtime(String),
    /// A file or stream could not be read or written (a full disk, too many open files, a
    /// closed stdout): exit code 3. The message names the file.
    Io(String),
}

impl Failure {
    /// The process exit code for this failure.
    pub(crate) fn exit_code(&self) -> i32 {
        match self {
            Failure::Usage(_) => 2,
            Failure::Runtime(_) => 1,
            Failure::Io(_) => 3,
        }
    }
    /// The failure to lock a run directory ([`crate::results::RunLock::acquire`]): a run in
    /// use by another process is bad input (exit code 2), any other error I/O (3).
    pub(crate) fn of_lock(e: std::io::Error) -> Failure {
        if e.kind() == std::io::ErrorKind::ResourceBusy {
            Failure::Usage(e.to_string())
        } else {
            Failure::Io(e.to_string())
        }
    }

    /// The message.
    pub(crate) fn message(&self) -> &str {
        match self {
            Failure::Usage(m) | Failure::Runtime(m) | Failure::Io(m) => m,
        }
    }
}

/// An I/O error is [`Failure::Io`]; its message must name its file (the harness's own
/// readers and writers, `crate::files` among them, put the path in).
impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure::Io(e.to_string())
    }
}
