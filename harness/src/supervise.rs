//! Process supervision: a child process started with this process's pid (so that it dies with
//! it), its JSON events read line by line, its stderr's last lines kept, reaped with `wait4`
//! (its peak RSS), killed after its timeout or when this process is interrupted.
//!
//! Interruption: after [`catch_interrupts`], SIGINT and SIGTERM only set a flag. The running
//! child is killed (its point records nothing), the caller's loop stops, and the command prints
//! how to continue. A child started from a terminal gets the terminal's SIGINT itself; one
//! whose parent alone was signalled is killed by the parent.

use crate::protocol::Event;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use stealbench_schedulers::config::{FENCE_SWITCHING_ENV, NO_MEMBARRIER_ENV};

/// How a child process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChildEnd {
    /// It exited with this code.
    Exited(i32),
    /// A signal killed it (not ours).
    Signaled(i32),
    /// We killed it after the timeout.
    TimedOut,
    /// We killed it because this process was interrupted.
    Interrupted,
}

/// The flag SIGINT and SIGTERM set once [`catch_interrupts`] ran.
static INTERRUPT: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// From now on SIGINT and SIGTERM set a flag instead of ending this process: the runner stops
/// its child and the caller reports the interruption ([`interrupted`]).
pub(crate) fn catch_interrupts() {
    INTERRUPT.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            // A signal that cannot be caught keeps its default action: it ends the process,
            // as before, and no finished point is lost either way.
            let _ = signal_hook::flag::register(sig, Arc::clone(&flag));
        }
        flag
    });
}

/// Whether SIGINT or SIGTERM arrived since [`catch_interrupts`].
pub(crate) fn interrupted() -> bool {
    INTERRUPT.get().is_some_and(|f| f.load(Ordering::Relaxed))
}

/// Everything a child process left behind.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChildResult {
    /// The JSON events it printed, in order.
    pub events: Vec<Event>,
    /// How it ended.
    pub end: ChildEnd,
    /// Its peak resident set in KiB, from `wait4`: an upper bound only, since a spawned
    /// process inherits, at `exec`, the high-water mark of the memory it was spawned from
    /// (this process's); [`crate::runner::outcome_of`] takes what the child reported instead.
    pub peak_rss_kb: Option<u64>,
    /// The last lines of its stderr, joined with ` | `.
    pub stderr_tail: String,
    /// Wall-clock time from spawn to reaping.
    pub elapsed: Duration,
}

/// The last `keep` non-empty lines of `text`, joined with ` | `.
fn tail(text: &str, keep: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(keep)..].join(" | ")
}

/// The environment variable through which a parent gives its child process its own pid: the
/// child ([`die_with_parent`]) dies with that parent.
pub(crate) const PARENT_ENV: &str = "STEALBENCH_PARENT_PID";

/// In a child process started by [`run_child`] (one with [`PARENT_ENV`] set), makes the kernel
/// kill this process when its parent dies (`PR_SET_PDEATHSIG`), then exits at once if the
/// parent is already gone (the process's parent is no longer the pid [`PARENT_ENV`] gives: it
/// died between the spawn and the `prctl`). `main` calls it before anything else, so a point's
/// process never outlives an interrupted or killed `reproduce` or `bench`. Does nothing when
/// [`PARENT_ENV`] is unset or empty; a value that is not a process id is refused (`Err`, one
/// line: bad input).
pub(crate) fn die_with_parent() -> Result<(), String> {
    let Some(expected) = parent_pid(std::env::var_os(PARENT_ENV).as_deref())? else {
        return Ok(());
    };
    #[cfg(target_os = "linux")]
    {
        // SAFETY: PR_SET_PDEATHSIG takes a signal number and touches no memory of ours.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    }
    // SAFETY: getppid has no preconditions and touches no memory of ours.
    let parent = unsafe { libc::getppid() };
    if expected != parent {
        errln!("stealbench: the parent process ({PARENT_ENV}={expected}) is gone; exiting");
        std::process::exit(1);
    }
    Ok(())
}

/// The parent's pid that [`PARENT_ENV`]'s value `v` gives: `None` if unset or empty, an error
/// if it is not a positive process id.
fn parent_pid(v: Option<&std::ffi::OsStr>) -> Result<Option<libc::pid_t>, String> {
    let Some(v) = v.filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    match v.to_str().and_then(|s| s.parse::<libc::pid_t>().ok()) {
        Some(pid) if pid > 0 => Ok(Some(pid)),
        _ => Err(format!(
            "{PARENT_ENV}={v:?} is not a process id (it is set by stealbench for its child \
             processes; unset it)"
        )),
    }
}

/// Runs `exe args`, reading JSON events from its stdout, killing it after `timeout`. The child
/// gets this process's pid in [`PARENT_ENV`], so it dies with this process, and not the
/// environment's fence mode, which its arguments give. A process or a reader thread that cannot
/// be started (a limit on processes, `ulimit -u`) is an error that says which, never a panic; a
/// child already started is killed and reaped first.
pub(crate) fn run_child(
    exe: &Path,
    args: &[String],
    timeout: Option<Duration>,
) -> io::Result<ChildResult> {
    run_child_with(exe, args, timeout, std::thread::Builder::new)
}

/// [`run_child`], its reader threads made by `threads` (the tests' seam for a thread that
/// cannot be started).
fn run_child_with(
    exe: &Path,
    args: &[String],
    timeout: Option<Duration>,
    threads: fn() -> std::thread::Builder,
) -> io::Result<ChildResult> {
    let start = Instant::now();
    let mut child = Command::new(exe)
        .args(args)
        .env(PARENT_ENV, std::process::id().to_string())
        // Every setting reaches the child in its arguments, the fence mode (`--fence`) among
        // them, never through the environment this process was given.
        .env_remove(FENCE_SWITCHING_ENV)
        .env_remove(NO_MEMBARRIER_ENV)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot start a point's process ({}): {e}", exe.display()),
            )
        })?;
    let pid = libc::pid_t::try_from(child.id()).map_err(io::Error::other)?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let mut reader = |what: &str, spawned: io::Result<()>| -> io::Result<()> {
        spawned.map_err(|e| {
            let _ = child.kill();
            let _ = child.wait();
            io::Error::new(
                e.kind(),
                format!("cannot start a thread to read a point's {what}: {e}"),
            )
        })
    };
    let mut out_reader = None;
    reader(
        "output",
        threads()
            .spawn(move || {
                BufReader::new(stdout)
                    .lines()
                    .map_while(Result::ok)
                    .filter_map(|l| serde_json::from_str::<Event>(&l).ok())
                    .collect::<Vec<Event>>()
            })
            .map(|h| out_reader = Some(h)),
    )?;
    let mut err_reader = None;
    reader(
        "errors",
        threads()
            .spawn(move || {
                let mut bytes = Vec::new();
                let _ = stderr.read_to_end(&mut bytes);
                String::from_utf8_lossy(&bytes).into_owned()
            })
            .map(|h| err_reader = Some(h)),
    )?;
    let (out_reader, err_reader) = (
        out_reader.expect("spawned above"),
        err_reader.expect("spawned above"),
    );

    let deadline = timeout.map(|t| start + t);
    let mut timed_out = false;
    let mut stopped = false;
    let mut pause = Duration::from_millis(1);
    let (status, usage) = loop {
        let mut status: libc::c_int = 0;
        // SAFETY: `rusage` is plain old data for which all-zeroes is a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `pid` is our unreaped child (only this loop reaps it; `Child::wait` is never
        // called), and `status` and `usage` are valid, exclusively borrowed outputs.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break (status, usage);
        }
        if r == -1 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if !stopped && !timed_out && interrupted() {
            // SAFETY: `pid` is still our unreaped child (wait4 just returned 0), so the id
            // cannot have been reused by another process.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            stopped = true;
        }
        if let Some(d) = deadline
            && !timed_out
            && !stopped
            && Instant::now() >= d
        {
            // SAFETY: `pid` is still our unreaped child (wait4 just returned 0), so the id
            // cannot have been reused by another process.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            timed_out = true;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    };
    let elapsed = start.elapsed();
    let events = out_reader.join().unwrap_or_default();
    let stderr_text = err_reader.join().unwrap_or_default();
    let end = if stopped {
        ChildEnd::Interrupted
    } else if timed_out {
        ChildEnd::TimedOut
    } else if libc::WIFEXITED(status) {
        ChildEnd::Exited(libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        ChildEnd::Signaled(libc::WTERMSIG(status))
    } else {
        ChildEnd::Signaled(0)
    };
    Ok(ChildResult {
        events,
        end,
        // Linux reports ru_maxrss in KiB.
        peak_rss_kb: u64::try_from(usage.ru_maxrss).ok().filter(|&k| k > 0),
        stderr_tail: tail(&stderr_text, 3),
        elapsed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_child_is_reaped_with_its_rss_and_killed_on_timeout() {
        let sh = Path::new("/bin/sh");
        let args = |s: &str| vec!["-c".to_string(), s.to_string()];
        let r = run_child(
            sh,
            &args("echo '{\"event\":\"error\",\"message\":\"m\"}'; exit 3"),
            None,
        )
        .unwrap();
        assert_eq!(r.end, ChildEnd::Exited(3));
        assert_eq!(
            r.events,
            [Event::Error {
                message: "m".into()
            }]
        );
        assert!(r.peak_rss_kb.is_some());
        let t = run_child(sh, &args("exec sleep 5"), Some(Duration::from_millis(100))).unwrap();
        assert_eq!(t.end, ChildEnd::TimedOut);
        assert!(t.elapsed < Duration::from_secs(4), "{:?}", t.elapsed);
        let k = run_child(sh, &args("echo oops >&2; kill -SEGV $$"), None).unwrap();
        assert_eq!(k.end, ChildEnd::Signaled(libc::SIGSEGV));
        assert_eq!(k.stderr_tail, "oops");
    }

    /// A reader thread that cannot be started (as under `ulimit -u`) is an error naming it,
    /// not a panic, and the child already started is killed and reaped, not left to run.
    #[test]
    fn a_thread_that_cannot_start_is_an_error_and_the_child_is_reaped() {
        let start = Instant::now();
        let e = run_child_with(
            Path::new("/bin/sh"),
            &["-c".to_string(), "exec sleep 30".to_string()],
            None,
            // A stack larger than any address space: pthread_create fails, as at a limit.
            || std::thread::Builder::new().stack_size(1 << 60),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("cannot start a thread to read a point's output: "),
            "{e}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the child ran on"
        );
        let e = run_child(Path::new("/nonexistent/stealbench"), &[], None)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("cannot start a point's process (/nonexistent/stealbench): "),
            "{e}"
        );
    }

    /// An empty parent pid is no parent; a malformed one is refused, not taken as a parent
    /// that is gone.
    #[test]
    fn the_parent_pid_is_parsed_strictly() {
        use std::ffi::OsStr;
        assert_eq!(parent_pid(None), Ok(None));
        assert_eq!(parent_pid(Some(OsStr::new(""))), Ok(None));
        assert_eq!(parent_pid(Some(OsStr::new("4242"))), Ok(Some(4242)));
        for bad in ["abc", "0", "-5", " 12", "99999999999"] {
            let e = parent_pid(Some(OsStr::new(bad))).unwrap_err();
            assert!(e.contains("is not a process id"), "{e}");
        }
    }
}
