//! What the C ABI shims of the library baselines (`tbb`, `openmp`) share: a Rust closure as a
//! C task (a trampoline and a context), the first panic of several tasks, and the closure
//! front-end of a library whose tasks need no handle of ours ([`c_abi_front_end!`]).
//!
//! A task crosses the boundary as a function pointer and a context pointer ([`SbTask`]). A
//! closure that runs once in place ([`Slot`]: a join's sides, a region's root) is run by a
//! monomorphised trampoline under [`catch_unwind`], which stores its value or its panic in the
//! slot; the C++ call returns only after the task has, so the slot outlives it. A panic never
//! unwinds into C++: the wrapper re-raises it after the wait ([`unwrap_outcome`]).

use std::any::Any;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Mutex, PoisonError};

/// A task across the C ABI: called once with its context.
pub type SbTask = unsafe extern "C" fn(ctx: *mut c_void);

/// A panic payload, as [`catch_unwind`] returns it.
pub(crate) type Payload = Box<dyn Any + Send + 'static>;

/// A closure that runs once across the boundary, and its outcome.
pub(crate) struct Slot<F, R> {
    f: Option<F>,
    out: Option<std::thread::Result<R>>,
}

impl<F: FnOnce() -> R, R> Slot<F, R> {
    pub(crate) fn new(f: F) -> Self {
        Slot {
            f: Some(f),
            out: None,
        }
    }

    /// The trampoline and the context to hand to C. The slot must stay where it is until the
    /// task has run.
    pub(crate) fn raw(&mut self) -> (SbTask, *mut c_void) {
        (run_slot::<F, R>, (self as *mut Self).cast())
    }

    /// The closure's value, or its panic.
    pub(crate) fn outcome(self) -> std::thread::Result<R> {
        self.out
            .expect("the C++ side returned before running the task")
    }
}

/// Runs the closure of a [`Slot<F, R>`] and stores its outcome.
///
/// # Safety
/// `ctx` points to a live `Slot<F, R>` that nothing else touches while this runs.
unsafe extern "C" fn run_slot<F: FnOnce() -> R, R>(ctx: *mut c_void) {
    // SAFETY: the caller's contract: a live slot of this type, ours alone for now.
    let slot = unsafe { &mut *ctx.cast::<Slot<F, R>>() };
    let f = slot.f.take();
    slot.out = Some(catch_unwind(AssertUnwindSafe(move || {
        (f.expect("a task of the C ABI runs once"))()
    })));
}

/// Re-raises a panic, or returns the value.
pub(crate) fn unwrap_outcome<R>(r: std::thread::Result<R>) -> R {
    r.unwrap_or_else(|p| resume_unwind(p))
}

/// A library's join across the C ABI: runs both tasks, possibly in parallel, and returns only
/// after both have returned.
pub(crate) type JoinFn =
    unsafe extern "C" fn(a: SbTask, actx: *mut c_void, b: SbTask, bctx: *mut c_void);

/// Runs `a` and `b` through the library's `join` and returns both results; a panic of either
/// is re-raised once both are done (`a`'s first).
///
/// # Safety
/// `join` returns only after it has called each task once (the library's wait).
#[inline]
pub(crate) unsafe fn join<A, B, RA, RB>(join: JoinFn, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let mut sa = Slot::new(a);
    let mut sb = Slot::new(b);
    let (ta, ca) = sa.raw();
    let (tb, cb) = sb.raw();
    // SAFETY: each context is the slot its trampoline expects; by the caller's contract the
    // call returns after both tasks have returned (neither unwinds), so both slots outlive
    // their tasks, and each task touches only its own slot. The closures are `Send`: either
    // may run on another thread.
    unsafe { join(ta, ca, tb, cb) };
    let (ra, rb) = (sa.outcome(), sb.outcome());
    (unwrap_outcome(ra), unwrap_outcome(rb))
}

/// The first panic recorded by several tasks (of a scope, of a region's threads).
pub(crate) struct PanicSlot(Mutex<Option<Payload>>);

impl PanicSlot {
    pub(crate) const fn new() -> Self {
        PanicSlot(Mutex::new(None))
    }

    /// Keeps `p` if it is the first.
    pub(crate) fn record(&self, p: Payload) {
        let mut first = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if first.is_none() {
            *first = Some(p);
        }
    }

    /// The first panic, if any.
    pub(crate) fn take(&self) -> Option<Payload> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

/// The closure front-end of a library baseline whose `ffi` module has `join(a, b)` and
/// `scope(f)` over its own scope type `$Fs` (with `spawn(f)`, `f` given the scope): a worker
/// handle `$W` that holds nothing (the library finds the calling thread's pool itself) and a
/// scope `$S` that is `$Fs` itself.
macro_rules! c_abi_front_end {
    (
        $(#[$wdoc:meta])* worker $W:ident;
        $(#[$sdoc:meta])* scope $S:ident = $ffi:ident :: $Fs:ident;
    ) => {
        $(#[$wdoc])*
        #[derive(Debug)]
        pub struct $W(());

        impl $crate::api::Worker for $W {
            type Scope<'s> = $S<'s>;

            #[inline]
            fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
            where
                A: FnOnce(&Self) -> RA + Send,
                B: FnOnce(&Self) -> RB + Send,
                RA: Send,
                RB: Send,
            {
                $ffi::join(|| a(&$W(())), || b(&$W(())))
            }

            fn scope<'s, F, R>(&self, f: F) -> R
            where
                F: FnOnce(&$S<'s>, &$W) -> R + Send,
                R: Send,
            {
                $ffi::scope(|s| f($S::wrap(s), &$W(())))
            }
        }

        $(#[$sdoc])*
        #[repr(transparent)]
        pub struct $S<'s> {
            inner: $ffi::$Fs<'s>,
        }

        impl<'s> $S<'s> {
            fn wrap<'a>(inner: &'a $ffi::$Fs<'s>) -> &'a $S<'s> {
                // SAFETY: the scope is `repr(transparent)` over the library's, so the two
                // references have one layout and the same lifetime.
                unsafe { &*(inner as *const $ffi::$Fs<'s>).cast::<$S<'s>>() }
            }
        }

        impl std::fmt::Debug for $S<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(stringify!($S))
            }
        }

        impl<'s> $crate::api::Scope<'s> for $S<'s> {
            type Worker = $W;

            fn spawn<F>(&self, _w: &$W, f: F)
            where
                F: FnOnce(&Self, &$W) + Send + 's,
            {
                self.inner.spawn(move |s| f($S::wrap(s), &$W(())));
            }
        }
    };
}

pub(crate) use c_abi_front_end;
