#pragma once
/// @file
/// `seq_join`: runs a stream of items on an executor with at most `window`
/// of them in flight, and hands the results back in source order.

#include <concepts>
#include <coroutine>
#include <cstddef>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <ranges>
#include <stop_token>
#include <type_traits>
#include <utility>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/exec/detail/detached.hpp>
#include <spillway/exec/detail/seq_join_core.hpp>
#include <spillway/exec/executor.hpp>
#include <spillway/exec/seq_join_options.hpp>
#include <spillway/exec/task.hpp>

namespace spillway::exec {
namespace detail {

template <typename T>
inline constexpr bool is_optional = false;
template <typename U>
inline constexpr bool is_optional<std::optional<U>> = true;

/// A generator function: each call returns the next item, or nothing at the end.
template <typename Source>
concept GeneratorFunction = std::invocable<std::remove_cvref_t<Source>&>
                            && is_optional<std::invoke_result_t<std::remove_cvref_t<Source>&>>;

/// Pulls items from a generator function, one call per item.
template <typename Source>
class Puller {
  public:
    using Function = std::remove_cvref_t<Source>;
    using Item = typename std::invoke_result_t<Function&>::value_type;

    explicit Puller(Source&& source) : function_(std::forward<Source>(source)) {}
    std::optional<Item> next() { return std::invoke(function_); }

  private:
    Function function_;
};

/// Pulls items from an input range, advancing it only when the next item
/// is needed. An lvalue range is borrowed, an rvalue range owned.
template <std::ranges::input_range Source>
class Puller<Source> {
  public:
    using View = std::views::all_t<Source>;
    using Item = std::ranges::range_value_t<View>;

    explicit Puller(Source&& source) : view_(std::views::all(std::forward<Source>(source))) {}
    std::optional<Item> next() {
        if (position_) {
            ++*position_;
        } else {
            position_.emplace(std::ranges::begin(view_));
        }
        if (*position_ == std::ranges::end(view_)) {
            return std::nullopt;
        }
        return Item(**position_);
    }

  private:
    View view_;
    std::optional<std::ranges::iterator_t<View>> position_;
};

/// `seq_join`'s engine for one source type and item function.
template <typename T, typename Source, typename Fn>
class SeqJoinState final : public SeqJoinCore<T> {
  public:
    SeqJoinState(Executor& executor, std::size_t window, Source&& source, Fn fn, SeqJoinOptions options)
        : SeqJoinCore<T>(executor, window, std::move(options), asynchronous),
          source_(std::forward<Source>(source)),
          fn_(std::move(fn)),
          items_(this->ring_slots()) {}

    /// Closes first: the runners use the members of this class.
    ~SeqJoinState() override { this->close(); }

  private:
    using Item = typename Puller<Source>::Item;
    static constexpr bool asynchronous = is_task<std::invoke_result_t<Fn&, Item, std::stop_token const&>>;

    /// Publishes a batch once its coroutine is gone.
    struct Published {
        SeqJoinState* state;
        Batch batch;
        void operator()() const noexcept { state->publish(batch, true); }
    };

    std::size_t pull(Batch batch, std::exception_ptr& error) noexcept override {
        std::size_t count = 0;
        try {
            for (; count < batch.count; ++count) {
                std::optional<Item> item = source_.next();
                if (!item) {
                    break;
                }
                items_[this->index(batch.first + count)] = std::move(item);
            }
        } catch (...) {
            error = std::current_exception();
        }
        return count;
    }

    /// Moves item `position` out of its slot.
    Item take_item(std::size_t position) {
        std::optional<Item>& stored = items_[this->index(position)];
        Item item = std::move(*stored);
        stored.reset();
        return item;
    }

    void start(Batch batch) noexcept override {
        if constexpr (asynchronous) {
            run_async(batch).start(Published{this, batch});
        } else {
            for (std::size_t position = batch.first; position < batch.first + batch.count; ++position) {
                if (!this->begin_item(position)) {
                    break;
                }
                ResultSlot<T>& result = this->result(position);
                try {
                    result.value.emplace(std::invoke(fn_, take_item(position), this->stop_token()));
                } catch (...) {
                    result.error = std::current_exception();
                }
                this->end_item(position);
                if (result.error) {
                    break;
                }
            }
        }
    }

    /// The asynchronous twin of the loop in `start`: each item's task is
    /// awaited, so a waiting item holds no thread.
    Detached<Published> run_async(Batch batch) {
        for (std::size_t position = batch.first; position < batch.first + batch.count; ++position) {
            if (!this->begin_item(position)) {
                break;
            }
            ResultSlot<T>& result = this->result(position);
            try {
                result.value.emplace(co_await std::invoke(fn_, take_item(position), this->stop_token()));
            } catch (...) {
                result.error = std::current_exception();
            }
            this->end_item(position);
            if (result.error) {
                break;
            }
        }
    }

    Puller<Source> source_;
    Fn fn_;
    /// Pulled items by `index(position)`, until a runner takes them.
    std::vector<std::optional<Item>> items_;
};

/// What a source yields.
template <typename Source>
using source_item_t = typename Puller<Source>::Item;

}  // namespace detail

/// A source for `seq_join`: an input range, or a generator function that
/// returns `std::optional<Item>` (nothing at the end).
template <typename Source>
concept SeqJoinSource = std::ranges::input_range<Source> || detail::GeneratorFunction<Source>;

/// An item function for `seq_join`: called as `fn(item, stop_token)`, it
/// returns a non-void result or a `Task` of one.
template <typename Fn, typename Item>
concept SeqJoinFunction = std::invocable<Fn&, Item, std::stop_token const&>
                          && !std::is_void_v<detail::awaited_t<std::invoke_result_t<Fn&, Item, std::stop_token const&>>>;

/// The results of a `seq_join`, in source order: a blocking input range
/// (`for (auto& result : join)`), `next()`, or `co_await next_async()` for
/// a coroutine consumer.
///
/// At most `window` items are in flight: pulled from the source and not yet
/// consumed, whether they are waiting for a thread, running, or finished and
/// waiting for the consumer. The source is pulled only as the window (and
/// the prefetch buffer) has room, and not before the first result is asked
/// for.
///
/// Errors: if item i (or the source, at position i) throws, no item after it
/// is admitted; the results before it are delivered first; then the join
/// requests stop, waits for the items still running, and rethrows the
/// exception from the call that would have returned item i. The join is
/// over after that: later calls return nothing.
///
/// Structured concurrency: `close()` and the destructor request stop (every
/// item's `stop_token`), wait for the items in flight, and return only when
/// nothing of the join runs any more - no item, no coroutine frame of one,
/// no source pull. Items may therefore borrow anything that outlives the
/// join. A thread that waits here runs the executor's queued work (this
/// join's runners among it) meanwhile, so joins nested in items of other
/// joins never deadlock the executor. The flip side: a synchronous item
/// may run on the consumer's thread, so it must not block waiting for
/// something the consumer does later (such as closing the join); an item
/// that has to wait returns a `Task` and awaits.
///
/// Thread safety: one consumer; the member functions are externally
/// synchronized. Moving a join moves its engine; a moved-from join is empty.
template <typename T>
class SeqJoin {
  public:
    /// Blocking input iterator; `++` may block and may throw an item's error.
    class Iterator {
      public:
        using value_type = T;
        using difference_type = std::ptrdiff_t;

        Iterator() = default;
        T& operator*() const { return *join_->current_; }
        Iterator& operator++() {
            join_->current_ = join_->next();
            return *this;
        }
        void operator++(int) { ++*this; }
        friend bool operator==(Iterator const& iterator, std::default_sentinel_t) noexcept {
            return iterator.at_end();
        }

      private:
        friend SeqJoin;
        [[nodiscard]] bool at_end() const noexcept { return !join_->current_; }
        explicit Iterator(SeqJoin* join) noexcept : join_(join) {}
        SeqJoin* join_ = nullptr;
    };

    /// Awaitable returned by `next_async()`.
    class NextAwaiter : private detail::SeqJoinCore<T>::AsyncConsumer {
      public:
        explicit NextAwaiter(detail::SeqJoinCore<T>& core) noexcept
            : detail::SeqJoinCore<T>::AsyncConsumer(&resume), core_(core) {}
        [[nodiscard]] bool await_ready() const noexcept { return false; }
        bool await_suspend(std::coroutine_handle<> handle) noexcept {
            handle_ = handle;
            return !core_.next_async(*this);
        }
        /// The next result, or nothing at the end.
        /// @throws the exception of the item at this position.
        std::optional<T> await_resume() {
            if (this->error) {
                std::rethrow_exception(this->error);
            }
            return std::move(this->value);
        }

      private:
        static void resume(Work& work) noexcept {
            auto& self = static_cast<NextAwaiter&>(work);
            if (self.core_.next_async(self)) {
                self.handle_.resume();
            }
        }

        detail::SeqJoinCore<T>& core_;
        std::coroutine_handle<> handle_;
    };

    /// Made by `seq_join`.
    explicit SeqJoin(std::unique_ptr<detail::SeqJoinCore<T>> core) noexcept : core_(std::move(core)) {}
    SeqJoin(SeqJoin&&) noexcept = default;
    SeqJoin& operator=(SeqJoin&& other) noexcept {
        if (this != &other) {
            close();
            core_ = std::move(other.core_);
            current_ = std::move(other.current_);
        }
        return *this;
    }
    /// Closes the join; see `close()`.
    ~SeqJoin() { close(); }

    /// The next result in source order, or nothing after the last. Blocks,
    /// running the executor's queued work while it waits.
    /// @throws the exception of the item (or source) at this position.
    /// @throws InvalidArgument if the join was moved from.
    std::optional<T> next() { return core().next(); }

    /// `co_await join.next_async()`: like `next()`, but suspends the calling
    /// coroutine instead of blocking.
    /// @throws InvalidArgument if the join was moved from.
    [[nodiscard]] NextAwaiter next_async() { return NextAwaiter(core()); }

    /// Requests stop and blocks until nothing of the join runs any more; the
    /// join then yields no more results. Idempotent; the destructor calls it.
    void close() noexcept {
        if (core_) {
            core_->close();
        }
    }

    /// Starts iterating: fetches the first result. Call once.
    /// @throws as `next()`.
    Iterator begin() {
        current_ = next();
        return Iterator(this);
    }
    [[nodiscard]] std::default_sentinel_t end() const noexcept { return {}; }

  private:
    detail::SeqJoinCore<T>& core() const {
        SPILLWAY_EXPECTS(core_, "this seq_join was moved from", InvalidArgument);
        return *core_;
    }

    std::unique_ptr<detail::SeqJoinCore<T>> core_;
    /// The result the iterator points at.
    std::optional<T> current_;
};

/// Runs `fn(item, stop_token)` for every item of `source` on `executor`,
/// with at most `window` items in flight, and returns their results in
/// source order (see `SeqJoin`). `fn` returns a value, or a `Task` of one
/// so that an item can wait (for I/O, a timer, another item) without
/// holding a thread. Take the `stop_token` by const reference.
///
/// `source` is an input range (an lvalue is borrowed and must outlive the
/// join; an rvalue is moved in) or a generator function returning
/// `std::optional<Item>`; it is only ever used by one thread at a time.
/// Nothing is pulled or run before the first result is asked for.
/// @throws InvalidArgument if `window` is 0 or `options.grain` is not in
/// [1, window].
template <typename Source, typename Fn>
    requires SeqJoinSource<Source> && SeqJoinFunction<Fn, detail::source_item_t<Source>>
[[nodiscard]] auto seq_join(Executor& executor, std::size_t window, Source&& source, Fn fn, SeqJoinOptions options = {})
    -> SeqJoin<detail::awaited_t<std::invoke_result_t<Fn&, detail::source_item_t<Source>, std::stop_token const&>>> {
    using T = detail::awaited_t<std::invoke_result_t<Fn&, detail::source_item_t<Source>, std::stop_token const&>>;
    SPILLWAY_EXPECTS(window > 0, "seq_join needs a window of at least 1 item", InvalidArgument);
    SPILLWAY_EXPECTS(options.grain > 0 && options.grain <= window,
                     "seq_join grain must be between 1 and the window (" << window << " items), got "
                     << options.grain << "; lower option `seq_join_grain` or widen the window",
                     InvalidArgument);
    return SeqJoin<T>(std::make_unique<detail::SeqJoinState<T, Source, Fn>>(
        executor, window, std::forward<Source>(source), std::move(fn), std::move(options)));
}

}  // namespace spillway::exec
