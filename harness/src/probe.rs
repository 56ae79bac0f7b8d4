//! Probes of this process's memory and page faults (`/proc/self/status`, `getrusage`), which
//! the measurement loop reads around every repetition.

/// Peak resident set size of this process in KiB: `VmHWM`, the high-water mark of this
/// program's own memory. `getrusage`'s `ru_maxrss` is no such thing in a child: the kernel
/// carries into it, at `exec`, the high-water mark of the memory it was spawned from (the
/// parent's, which a `vfork`-like spawn shares until `exec`), so a small point would report a
/// parent's hundreds of MiB. `ru_maxrss` only where `/proc` cannot be read.
pub(crate) fn self_peak_rss_kb() -> u64 {
    if let Some((_, hwm)) = self_rss_kb() {
        return hwm;
    }
    // SAFETY: `rusage` is plain old data for which all-zeroes is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, exclusively borrowed `rusage` for the call to fill in.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    if rc == 0 {
        // Linux reports ru_maxrss in KiB.
        usage.ru_maxrss.max(0) as u64
    } else {
        0
    }
}

/// Minor page faults of this whole process so far (`getrusage(RUSAGE_SELF)`): measured from
/// outside the runtime, so every runtime has it (rayon included), as `process_minor_faults`
/// of each repetition (the timed computation's faults, all threads).
pub(crate) fn self_minor_faults() -> u64 {
    // SAFETY: `rusage` is plain old data for which all-zeroes is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, exclusively borrowed `rusage` for the call to fill in.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    if rc == 0 {
        usage.ru_minflt.max(0) as u64
    } else {
        0
    }
}

/// This process's resident set now and its peak so far, KiB (`VmRSS` and `VmHWM` of
/// `/proc/self/status`); `None` where the file or either line cannot be read.
pub(crate) fn self_rss_kb() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| {
                rest.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_rss_is_positive() {
        assert!(self_peak_rss_kb() > 0);
    }
}
