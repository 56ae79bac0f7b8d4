//! Build script: records the rustc version, the rustc flags and the git commit the harness was
//! built from, for `meta.json`. The version and the commit are "unknown" when they cannot be
//! read (no git, a source tarball); the flags are empty when there are none. A commit whose
//! tracked files were changed in the work tree gets the suffix `-dirty` (as `git describe
//! --dirty`): results of a build from uncommitted code do not claim a commit's code.

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

    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut commit = output("git", &["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".to_string());
    let root_arg = root.to_string_lossy().into_owned();
    let changes = output(
        "git",
        &[
            "-C",
            &root_arg,
            "status",
            "--porcelain",
            "--untracked-files=no",
        ],
    );
    if commit != "unknown" && changes.is_some() {
        commit.push_str("-dirty");
    }
    println!("cargo:rustc-env=STEALBENCH_GIT_COMMIT={commit}");

    // Check again when the workspace's sources change (directories: any file in them).
    for dir in [
        "schedulers",
        "workloads",
        "harness",
        "src",
        "Cargo.toml",
        "Cargo.lock",
    ] {
        let path = root.join(dir);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    // Rebuild when HEAD moves or the index changes: the worktree's HEAD file, the branch it
    // points at, packed refs, the index.
    let mut watched = vec![
        "HEAD".to_string(),
        "packed-refs".to_string(),
        "index".to_string(),
    ];
    if let Some(branch) = output("git", &["symbolic-ref", "-q", "HEAD"]) {
        watched.push(branch);
    }
    for name in watched {
        if let Some(path) = output(
            "git",
            &["rev-parse", "--path-format=absolute", "--git-path", &name],
        ) && Path::new(&path).exists()
        {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
}
