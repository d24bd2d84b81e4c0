#pragma once
/// @file
/// The exception types spillway throws, and the macros that check conditions
/// at the public boundary.
///
/// Every error spillway raises is a `spillway::Error`. The same failure raises
/// the same type everywhere:
///
/// | type               | raised when                                              |
/// |--------------------|----------------------------------------------------------|
/// | `InvalidArgument`  | an argument, option value or call order is invalid       |
/// | `OutOfMemory`      | a memory limit cannot be met, even after spilling        |
/// | `ReservationError` | a reservation is misused (wrong tier, too small, ...)    |
/// | `IoError`          | the operating system refused a file operation            |
/// | `CorruptData`      | data read back fails its checksum or is malformed        |

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace spillway {

/// Base of every exception spillway throws. `what()` is a message a user can
/// act on: it names the limit or the setting involved where there is one.
class Error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;

    /// Whether another rank raised this error and a collective of this rank
    /// relays it ("... failed because rank 2 gave up: ..."): where several
    /// ranks fail together, the one that is not relayed is the cause.
    [[nodiscard]] bool relayed_from_peer() const noexcept { return relayed_from_peer_; }
    /// Marks this error as relayed from another rank.
    void mark_relayed_from_peer() noexcept { relayed_from_peer_ = true; }

  private:
    bool relayed_from_peer_ = false;
};

/// An argument, option value or call order is invalid. API misuse, such as
/// calling a method after the object was finished, is reported with this type.
class InvalidArgument : public Error {
  public:
    using Error::Error;
};

/// A memory limit cannot be met, even after spilling.
class OutOfMemory : public Error {
  public:
    using Error::Error;
};

/// A memory reservation was misused: wrong tier, too small, or already spent.
class ReservationError : public Error {
  public:
    using Error::Error;
};

/// The operating system refused a file operation. The message names the path.
class IoError : public Error {
  public:
    using Error::Error;
};

/// Data read back failed its checksum, was truncated, or is malformed. The
/// message names where the data came from.
class CorruptData : public Error {
  public:
    using Error::Error;
};

/// A peer rank sent nothing for longer than a configured timeout: it has
/// stopped, hangs, or cannot be reached. The message names the rank, the
/// operation, the time waited and the option that sets the timeout.
class PeerTimeout : public Error {
  public:
    using Error::Error;
};

namespace detail {

/// Returns `message`, after logging it at debug level with the source file
/// and line it was raised at: users see the message, developers find the
/// place with `SPILLWAY_LOG_LEVEL=debug`.
std::string raised_at(std::string message, char const* file, int line);

/// Prints `message` with its location to stderr and aborts. Used where an
/// error cannot be recovered from: destructors, `noexcept` paths, broken
/// invariants.
[[noreturn]] void fatal(std::string_view message, char const* file, int line) noexcept;

}  // namespace detail
}  // namespace spillway

/// Throws `Type` (a `spillway::Error` subclass) with `message` unless
/// `condition` holds; the source location goes to the debug log. `message` is a stream expression:
/// `SPILLWAY_EXPECTS(n > 0, "n must be positive, got " << n, InvalidArgument)`.
#define SPILLWAY_EXPECTS(condition, message, Type)                                \
    do {                                                                          \
        if (!(condition)) [[unlikely]] {                                          \
            SPILLWAY_FAIL(message, Type);                                         \
        }                                                                         \
    } while (0)

/// Throws `Type` with `message` (a stream expression); the source location
/// goes to the debug log.
#define SPILLWAY_FAIL(message, Type)                                              \
    do {                                                                          \
        std::ostringstream spillway_error_stream_;                                \
        spillway_error_stream_ << message;                                        \
        throw ::spillway::Type(::spillway::detail::raised_at(                     \
            spillway_error_stream_.str(), __FILE__, __LINE__));                   \
    } while (0)

/// Prints `message` (a stream expression) with the source location and aborts.
#define SPILLWAY_FATAL(message)                                                   \
    do {                                                                          \
        std::ostringstream spillway_fatal_stream_;                                \
        spillway_fatal_stream_ << message;                                        \
        ::spillway::detail::fatal(                                                \
            spillway_fatal_stream_.str(), __FILE__, __LINE__);                    \
    } while (0)

/// Checks an internal invariant in every build type; a broken invariant is a
/// bug in spillway, so it aborts with `message` instead of throwing.
#define SPILLWAY_ASSERT(condition, message)                                       \
    do {                                                                          \
        if (!(condition)) [[unlikely]] {                                          \
            SPILLWAY_FATAL("invariant broken: " #condition ": " << message);      \
        }                                                                         \
    } while (0)
