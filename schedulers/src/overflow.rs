//! Fiber stack overflow reports: a fault handler that recognises the guard pages of fiber
//! stacks and says so before aborting, instead of a bare `SIGSEGV`.
//!
//! Rust's runtime reports an overflow of a *thread's* stack ("thread '...' has overflowed its
//! stack"), but knows nothing of the stacks [`crate::stack`] maps for fibers: running off one
//! of them faults on its guard page and the process dies with no word of why. Every mapped
//! fiber stack registers its guard page here ([`Guard`], released when the stack is unmapped);
//! the first registration installs a
//! `SIGSEGV`/`SIGBUS` handler (on the alternate signal stack that Rust's runtime gives every
//! thread it starts). The handler looks the fault address up among the registered guard pages:
//! if it is one, it writes a message to standard error and aborts; otherwise it hands the
//! signal to the handler that was installed before (Rust's own, which reports thread stack
//! overflows and otherwise restores the default action, so the fault kills the process as
//! usual).
//!
//! # Invariants
//!
//! * The registry is a fixed table of atomic words, each 0 or the lowest address of one
//!   registered guard page; the handler only loads them (async-signal-safe). A guard is
//!   registered after its page is protected and unregistered before it is unmapped.
//! * If the table is full, a stack goes unregistered: its overflow is reported as before
//!   (a plain fault), nothing else changes.
//! * The handler calls only async-signal-safe functions (`write`, `abort`, `sigaction`).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Room for this many guard pages at once (fiber stacks mapped at the same time).
const SLOTS: usize = 1 << 14;

static GUARDS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
/// Where the next registration starts looking for a free slot.
static NEXT: AtomicUsize = AtomicUsize::new(0);
/// The guard page size, set when the handler is installed.
static GUARD_BYTES: AtomicUsize = AtomicUsize::new(0);

/// The handlers installed before ours, for `SIGSEGV` and `SIGBUS`.
struct Previous {
    segv: libc::sigaction,
    bus: libc::sigaction,
}

// SAFETY: plain C data (function addresses, flags, a signal mask), only read after it is set.
unsafe impl Send for Previous {}
// SAFETY: see `Send`.
unsafe impl Sync for Previous {}

static PREVIOUS: OnceLock<Previous> = OnceLock::new();

/// The registration of one guard page: a plain value (no destructor, so a stack's drop stays
/// small enough to inline where fiber boxes are dropped); the stack calls [`Guard::release`]
/// before it unmaps its pages.
#[derive(Debug, Clone, Copy)]
pub struct Guard {
    /// The slot in the table, or `SLOTS` if the table was full.
    slot: usize,
}

impl Guard {
    /// Registers the guard page `[low, low + bytes)` (all guard pages have the same size).
    pub fn register(low: usize, bytes: usize) -> Guard {
        install(bytes);
        let start = NEXT.fetch_add(1, Ordering::Relaxed);
        for i in 0..SLOTS {
            let slot = (start + i) % SLOTS;
            // Release: the handler that finds `low` sees a protected page (the caller's
            // `mprotect` happened before).
            if GUARDS[slot]
                .compare_exchange(0, low, Ordering::Release, Ordering::Relaxed)
                .is_ok()
            {
                return Guard { slot };
            }
        }
        Guard { slot: SLOTS }
    }

    /// Unregisters the guard page (once, before its pages are unmapped).
    #[inline]
    pub fn release(self) {
        if let Some(g) = GUARDS.get(self.slot) {
            g.store(0, Ordering::Release);
        }
    }
}

/// Installs the handler once.
fn install(bytes: usize) {
    PREVIOUS.get_or_init(|| {
        GUARD_BYTES.store(bytes, Ordering::Relaxed);
        // SAFETY: `sigaction` with a fully initialised action; the old actions are written
        // into zeroed structs we own. The handler is async-signal-safe (see the module docs).
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_fault as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            let mut segv: libc::sigaction = std::mem::zeroed();
            let mut bus: libc::sigaction = std::mem::zeroed();
            libc::sigaction(libc::SIGSEGV, &action, &mut segv);
            libc::sigaction(libc::SIGBUS, &action, &mut bus);
            Previous { segv, bus }
        }
    });
}

/// Is `addr` inside a registered guard page?
fn is_guard(addr: usize) -> bool {
    let bytes = GUARD_BYTES.load(Ordering::Relaxed);
    GUARDS.iter().any(|g| {
        let low = g.load(Ordering::Acquire);
        low != 0 && addr >= low && addr - low < bytes
    })
}

/// `addr` in hexadecimal, without allocating: the digits are written into `buf`.
fn hex(addr: usize, buf: &mut [u8; 18]) -> &[u8] {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut i = buf.len();
    let mut v = addr;
    loop {
        i -= 1;
        buf[i] = DIGITS[v & 15];
        v >>= 4;
        if v == 0 {
            break;
        }
    }
    i -= 1;
    buf[i] = b'x';
    i -= 1;
    buf[i] = b'0';
    &buf[i..]
}

/// Writes `bytes` to standard error (async-signal-safe; errors are ignored: we abort next).
fn write_err(bytes: &[u8]) {
    // SAFETY: `write` reads `bytes.len()` bytes from a live slice.
    unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
}

extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid `siginfo_t` to an `SA_SIGINFO` handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    if is_guard(addr) {
        let mut buf = [0u8; 18];
        write_err(b"\nstealbench: a fiber overflowed its stack (fault at ");
        write_err(hex(addr, &mut buf));
        write_err(
            b", in the guard page below a fiber stack). Give the fibers bigger stacks \
              (`--stack-size`, or with_stack_size on the pool, e.g. Fibril::with_stack_size; the default is 16 MiB) or recurse less deeply.\n",
        );
        // SAFETY: `abort` is async-signal-safe and does not return.
        unsafe { libc::abort() };
    }
    let Some(prev) = PREVIOUS.get() else { return };
    let old = if sig == libc::SIGBUS {
        &prev.bus
    } else {
        &prev.segv
    };
    let h = old.sa_sigaction;
    if h == libc::SIG_DFL || h == libc::SIG_IGN {
        // Not ours and nobody else's: put the old action back and return; the faulting
        // instruction runs again and the fault takes its default course.
        // SAFETY: restores the action `install` read.
        unsafe { libc::sigaction(sig, old, std::ptr::null_mut()) };
    } else if old.sa_flags & libc::SA_SIGINFO != 0 {
        // SAFETY: the previous handler was installed as an `SA_SIGINFO` handler with this
        // signature; we pass it what the kernel passed us.
        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
            unsafe { std::mem::transmute(h) };
        f(sig, info, ctx);
    } else {
        // SAFETY: as above, for a plain handler.
        let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(h) };
        f(sig);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_formats_addresses() {
        let mut buf = [0u8; 18];
        assert_eq!(hex(0, &mut buf), b"0x0");
        assert_eq!(hex(0x7f00_dead_beef, &mut buf), b"0x7f00deadbeef");
        assert_eq!(hex(usize::MAX, &mut buf), b"0xffffffffffffffff");
    }

    #[test]
    fn guards_are_found_until_dropped() {
        let g = Guard::register(0x1000_0000, 4096);
        assert!(is_guard(0x1000_0000) && is_guard(0x1000_0fff));
        assert!(!is_guard(0x1000_1000) && !is_guard(0x0fff_ffff));
        g.release();
        assert!(!is_guard(0x1000_0000));
    }
}
