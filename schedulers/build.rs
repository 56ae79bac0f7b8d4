//! Builds the C++ shims of the optional baseline runtimes, each only when its feature is on:
//!
//! * `tbb`: `shim/tbb.cpp` with the C++ compiler the `cc` crate picks (`CXX`, else `c++`),
//!   linked with oneTBB (`pkg-config --libs tbb`, else `-ltbb`). Debian: `libtbb-dev`, `g++`.
//! * `openmp`: `shim/openmp.cpp` with clang++ and `-fopenmp=libomp`, linked with LLVM's
//!   libomp (`-lomp`), never GCC's libgomp. Debian: `clang`, `libomp-dev`. Without clang++, the
//!   `cc` crate's GNU compiler with `-fopenmp` is used instead (its `GOMP_*` calls are
//!   implemented by libomp too), still linked with libomp only. `STEALBENCH_OMP_CXX` names
//!   the compiler explicitly.
//!
//! Without either feature this script does nothing, and needs no system package.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    #[cfg(feature = "tbb")]
    shim::tbb();
    #[cfg(feature = "openmp")]
    shim::openmp();
}

#[cfg(any(feature = "tbb", feature = "openmp"))]
mod shim {
    use std::path::{Path, PathBuf};
    use std::process::Command;

    /// Stops the build with one message naming what is missing and the Debian packages that
    /// provide it.
    fn fail(feature: &str, what: &str, packages: &str) -> ! {
        panic!(
            "\n\nstealbench-schedulers: the `{feature}` feature cannot be built: {what}\n\
             On Debian/Ubuntu: apt-get install {packages}\n\
             (or build without `--features {feature}`).\n\n"
        );
    }

    /// The output of `cmd args`, if it ran and succeeded.
    fn output(cmd: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Option<String> {
        let out = Command::new(cmd).args(args).output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// Links `lib` through a folder of `OUT_DIR` that holds only a link to `file`, so no other
    /// library of `file`'s folder joins the link search path.
    #[cfg(feature = "openmp")]
    fn link_exactly(lib: &str, file: &Path) {
        let dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"))
            .join(format!("link-{lib}"));
        std::fs::create_dir_all(&dir).expect("create the link folder");
        let link = dir.join(format!("lib{lib}.so"));
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(file, &link).expect("link the library");
        println!("cargo::rustc-link-search=native={}", dir.display());
        println!("cargo::rustc-link-lib=dylib={lib}");
    }

    /// Where `compiler` finds `file` in its library search path, if it does.
    fn find_with(compiler: &Path, file: &str) -> Option<PathBuf> {
        let p = PathBuf::from(output(compiler, &[&format!("-print-file-name={file}")])?);
        (p.is_absolute() && p.exists()).then_some(p)
    }

    #[cfg(feature = "tbb")]
    pub fn tbb() {
        const PKGS: &str = "libtbb-dev g++";
        println!("cargo::rerun-if-changed=shim/tbb.cpp");
        let mut build = cc::Build::new();
        build
            .cpp(true)
            .std("c++17")
            .warnings(true)
            .file("shim/tbb.cpp");
        let compiler = match build.try_get_compiler() {
            Ok(c) if output(c.path(), &["--version"]).is_some() => c,
            _ => fail(
                "tbb",
                "no C++ compiler found (set CXX, or install one)",
                PKGS,
            ),
        };
        // pkg-config's flags if it knows oneTBB, else -ltbb wherever the compiler finds it.
        let pkg = output("pkg-config", &["--cflags", "--libs", "tbb"]);
        if let Some(flags) = &pkg {
            for f in flags.split_whitespace() {
                if let Some(dir) = f.strip_prefix("-I") {
                    build.include(dir);
                } else if let Some(dir) = f.strip_prefix("-L") {
                    println!("cargo::rustc-link-search=native={dir}");
                } else if let Some(lib) = f.strip_prefix("-l") {
                    println!("cargo::rustc-link-lib=dylib={lib}");
                }
            }
        } else if find_with(compiler.path(), "libtbb.so").is_none() {
            fail(
                "tbb",
                "oneTBB's library (libtbb.so) was not found (no pkg-config file `tbb`, and the \
                 C++ compiler does not find it)",
                PKGS,
            );
        } else {
            println!("cargo::rustc-link-lib=dylib=tbb");
        }
        if let Err(e) = build.try_compile("sb_tbb_shim") {
            fail(
                "tbb",
                &format!("shim/tbb.cpp did not compile against oneTBB ({e})"),
                PKGS,
            );
        }
    }

    /// The compiler for the OpenMP shim and whether it is clang: `STEALBENCH_OMP_CXX`, else the
    /// first clang++ found, else the `cc` crate's C++ compiler if it is GNU.
    #[cfg(feature = "openmp")]
    fn omp_compiler(pkgs: &str) -> (PathBuf, bool) {
        println!("cargo::rerun-if-env-changed=STEALBENCH_OMP_CXX");
        let is_clang = |c: &Path| {
            output(c, &["--version"]).is_some_and(|v| v.to_lowercase().contains("clang"))
        };
        if let Some(c) = std::env::var_os("STEALBENCH_OMP_CXX") {
            let c = PathBuf::from(c);
            if output(&c, &["--version"]).is_none() {
                fail(
                    "openmp",
                    &format!("STEALBENCH_OMP_CXX={} does not run", c.display()),
                    pkgs,
                );
            }
            let clang = is_clang(&c);
            return (c, clang);
        }
        let versions = (14..=22).rev().map(|v| format!("clang++-{v}"));
        for c in std::iter::once("clang++".to_owned()).chain(versions) {
            let c = PathBuf::from(c);
            if is_clang(&c) {
                return (c, true);
            }
        }
        match cc::Build::new().cpp(true).try_get_compiler() {
            Ok(t) if t.is_like_gnu() && !t.is_like_clang() => {
                println!(
                    "cargo::warning=no clang++ found: the OpenMP shim is compiled by {} with \
                     -fopenmp (GOMP entry points) and linked with LLVM's libomp",
                    t.path().display()
                );
                (t.path().to_owned(), false)
            }
            _ => fail("openmp", "no clang++ (nor g++) found", pkgs),
        }
    }

    /// LLVM's `libomp.so`: where the compiler finds it, else beside clang's resource folder,
    /// else `llvm-config --libdir`, else any `/usr/lib/llvm-*/lib`, newest first.
    #[cfg(feature = "openmp")]
    fn find_libomp(compiler: &Path, clang: bool) -> Option<PathBuf> {
        if let Some(p) = find_with(compiler, "libomp.so") {
            return Some(p);
        }
        let mut dirs: Vec<PathBuf> = Vec::new();
        // clang's resource folder is <prefix>/lib/clang/<version>: libomp is in <prefix>/lib.
        let resource = clang
            .then(|| output(compiler, &["-print-resource-dir"]))
            .flatten();
        if let Some(lib) = resource
            .as_deref()
            .map(Path::new)
            .and_then(Path::parent)
            .and_then(Path::parent)
        {
            dirs.push(lib.to_owned());
        }
        if let Some(d) = output("llvm-config", &["--libdir"]) {
            dirs.push(d.into());
        }
        if let Ok(rd) = std::fs::read_dir("/usr/lib") {
            let mut llvm: Vec<PathBuf> = rd
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("llvm-"))
                })
                .map(|p| p.join("lib"))
                .collect();
            llvm.sort_by_key(|p| {
                let name = p
                    .parent()
                    .and_then(Path::file_name)
                    .map(|n| n.to_string_lossy().into_owned());
                std::cmp::Reverse(name.and_then(|n| n["llvm-".len()..].parse::<u32>().ok()))
            });
            dirs.extend(llvm);
        }
        dirs.into_iter()
            .map(|d| d.join("libomp.so"))
            .find(|p| p.exists())
    }

    #[cfg(feature = "openmp")]
    pub fn openmp() {
        const PKGS: &str = "clang libomp-dev";
        println!("cargo::rerun-if-changed=shim/openmp.cpp");
        let (compiler, clang) = omp_compiler(PKGS);
        let Some(libomp) = find_libomp(&compiler, clang) else {
            fail(
                "openmp",
                "LLVM's OpenMP runtime (libomp.so) was not found",
                PKGS,
            );
        };
        let mut build = cc::Build::new();
        build
            .cpp(true)
            .std("c++17")
            .warnings(true)
            .compiler(&compiler)
            .flag(if clang { "-fopenmp=libomp" } else { "-fopenmp" })
            .file("shim/openmp.cpp");
        if let Err(e) = build.try_compile("sb_omp_shim") {
            fail(
                "openmp",
                &format!(
                    "shim/openmp.cpp did not compile with {} and OpenMP ({e})",
                    compiler.display()
                ),
                PKGS,
            );
        }
        link_exactly("omp", &libomp);
    }
}
