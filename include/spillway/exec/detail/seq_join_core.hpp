#pragma once
/// @file
/// `SeqJoinCore<T>`: the engine of `seq_join` - the window, the ring of
/// slots, the runners, the prefetch pump, the stall watch and the consumer's
/// state machine. The source and the item function plug in through two
/// virtual functions (see `SeqJoinState`).

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <deque>
#include <exception>
#include <limits>
#include <optional>
#include <stop_token>
#include <utility>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/core/logging.hpp>
#include <spillway/core/mutex.hpp>
#include <spillway/exec/detail/result_slot.hpp>
#include <spillway/exec/executor.hpp>
#include <spillway/exec/notification.hpp>
#include <spillway/exec/seq_join_options.hpp>

namespace spillway::exec::detail {

/// Consecutive items that one thread runs in order.
struct Batch {
    std::size_t first;
    std::size_t count;
};

/// How many batches a runner takes in one turn before it re-posts itself,
/// so a busy join yields its thread to other work now and then. Large enough
/// that the round trip through the executor's queue costs little per item.
inline constexpr std::size_t batches_per_turn = 32;

/// The engine of `seq_join`; results of type `T`.
///
/// Items are numbered by their position in the source. The ring holds the
/// items from `consumed_` (the consumer's next) to `pulled_`, at most
/// `window + prefetch`. Items below `admitted_` may be claimed, and
/// `admitted_ <= consumed_ + window`, so finished but unconsumed results
/// count toward the window.
///
/// The hot path takes no lock. A runner claims a batch by advancing `claimed_` with a compare-and-swap below `admitted_`,
/// runs it, and publishes each result by storing its position + 1 into the
/// slot's `published` (release). The consumer reads a published result
/// (acquire) and takes it; it visits `mutex_` once per chunk to count what
/// it consumed, pull the items that now fit, and move `admitted_` on. Only
/// a consumer that has to wait registers under the lock: it sets
/// `consumer_waiting_`, reads `progress_` and checks again; a publisher
/// bumps `progress_` and then reads the flag, all sequentially consistent,
/// so one of the two always sees the other and no wake-up is lost.
///
/// Who touches what: the puller (the consumer, or the pump with prefetch)
/// fills the items at [pulled_, consumed_ + window + prefetch); a runner
/// owns the slots of its batch until it publishes them; the consumer owns a
/// published slot until it counts it as consumed.
///
/// Structured concurrency: `close()` (called by the destructors of the
/// owning `SeqJoin` and of `SeqJoinState`) requests stop and returns only
/// once no runner, pump, stall watch or item is active; an asynchronous
/// item's coroutine frames are destroyed before its batch is published.
///
/// Thread safety: `next`, `next_async` and `close` are the consumer's and
/// never run concurrently; everything else runs on the executor.
template <typename T>
class SeqJoinCore {
  public:
    /// Where an asynchronous consumer is resumed and gets its outcome.
    class AsyncConsumer : public Work {
      public:
        using Work::Work;
        std::optional<T> value;
        std::exception_ptr error;

      protected:
        ~AsyncConsumer() = default;
    };

    /// Requires: `window >= 1`, `1 <= options.grain <= window`; `executor`
    /// outlives the core. `asynchronous`: `start` leaves its batches running
    /// and publishes them itself.
    SeqJoinCore(Executor& executor, std::size_t window, SeqJoinOptions options, bool asynchronous)
        : executor_(executor),
          window_(window),
          grain_(options.grain),
          held_(window + options.prefetch),
          mask_(std::bit_ceil(held_) - 1),
          chunk_(std::max(grain_, window / 4)),
          asynchronous_(asynchronous),
          options_(std::move(options)),
          stop_token_(stop_source_.get_token()),
          slots_(mask_ + 1),
          pump_(*this),
          watch_(*this) {
        std::size_t const runners = std::min(executor.concurrency(), (window + grain_ - 1) / grain_);
        for (std::size_t i = 0; i < std::max<std::size_t>(runners, 1); ++i) {
            idle_runners_.push_back(&runners_.emplace_back(*this));
        }
    }
    virtual ~SeqJoinCore() = default;
    SeqJoinCore(SeqJoinCore const&) = delete;
    SeqJoinCore& operator=(SeqJoinCore const&) = delete;

    /// The next result in source order, or nothing at the end; blocks,
    /// running the executor's queued work while it waits. After an error or
    /// the end, returns nothing.
    /// @throws the exception of the item (or the source) at this position,
    /// once nothing of the join runs any more.
    std::optional<T> next() {
        std::optional<T> value;
        if (take_reserved(value)) {
            return value;
        }
        std::exception_ptr error;
        for (;;) {
            switch (advance(Waiter{&woken_, nullptr}, value, error)) {
            case Step::deliver:
                return value;
            case Step::fail:
                std::rethrow_exception(error);
            case Step::wait:
                executor_.wait(woken_);
                woken_.reset();
                break;
            case Step::end:
            case Step::pull:
            case Step::stop:
                return std::nullopt;
            }
        }
    }

    /// Advances an asynchronous consumer. Returns true when its outcome is in
    /// `consumer` (a value, nothing at the end, or an error); false when it
    /// was registered to be posted once there is news, after which this call
    /// no longer touches `consumer`.
    bool next_async(AsyncConsumer& consumer) noexcept {
        try {
            return take_reserved(consumer.value)
                   || advance(Waiter{nullptr, &consumer}, consumer.value, consumer.error) != Step::wait;
        } catch (...) {
            consumer.error = std::current_exception();
            return true;
        }
    }

    /// Requests stop and blocks (running the executor's work) until nothing
    /// of the join runs; later `next` calls return nothing. Idempotent.
    void close() noexcept {
        reserved_end_ = reserved_next_;
        bool stopping = false;
        {
            MutexLock lock(mutex_);
            if (phase_ == Phase::running) {
                begin_closing();
                stopping = true;
            }
        }
        if (stopping) {
            stop();
        }
        for (;;) {
            {
                MutexLock lock(mutex_);
                if (phase_ == Phase::closed || register_unless_idle(Waiter{&woken_, nullptr})) {
                    phase_ = Phase::closed;
                    terminal_error_ = nullptr;
                    return;
                }
            }
            executor_.wait(woken_);
            woken_.reset();
        }
    }

  protected:
    /// Pulls up to `batch.count` items from the source into the slots from
    /// `batch.first` on; returns how many it pulled, fewer if the source
    /// ended or threw (the exception then goes into `error`). Called by one
    /// puller at a time, with no lock held.
    virtual std::size_t pull(Batch batch, std::exception_ptr& error) noexcept = 0;

    /// Runs `batch`: for each item `begin_item`, the function (its value or
    /// error into `result(position)`), `end_item`, stopping after an error
    /// or when `begin_item` refuses. A synchronous engine finishes the batch
    /// before returning; an asynchronous one leaves it running and calls
    /// `publish(batch, true)` once its coroutine frames are gone.
    virtual void start(Batch batch) noexcept = 0;

    /// Before item `position` runs: false if stop was requested or an
    /// earlier item failed (the item and the rest of its batch are skipped);
    /// otherwise tells the observer.
    bool begin_item(std::size_t position) noexcept {
        // acquire: pairs with the release in record_failure().
        if (stop_token_.stop_requested() || position > failed_at_.load(std::memory_order_acquire)) {
            return false;
        }
        if (options_.observer) {
            options_.observer(ItemEvent{position, ItemEvent::Phase::started});
        }
        return true;
    }

    /// After item `position` ran: tells the observer.
    void end_item(std::size_t position) noexcept {
        if (options_.observer) {
            options_.observer(ItemEvent{position, ItemEvent::Phase::finished});
        }
    }

    /// Where item `position` leaves its result.
    ResultSlot<T>& result(std::size_t position) noexcept { return slots_[index(position)].result; }

    /// The token passed to every item; stop is requested on close or error.
    [[nodiscard]] std::stop_token const& stop_token() const noexcept { return stop_token_; }

    /// Publishes the results of `batch` to the consumer; `asynchronous` for
    /// a batch that `start` left running. No lock held.
    void publish(Batch batch, bool asynchronous) noexcept {
        for (std::size_t position = batch.first; position < batch.first + batch.count; ++position) {
            if (result(position).error) {
                record_failure(position);
                break;
            }
        }
        for (std::size_t position = batch.first; position < batch.first + batch.count; ++position) {
            // release: pairs with the acquire loads in published().
            slots_[index(position)].published.store(position + 1, std::memory_order_release);
        }
        // seq_cst, with the load of `consumer_waiting_` after it: pairs with
        // register_waiter(). Either a waiting consumer's read of `progress_`
        // comes after this increment (it then sees everything published
        // above), or this read comes after its flag was set.
        progress_.fetch_add(1, std::memory_order_seq_cst);
        if (asynchronous) {
            // No runner stays active for this batch, so its last touch of
            // the join is under the lock: once close() sees the count drop
            // there, nothing of the batch uses the join again.
            MutexLock lock(mutex_);
            // relaxed: read under the lock.
            async_in_flight_.fetch_sub(1, std::memory_order_relaxed);
            wake_waiter();
        } else if (consumer_waiting_.load(std::memory_order_seq_cst)) {
            MutexLock lock(mutex_);
            wake_waiter();
        }
    }

    /// Slots in the ring: a power of two, at least window + prefetch.
    [[nodiscard]] std::size_t ring_slots() const noexcept { return mask_ + 1; }

    /// The ring slot of item `position`.
    [[nodiscard]] std::size_t index(std::size_t position) const noexcept { return position & mask_; }

  private:
    /// What the consumer does next; see `decide`.
    enum class Step { deliver, end, fail, pull, stop, wait };
    /// running: items are admitted. closing: stop was requested; waiting for
    /// everything to go idle. closed: idle for good.
    enum class Phase { running, closing, closed };

    /// No item has failed.
    static constexpr std::size_t no_failure = std::numeric_limits<std::size_t>::max();

    /// One place of the ring.
    struct Slot {
        ResultSlot<T> result;
        /// Position + 1 of the item whose result is final here; written by
        /// the runner once it is done with `result`.
        std::atomic<std::size_t> published{0};
    };

    /// The consumer waiting for news: a blocked thread or a coroutine.
    struct Waiter {
        Notification* notification = nullptr;
        Work* consumer = nullptr;
    };

    /// A work item that claims and runs batches; one per thread the join may
    /// occupy. Active from its post until it goes back to `idle_runners_`.
    struct Runner : Work {
        explicit Runner(SeqJoinCore& owner) noexcept : Work(&run), core(owner) {}
        static void run(Work& work) noexcept {
            auto& runner = static_cast<Runner&>(work);
            runner.core.drive_runner(runner);
        }
        SeqJoinCore& core;
    };

    /// The prefetch pump: pulls while there is room, then goes idle.
    struct Pump : Work {
        explicit Pump(SeqJoinCore& owner) noexcept : Work(&run), core(owner) {}
        static void run(Work& work) noexcept { static_cast<Pump&>(work).core.drive_pump(); }
        SeqJoinCore& core;
    };

    /// The stall detector's timer.
    struct Watch : TimedWork {
        explicit Watch(SeqJoinCore& owner) noexcept : TimedWork(&run), core(owner) {}
        static void run(Work& work) noexcept { static_cast<Watch&>(work).core.on_watch(); }
        SeqJoinCore& core;
    };

    /// Whether the result of `position` is published.
    [[nodiscard]] bool published(std::size_t position) const noexcept {
        // acquire: pairs with the release store in publish(); the result is
        // visible once this is true.
        return slots_[index(position)].published.load(std::memory_order_acquire) == position + 1;
    }

    /// Runs the consumer's state machine until it has an outcome (`deliver`
    /// into `value`, `end`, or `fail` with `error`) or must `wait`, with
    /// `waiter` registered; it no longer touches the waiter then.
    Step advance(Waiter waiter, std::optional<T>& value, std::exception_ptr& error) {
        for (;;) {
            Batch batch{};
            Step step{};
            {
                MutexLock lock(mutex_);
                step = decide(waiter, value, error, batch);
            }
            switch (step) {
            case Step::pull:
                pull_from(batch);
                break;
            case Step::stop:
                stop();
                break;
            case Step::deliver:
                pull_from(batch);
                return step;
            case Step::end:
            case Step::fail:
            case Step::wait:
                return step;
            }
        }
    }

    /// The consumer's state machine. Returns what to do next: `deliver` the
    /// head result (moved into `value`), after pulling `batch` if its count
    /// is not 0; `end`; `fail` with `error`; `pull` `batch`; `stop` (request
    /// it, then ask again); or `wait` for news, with `waiter` registered.
    ///
    /// The consumer never claims items itself: for cheap items a pipeline
    /// in which it only pulls and consumes while the runners run items is
    /// about twice as fast as one in which it also runs them, and a blocked
    /// consumer still runs queued runners through `Executor::wait`, which
    /// is what keeps nested joins from deadlocking.
    Step decide(Waiter waiter, std::optional<T>& value, std::exception_ptr& error, Batch& batch)
        SPILLWAY_REQUIRES(mutex_) {
        if (!started_) {
            started_ = true;
            arm_watch();
        }
        switch (phase_) {
        case Phase::closed:
            return Step::end;
        case Phase::closing:
            if (!register_unless_idle(waiter)) {
                return Step::wait;
            }
            phase_ = Phase::closed;
            error = std::exchange(terminal_error_, nullptr);
            return error ? Step::fail : Step::end;
        case Phase::running:
            break;
        }
        commit_reserved();
        if (consumed_ < pulled_ && published(consumed_)) {
            ResultSlot<T>& head = result(consumed_);
            if (head.error) {
                terminal_error_ = std::exchange(head.error, nullptr);
                begin_closing();
                return Step::stop;
            }
            SPILLWAY_ASSERT(head.value, "item " << consumed_ << " was skipped while the join was running");
            value = std::move(head.value);
            head.value.reset();
            // Published results right behind the head (up to a chunk) are the
            // consumer's to take without the lock; they count as consumed at
            // its next visit.
            reserved_next_ = consumed_ + 1;
            reserved_end_ = reserved_next_;
            std::size_t const run_limit = std::min(pulled_, consumed_ + chunk_);
            while (reserved_end_ < run_limit && published(reserved_end_)) {
                ++reserved_end_;
            }
            ++consumed_;
            // relaxed: a statistic for the stall watch.
            progress_.fetch_add(1, std::memory_order_relaxed);
            admit();
            start_pump();
            batch = plan_pull();
            return Step::deliver;
        }
        if (consumed_ == pulled_ && source_done_) {
            terminal_error_ = std::exchange(source_error_, nullptr);
            begin_closing();
            return Step::stop;
        }
        batch = plan_pull();
        if (batch.count > 0) {
            return Step::pull;
        }
        start_pump();
        register_waiter(waiter);
        // A publisher may have finished the head before it could see the
        // waiter; then wake at once and decide again.
        if (consumed_ < pulled_ && published(consumed_)) {
            wake_waiter();
        }
        return Step::wait;
    }

    /// Stops admitting items; the consumer then requests stop.
    void begin_closing() SPILLWAY_REQUIRES(mutex_) {
        phase_ = Phase::closing;
        // release: pairs with the acquire in claim(); nothing is claimed
        // past this any more.
        admitted_.store(0, std::memory_order_release);
    }

    /// How many items the puller may pull now, in one go: whole batches
    /// that fit the ring, at most a chunk; 0 if it may not pull.
    [[nodiscard]] std::size_t pull_room() const SPILLWAY_REQUIRES(mutex_) {
        // relaxed: a failure found late only costs a few pulls.
        if (phase_ != Phase::running || source_done_ || pulling_
            || failed_at_.load(std::memory_order_relaxed) != no_failure)
        {
            return 0;
        }
        std::size_t const room = consumed_ + held_ - pulled_;
        return std::min(room, chunk_) / grain_ * grain_;
    }

    /// The pull the consumer makes itself now (when there is no pump and
    /// there is room), as the puller until its commit; empty if none.
    Batch plan_pull() SPILLWAY_REQUIRES(mutex_) {
        std::size_t const count = options_.prefetch > 0 ? 0 : pull_room();
        pulling_ = count > 0;
        return Batch{pulled_, count};
    }

    /// The consumer pulls what it planned, and then what else fits.
    void pull_from(Batch batch) noexcept {
        while (batch.count > 0) {
            pull_batch(batch, [&]() SPILLWAY_REQUIRES(mutex_) { batch = plan_pull(); });
        }
    }

    /// Pulls the items of `batch` (fewer if the source ends), commits them,
    /// and calls `plan_next()` with the lock held. Requires: the caller is
    /// the puller (it set `pulling_`); no lock held.
    template <typename PlanNext>
    void pull_batch(Batch batch, PlanNext plan_next) noexcept {
        std::exception_ptr error;
        std::size_t const count = pull(batch, error);
        bool const ended = count < batch.count;
        MutexLock lock(mutex_);
        pulled_ += count;
        pulling_ = false;
        if (ended) {
            source_done_ = true;
            source_error_ = std::move(error);
        }
        admit();
        wake_waiter();
        plan_next();
    }

    /// Takes the next result of the reserved run without the lock, if
    /// there is one (an item of the run that failed is left to `decide`).
    bool take_reserved(std::optional<T>& value) noexcept(std::is_nothrow_move_constructible_v<T>) {
        if (reserved_next_ == reserved_end_) {
            return false;
        }
        ResultSlot<T>& reserved = result(reserved_next_);
        if (!reserved.value) {
            return false;
        }
        value = std::move(reserved.value);
        reserved.value.reset();
        ++reserved_next_;
        return true;
    }

    /// Counts the results taken from the reserved run as consumed, which
    /// widens the window.
    void commit_reserved() SPILLWAY_REQUIRES(mutex_) {
        reserved_end_ = reserved_next_;
        if (consumed_ == reserved_next_) {
            return;
        }
        // relaxed: a statistic for the stall watch.
        progress_.fetch_add(reserved_next_ - consumed_, std::memory_order_relaxed);
        consumed_ = reserved_next_;
        admit();
        start_pump();
    }

    /// Moves `admitted_` to the end of the window (whole batches, but the
    /// last batch of the source may be short) and posts idle runners for it.
    void admit() SPILLWAY_REQUIRES(mutex_) {
        if (phase_ != Phase::running) {
            return;
        }
        std::size_t limit = std::min(pulled_, consumed_ + window_);
        if (!(source_done_ && limit == pulled_)) {
            limit -= limit % grain_;
        }
        // release: pairs with the acquire in claim(), which then sees the
        // items pulled below `limit`.
        admitted_.store(limit, std::memory_order_release);
        // One idle runner per claimable batch, whatever the active runners
        // do: they may be stuck in a long item.
        for (std::size_t wanted = claimable_batches(); wanted > 0 && !idle_runners_.empty(); --wanted) {
            Runner* runner = idle_runners_.back();
            idle_runners_.pop_back();
            executor_.post(*runner);
        }
    }

    /// How many batches could be claimed now (a snapshot).
    [[nodiscard]] std::size_t claimable_batches() const noexcept {
        // relaxed: an estimate used to decide how many runners to post.
        std::size_t const admitted = admitted_.load(std::memory_order_relaxed);
        std::size_t const claimed = claimed_.load(std::memory_order_relaxed);
        return admitted > claimed ? (admitted - claimed + grain_ - 1) / grain_ : 0;
    }

    /// Claims the next batch in source order, if one is admitted and no
    /// item has failed before it. Lock-free.
    std::optional<Batch> claim() noexcept {
        // relaxed: the compare-and-swap below re-reads it.
        std::size_t first = claimed_.load(std::memory_order_relaxed);
        for (;;) {
            // acquire: pairs with the release in admit(); the items below it
            // have been pulled.
            std::size_t const admitted = admitted_.load(std::memory_order_acquire);
            // relaxed: begin_item() re-checks with acquire.
            if (first >= admitted || first > failed_at_.load(std::memory_order_relaxed)) {
                return std::nullopt;
            }
            std::size_t const count = std::min(grain_, admitted - first);
            // relaxed: claims only need to be unique; what they read is
            // ordered by the acquire on `admitted_`.
            if (claimed_.compare_exchange_weak(first, first + count, std::memory_order_relaxed)) {
                return Batch{first, count};
            }
        }
    }

    /// Runs a claimed batch; a synchronous one is published here.
    void run(Batch batch) noexcept {
        if (asynchronous_) {
            // relaxed: the runner stays active until this returns and goes
            // idle under the lock, so register_unless_idle() sees the count.
            async_in_flight_.fetch_add(1, std::memory_order_relaxed);
            start(batch);
        } else {
            start(batch);
            publish(batch, false);
        }
    }

    /// Remembers that item `position` failed; no later item starts.
    void record_failure(std::size_t position) noexcept {
        std::size_t seen = failed_at_.load(std::memory_order_relaxed);
        // release: pairs with the acquire in begin_item().
        while (position < seen
               && !failed_at_.compare_exchange_weak(seen, position, std::memory_order_release,
                                                   std::memory_order_relaxed))
        {
        }
    }

    /// A runner's turn: claim and run batches, without the lock.
    void drive_runner(Runner& runner) noexcept {
        for (std::size_t turn = 0; turn < batches_per_turn; ++turn) {
            std::optional<Batch> batch = claim();
            if (!batch) {
                // Under the lock `admitted_` cannot move, so a runner that
                // finds nothing here is posted again by the next admit().
                MutexLock lock(mutex_);
                batch = claim();
                if (!batch) {
                    idle_runners_.push_back(&runner);
                    if (phase_ != Phase::running) {
                        wake_waiter();
                    }
                    return;
                }
            }
            run(*batch);
        }
        executor_.post(runner);
    }

    /// Posts the pump if prefetching is on, it is idle, and there is room.
    void start_pump() SPILLWAY_REQUIRES(mutex_) {
        if (options_.prefetch > 0 && !pump_active_ && pull_room() > 0) {
            pump_active_ = true;
            executor_.post(pump_);
        }
    }

    /// The pump's run: pulls while there is room, then goes idle.
    void drive_pump() noexcept {
        Batch batch{};
        auto plan_next = [&]() SPILLWAY_REQUIRES(mutex_) {
            batch = Batch{pulled_, pull_room()};
            pulling_ = batch.count > 0;
            if (!pulling_) {
                pump_active_ = false;
                if (phase_ != Phase::running) {
                    wake_waiter();
                }
            }
        };
        {
            MutexLock lock(mutex_);
            plan_next();
        }
        while (batch.count > 0) {
            pull_batch(batch, plan_next);
        }
    }

    /// Requests stop and takes the stall watch off the timers. Called by the
    /// consumer after it moved the phase to closing; no lock held.
    void stop() noexcept {
        stop_source_.request_stop();
        if (executor_.cancel(watch_)) {
            MutexLock lock(mutex_);
            watch_armed_ = false;
        }
    }

    /// Registers `waiter` unless nothing of the join is active; returns
    /// whether it is idle.
    bool register_unless_idle(Waiter waiter) SPILLWAY_REQUIRES(mutex_) {
        register_waiter(waiter);
        // relaxed: changed by a finishing batch only under the lock.
        bool const idle = async_in_flight_.load(std::memory_order_relaxed) == 0
                          && idle_runners_.size() == runners_.size() && !pump_active_ && !watch_armed_;
        if (idle) {
            unregister_waiter();
        }
        return idle;
    }

    /// Makes `waiter` the one to wake when something it waits for changes.
    void register_waiter(Waiter waiter) SPILLWAY_REQUIRES(mutex_) {
        waiter_ = waiter;
        // seq_cst, with the read of `progress_` after it: pairs with the
        // increment and the flag read in publish(). Either that publisher
        // reads the flag as set, or this read synchronizes with its
        // increment, so what the caller checks next sees its publication.
        consumer_waiting_.store(true, std::memory_order_seq_cst);
        static_cast<void>(progress_.load(std::memory_order_seq_cst));
    }

    void unregister_waiter() SPILLWAY_REQUIRES(mutex_) {
        waiter_ = Waiter{};
        // seq_cst: every store to the flag takes part in the order that
        // register_waiter() and publish() rely on.
        consumer_waiting_.store(false, std::memory_order_seq_cst);
    }

    /// Wakes the registered consumer, if any, to decide again.
    void wake_waiter() SPILLWAY_REQUIRES(mutex_) {
        Waiter const waiter = waiter_;
        unregister_waiter();
        if (waiter.notification != nullptr) {
            waiter.notification->notify();
        } else if (waiter.consumer != nullptr) {
            executor_.post(*waiter.consumer);
        }
    }

    /// Starts the stall watch if a timeout is set.
    void arm_watch() SPILLWAY_REQUIRES(mutex_) {
        if (options_.stall_timeout > std::chrono::nanoseconds::zero()) {
            executor_.post_after(watch_, options_.stall_timeout);
            watch_armed_ = true;
        }
    }

    /// The stall watch fired: report a window without progress, re-arm.
    void on_watch() noexcept {
        std::optional<StallReport> report;
        {
            MutexLock lock(mutex_);
            if (phase_ != Phase::running) {
                disarm_watch();
                return;
            }
            // relaxed: a statistic; the lock orders the checks.
            std::size_t const progress = progress_.load(std::memory_order_relaxed);
            stalled_periods_ = progress == watched_progress_ ? stalled_periods_ + 1 : 0;
            watched_progress_ = progress;
            if (stalled_periods_ > 0) {
                report = stall_report();
            }
        }
        if (report) {
            try {
                if (options_.on_stall) {
                    options_.on_stall(*report);
                } else {
                    SPILLWAY_LOG(warn, report->to_string());
                }
            } catch (std::exception const& error) {
                SPILLWAY_LOG(error, "seq_join: the stall handler threw: " << error.what());
            }
        }
        MutexLock lock(mutex_);
        if (phase_ != Phase::running) {
            disarm_watch();
            return;
        }
        try {
            executor_.post_after(watch_, options_.stall_timeout);
        } catch (std::exception const& error) {
            SPILLWAY_LOG(error, "seq_join: the stall watch stops: " << error.what());
            disarm_watch();
        }
    }

    void disarm_watch() SPILLWAY_REQUIRES(mutex_) {
        watch_armed_ = false;
        wake_waiter();
    }

    /// The window's unfinished items, or nothing if all are finished.
    std::optional<StallReport> stall_report() const SPILLWAY_REQUIRES(mutex_) {
        StallReport report{window_, consumed_, {}, {}, options_.stall_timeout * stalled_periods_};
        std::size_t const limit = std::min(pulled_, consumed_ + window_);
        // relaxed: a snapshot for a report.
        std::size_t const claimed = std::min(claimed_.load(std::memory_order_relaxed), limit);
        for (std::size_t position = consumed_; position < claimed; ++position) {
            if (!published(position)) {
                report.running.push_back(position);
            }
        }
        for (std::size_t position = claimed; position < limit; ++position) {
            report.queued.push_back(position);
        }
        if (report.running.empty() && report.queued.empty()) {
            return std::nullopt;
        }
        return report;
    }

    // Constant after construction.
    Executor& executor_;
    std::size_t const window_;
    std::size_t const grain_;
    /// The most items held at once: window + prefetch.
    std::size_t const held_;
    /// Ring slots - 1; the ring has a power of two of slots so that finding
    /// an item's slot is a mask, not a division.
    std::size_t const mask_;
    /// The most items the consumer takes, or a puller pulls, per visit to
    /// the lock: a quarter of the window (at least a batch), so bursts of
    /// finished results cost one lock while most of the window stays open.
    std::size_t const chunk_;
    bool const asynchronous_;
    SeqJoinOptions const options_;
    std::stop_source stop_source_;
    std::stop_token const stop_token_;
    /// See the class comment for who may touch a slot when.
    std::vector<Slot> slots_;
    /// Stable addresses: each runner is posted by address.
    std::deque<Runner> runners_;
    Pump pump_;
    Watch watch_;

    // Atomic because runners use them without the lock.
    /// Items below may be claimed; moved by admit() under the lock, set to
    /// 0 when the join closes.
    std::atomic<std::size_t> admitted_{0};
    /// Items claimed (handed to a thread); only ever grows.
    std::atomic<std::size_t> claimed_{0};
    /// The first item that failed, or `no_failure`.
    std::atomic<std::size_t> failed_at_{no_failure};
    /// Asynchronous batches started and not yet published; raised by an
    /// active runner, lowered under the lock.
    std::atomic<std::size_t> async_in_flight_{0};
    /// Published batches plus consumed items: the stall watch compares it
    /// across periods, and publishers and a registering waiter order their
    /// flag accesses through it (see register_waiter()).
    std::atomic<std::size_t> progress_{0};
    /// Whether `waiter_` is registered; written under the lock.
    std::atomic<bool> consumer_waiting_{false};

    /// Lock order: taken before the executor's locks and before a
    /// `Notification`'s; never held while user code runs.
    Mutex mutex_;
    Phase phase_ SPILLWAY_GUARDED_BY(mutex_) = Phase::running;
    /// Whether the consumer has asked for anything yet (the join is lazy).
    bool started_ SPILLWAY_GUARDED_BY(mutex_) = false;
    /// Items pulled from the source; pulled_ <= consumed_ + held_.
    std::size_t pulled_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    /// Items counted as consumed; every result below was handed out.
    std::size_t consumed_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    /// Runners not posted; the others are queued or running.
    std::vector<Runner*> idle_runners_ SPILLWAY_GUARDED_BY(mutex_);
    /// A puller is pulling outside the lock.
    bool pulling_ SPILLWAY_GUARDED_BY(mutex_) = false;
    bool pump_active_ SPILLWAY_GUARDED_BY(mutex_) = false;
    /// The source has nothing at `pulled_` (it ended, or threw `source_error_`).
    bool source_done_ SPILLWAY_GUARDED_BY(mutex_) = false;
    std::exception_ptr source_error_ SPILLWAY_GUARDED_BY(mutex_);
    /// The error the consumer gets once the join is idle.
    std::exception_ptr terminal_error_ SPILLWAY_GUARDED_BY(mutex_);
    /// Who to wake when something the consumer waits for changes.
    Waiter waiter_ SPILLWAY_GUARDED_BY(mutex_);
    /// `progress_` when the watch last fired, and the periods since it moved.
    std::size_t watched_progress_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    std::size_t stalled_periods_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    bool watch_armed_ SPILLWAY_GUARDED_BY(mutex_) = false;

    // Touched by the consumer only, so not guarded.
    /// What a blocked consumer (`next`, `close`) waits on; reset after each
    /// wait, once the notifier is done with it.
    Notification woken_;
    /// Results the consumer may take without the lock: published results
    /// right behind the last one delivered, [reserved_next_, reserved_end_).
    /// Items before `reserved_next_` are taken but counted in `consumed_`
    /// only at the consumer's next `decide`.
    std::size_t reserved_next_ = 0;
    std::size_t reserved_end_ = 0;
};

}  // namespace spillway::exec::detail
