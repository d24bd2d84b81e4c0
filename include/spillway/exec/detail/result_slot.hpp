#pragma once
/// @file
/// `ResultSlot`: where one unit of work leaves its value or its exception.

#include <exception>
#include <optional>
#include <utility>

namespace spillway::exec::detail {

/// The value a unit of work produced, or the exception it threw, or neither
/// while it has not finished (or was skipped after a stop request).
///
/// Thread safety: externally synchronized; the owner hands the slot from
/// the thread that fills it to the one that reads it.
template <typename T>
struct ResultSlot {
    std::optional<T> value;
    std::exception_ptr error;

    /// The value, or the exception rethrown. Requires: the slot is filled.
    T take() {
        if (error) {
            std::rethrow_exception(error);
        }
        return std::move(*value);
    }
};

template <>
struct ResultSlot<void> {
    std::exception_ptr error;

    /// Rethrows the exception, if any.
    void take() const {
        if (error) {
            std::rethrow_exception(error);
        }
    }
};

}  // namespace spillway::exec::detail
