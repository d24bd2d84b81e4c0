#pragma once
/// @file
/// `SeqJoinCore<T>`: the engine of `seq_join` - the window, the ring of
/// slots, the runners, the prefetch pump, the stall watch and the consumer's
/// state machine. The source and the item function plug in through two
/// virtual functions (see `SeqJoinState`).

#include <algorithm>
#include <cstddef>
#include <deque>
#include <exception>
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
/// Items are numbered by their position in the source. Every position below
/// `pulled_` has been pulled; the ring of `window + prefetch` slots holds the
/// items from `consumed_` to `pulled_`. An item is admitted to the window
/// (may be claimed by a runner) once it is below `consumed_ + window`, so
/// finished but unconsumed results count toward the window.
///
/// Who touches what: the puller (the consumer, or the pump with prefetch)
/// fills slots in [pulled_, consumed_ + ring) outside the lock; a runner owns
/// the slots of the batch it claimed until it publishes it; the consumer
/// reads a slot once it is published. Each hand-over goes through `mutex_`.
///
/// Structured concurrency: `close()` (called by the destructor of the
/// owning `SeqJoin` and of `SeqJoinState`) requests stop and returns only
/// when no runner, pump, stall watch or item is active, and every item's
/// coroutine frame is destroyed before its batch is published.
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
    /// outlives the core.
    SeqJoinCore(Executor& executor, std::size_t window, SeqJoinOptions options)
        : executor_(executor),
          window_(window),
          grain_(options.grain),
          ring_size_(window + options.prefetch),
          options_(std::move(options)),
          stop_token_(stop_source_.get_token()),
          slots_(ring_size_),
          pump_(*this),
          watch_(*this),
          done_(ring_size_, false) {
        std::size_t const runners = std::min(executor.concurrency(), (window + grain_ - 1) / grain_);
        for (std::size_t i = 0; i < std::max<std::size_t>(runners, 1); ++i) {
            idle_runners_.push_back(&runners_.emplace_back(*this));
        }
    }
    virtual ~SeqJoinCore() = default;
    SeqJoinCore(SeqJoinCore const&) = delete;
    SeqJoinCore& operator=(SeqJoinCore const&) = delete;

    /// The next result in source order, or nothing at the end; blocks,
    /// running items of this join and then other work of the executor
    /// while it waits. After an error or the end, returns nothing.
    /// @throws the exception of the item (or the source) at this position,
    /// once nothing of the join runs any more.
    std::optional<T> next() {
        std::optional<T> value;
        std::exception_ptr error;
        Batch batch{};
        for (;;) {
            Notification woken;
            Step step{};
            {
                MutexLock lock(mutex_);
                step = decide(Waiter{&woken, nullptr}, true, value, error, batch);
            }
            switch (step) {
            case Step::deliver:
                refill();
                return value;
            case Step::end:
                return std::nullopt;
            case Step::fail:
                std::rethrow_exception(error);
            case Step::pull:
                pull_batch(batch.first);
                break;
            case Step::run:
                run_inline(batch);
                break;
            case Step::stop:
                stop();
                break;
            case Step::wait:
                executor_.wait(woken);
                break;
            }
        }
    }

    /// Advances an asynchronous consumer. Returns true when its outcome is in
    /// `consumer` (a value, nothing at the end, or an error); false when it
    /// was registered to be posted once there is news, after which this call
    /// no longer touches `consumer`.
    bool next_async(AsyncConsumer& consumer) noexcept {
        Batch batch{};
        try {
            for (;;) {
                Step step{};
                {
                    MutexLock lock(mutex_);
                    step = decide(Waiter{nullptr, &consumer}, false, consumer.value, consumer.error, batch);
                }
                switch (step) {
                case Step::deliver:
                    refill();
                    return true;
                case Step::end:
                case Step::fail:
                    return true;
                case Step::pull:
                    pull_batch(batch.first);
                    break;
                case Step::stop:
                    stop();
                    break;
                case Step::wait:
                    return false;
                case Step::run:
                    SPILLWAY_FATAL("an asynchronous seq_join consumer was asked to run an item");
                }
            }
        } catch (...) {
            consumer.error = std::current_exception();
            return true;
        }
    }

    /// Requests stop and blocks (running the executor's work) until nothing
    /// of the join runs; later `next` calls return nothing. Idempotent.
    void close() noexcept {
        bool stopping = false;
        {
            MutexLock lock(mutex_);
            if (phase_ == Phase::running) {
                phase_ = Phase::closing;
                stopping = true;
            }
        }
        if (stopping) {
            stop();
        }
        for (;;) {
            Notification woken;
            {
                MutexLock lock(mutex_);
                if (phase_ == Phase::closed || idle()) {
                    phase_ = Phase::closed;
                    terminal_error_ = nullptr;
                    return;
                }
                waiter_ = Waiter{&woken, nullptr};
            }
            executor_.wait(woken);
        }
    }

  protected:
    /// Pulls the item at `position` from the source into its slot; returns
    /// false if the source has no more. Called by one puller at a time,
    /// with no lock held. May throw; the error then ends the source there.
    virtual bool pull(std::size_t position) = 0;

    /// Runs `batch`: for each item `begin_item`, the function (its value or
    /// error into `slot(position)`), `end_item`, stopping after an error or
    /// when `begin_item` refuses. Returns true if the batch finished before
    /// returning; false if it continues asynchronously and will call
    /// `publish_async(batch)` once its coroutine frames are gone.
    virtual bool start(Batch batch) noexcept = 0;

    /// Before item `position` runs: false if stop was requested (the item and
    /// the rest of its batch are skipped); otherwise tells the observer.
    bool begin_item(std::size_t position) noexcept {
        if (stop_token_.stop_requested()) {
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
    ResultSlot<T>& slot(std::size_t position) noexcept { return slots_[position % ring_size_]; }

    /// The token passed to every item; stop is requested on close or error.
    [[nodiscard]] std::stop_token const& stop_token() const noexcept { return stop_token_; }

    /// Publishes a batch that `start` continued asynchronously.
    void publish_async(Batch batch) noexcept {
        MutexLock lock(mutex_);
        publish(batch);
    }

    /// Slots in the ring: window + prefetch.
    [[nodiscard]] std::size_t ring_size() const noexcept { return ring_size_; }

  private:
    /// What the consumer does next; see `decide`.
    enum class Step { deliver, end, fail, pull, run, stop, wait };
    /// running: items are admitted. closing: stop was requested; waiting for
    /// everything to go idle. closed: idle for good.
    enum class Phase { running, closing, closed };

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

    /// The consumer's state machine. Returns what to do next: `deliver` the
    /// head result (moved into `value`); `end`; `fail` with `error`; `pull`
    /// the batch at `batch.first`; `run` the claimed `batch` (only if
    /// `may_run`); `stop` (request it, then ask again); or `wait` for news,
    /// with `waiter` registered.
    Step decide(Waiter waiter, bool may_run, std::optional<T>& value, std::exception_ptr& error, Batch& batch)
        SPILLWAY_REQUIRES(mutex_) {
        if (!started_) {
            started_ = true;
            arm_watch();
        }
        switch (phase_) {
        case Phase::closed:
            return Step::end;
        case Phase::closing:
            if (!idle()) {
                waiter_ = waiter;
                return Step::wait;
            }
            phase_ = Phase::closed;
            error = std::exchange(terminal_error_, nullptr);
            return error ? Step::fail : Step::end;
        case Phase::running:
            break;
        }
        std::size_t const head = consumed_ % ring_size_;
        if (consumed_ < pulled_ && done_[head]) {
            ResultSlot<T>& result = slots_[head];
            if (result.error) {
                terminal_error_ = std::exchange(result.error, nullptr);
                phase_ = Phase::closing;
                return Step::stop;
            }
            SPILLWAY_ASSERT(result.value, "item " << consumed_ << " was skipped while the join was running");
            value = std::move(result.value);
            result.value.reset();
            done_[head] = false;
            ++consumed_;
            ++progress_;
            activate_runners();
            start_pump();
            return Step::deliver;
        }
        if (consumed_ == pulled_ && source_done_) {
            terminal_error_ = std::exchange(source_error_, nullptr);
            phase_ = Phase::closing;
            return Step::stop;
        }
        if (options_.prefetch == 0 && can_pull()) {
            pulling_ = true;
            batch = Batch{pulled_, grain_};
            return Step::pull;
        }
        start_pump();
        if (may_run) {
            if (std::optional<Batch> claimed = claim()) {
                batch = *claimed;
                return Step::run;
            }
        }
        waiter_ = waiter;
        return Step::wait;
    }

    /// Whether the puller may pull the next batch now.
    [[nodiscard]] bool can_pull() const SPILLWAY_REQUIRES(mutex_) {
        return phase_ == Phase::running && !failed_ && !source_done_ && !pulling_
               && pulled_ + grain_ <= consumed_ + ring_size_;
    }

    /// Pulls up to a batch starting at `first` and commits it. Requires: the
    /// caller set `pulling_`; no lock held.
    void pull_batch(std::size_t first) noexcept {
        std::size_t count = 0;
        bool ended = false;
        std::exception_ptr error;
        try {
            while (count < grain_ && !ended) {
                ended = !pull(first + count);
                count += ended ? 0 : 1;
            }
        } catch (...) {
            error = std::current_exception();
            ended = true;
        }
        MutexLock lock(mutex_);
        pulled_ += count;
        pulling_ = false;
        if (ended) {
            source_done_ = true;
            source_error_ = std::move(error);
        }
        activate_runners();
        wake_waiter();
    }

    /// The consumer pulls what the window has room for before it returns a
    /// result, so the window stays full while the caller works on it.
    void refill() noexcept {
        for (;;) {
            std::size_t first = 0;
            {
                MutexLock lock(mutex_);
                if (options_.prefetch > 0 || !can_pull()) {
                    return;
                }
                pulling_ = true;
                first = pulled_;
            }
            pull_batch(first);
        }
    }

    /// How many batches a runner could claim now.
    [[nodiscard]] std::size_t claimable_batches() const SPILLWAY_REQUIRES(mutex_) {
        if (phase_ != Phase::running || failed_) {
            return 0;
        }
        std::size_t const limit = std::min(pulled_, consumed_ + window_);
        if (limit <= claimed_) {
            return 0;
        }
        std::size_t const available = limit - claimed_;
        bool const partial_last = available % grain_ != 0 && source_done_ && limit == pulled_;
        return available / grain_ + (partial_last ? 1 : 0);
    }

    /// Claims the next batch in source order, if one is claimable.
    std::optional<Batch> claim() SPILLWAY_REQUIRES(mutex_) {
        if (claimable_batches() == 0) {
            return std::nullopt;
        }
        Batch const batch{claimed_, std::min(grain_, pulled_ - claimed_)};
        claimed_ += batch.count;
        ++in_flight_;
        return batch;
    }

    /// Posts idle runners until there is one per claimable batch.
    void activate_runners() SPILLWAY_REQUIRES(mutex_) {
        std::size_t const active = runners_.size() - idle_runners_.size();
        for (std::size_t wanted = claimable_batches(); wanted > active && !idle_runners_.empty(); --wanted) {
            Runner* runner = idle_runners_.back();
            idle_runners_.pop_back();
            executor_.post(*runner);
        }
    }

    /// Marks `batch` finished and tells the consumer if it concerns it.
    void publish(Batch batch) SPILLWAY_REQUIRES(mutex_) {
        for (std::size_t position = batch.first; position < batch.first + batch.count; ++position) {
            std::size_t const index = position % ring_size_;
            done_[index] = true;
            failed_ = failed_ || static_cast<bool>(slots_[index].error);
        }
        --in_flight_;
        ++progress_;
        bool const head_finished = batch.first <= consumed_ && consumed_ < batch.first + batch.count;
        if (head_finished || phase_ != Phase::running) {
            wake_waiter();
        }
    }

    /// Runs a batch the blocking consumer claimed, then publishes it.
    void run_inline(Batch batch) noexcept {
        if (start(batch)) {
            MutexLock lock(mutex_);
            publish(batch);
        }
    }

    /// A runner's turn: publish the batch it ran, claim the next, repeat.
    void drive_runner(Runner& runner) noexcept {
        std::optional<Batch> finished;
        for (std::size_t turn = 0;; ++turn) {
            std::optional<Batch> batch;
            {
                MutexLock lock(mutex_);
                if (finished) {
                    publish(*finished);
                }
                if (turn < batches_per_turn) {
                    batch = claim();
                }
                if (!batch) {
                    if (claimable_batches() > 0) {
                        executor_.post(runner);
                    } else {
                        idle_runners_.push_back(&runner);
                        if (phase_ != Phase::running) {
                            wake_waiter();
                        }
                    }
                    return;
                }
            }
            finished = start(*batch) ? batch : std::nullopt;
        }
    }

    /// Posts the pump if prefetching is on, it is idle, and there is room.
    void start_pump() SPILLWAY_REQUIRES(mutex_) {
        if (options_.prefetch > 0 && !pump_active_ && can_pull()) {
            pump_active_ = true;
            executor_.post(pump_);
        }
    }

    /// The pump's run: pulls batches while there is room.
    void drive_pump() noexcept {
        for (;;) {
            std::size_t first = 0;
            {
                MutexLock lock(mutex_);
                if (!can_pull()) {
                    pump_active_ = false;
                    if (phase_ != Phase::running) {
                        wake_waiter();
                    }
                    return;
                }
                pulling_ = true;
                first = pulled_;
            }
            pull_batch(first);
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

    /// Whether nothing of the join is active.
    [[nodiscard]] bool idle() const SPILLWAY_REQUIRES(mutex_) {
        return in_flight_ == 0 && idle_runners_.size() == runners_.size() && !pump_active_ && !watch_armed_;
    }

    /// Wakes the registered consumer, if any, to decide again.
    void wake_waiter() SPILLWAY_REQUIRES(mutex_) {
        Waiter const waiter = std::exchange(waiter_, Waiter{});
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
            stalled_periods_ = progress_ == watched_progress_ ? stalled_periods_ + 1 : 0;
            watched_progress_ = progress_;
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
        for (std::size_t position = consumed_; position < std::min(claimed_, limit); ++position) {
            if (!done_[position % ring_size_]) {
                report.running.push_back(position);
            }
        }
        for (std::size_t position = claimed_; position < limit; ++position) {
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
    std::size_t const ring_size_;
    SeqJoinOptions const options_;
    std::stop_source stop_source_;
    std::stop_token const stop_token_;
    /// Results by `position % ring_size_`; see the class comment for who
    /// may touch a slot when.
    std::vector<ResultSlot<T>> slots_;
    /// Stable addresses: each runner is posted by address.
    std::deque<Runner> runners_;
    Pump pump_;
    Watch watch_;

    /// Lock order: taken before the executor's locks and before a
    /// `Notification`'s; never held while user code runs.
    Mutex mutex_;
    Phase phase_ SPILLWAY_GUARDED_BY(mutex_) = Phase::running;
    /// Whether the consumer has asked for anything yet (the join is lazy).
    bool started_ SPILLWAY_GUARDED_BY(mutex_) = false;
    /// Items pulled from the source; pulled_ <= consumed_ + ring_size_.
    std::size_t pulled_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    /// Items claimed by a runner or the consumer; every item below has been
    /// handed to a thread. claimed_ <= min(pulled_, consumed_ + window_).
    std::size_t claimed_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    /// Items handed to the consumer; every result below has been delivered.
    std::size_t consumed_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    /// Whether the slot at `position % ring_size_` holds a published result.
    std::vector<bool> done_ SPILLWAY_GUARDED_BY(mutex_);
    /// Claimed batches not yet published.
    std::size_t in_flight_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    /// Runners not posted; the others are queued or running.
    std::vector<Runner*> idle_runners_ SPILLWAY_GUARDED_BY(mutex_);
    /// A puller is pulling outside the lock.
    bool pulling_ SPILLWAY_GUARDED_BY(mutex_) = false;
    bool pump_active_ SPILLWAY_GUARDED_BY(mutex_) = false;
    /// The source has nothing at `pulled_` (it ended, or threw `source_error_`).
    bool source_done_ SPILLWAY_GUARDED_BY(mutex_) = false;
    std::exception_ptr source_error_ SPILLWAY_GUARDED_BY(mutex_);
    /// An item failed: no further item is admitted or pulled.
    bool failed_ SPILLWAY_GUARDED_BY(mutex_) = false;
    /// The error the consumer gets once the join is idle.
    std::exception_ptr terminal_error_ SPILLWAY_GUARDED_BY(mutex_);
    /// Who to wake when something the consumer waits for changes.
    Waiter waiter_ SPILLWAY_GUARDED_BY(mutex_);
    /// Counts finished batches and consumed items.
    std::size_t progress_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    /// `progress_` when the watch last fired, and the periods since it moved.
    std::size_t watched_progress_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    std::size_t stalled_periods_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    bool watch_armed_ SPILLWAY_GUARDED_BY(mutex_) = false;
};

}  // namespace spillway::exec::detail
