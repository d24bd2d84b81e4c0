#pragma once
/// @file
/// The messages waiting in a pipeline's channels, every one of them
/// spillable through one spill function.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <stop_token>
#include <vector>

#include <spillway/exec/executor.hpp>
#include <spillway/exec/task.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/memory/memory_type.hpp>
#include <spillway/memory/spillable_store.hpp>
#include <spillway/stream/message.hpp>

namespace spillway::stream {

class SpillableMessages;

/// A message parked in a `SpillableMessages` store: its sequence number and
/// metadata, and a claim on its buffer, which the store may spill while the
/// message waits. Destroying it frees the buffer wherever it is; `unpark`
/// turns it back into the message.
///
/// Thread safety: a value owned by one thread at a time; move-only.
/// Lifetime: the store must outlive it.
class ParkedMessage {
  public:
    ParkedMessage(ParkedMessage&& other) noexcept;
    /// Frees this message's buffer, then takes over `other`'s.
    ParkedMessage& operator=(ParkedMessage&& other) noexcept;
    ParkedMessage(ParkedMessage const&) = delete;
    ParkedMessage& operator=(ParkedMessage const&) = delete;
    /// Frees the buffer, in whatever tier it is, without reading it back.
    ~ParkedMessage();

    /// The message's sequence number.
    [[nodiscard]] std::uint64_t sequence() const noexcept { return sequence_; }
    /// The bytes the message takes: its buffer's and its metadata's.
    [[nodiscard]] std::size_t bytes() const noexcept { return buffer_size_ + metadata_.size(); }
    /// The store the message is parked in; null once moved from.
    [[nodiscard]] SpillableMessages* store() const noexcept { return store_; }

  private:
    friend SpillableMessages;
    ParkedMessage(
        SpillableMessages& store, memory::SpillableStore::Key key, std::uint64_t sequence,
        std::vector<std::byte> metadata, std::size_t buffer_size
    ) noexcept;

    SpillableMessages* store_;  ///< null once moved from or unparked
    memory::SpillableStore::Key key_;
    std::uint64_t sequence_;
    std::vector<std::byte> metadata_;
    std::size_t buffer_size_;
};

/// The buffers of the messages that wait in a pipeline's channels, kept in
/// one `memory::SpillableStore` (named `stream.messages` in the resource's
/// statistics and trace), so that the spill manager spills all of them
/// through one spill function.
///
/// Victims: the store picks them under its lock and writes them outside it,
/// so channels go on sending and receiving while a spill writes. It frees
/// the amount asked for with the fewest bytes and files: the smallest
/// waiting buffer that covers it alone, else the largest, repeated. Of equal
/// sizes it spills the most recently parked first, which in a FIFO channel
/// is the message furthest from being received.
///
/// Thread safety: every member function may be called concurrently.
/// Lifetime: the resource and the executor must outlive the store, and the
/// store every message parked in it.
class SpillableMessages {
  public:
    /// An empty store of `resource`'s buffers whose spill function is
    /// registered with `spill_priority` (higher spills first); an unpark
    /// that waits for memory sleeps on `executor`.
    /// @throws InvalidArgument if called from inside a spill function.
    SpillableMessages(memory::BufferResource& resource, exec::Executor& executor, int spill_priority = 0);

    /// Parks `message`: its buffer goes into the store, spillable. Under
    /// `MemoryConfig::force_disk` a HOST buffer is written to DISK first.
    /// @throws InvalidArgument if the buffer is empty (moved from) or of
    ///         another resource; the message is freed.
    /// @throws as `BufferResource::move` under `force_disk`.
    [[nodiscard]] ParkedMessage park(Message message);

    /// The message `parked` holds, with its buffer in HOST memory. A
    /// spilled buffer is read back into HOST memory reserved with
    /// `reserve_memory(..., stop)`, so the coroutine waits for room instead
    /// of overbooking, until `stop` is requested.
    /// @throws InvalidArgument if `parked` is empty or of another store.
    /// @throws OutOfMemory, PipelineAborted as `reserve_memory`; IoError /
    ///         CorruptData if the buffer cannot be read back. The message is
    ///         freed either way.
    exec::Task<Message> unpark(ParkedMessage parked, std::stop_token stop = {});

    /// The bytes of the parked buffers in `tier`.
    [[nodiscard]] std::uint64_t bytes(memory::MemoryType tier) const { return store_.bytes(tier); }
    /// The number of parked messages.
    [[nodiscard]] std::size_t size() const { return store_.size(); }

  private:
    friend ParkedMessage;

    memory::BufferResource& resource_;
    exec::Executor& executor_;
    memory::SpillableStore store_;
    std::atomic<memory::SpillableStore::Key> next_key_{0};
};

}  // namespace spillway::stream
