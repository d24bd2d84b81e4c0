#pragma once
/// @file
/// spillway's error types, one by one, for code that must keep or name an
/// error's type: a translation to another language's exceptions, a rethrow
/// with another message, a report that names the type.

#include <spillway/core/error.hpp>

namespace spillway {

/// Calls `action(error, name)` with `error` as the most derived of the types
/// `core/error.hpp` lists and that type's name ("OutOfMemory"), or as
/// `Error` and "Error" for any other; returns what `action` returns.
template <typename Action>
decltype(auto) with_error_type(Error const& error, Action&& action) {
    if (auto const* typed = dynamic_cast<InvalidArgument const*>(&error)) {
        return action(*typed, "InvalidArgument");
    }
    if (auto const* typed = dynamic_cast<OutOfMemory const*>(&error)) {
        return action(*typed, "OutOfMemory");
    }
    if (auto const* typed = dynamic_cast<ReservationError const*>(&error)) {
        return action(*typed, "ReservationError");
    }
    if (auto const* typed = dynamic_cast<IoError const*>(&error)) {
        return action(*typed, "IoError");
    }
    if (auto const* typed = dynamic_cast<CorruptData const*>(&error)) {
        return action(*typed, "CorruptData");
    }
    if (auto const* typed = dynamic_cast<PeerTimeout const*>(&error)) {
        return action(*typed, "PeerTimeout");
    }
    return action(error, "Error");
}

}  // namespace spillway
