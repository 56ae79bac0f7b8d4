//! A fiber that runs off its stack is reported (not a bare `SIGSEGV`), and a thread that runs
//! off its own stack is still reported by Rust's runtime: each case runs in a child process
//! (this test binary, running one of the ignored helpers below).

use std::hint::black_box;
use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use stealbench_schedulers::abp::Abp;
use stealbench_schedulers::stack::Stack;
use stealbench_schedulers::{ForkJoin, PoolConfig};

/// Recursion that keeps a kilobyte of every frame alive.
fn deep(depth: u64) -> u64 {
    let frame = black_box([depth; 128]);
    if depth == u64::MAX {
        return 0;
    }
    deep(depth + 1).wrapping_add(frame[7])
}

/// Runs the helper `name` in a child process; returns its signal and standard error.
fn child(name: &str) -> (Option<i32>, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            name,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .output()
        .unwrap();
    (
        out.status.signal(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
#[ignore = "helper: run in a child process by fiber_overflow_is_reported"]
fn overflow_a_fiber() {
    let pool = Abp::with_stack_size(&PoolConfig::with_workers(1), 64 * 1024).unwrap();
    let v = pool.run(|_| deep(0));
    println!("unreachable: {v}");
}

#[test]
#[ignore = "helper: run in a child process by thread_overflow_is_still_reported"]
fn overflow_a_thread() {
    // A fiber stack first, so the fiber handler is installed in front of Rust's.
    let _stack = Stack::new(64 * 1024).unwrap();
    let t = std::thread::Builder::new()
        .name("deep".into())
        .stack_size(256 * 1024)
        .spawn(|| deep(0))
        .unwrap();
    println!("unreachable: {:?}", t.join());
}

#[test]
fn fiber_overflow_is_reported() {
    let (signal, stderr) = child("overflow_a_fiber");
    assert_eq!(signal, Some(libc::SIGABRT), "stderr: {stderr}");
    assert!(
        stderr.contains("stealbench: a fiber overflowed its stack"),
        "stderr: {stderr}"
    );
}

#[test]
fn thread_overflow_is_still_reported() {
    let (signal, stderr) = child("overflow_a_thread");
    assert_eq!(signal, Some(libc::SIGABRT), "stderr: {stderr}");
    // Rust's message, e.g. "thread 'deep' (1234) has overflowed its stack".
    assert!(
        stderr.contains("thread 'deep'") && stderr.contains("has overflowed its stack"),
        "stderr: {stderr}"
    );
    assert!(!stderr.contains("stealbench: a fiber"), "stderr: {stderr}");
}
