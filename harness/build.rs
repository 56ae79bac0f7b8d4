//! Build script: records the rustc version, the rustc flags and the git commit the harness was
//! built from, for `meta.json`. The version and the commit are "unknown" when they cannot be
//! read (no git, a source tarball); the flags are empty when there are none.

use std::path::Path;
use std::process::Command;

fn output(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = output(&rustc, &["--version"]).unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=STEALBENCH_RUSTC_VERSION={version}");

    // The flags cargo passes to rustc (`.cargo/config.toml` or RUSTFLAGS), space-separated.
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let flags = flags.split('\x1f').collect::<Vec<_>>().join(" ");
    println!("cargo:rustc-env=STEALBENCH_RUSTFLAGS={}", flags.trim());

    let commit = output("git", &["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=STEALBENCH_GIT_COMMIT={commit}");

    // Rebuild when HEAD moves: the worktree's HEAD file, the branch it points at, packed refs.
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(branch) = output("git", &["symbolic-ref", "-q", "HEAD"]) {
        watched.push(branch);
    }
    for name in watched {
        if let Some(path) = output(
            "git",
            &["rev-parse", "--path-format=absolute", "--git-path", &name],
        ) {
            if Path::new(&path).exists() {
                println!("cargo:rerun-if-changed={path}");
            }
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
}
