#pragma once
/// @file
/// `stream::Channel`: a bounded queue of messages between actors, whose
/// waiting messages are spillable.

#include <atomic>
#include <cstddef>
#include <limits>
#include <optional>
#include <stop_token>

#include <spillway/exec/channel.hpp>
#include <spillway/exec/task.hpp>
#include <spillway/stream/context.hpp>
#include <spillway/stream/message.hpp>
#include <spillway/stream/spillable_messages.hpp>

namespace spillway::stream {

/// How much a `Channel` holds before a send waits: at most `messages`
/// messages of at most `bytes` bytes together (buffers and metadata). A
/// message larger than `bytes` goes in alone once the channel is empty.
struct ChannelLimits {
    std::size_t messages = 8;
    std::size_t bytes = std::numeric_limits<std::size_t>::max();

    /// Limits that never make a send wait: what the channel holds is bounded
    /// only by the disk, since its messages spill.
    [[nodiscard]] static constexpr ChannelLimits unbounded() noexcept {
        return {.messages = std::numeric_limits<std::size_t>::max(), .bytes = std::numeric_limits<std::size_t>::max()};
    }
};

/// A multi-producer, multi-consumer FIFO of messages between the actors of
/// one pipeline. `co_await send(message)` parks the message in the
/// context's `SpillableMessages`, where it may be spilled while it waits,
/// and suspends while the channel is full (`ChannelLimits`); `co_await
/// receive()` suspends while it is empty and hands the next message back in
/// HOST memory, reading a spilled one back with a reservation it waits for.
///
/// `close()` ends the stream: waiting and later sends fail (their message
/// is freed), and receivers drain what is buffered, then get nothing. A
/// producer closes its output when it has sent everything; a consumer that
/// stops early closes its input, so that its producer's next send fails and
/// the producer stops too (`CloseAtExit` does both). Messages still buffered
/// when the channel is destroyed are freed, wherever they are. When the
/// context is aborted (`Context::abort`), the channel closes and frees what
/// it holds at once, and receives throw `PipelineAborted`.
///
/// Actors that route messages without reading them use `send_parked` and
/// `receive_parked`, which move a message from channel to channel without
/// reading a spilled buffer back.
///
/// Waiters resume on the context's executor. A send or receive given a stop
/// token ends early when stop is requested, as `exec::Channel`'s do.
///
/// Thread safety: every member function may be called concurrently.
/// Requires: no coroutine waits on the channel when it is destroyed.
/// Lifetime: the context must outlive the channel.
class Channel {
  public:
    /// An open, empty channel of `context`'s pipeline; closed at once if
    /// the context is aborted.
    /// @throws InvalidArgument if a limit is 0.
    explicit Channel(Context& context, ChannelLimits limits = {});
    ~Channel();
    Channel(Channel const&) = delete;
    Channel& operator=(Channel const&) = delete;

    /// Parks `message` and puts it in the channel, waiting while the
    /// channel is full. Returns false if the channel was closed, or stop was
    /// requested, first; the message is freed then.
    /// @throws as `SpillableMessages::park`.
    exec::Task<bool> send(Message message, std::stop_token stop = {});

    /// The next message, in HOST memory; nothing once the channel is closed
    /// and drained, or if stop was requested first.
    /// @throws PipelineAborted if the context is aborted, while it waits for
    ///         a message or for the memory to read a spilled one back.
    /// @throws as `SpillableMessages::unpark`; the message is lost then.
    exec::Task<std::optional<Message>> receive(std::stop_token stop = {});

    /// `co_await send_parked(parked, stop)`: as `send`, for a message parked
    /// already (in this or another context's store, where it stays).
    [[nodiscard]] exec::Channel<ParkedMessage>::SendAwaiter send_parked(
        ParkedMessage parked, std::stop_token stop = {}
    ) {
        return queue_.send(std::move(parked), std::move(stop));
    }

    /// As `receive`, but the message stays parked, wherever its buffer is.
    /// @throws PipelineAborted if the context is aborted.
    exec::Task<std::optional<ParkedMessage>> receive_parked(std::stop_token stop = {});

    /// Closes the channel (see the class comment). Idempotent.
    void close() noexcept { queue_.close(); }
    /// Whether `close()` has been called.
    [[nodiscard]] bool closed() const noexcept { return queue_.closed(); }
    /// The messages buffered now (a snapshot).
    [[nodiscard]] std::size_t size() const noexcept { return queue_.size(); }
    /// The bytes of the messages buffered now (a snapshot).
    [[nodiscard]] std::size_t bytes() const noexcept { return queue_.weight(); }
    /// The pipeline the channel belongs to.
    [[nodiscard]] Context& context() const noexcept { return context_; }

  private:
    friend Context;
    /// Closes the channel and frees what it holds; receives throw from now
    /// on. Called by `Context::abort`.
    void abort() noexcept;

    Context& context_;
    exec::Channel<ParkedMessage> queue_;
    std::atomic<bool> aborted_{false};
};

}  // namespace spillway::stream
