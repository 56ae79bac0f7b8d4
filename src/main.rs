//! `stealbench`: the command-line entry point. Everything but the choice of allocator lives in
//! the `stealbench-harness` crate; run `stealbench --help` for the commands.

#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// The allocator this binary was built with, recorded in every result's `meta.json`.
const ALLOCATOR: &str = if cfg!(feature = "jemalloc") {
    "jemalloc"
} else {
    "system"
};

fn main() {
    std::process::exit(stealbench_harness::main(ALLOCATOR));
}
