#pragma once
/// @file
/// spillway's error types, one by one, for code that must keep an error's
/// type: the translation to Python exceptions, and a rethrow with another
/// message.

#include <spillway/core/error.hpp>

namespace spillway::python {

/// Calls `action(error, name)` with `error` as the most derived of
/// spillway's error types and that type's name, which is also the name of
/// the Python exception that stands for it (`spillway._errors`).
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

}  // namespace spillway::python
