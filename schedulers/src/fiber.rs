//! Execution contexts on pooled [`Stack`]s, switched symmetrically: the context switch under
//! every fiber of the fiber runtimes.
//!
//! A context is a stack whose callee-saved registers were pushed onto it by [`switch`]; it is
//! named by its saved stack pointer (a `usize`). `switch(msg, to, save)` saves the running
//! context (its stack pointer goes to `*save`) and continues the context saved at `to`, whose
//! own `switch` call then returns `msg`. Any context may switch to any other suspended one:
//! a fiber to its worker's scheduler loop, the loop to a fiber, or a fiber straight to another
//! fiber. The last is what work-first futures need: the parent switches straight to its
//! child's stack and the child, when done, straight back, with no scheduler loop between them
//! (an asymmetric coroutine library, such as corosensei, which the runtimes used before, makes
//! every such switch a round trip through the resumer). A new context ([`prepare`]) calls its
//! entry function with the first message and an argument; the entry must never return. A
//! context that is done for good leaves with [`jump`] (a switch that saves nothing), and its
//! stack can then be started over with another entry ([`restart`], cheaper than `prepare`):
//! the fiber runtimes start every forked child that way on a reused stack.
//!
//! The switch keeps what the C ABI says a call preserves: on x86_64 (System V) it is inline
//! assembly that saves `rbx`, `rbp` and its resume address on the stack and declares every
//! other register clobbered, and jumps (no call, no return: see `arch::switch`); on aarch64 a
//! function that saves `x19`-`x30` and `d8`-`d15`. Like a
//! call, it leaves the floating-point control words (MXCSR, x87 control, FPCR) alone: Rust code
//! does not change them. The entry's frame has a zero return address and frame pointer, so
//! backtraces and unwinders stop at a fiber's base; panics never cross a switch (the runtimes
//! catch them inside every task, and the entry is `extern "C"`, which aborts on a panic).
//! Only x86_64 and aarch64 are supported; the aarch64 code was written by the book but neither
//! compiled nor run by the authors (their machines and toolchain are x86_64 only).
//!
//! # Thread-local storage
//!
//! A context may be continued by another thread than the one it was saved on. Compiled code
//! may keep the address of a thread-local variable in a register or a stack slot across the
//! switch (LLVM treats the thread pointer as constant within a function), so fiber code must
//! never hold a thread-local across a switch; the runtimes reach worker state only through the
//! messages the switches pass.

use crate::stack::Stack;

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("stealbench's fibers support x86_64 and aarch64 only");

/// Saves the running context and continues the one saved at `to`.
///
/// The running context's callee-saved registers are pushed onto its stack and its stack
/// pointer is stored in `*save`; then the registers of the context saved at `to` are restored
/// and its `switch` returns `msg` (or, for a context made by [`prepare`] and not yet started,
/// its entry is called with `msg`). This call returns when some later `switch` continues the
/// context saved here, with that switch's `msg`.
///
/// # Safety
///
/// `to` is the saved stack pointer of a suspended context (from [`prepare`] or a `switch`'s
/// `*save`) that no one else continues, and whose stack stays mapped until it switches away or
/// is abandoned. `save` is valid for a write. Whatever the running code holds across the call
/// must be safe to use from the thread that later continues it (see the module docs).
#[inline(always)]
pub unsafe fn switch(msg: usize, to: usize, save: *mut usize) -> usize {
    // SAFETY: forwarded from the caller.
    unsafe { arch::switch(msg, to, save) }
}

/// Continues the context saved at `to` with `msg`, abandoning the running one: as [`switch`]
/// without saving anything, for a context that will never be continued.
///
/// # Safety
///
/// As [`switch`]; and nothing continues the running context again (its stack may be reused
/// or unmapped once the context at `to` has read `msg`).
#[inline(always)]
pub unsafe fn jump(msg: usize, to: usize) -> ! {
    // SAFETY: forwarded from the caller.
    unsafe { arch::jump(msg, to) }
}

/// Prepares a context on `stack` that, when first switched to with message `m`, calls
/// `entry(m, arg)` on that stack. Returns the context's saved stack pointer, for [`switch`].
///
/// # Safety
///
/// Nothing else may use `stack` while the context lives. `entry` must never return (it ends by
/// switching away for good, after which the stack may be reused or unmapped).
pub unsafe fn prepare(
    stack: &Stack,
    entry: unsafe extern "C" fn(usize, usize) -> !,
    arg: usize,
) -> usize {
    // SAFETY: the frame is written into the top bytes of the stack, which the caller gives us.
    unsafe { prepare_below(stack.top() & !15, entry, arg) }
}

/// As [`prepare`], for a context whose stack starts at `top` (the bytes from `top` up are the
/// caller's, e.g. data that outlives the context's runs).
///
/// # Safety
///
/// As [`prepare`]; `top` is 16-byte aligned, and the stack below it is the context's.
pub unsafe fn prepare_below(
    top: usize,
    entry: unsafe extern "C" fn(usize, usize) -> !,
    arg: usize,
) -> usize {
    debug_assert_eq!(top % 16, 0);
    // SAFETY: forwarded from the caller.
    unsafe { arch::prepare(top, entry, arg) }
}

/// Starts a context over on a stack prepared with [`prepare_below`] at the same `top`, now with
/// `entry(m, arg)`: cheaper than preparing it, as it writes only what the first switch pops.
/// The context that ran there before is abandoned (it is never continued again).
///
/// # Safety
///
/// As [`prepare_below`], and a context was prepared at `top` before (with any entry); nothing
/// runs on that stack now, and nothing will continue the context that ran there.
#[inline(always)]
pub unsafe fn restart(
    top: usize,
    entry: unsafe extern "C" fn(usize, usize) -> !,
    arg: usize,
) -> usize {
    // SAFETY: forwarded from the caller.
    unsafe { arch::restart(top, entry, arg) }
}

#[cfg(target_arch = "x86_64")]
mod arch {
    /// Inline, so a switch costs no call and no return: a `ret` to another context's call
    /// site always misses the return-address predictor (a switch function ending in `ret`
    /// took ten times as long as this one: `paper-figures/measurements.md`, "One operation,
    /// per runtime"), while the indirect `jmp` below is predicted from its history. The saved context
    /// is three words: the resume address, rbp and rbx (which inline assembly may not declare
    /// clobbered); r12-r15 are declared clobbered, so the compiler keeps their live values
    /// in the suspended frame, and `clobber_abi("C")` covers the caller-saved registers.
    #[inline(always)]
    pub unsafe fn switch(msg: usize, to: usize, save: *mut usize) -> usize {
        let out: usize;
        // SAFETY: the caller's contract (see `super::switch`); the block pushes three words
        // below the stack pointer of the running context (allowed without `nostack`), and
        // whoever continues it pops them before jumping to label 2.
        unsafe {
            core::arch::asm!(
                "lea rax, [rip + 2f]",
                "push rbx",
                "push rbp",
                "push rax",
                "mov [rdx], rsp",
                "mov rsp, rsi",
                "pop rax",
                "pop rbp",
                "pop rbx",
                "jmp rax",
                "2:",
                inout("rdi") msg => out,
                inout("rsi") to => _,
                inout("rdx") save => _,
                out("r12") _,
                out("r13") _,
                out("r14") _,
                out("r15") _,
                clobber_abi("C"),
            );
        }
        out
    }

    /// See `super::jump`: the second half of `switch`.
    #[inline(always)]
    pub unsafe fn jump(msg: usize, to: usize) -> ! {
        // SAFETY: the caller's contract (see `super::jump`); `to` holds the three words that
        // `switch` pushed (or `prepare` wrote).
        unsafe {
            core::arch::asm!(
                "mov rsp, rsi",
                "pop rax",
                "pop rbp",
                "pop rbx",
                "jmp rax",
                in("rdi") msg,
                in("rsi") to,
                options(noreturn),
            )
        }
    }

    /// The first code of a new context: `entry(msg, arg)`, with `entry` in rbp and `arg` in
    /// rbx (set up by `prepare`) and the message in rdi (from `switch`). The stack is 16-byte
    /// aligned here, as a call requires; rbp is cleared to end the frame-pointer chain, and
    /// `entry` never returns. It is entered as if called from label 2 (whose `ud2` it never
    /// reaches), but by a jump: a `call` that never returns would leave its address on the
    /// return-address predictor's stack, and the context that the entry later switches to
    /// would mispredict its next return.
    #[unsafe(naked)]
    unsafe extern "C" fn trampoline() {
        core::arch::naked_asm!(
            "mov rsi, rbx",
            "mov rax, rbp",
            "xor ebp, ebp",
            "lea rcx, [rip + 2f]",
            "push rcx",
            "jmp rax",
            "2:",
            "ud2"
        )
    }

    /// # Safety
    /// `top` is 16-byte aligned and the 40 bytes below it are ours.
    pub unsafe fn prepare(
        top: usize,
        entry: unsafe extern "C" fn(usize, usize) -> !,
        arg: usize,
    ) -> usize {
        // From `top` down: two zero words (the end of the frame chain for unwinders), then
        // what `switch` pops, written by `restart`.
        let p = (top - 16) as *mut usize;
        // SAFETY: `[top - 16, top)` lies within the caller's stack, 8-byte aligned; then as
        // `restart`'s contract, now that the zero words are in place.
        unsafe {
            p.write(0);
            p.add(1).write(0);
            restart(top, entry, arg)
        }
    }

    /// # Safety
    /// As `prepare`, which prepared a context at `top` before: the two zero words above the
    /// three written here are still in place (nothing below `top - 16` writes them).
    #[inline(always)]
    pub unsafe fn restart(
        top: usize,
        entry: unsafe extern "C" fn(usize, usize) -> !,
        arg: usize,
    ) -> usize {
        // What `switch` pops: the resume address (the trampoline), rbp (the entry) and rbx
        // (the argument). After the pops, rsp = top - 16.
        let sp = top - 40;
        let p = sp as *mut usize;
        // SAFETY: `[sp, top - 16)` lies within the caller's stack, 8-byte aligned.
        unsafe {
            p.write(trampoline as *const () as usize);
            p.add(1).write(entry as *const () as usize);
            p.add(2).write(arg);
        }
        sp
    }
}

#[cfg(target_arch = "aarch64")]
mod arch {
    /// Bytes of the register frame `switch` saves: x19-x30 and d8-d15, 20 words.
    const FRAME_BYTES: usize = 160;

    /// See `super::switch`.
    #[inline(always)]
    pub unsafe fn switch(msg: usize, to: usize, save: *mut usize) -> usize {
        // SAFETY: forwarded from the caller.
        unsafe { switch_naked(msg, to, save) }
    }

    /// See `super::jump` (a switch that saves into a slot nobody reads).
    pub unsafe fn jump(msg: usize, to: usize) -> ! {
        let mut abandoned = 0usize;
        // SAFETY: forwarded from the caller; the saved context is never continued.
        unsafe { switch_naked(msg, to, &mut abandoned) };
        unreachable!("an abandoned context was continued")
    }

    #[unsafe(naked)]
    unsafe extern "C" fn switch_naked(msg: usize, to: usize, save: *mut usize) -> usize {
        // x0 = msg (also the return value), x1 = to, x2 = save.
        core::arch::naked_asm!(
            "sub sp, sp, #160",
            "stp x19, x20, [sp, #0]",
            "stp x21, x22, [sp, #16]",
            "stp x23, x24, [sp, #32]",
            "stp x25, x26, [sp, #48]",
            "stp x27, x28, [sp, #64]",
            "stp x29, x30, [sp, #80]",
            "stp d8, d9, [sp, #96]",
            "stp d10, d11, [sp, #112]",
            "stp d12, d13, [sp, #128]",
            "stp d14, d15, [sp, #144]",
            "mov x3, sp",
            "str x3, [x2]",
            "mov sp, x1",
            "ldp x19, x20, [sp, #0]",
            "ldp x21, x22, [sp, #16]",
            "ldp x23, x24, [sp, #32]",
            "ldp x25, x26, [sp, #48]",
            "ldp x27, x28, [sp, #64]",
            "ldp x29, x30, [sp, #80]",
            "ldp d8, d9, [sp, #96]",
            "ldp d10, d11, [sp, #112]",
            "ldp d12, d13, [sp, #128]",
            "ldp d14, d15, [sp, #144]",
            "add sp, sp, #160",
            "ret",
        )
    }

    /// The first code of a new context: `entry(msg, arg)`, with `entry` in x19 and `arg` in
    /// x20 (set up by `prepare`), the message in x0 (from `switch`), and x29 = x30 = 0.
    #[unsafe(naked)]
    unsafe extern "C" fn trampoline() {
        core::arch::naked_asm!("mov x1, x20", "blr x19", "brk #1")
    }

    /// # Safety
    /// `top` is 16-byte aligned and the 160 bytes below it are ours.
    pub unsafe fn prepare(
        top: usize,
        entry: unsafe extern "C" fn(usize, usize) -> !,
        arg: usize,
    ) -> usize {
        let sp = top - FRAME_BYTES;
        let mut words = [0usize; FRAME_BYTES / 8];
        words[0] = entry as *const () as usize; // x19
        words[1] = arg; // x20
        words[10] = 0; // x29: end of the frame-pointer chain
        words[11] = trampoline as *const () as usize; // x30: where `switch`'s `ret` goes
        // SAFETY: `[sp, top)` lies within the caller's stack, and `sp` is 16-byte aligned.
        unsafe { std::ptr::copy_nonoverlapping(words.as_ptr(), sp as *mut usize, words.len()) };
        sp
    }

    /// # Safety
    /// As `prepare` (the whole frame is written again: the switch restores all of it).
    pub unsafe fn restart(
        top: usize,
        entry: unsafe extern "C" fn(usize, usize) -> !,
        arg: usize,
    ) -> usize {
        // SAFETY: forwarded from the caller.
        unsafe { prepare(top, entry, arg) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// The two saved contexts of a test fiber and whoever continues it, at a stable address.
    #[derive(Default)]
    struct Slots {
        /// The fiber, while suspended.
        fiber: usize,
        /// Whoever continued the fiber, while the fiber runs.
        back: usize,
    }

    /// A test fiber: a context on its own stack that yields back to whoever continued it.
    struct TestFiber {
        _stack: Stack,
        slots: Box<Slots>,
    }

    // SAFETY: the test bodies hold only integers, vectors and raw pointers to their own `Slots`
    // (owned by the `TestFiber`) across switches.
    unsafe impl Send for TestFiber {}

    impl TestFiber {
        /// A fiber that runs `entry(first message, &Slots)`.
        fn new(entry: unsafe extern "C" fn(usize, usize) -> !) -> TestFiber {
            let stack = Stack::new(256 * 1024).unwrap();
            let mut slots = Box::<Slots>::default();
            let arg = &mut *slots as *mut Slots as usize;
            // SAFETY: the stack is this context's alone; the test entries never return.
            slots.fiber = unsafe { prepare(&stack, entry, arg) };
            TestFiber {
                _stack: stack,
                slots,
            }
        }

        /// Continues the fiber with `msg`; returns what it yields.
        fn resume(&mut self, msg: usize) -> usize {
            let s: *mut Slots = &mut *self.slots;
            // SAFETY: `fiber` is the fiber's suspended context, continued by us alone; it
            // switches back to the context saved in `back`.
            unsafe { switch(msg, (*s).fiber, &raw mut (*s).back) }
        }
    }

    /// Inside a test fiber: switch back to whoever continued it; returns the next message.
    ///
    /// # Safety
    /// `slots` is the running fiber's own `Slots`, and the fiber was continued by `resume`.
    unsafe fn yield_back(slots: usize, msg: usize) -> usize {
        let s = slots as *mut Slots;
        // SAFETY: by the contract, `back` holds the suspended context that continued us.
        unsafe { switch(msg, (*s).back, &raw mut (*s).fiber) }
    }

    /// Yields each message it receives times ten, and after three a boxed vector of them all.
    unsafe extern "C" fn tenfold(mut x: usize, slots: usize) -> ! {
        let mut seen = vec![];
        for _ in 0..3 {
            seen.push(x);
            // SAFETY: we run as the fiber of `slots`, continued by `resume`.
            x = unsafe { yield_back(slots, x * 10) };
        }
        seen.push(x);
        let out = Box::into_raw(Box::new(seen)) as usize;
        loop {
            // SAFETY: as above.
            unsafe { yield_back(slots, out) };
        }
    }

    #[test]
    fn passes_messages_both_ways_and_reuses_a_stack() {
        for _ in 0..2 {
            let mut f = TestFiber::new(tenfold);
            assert_eq!(f.resume(1), 10);
            assert_eq!(f.resume(2), 20);
            assert_eq!(f.resume(3), 30);
            let out = f.resume(4);
            // SAFETY: the fiber's last message is the vector it boxed.
            let seen = unsafe { Box::from_raw(out as *mut Vec<usize>) };
            assert_eq!(*seen, vec![1, 2, 3, 4]);
        }
    }

    /// Exercises what needs a well-aligned frame and an unwinder that stops at the fiber's
    /// base: float formatting (aligned vector moves), a caught panic, and a full backtrace.
    unsafe extern "C" fn careful(_: usize, slots: usize) -> ! {
        let text = format!("{:.3} {:?}", std::f64::consts::PI, [1.5f32; 4]);
        let caught = std::panic::catch_unwind(|| {
            let v: Vec<u64> = Vec::new();
            v[3]
        })
        .is_err();
        let bt = std::backtrace::Backtrace::force_capture().to_string();
        let ok = text == "3.142 [1.5, 1.5, 1.5, 1.5]" && caught && bt.contains("careful");
        loop {
            // SAFETY: we run as the fiber of `slots`, continued by `resume`.
            unsafe { yield_back(slots, usize::from(ok)) };
        }
    }

    #[test]
    fn aligned_frames_panics_and_backtraces_inside_a_fiber() {
        let mut f = TestFiber::new(careful);
        assert_eq!(f.resume(0), 1);
    }

    /// A ring of fibers, each switching straight to the next: `RING` contexts pass a counter
    /// around `LAPS` times; the last hop goes back to the test's thread.
    const RING: usize = 5;
    const LAPS: usize = 1000;

    /// The ring's shared state: every fiber's saved context, and the test's.
    struct Ring {
        sp: [usize; RING],
        main: usize,
    }

    unsafe extern "C" fn ring_member(first: usize, arg: usize) -> ! {
        let (ring, me) = (arg & !7, arg & 7);
        let ring = ring as *mut Ring;
        let mut count = first;
        loop {
            count += 1;
            let hops = count;
            // SAFETY: the ring's contexts are suspended (only one runs at a time), and each
            // is continued only by its predecessor (or, at the end, the test by the last).
            count = unsafe {
                if hops == RING * LAPS {
                    switch(hops, (*ring).main, &raw mut (*ring).sp[me])
                } else {
                    let next = (me + 1) % RING;
                    switch(hops, (*ring).sp[next], &raw mut (*ring).sp[me])
                }
            };
        }
    }

    #[test]
    fn fibers_switch_straight_to_each_other() {
        let stacks: Vec<Stack> = (0..RING).map(|_| Stack::new(64 * 1024).unwrap()).collect();
        let mut ring = Box::new(Ring {
            sp: [0; RING],
            main: 0,
        });
        let base = &mut *ring as *mut Ring as usize;
        assert_eq!(base & 7, 0);
        for (i, s) in stacks.iter().enumerate() {
            // SAFETY: one context per stack; the members never return.
            ring.sp[i] = unsafe { prepare(s, ring_member, base | i) };
        }
        let r = &mut *ring as *mut Ring;
        // SAFETY: member 0 is suspended and ours to continue; the last hop comes back here.
        let hops = unsafe { switch(0, (*r).sp[0], &raw mut (*r).main) };
        assert_eq!(hops, RING * LAPS);
    }

    /// The body of a migrating fiber: counts on which thread (the message) each step runs,
    /// keeps a checksum on its stack, yields after every step, then yields its boxed result.
    unsafe extern "C" fn migrating(first: usize, slots: usize) -> ! {
        let (mut thread, id) = (first & 1, first >> 1);
        let mut per_thread = [0usize; 2];
        let mut checksum = id;
        for step in 0..STEPS {
            per_thread[thread] += 1;
            checksum = checksum.wrapping_mul(31).wrapping_add(step);
            // SAFETY: we run as the fiber of `slots`, continued by `resume`.
            thread = unsafe { yield_back(slots, 0) };
        }
        per_thread[thread] += 1;
        let out = Box::into_raw(Box::new(vec![id, checksum, per_thread[0], per_thread[1]]));
        loop {
            // SAFETY: as above.
            unsafe { yield_back(slots, out as usize) };
        }
    }

    const FIBERS: usize = 8;
    const STEPS: usize = 5_000;

    /// Two threads pass fibers back and forth; each fiber yields after every step, so it
    /// resumes alternately on both threads. Each resume passes the resuming thread's index (the
    /// explicit handle), and the fiber checks its stack data stayed intact.
    #[test]
    fn fibers_migrate_between_threads_many_times() {
        // `None` tells a thread to stop (each thread holds a sender to the other).
        let (to_a, from_main_a) = mpsc::channel::<Option<(TestFiber, bool)>>();
        let (to_b, from_main_b) = mpsc::channel::<Option<(TestFiber, bool)>>();
        let (done_tx, done_rx) = mpsc::channel::<Vec<usize>>();
        let spawn = |me: usize,
                     rx: mpsc::Receiver<Option<(TestFiber, bool)>>,
                     other: mpsc::Sender<Option<(TestFiber, bool)>>,
                     done: mpsc::Sender<Vec<usize>>| {
            std::thread::spawn(move || {
                while let Ok(Some((mut f, started))) = rx.recv() {
                    let id = f.slots.back; // the first message carries the fiber's number
                    let msg = if started { me } else { id << 1 | me };
                    match f.resume(msg) {
                        0 => other.send(Some((f, true))).unwrap(),
                        // SAFETY: a non-zero message is the fiber's boxed result.
                        out => done
                            .send(*unsafe { Box::from_raw(out as *mut Vec<usize>) })
                            .unwrap(),
                    }
                }
            })
        };
        let ta = spawn(0, from_main_a, to_b.clone(), done_tx.clone());
        let tb = spawn(1, from_main_b, to_a.clone(), done_tx);
        for i in 0..FIBERS {
            let mut f = TestFiber::new(migrating);
            f.slots.back = i;
            if i % 2 == 0 { &to_a } else { &to_b }
                .send(Some((f, false)))
                .unwrap();
        }
        let mut results: Vec<Vec<usize>> = (0..FIBERS).map(|_| done_rx.recv().unwrap()).collect();
        to_a.send(None).unwrap();
        to_b.send(None).unwrap();
        ta.join().unwrap();
        tb.join().unwrap();
        results.sort();
        for (i, r) in results.iter().enumerate() {
            let mut want = i;
            for step in 0..STEPS {
                want = want.wrapping_mul(31).wrapping_add(step);
            }
            assert_eq!(r[0], i);
            assert_eq!(r[1], want, "stack data survived {STEPS} migrations");
            // Strict alternation: every resume happened on the other thread.
            assert_eq!(r[2] + r[3], STEPS + 1);
            assert!(r[2].abs_diff(r[3]) <= 1, "{r:?}");
        }
    }
}
