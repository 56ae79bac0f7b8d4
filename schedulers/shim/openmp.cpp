// The C ABI through which `stealbench_schedulers::openmp::ffi` drives LLVM's OpenMP runtime
// (libomp).
//
// Compiled with clang++ -fopenmp=libomp (or, failing clang, with the C++ compiler's -fopenmp,
// whose GOMP_* entry points libomp also implements) and linked with -lomp, never GCC's
// libgomp (see ../build.rs). A task crosses the boundary as a function pointer and a context
// pointer (`sb_task`, `ctx`); the Rust side guarantees that no task unwinds.
//
// libomp is one runtime per process: one thread pool, one set of settings read from the
// environment (OMP_*, KMP_*) when it initialises, i.e. at the first OpenMP call of the
// process.

#include <omp.h>

#include <cstddef>
#include <cstdint>

#if !defined(_OPENMP)
#error "openmp.cpp must be compiled with OpenMP enabled (-fopenmp=libomp)"
#endif

extern "C" {
typedef void (*sb_task)(void *ctx);
typedef void (*sb_observe_fn)(void *ctx, int thread_num);

#if !defined(KMP_VERSION_MAJOR)
// libomp's extensions, which GCC's omp.h does not declare (libomp exports them).
void kmp_set_blocktime(int);
int kmp_get_blocktime(void);
void kmp_set_stacksize_s(std::size_t);
std::size_t kmp_get_stacksize_s(void);
#endif
}

namespace {

// The same pattern as `sb_omp_join`, written directly in C++: `fib(n - 1)` as an untied task,
// `fib(n - 2)` inline, then a taskwait.
std::uint64_t fib_native(std::uint64_t n) {
    if (n < 2) {
        return n;
    }
    std::uint64_t a = 0;
    std::uint64_t b = 0;
#pragma omp task untied shared(a) firstprivate(n)
    a = fib_native(n - 1);
    b = fib_native(n - 2);
#pragma omp taskwait
    return a + b;
}

// One parallel region of `threads` threads: each thread first calls `entry` (if any) with its
// thread number, then one of them runs `root` in a `single`; the others wait at the implicit
// barrier of the `single`, which is a task scheduling point: they run the region's tasks.
// Returns the team's size as seen inside the region.
int run_region(int threads, sb_observe_fn entry, void *ectx, sb_task root, void *ctx) {
    // Exactly the threads asked for: no dynamic adjustment of the team (an ICV of the calling
    // thread, so set for each run).
    omp_set_dynamic(0);
    int team = 0;
#pragma omp parallel num_threads(threads)
    {
        if (entry != nullptr) {
            entry(ectx, omp_get_thread_num());
        }
#pragma omp single
        {
            team = omp_get_num_threads();
            root(ctx);
        }
    }
    return team;
}

} // namespace

extern "C" {

// One parallel region of `threads` threads running `root(ctx)` in a `single`; returns
// omp_get_num_threads() as seen in the region (1 if called where nested parallelism is off).
int sb_omp_run(int threads, sb_task root, void *ctx) noexcept {
    return run_region(threads, nullptr, nullptr, root, ctx);
}

// As `sb_omp_run`, and every thread of the team calls `entry(ectx, thread_num)` on entering
// the region, before any task (to count threads, or to pin the calling thread).
int sb_omp_run_observed(int threads, sb_observe_fn entry, void *ectx, sb_task root,
                        void *ctx) noexcept {
    return run_region(threads, entry, ectx, root, ctx);
}

// Fork-join as an OpenMP program writes it: `a` as an untied task, `b` inline, taskwait. The
// task is `a`, not `b`: libomp runs a task at once, at its creation, whenever it is not
// deferred (a team of one thread, a full deque), so spawning `a` keeps the serial order `a`
// then `b` in every such case. In a team of several threads `a` is deferred (stealable) and
// `b` runs first on this thread.
void sb_omp_join(sb_task a, void *actx, sb_task b, void *bctx) noexcept {
#pragma omp task untied firstprivate(a, actx)
    a(actx);
    b(bctx);
#pragma omp taskwait
}

// `task(ctx)` as an untied task, a child of the current task.
void sb_omp_spawn(sb_task task, void *ctx) noexcept {
#pragma omp task untied firstprivate(task, ctx)
    task(ctx);
}

// Waits for the current task's child tasks (not their descendants).
void sb_omp_taskwait(void) noexcept {
#pragma omp taskwait
}

// A task scheduling point: the thread may run a queued task.
void sb_omp_taskyield(void) noexcept {
#pragma omp taskyield
}

// Runs `body(ctx)` in a taskgroup: returns when every task created in it, and every
// descendant of those, has finished.
void sb_omp_taskgroup(sb_task body, void *ctx) noexcept {
#pragma omp taskgroup
    {
        body(ctx);
    }
}

// omp_get_thread_num(): the calling thread's number in its innermost team (0 outside).
int sb_omp_thread_num(void) noexcept { return omp_get_thread_num(); }

// omp_get_num_threads(): the size of the calling thread's innermost team (1 outside).
int sb_omp_num_threads(void) noexcept { return omp_get_num_threads(); }

// omp_in_parallel().
int sb_omp_in_parallel(void) noexcept { return omp_in_parallel(); }

// omp_set_dynamic(flag) for the calling thread (`sb_omp_run` sets 0 itself).
void sb_omp_set_dynamic(int flag) noexcept { omp_set_dynamic(flag); }

// omp_get_max_threads().
int sb_omp_max_threads(void) noexcept { return omp_get_max_threads(); }

// kmp_set_blocktime(ms): how long a thread of the teams this thread forks from now on spins
// before it sleeps when it runs out of work (libomp's default 200 ms; 0 sleeps at once).
void sb_omp_set_blocktime(int ms) noexcept { kmp_set_blocktime(ms); }

// kmp_get_blocktime(): the blocktime in force for the calling thread, in ms.
int sb_omp_get_blocktime(void) noexcept { return kmp_get_blocktime(); }

// kmp_set_stacksize_s(bytes): the stack size of libomp's worker threads. libomp takes it only
// before its first parallel region; returns the size in force afterwards (so the caller can
// tell whether it took).
std::size_t sb_omp_set_stacksize(std::size_t bytes) noexcept {
    kmp_set_stacksize_s(bytes);
    return kmp_get_stacksize_s();
}

// kmp_get_stacksize_s().
std::size_t sb_omp_get_stacksize(void) noexcept { return kmp_get_stacksize_s(); }

// fib(n) in a region of `threads` threads, written directly on OpenMP (no Rust in the loop):
// the baseline of the boundary's cost.
std::uint64_t sb_omp_fib_native(int threads, std::uint64_t n) noexcept {
    std::uint64_t out = 0;
    omp_set_dynamic(0);
#pragma omp parallel num_threads(threads)
    {
#pragma omp single
        out = fib_native(n);
    }
    return out;
}

} // extern "C"
