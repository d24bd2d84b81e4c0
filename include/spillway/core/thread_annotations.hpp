#pragma once
/// @file
/// Clang thread-safety annotations. g++ ignores them; the `clang-tsa` build
/// preset compiles the libraries with `-Wthread-safety -Werror` so that a field
/// read without its lock fails the build.
///
/// Vocabulary (see clang's "Thread Safety Analysis" documentation):
/// - `SPILLWAY_CAPABILITY("mutex")` marks a class as a lock.
/// - `SPILLWAY_SCOPED_CAPABILITY` marks an RAII class that holds a lock.
/// - `SPILLWAY_GUARDED_BY(mu_)` on a field: read and written only with `mu_` held.
/// - `SPILLWAY_PT_GUARDED_BY(mu_)` on a pointer: the pointee is guarded.
/// - `SPILLWAY_REQUIRES(mu_)` on a function: the caller holds `mu_`.
/// - `SPILLWAY_ACQUIRED_AFTER(mu_)` on a lock: lock order.
/// - `SPILLWAY_ACQUIRE(...)`, `SPILLWAY_RELEASE(...)` and their `_SHARED` forms
///   on functions that take or drop a lock; `SPILLWAY_TRY_ACQUIRE(ok, ...)` on
///   one that takes it when it returns `ok`.
/// - `SPILLWAY_NO_THREAD_SAFETY_ANALYSIS` on a function the analysis cannot
///   follow.

#if defined(__clang__)
#define SPILLWAY_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define SPILLWAY_THREAD_ANNOTATION(x)
#endif

#define SPILLWAY_CAPABILITY(x) SPILLWAY_THREAD_ANNOTATION(capability(x))
#define SPILLWAY_SCOPED_CAPABILITY SPILLWAY_THREAD_ANNOTATION(scoped_lockable)
#define SPILLWAY_GUARDED_BY(x) SPILLWAY_THREAD_ANNOTATION(guarded_by(x))
#define SPILLWAY_PT_GUARDED_BY(x) SPILLWAY_THREAD_ANNOTATION(pt_guarded_by(x))
#define SPILLWAY_ACQUIRED_AFTER(...) SPILLWAY_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define SPILLWAY_REQUIRES(...) SPILLWAY_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define SPILLWAY_ACQUIRE(...) SPILLWAY_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define SPILLWAY_ACQUIRE_SHARED(...) \
    SPILLWAY_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define SPILLWAY_RELEASE(...) SPILLWAY_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define SPILLWAY_RELEASE_SHARED(...) \
    SPILLWAY_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define SPILLWAY_TRY_ACQUIRE(...) SPILLWAY_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define SPILLWAY_NO_THREAD_SAFETY_ANALYSIS SPILLWAY_THREAD_ANNOTATION(no_thread_safety_analysis)
