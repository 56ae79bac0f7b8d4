// The C ABI through which `stealbench_schedulers::tbb::ffi` drives Intel oneTBB.
//
// A task crosses the boundary as a function pointer and a context pointer (`sb_task`, `ctx`).
// The Rust side guarantees that no task unwinds (its trampolines catch every panic), so no
// C++ exception ever meets a Rust frame. Every function here is `noexcept`: should oneTBB
// itself throw (out of memory), the process terminates instead of unwinding into Rust.
//
// Build: C++17, linked with -ltbb (see ../build.rs).

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <oneapi/tbb/task_scheduler_observer.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <thread>

extern "C" {
typedef void (*sb_task)(void *ctx);
typedef void (*sb_observe_fn)(void *ctx, int thread_index);
}

namespace {

// oneTBB's worker soft limit (`max_allowed_parallelism` - 1) defaults to the number of CPUs
// minus one, and is the *minimum* over every live `global_control` of that kind. An arena of
// more threads than CPUs (or two arenas at once) would silently get fewer workers than it
// asks for. So one process-wide control is kept at least at the sum of the threads of every
// live arena (and at least at the CPU count), raised when needed and never lowered (oneTBB
// keeps its workers in its pool anyway). The control is leaked on purpose: destroying it at
// process exit would race oneTBB's own teardown.
std::mutex parallelism_lock;
std::size_t live_threads = 0;
std::size_t parallelism_value = 0;
tbb::global_control *parallelism_control = nullptr;

void reserve_parallelism(std::size_t threads) {
    std::lock_guard<std::mutex> guard(parallelism_lock);
    live_threads += threads;
    std::size_t hw = std::max<std::size_t>(std::thread::hardware_concurrency(), 1);
    std::size_t want = std::max(live_threads, hw);
    if (want > parallelism_value) {
        // The new control is made before the old one goes: the minimum of the two is the old
        // value until the old one is deleted, so the limit never dips.
        auto *next = new tbb::global_control(tbb::global_control::max_allowed_parallelism, want);
        delete parallelism_control;
        parallelism_control = next;
        parallelism_value = want;
    }
}

void release_parallelism(std::size_t threads) {
    std::lock_guard<std::mutex> guard(parallelism_lock);
    live_threads -= threads;
}

// Calls the Rust callback on every entry of a thread into the arena (workers and the external
// thread of `execute` alike).
class Observer final : public tbb::task_scheduler_observer {
public:
    Observer(tbb::task_arena &arena, sb_observe_fn fn, void *ctx)
        : tbb::task_scheduler_observer(arena), fn_(fn), ctx_(ctx) {
        observe(true);
    }
    // Observation stops (and waits for callbacks in flight) before the members go.
    ~Observer() override { observe(false); }
    void on_scheduler_entry(bool) override {
        fn_(ctx_, tbb::this_task_arena::current_thread_index());
    }

private:
    sb_observe_fn fn_;
    void *ctx_;
};

struct Arena {
    std::size_t threads;
    // Held alive with the arena: the stack size of the workers oneTBB starts from now on.
    tbb::global_control stack;
    tbb::task_arena arena;
    // Declared after `arena`, so destroyed (observation stopped) before it.
    std::unique_ptr<Observer> observer;

    Arena(int threads_, std::size_t stack_bytes)
        : threads(static_cast<std::size_t>(threads_)),
          stack(tbb::global_control::thread_stack_size, stack_bytes),
          // One slot reserved for an external thread: the caller of `execute` is one of the
          // `threads`, and oneTBB adds `threads - 1` workers.
          arena(threads_, 1) {}
};

// The same pattern as `sb_tbb_join`, written directly in C++: `fib(n - 2)` is run on the
// group (spawned), `fib(n - 1)` inline, then the group is waited for.
std::uint64_t fib_native(std::uint64_t n) {
    if (n < 2) {
        return n;
    }
    std::uint64_t a = 0;
    std::uint64_t b = 0;
    tbb::task_group g;
    g.run([&b, n] { b = fib_native(n - 2); });
    a = fib_native(n - 1);
    g.wait();
    return a + b;
}

} // namespace

extern "C" {

// A task arena of exactly `threads` threads, the calling thread of `sb_tbb_arena_execute` being
// one of them; worker threads that oneTBB starts while it lives get `stack_bytes` of stack.
// Null if `threads` < 1 or on failure.
void *sb_tbb_arena_new(int threads, std::size_t stack_bytes) noexcept {
    if (threads < 1) {
        return nullptr;
    }
    try {
        reserve_parallelism(static_cast<std::size_t>(threads));
        try {
            auto *a = new Arena(threads, stack_bytes);
            // Started now, so oneTBB's thread pool sees this arena's stack size if it starts.
            a->arena.initialize();
            return a;
        } catch (...) {
            release_parallelism(static_cast<std::size_t>(threads));
            return nullptr;
        }
    } catch (...) {
        return nullptr;
    }
}

// Stops the observer (if any), terminates and frees the arena. No task may be running in it.
void sb_tbb_arena_free(void *arena) noexcept {
    auto *a = static_cast<Arena *>(arena);
    std::size_t threads = a->threads;
    delete a;
    release_parallelism(threads);
}

// Runs `task(ctx)` inside the arena and returns when it has returned. The calling thread joins
// the arena if a slot is free (the reserved one, normally) and runs it; otherwise oneTBB hands
// it to a thread of the arena and the caller blocks.
void sb_tbb_arena_execute(void *arena, sb_task task, void *ctx) noexcept {
    static_cast<Arena *>(arena)->arena.execute([task, ctx] { task(ctx); });
}

// Calls `fn(ctx, slot)` each time a thread enters the arena (a worker joining it, the external
// thread of an `execute`); `slot` is its index in the arena (0 .. threads-1). Replaces a
// previous observer of this arena (stopping it first). Returns 0, or -1 on failure.
int sb_tbb_observe(void *arena, sb_observe_fn fn, void *ctx) noexcept {
    auto *a = static_cast<Arena *>(arena);
    try {
        a->observer.reset();
        a->observer = std::make_unique<Observer>(a->arena, fn, ctx);
        return 0;
    } catch (...) {
        return -1;
    }
}

// Stops the arena's observer, if any, waiting for callbacks in flight.
void sb_tbb_unobserve(void *arena) noexcept { static_cast<Arena *>(arena)->observer.reset(); }

// The arena's maximum concurrency as oneTBB reports it.
int sb_tbb_max_concurrency(void *arena) noexcept {
    return static_cast<Arena *>(arena)->arena.max_concurrency();
}

// The calling thread's slot in its current arena, or -1 outside any arena.
int sb_tbb_current_index(void) noexcept {
    int idx = tbb::this_task_arena::current_thread_index();
    return idx < 0 ? -1 : idx;
}

// Fork-join as a oneTBB program writes it: one `task_group`, `b` run on it (spawned: pushed on
// the calling thread's deque, where a thief may take it), `a` inline, then `wait`. On one
// thread the spawned `b` runs only at the `wait`, so the serial order is `a` then `b`.
void sb_tbb_join(sb_task a, void *actx, sb_task b, void *bctx) noexcept {
    tbb::task_group g;
    g.run([b, bctx] { b(bctx); });
    a(actx);
    g.wait();
}

// A heap `task_group` for a scope; null on failure.
void *sb_tbb_group_new(void) noexcept {
    try {
        return new tbb::task_group();
    } catch (...) {
        return nullptr;
    }
}

// Spawns `task(ctx)` on the group (callable from any thread, tasks of the group included).
void sb_tbb_group_run(void *group, sb_task task, void *ctx) noexcept {
    static_cast<tbb::task_group *>(group)->run([task, ctx] { task(ctx); });
}

// Waits for every task run on the group, running tasks meanwhile.
void sb_tbb_group_wait(void *group) noexcept { static_cast<tbb::task_group *>(group)->wait(); }

// Waits for the group (a no-op if already waited for) and frees it.
void sb_tbb_group_free(void *group) noexcept {
    auto *g = static_cast<tbb::task_group *>(group);
    g->wait();
    delete g;
}

// fib(n) in the arena, written directly on oneTBB (no Rust in the loop): the baseline of the
// boundary's cost.
std::uint64_t sb_tbb_fib_native(void *arena, std::uint64_t n) noexcept {
    std::uint64_t out = 0;
    static_cast<Arena *>(arena)->arena.execute([&out, n] { out = fib_native(n); });
    return out;
}

} // extern "C"
