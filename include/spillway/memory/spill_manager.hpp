#pragma once
/// @file
/// The spill functions registered by owners of spillable buffers, and the
/// manager that calls them, from many threads at once, when HOST memory runs
/// short.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <thread>

#include <spillway/core/mutex.hpp>
#include <spillway/core/statistics.hpp>

namespace spillway::memory {

class BufferResource;

/// How `SpillManager::spill` admits concurrent callers.
enum class SpillMode {
    /// Callers share the registry and run different spill functions at the
    /// same time. The mode for everything but measurements.
    concurrent,
    /// One caller at a time, under one exclusive lock, as before concurrent
    /// spilling existed. Only for benchmarks that measure what concurrency
    /// gains; no option selects it.
    serialized,
};

/// Whether calls of one spill function may overlap.
enum class SpillConcurrency {
    /// One caller at a time: other callers skip the function while it runs
    /// and revisit it at the end. The default, for functions that are not
    /// thread-safe.
    exclusive,
    /// Every caller that reaches the function runs it, alongside the others.
    /// For thread-safe functions whose concurrent calls free different
    /// buffers, such as `SpillableStore`'s: several threads short of memory
    /// then write several of its buffers at once, instead of all but one
    /// passing on to functions of lower priority.
    shared,
};

/// Whether a spill function tells its manager what it is about to free.
enum class SpillAnnouncement {
    /// It does not: the manager learns what a call freed when it returns.
    none,
    /// Every call, once it has chosen its victims and before it writes them,
    /// calls `SpillManager::announce_victims` with their bytes (or returns
    /// without calling it). `spill_to_make_headroom` callers hold back their
    /// claims until then, and count bytes announced beyond a claim as being
    /// spilled already, so that callers that each ask for less than one
    /// victim holds do not each spill a victim of their own.
    victims,
};

/// Calls the registered spill functions, in priority order, to free HOST
/// memory, and keeps HOST within its limit.
///
/// A spill function is `std::size_t(std::size_t amount)`: asked to spill
/// `amount` bytes, it moves buffers out of HOST memory and returns how many
/// bytes of HOST it freed (fewer when it has no more, more when its buffers
/// are larger than asked for). The bytes must have left HOST when it returns:
/// `spill_to_make_headroom` judges progress by what the resource saw
/// released, and counts a spill that reported bytes while no HOST byte of the
/// resource was released meanwhile as having freed nothing (so it ends
/// instead of asking again forever). Each such report is counted in
/// `memory.spill.unfreed_reports`, and the first one logs a warning.
///
/// **Callers run concurrently.** `spill` holds the registry shared, so many
/// threads spill at once. Each function registered
/// `SpillConcurrency::exclusive` (the default) has a busy flag: a caller skips
/// a function another caller is running and goes on in priority order; if it is
/// still short after that pass, it revisits the skipped functions, waiting for
/// each to be free, so a caller never spills less than it would have alone. A
/// function registered `SpillConcurrency::shared` is never skipped: every
/// caller runs it.
///
/// **Headroom is claimed, not duplicated.** `spill_to_make_headroom` counts
/// the bytes other callers are already spilling toward its target, so N
/// threads that find HOST short at once spill the shortfall once, not N
/// times; and it returns only once the headroom is really there (or nothing
/// more can be spilled), so no caller relies on a promise another caller
/// failed to keep. `BufferResource::reserve_and_spill` callers claim at most
/// their own request at a time, so several of them spill in parallel. While
/// one caller's functions registered `SpillAnnouncement::victims` choose their
/// victims, no other caller claims (choosing is quick; the writing stays
/// parallel), and what they announce beyond the claim counts as being
/// spilled: so callers whose requests are smaller than the victims spill
/// about the fewest victims that cover them, not one victim each.
///
/// **Registry changes drain.** `add_spill_function` and
/// `remove_spill_function` take the registry exclusively, waiting for every
/// `spill` in progress. When `remove_spill_function` returns, the function is
/// running nowhere and will never be called again, so its owner can tear down
/// the state it uses. A pending registry change holds back new `spill` calls,
/// so a stream of spills cannot starve it.
///
/// **A periodic thread** (when the interval is positive) calls
/// `spill_to_make_headroom(spill_headroom + waiting)` every interval, where
/// `waiting` is what `BufferResource::reserve_or_wait` callers wait for, so
/// HOST goes back under its limit after overbooking even if nobody asks, and
/// room is made for waiting requests once anything can be spilled. Its errors are
/// logged and counted in `memory.spill.periodic_errors`.
///
/// Statistics: `memory.spill.bytes` (the bytes each `spill` reported freed),
/// `memory.spill.seconds` and `memory.spill.unfreed_reports` (above).
///
/// Thread safety: every member function may be called concurrently.
///
/// Callbacks: a spill function runs on the thread that called `spill` (or the
/// periodic thread), with the registry held shared and no other lock of the
/// manager or the resource. It may call `announce_victims`, which takes the
/// manager's headroom lock briefly, so it must not hold the resource's
/// accounting lock then (nothing outside the resource can). Two calls of one
/// exclusive function never overlap; calls of a shared function, and of
/// different functions, do. A spill function
/// may reserve, make, move and free buffers, but must not spill through any
/// manager, its own or another's: `spill`, `spill_to_make_headroom`, and a
/// `BufferResource::reserve_and_spill` that finds HOST over its limit, throw
/// `InvalidArgument` when called from inside a spill function of any manager
/// (on its own manager the call would wait for itself; two managers whose
/// functions spilled each other, on one thread or two, would wait for each
/// other). Nor may it call `add_spill_function` or `remove_spill_function` of
/// its own manager, which would wait for itself and throw `InvalidArgument`
/// instead; it may call those of another manager.
///
/// Lifetime: owned by a `BufferResource`. Every function must be removed
/// before the resource is destroyed; the manager aborts with a message
/// otherwise.
class SpillManager {
  public:
    /// Frees up to about `amount` bytes of HOST memory; returns the bytes freed.
    using SpillFunction = std::function<std::size_t(std::size_t amount)>;
    /// Names a registered spill function.
    using SpillFunctionId = std::uint64_t;

    /// What `spill_to_make_headroom` achieved.
    struct HeadroomResult {
        /// Bytes this call's spills reported freed, but none of a spill that
        /// reported bytes while no HOST byte was released.
        std::size_t spilled = 0;
        bool reached = false;     ///< whether the headroom was seen available
    };

    /// Stops the periodic thread, waiting for a spill it is running.
    /// Requires: no spill function is registered; aborts otherwise.
    ~SpillManager();
    SpillManager(SpillManager const&) = delete;
    SpillManager& operator=(SpillManager const&) = delete;

    /// Registers `function` with `priority`: higher priorities are asked
    /// first, equal ones in the order they were added. `concurrency` says
    /// whether its calls may overlap. Waits for every `spill` in progress.
    /// `announcement` says whether its calls announce their victims.
    /// Returns the id to remove it with.
    /// @throws InvalidArgument if `function` is empty, or if called from
    ///         inside a spill function of this manager.
    SpillFunctionId add_spill_function(
        SpillFunction function, int priority, SpillConcurrency concurrency = SpillConcurrency::exclusive,
        SpillAnnouncement announcement = SpillAnnouncement::none
    );

    /// Unregisters the function `id`. Waits for every `spill` in progress, so
    /// when it returns the function is running nowhere and is never called
    /// again.
    /// @throws InvalidArgument if `id` is not registered, or if called from
    ///         inside a spill function of this manager.
    void remove_spill_function(SpillFunctionId id);

    /// Asks the registered functions, highest priority first, to spill until
    /// `amount` bytes are freed or every function was asked; skips exclusive
    /// functions that other callers are running and revisits them at the end.
    /// Returns the bytes freed. Blocks while a registry change is pending and,
    /// in the revisit pass, while a skipped function is busy.
    /// @throws whatever a spill function throws; the spilling stops there, the
    ///         function stays registered and can be called again.
    /// @throws InvalidArgument if called from inside a spill function of any
    ///         manager.
    std::size_t spill(std::size_t amount);

    /// Spills until HOST has at least `headroom` bytes available, counting the
    /// bytes other callers are already spilling: claims only the part of the
    /// shortfall nobody is spilling yet, and waits for the others to finish
    /// before it checks again. Returns once the headroom was seen available
    /// (`reached`), or when its own last spill freed nothing and nobody else
    /// is spilling (not `reached`).
    /// @throws as `spill`.
    HeadroomResult spill_to_make_headroom(std::size_t headroom = 0);

    /// Tells the manager that the spill function running on this thread has
    /// chosen victims worth `bytes` of HOST and is about to free them. For
    /// functions registered `SpillAnnouncement::victims`; several calls in one
    /// spill add up. Does nothing unless this thread runs a spill function of
    /// this manager for `spill_to_make_headroom` (or `reserve_and_spill`), so
    /// a spill function may call it whoever calls the function. Takes the
    /// headroom lock briefly; never blocks otherwise.
    void announce_victims(std::size_t bytes);

    /// How `spill` admits concurrent callers.
    [[nodiscard]] SpillMode mode() const noexcept { return mode_; }

  private:
    friend class BufferResource;

    /// A manager for `resource`, which must outlive it. Starts the periodic
    /// thread if `interval` is positive.
    SpillManager(
        BufferResource& resource, Statistics& statistics, SpillMode mode,
        std::chrono::nanoseconds interval, std::size_t headroom
    );

    /// A registered function and whether a caller is running it.
    struct Registration {
        Registration(SpillFunction function_, SpillConcurrency concurrency_, SpillAnnouncement announcement_)
            : function(std::move(function_)), concurrency(concurrency_), announcement(announcement_) {}
        SpillFunction const function;
        SpillConcurrency const concurrency;
        SpillAnnouncement const announcement;
        /// For an exclusive function: set by the one caller that runs
        /// `function`, cleared when it returns. Atomic because callers holding
        /// the registry shared race to claim it. Unused for a shared one.
        std::atomic<bool> busy{false};
    };

    /// Orders the registry: higher priority first, then earlier registration.
    struct Order {
        int priority;
        SpillFunctionId id;
        bool operator<(Order const& other) const noexcept {
            return priority != other.priority ? priority > other.priority : id < other.id;
        }
    };

    /// One claim of `make_headroom` on the shortfall, while its spill runs.
    /// `bytes` is set before the claim is published in `in_flight_` and not
    /// changed after; the other fields are guarded by `headroom_mutex_`.
    struct Claim {
        std::size_t bytes = 0;      ///< claimed of the shortfall
        std::size_t announced = 0;  ///< victims announced by the functions it ran
        /// `announced` beyond `bytes`, counted in `in_flight_` besides `bytes`.
        std::size_t surplus = 0;
    };

    /// Whether a headroom target includes what `reserve_or_wait` callers
    /// wait for at each moment (the periodic thread's), or not.
    enum class Waiting { excluded, included };

    /// `spill_to_make_headroom(headroom)`, claiming at most `max_claim` bytes
    /// at a time: `BufferResource::reserve_and_spill` passes its request size,
    /// so that concurrent requesters each spill about their own need, in
    /// parallel, instead of the first one claiming all of it. With `waiting`
    /// included, the target is `headroom` plus `memory_waiting()` as it is
    /// whenever it is checked.
    HeadroomResult make_headroom(std::size_t headroom, std::size_t max_claim, Waiting waiting);
    /// @throws InvalidArgument naming `what` if this thread is inside a spill
    ///         function of any manager.
    static void reject_spill_inside_spill_function(char const* what);
    /// @throws InvalidArgument naming `what` if this thread is inside a spill
    ///         function of this manager.
    void reject_registry_change_inside_own_function(char const* what) const;
    /// Claims `registration` for the caller unless it is exclusive and
    /// another caller runs it; returns whether it did. A shared function is
    /// always claimed.
    static bool try_claim(Registration& registration) noexcept;
    /// Calls `registration`'s function, which the caller has claimed, then
    /// releases the claim and wakes callers waiting to revisit it.
    std::size_t run_claimed(Registration& registration, std::size_t amount);
    /// Blocks until the caller claims `registration`.
    void claim_when_idle(Registration& registration);
    /// Counts a spill that reported `reported` bytes while no HOST byte was
    /// released, and warns about the first one.
    void note_unfreed_report(std::size_t reported);
    /// Lets other callers claim again if `claim` is the one whose victims are
    /// being chosen, and wakes them.
    void stop_choosing(Claim const& claim);
    /// Takes `claim`'s bytes and surplus out of `in_flight_`, stops its
    /// choosing, and wakes the waiters.
    void release_claim(Claim const& claim) noexcept;
    /// The body of the periodic thread.
    void run_periodically(std::chrono::nanoseconds interval);

    // Constant after construction.
    BufferResource& resource_;
    Statistics& statistics_;
    SpillMode const mode_;
    std::size_t const periodic_headroom_;

    // Lock order (see docs/architecture.md): registry_gate_, then registry_;
    // spill functions then take their owners' locks; function_idle_mutex_ is
    // taken under registry_; headroom_mutex_ is taken with no other lock of
    // the manager held, or under registry_ alone (by a caller entering a spill
    // function, and by `announce_victims`); periodic_mutex_ is taken with no
    // other lock of the manager held.

    /// Held by `add_spill_function` and `remove_spill_function` while they
    /// wait for the registry; `spill` passes through it before taking the
    /// registry shared, so a pending change is not starved.
    Mutex registry_gate_;
    /// Shared by `spill` callers, exclusive for registry changes (and for
    /// `spill` in `SpillMode::serialized`).
    SharedMutex registry_ SPILLWAY_ACQUIRED_AFTER(registry_gate_);
    std::map<Order, Registration> functions_ SPILLWAY_GUARDED_BY(registry_);
    SpillFunctionId next_id_ SPILLWAY_GUARDED_BY(registry_) = 0;

    /// Wakes revisiting callers when a function's busy flag is cleared.
    Mutex function_idle_mutex_ SPILLWAY_ACQUIRED_AFTER(registry_);
    CondVar function_idle_;

    Mutex headroom_mutex_ SPILLWAY_ACQUIRED_AFTER(registry_);
    /// Notified whenever `in_flight_` shrinks or `choosing_` is cleared.
    CondVar headroom_changed_;
    /// Bytes of HOST that `spill_to_make_headroom` callers are spilling now:
    /// the sum of their claims' `bytes` and `surplus`.
    std::size_t in_flight_ SPILLWAY_GUARDED_BY(headroom_mutex_) = 0;
    /// The claim whose spill has not yet shown what it will free: no function
    /// announced victims for it, and it has not entered a function that does
    /// not announce, waited to revisit a busy one, or returned. No other claim
    /// is made while it is set. Null when none.
    Claim const* choosing_ SPILLWAY_GUARDED_BY(headroom_mutex_) = nullptr;
    /// The claim this thread spills for in `make_headroom`, or null.
    static thread_local Claim* claim_of_this_thread_;

    /// Whether `note_unfreed_report` has warned. Atomic because spilling
    /// threads report without a lock.
    std::atomic<bool> warned_unfreed_report_{false};

    Mutex periodic_mutex_;
    CondVar periodic_wake_;
    bool stopping_ SPILLWAY_GUARDED_BY(periodic_mutex_) = false;
    /// Declared last: started once everything it uses is constructed.
    std::thread periodic_thread_;
};

}  // namespace spillway::memory
