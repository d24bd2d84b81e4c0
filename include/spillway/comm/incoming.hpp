#pragma once
/// @file
/// A message that has been announced to its receiver but whose payload has
/// not been received yet.

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include <spillway/comm/message.hpp>

namespace spillway::comm {

class Communicator;

namespace detail {

/// A backend's hold on the part of a probed message that has not been
/// received. Destroying it discards that part, so that a dropped `Incoming`
/// never blocks its sender.
class PendingReceive {
  public:
    virtual ~PendingReceive() = default;
};

/// What a backend knows about a probed message.
struct ProbedMessage {
    Rank source = 0;
    Tag tag = 0;
    std::vector<std::byte> metadata;
    std::optional<std::size_t> payload_size;  ///< empty when the message has no payload
    std::unique_ptr<PendingReceive> pending;  ///< may be null when nothing is left to receive
};

}  // namespace detail

/// A message returned by `Communicator::probe`: its source, tag, metadata and
/// payload size are known, but no memory has been taken for the payload. Pass
/// it to `Communicator::receive` with a reservation to receive the payload, at
/// any later time and in any order relative to other incoming messages.
///
/// Dropping an `Incoming` without receiving it discards the message (and
/// completes the sender's send). The MPI backend does this by receiving the
/// payload, blocking until it has arrived, into one buffer that all dropped
/// messages share in turn (memory overbooked from the communicator's
/// resource, as large as the largest part dropped, freed when no probed
/// message is left); receive what you want to keep.
///
/// Thread safety: a value owned by one thread at a time; it may be moved
/// between threads.
///
/// Lifetime: must not outlive the communicator that returned it.
class Incoming {
  public:
    /// A probed message of `owner` (for communicator implementations).
    Incoming(Communicator const& owner, detail::ProbedMessage message) noexcept
        : owner_(&owner), message_(std::move(message)) {}

    Incoming(Incoming&& other) noexcept
        : owner_(std::exchange(other.owner_, nullptr)), message_(std::move(other.message_)) {}
    /// Discards this message (see the class comment), then takes over `other`'s.
    Incoming& operator=(Incoming&& other) noexcept {
        if (this != &other) {
            owner_ = std::exchange(other.owner_, nullptr);
            message_ = std::move(other.message_);
        }
        return *this;
    }
    Incoming(Incoming const&) = delete;
    Incoming& operator=(Incoming const&) = delete;
    /// Discards the message unless it has been received.
    ~Incoming() = default;

    /// The rank that sent the message.
    [[nodiscard]] Rank source() const noexcept { return message_.source; }
    /// The tag it was sent with.
    [[nodiscard]] Tag tag() const noexcept { return message_.tag; }
    /// The sender's metadata bytes. Valid while this object is.
    [[nodiscard]] std::span<std::byte const> metadata() const noexcept { return message_.metadata; }
    /// The size of the payload in bytes, or nothing if the sender sent no payload.
    [[nodiscard]] std::optional<std::size_t> payload_size() const noexcept {
        return message_.payload_size;
    }

  private:
    friend class Communicator;

    /// The communicator that may receive this message; null once it has been
    /// received or moved from.
    Communicator const* owner_;
    detail::ProbedMessage message_;
};

}  // namespace spillway::comm
