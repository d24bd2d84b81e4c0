#pragma once
/// @file
/// `Context`: what the actors and channels of one streaming pipeline share,
/// and the abort that stops all of them after a failure.

#include <stop_token>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/core/mutex.hpp>
#include <spillway/exec/executor.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/stream/spillable_messages.hpp>

namespace spillway::stream {

class Channel;

/// A receive from a channel of an aborted pipeline: another actor failed,
/// and its error is the one `run_actors` reports.
class PipelineAborted : public Error {
  public:
    using Error::Error;
};

/// One pipeline's executor, memory and waiting messages: its actors run on
/// `executor()`, its data lives in `resource()`, and every message waiting
/// in one of its channels is parked in `messages()`, spillable through one
/// spill function.
///
/// `abort()` stops the whole pipeline after a failure: every channel of the
/// context closes and frees what it holds; sends fail and receives throw
/// `PipelineAborted`, so that no actor mistakes the failure for the end of
/// its input. `run_actors` and `CloseAtExit` abort the context when an actor
/// fails.
///
/// Thread safety: every member function may be called concurrently.
/// Lifetime: the executor and the resource must outlive the context, and
/// the context its channels and actors.
class Context {
  public:
    /// A pipeline on `executor` whose data lives in `resource`; its waiting
    /// messages spill with `spill_priority` (higher spills first).
    /// @throws InvalidArgument if called from inside a spill function.
    Context(exec::Executor& executor, memory::BufferResource& resource, int spill_priority = 0)
        : executor_(executor), resource_(resource), messages_(resource, executor, spill_priority) {}
    Context(Context const&) = delete;
    Context& operator=(Context const&) = delete;

    /// Where the pipeline's actors run.
    [[nodiscard]] exec::Executor& executor() const noexcept { return executor_; }
    /// Where the pipeline's data lives.
    [[nodiscard]] memory::BufferResource& resource() const noexcept { return resource_; }
    /// The messages waiting in the pipeline's channels.
    [[nodiscard]] SpillableMessages& messages() noexcept { return messages_; }

    /// Aborts the pipeline (see the class comment), including channels made
    /// later. Idempotent.
    void abort() noexcept;
    /// Whether `abort()` has been called.
    [[nodiscard]] bool aborted() const noexcept;
    /// A token that `abort()` requests, so that the pipeline's waits for
    /// memory (`reserve_memory`, `SpillableMessages::unpark`) end with
    /// `PipelineAborted` instead of waiting for memory that may never be
    /// freed.
    [[nodiscard]] std::stop_token abort_token() const noexcept { return abort_source_.get_token(); }

  private:
    friend Channel;
    /// Adds `channel` to those `abort` closes; returns whether the context
    /// is aborted already.
    bool add(Channel& channel);
    /// Removes `channel`, which is being destroyed.
    void remove(Channel& channel) noexcept;

    exec::Executor& executor_;
    memory::BufferResource& resource_;
    SpillableMessages messages_;

    /// Taken by `abort` while it aborts the channels, which take their own
    /// locks under it.
    mutable Mutex mutex_;
    std::vector<Channel*> channels_ SPILLWAY_GUARDED_BY(mutex_);
    bool aborted_ SPILLWAY_GUARDED_BY(mutex_) = false;
    std::stop_source abort_source_;  ///< requested by `abort`
};

}  // namespace spillway::stream
