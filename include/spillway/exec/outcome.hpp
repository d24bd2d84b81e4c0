#pragma once
/// @file
/// `Outcome<T>`: the value a unit of work produced, or the exception it threw.

#include <exception>
#include <utility>
#include <variant>

namespace spillway::exec {

/// Either a value or an exception; what `parallel_join_settled` reports for
/// each item.
///
/// Thread safety: externally synchronized, like any value type.
template <typename T>
class Outcome {
  public:
    /// An outcome holding `value`.
    explicit Outcome(T value) : state_(std::in_place_index<0>, std::move(value)) {}
    /// An outcome holding `error`. Requires: `error` is not null.
    explicit Outcome(std::exception_ptr error) noexcept : state_(std::in_place_index<1>, std::move(error)) {}

    /// Whether it holds a value.
    [[nodiscard]] bool has_value() const noexcept { return state_.index() == 0; }

    /// The value. @throws the held exception if there is no value.
    [[nodiscard]] T& value() & {
        rethrow_if_error();
        return std::get<0>(state_);
    }
    [[nodiscard]] T const& value() const& {
        rethrow_if_error();
        return std::get<0>(state_);
    }
    [[nodiscard]] T&& value() && {
        rethrow_if_error();
        return std::get<0>(std::move(state_));
    }

    /// The held exception, or null if it holds a value.
    [[nodiscard]] std::exception_ptr error() const noexcept {
        return has_value() ? nullptr : std::get<1>(state_);
    }

  private:
    void rethrow_if_error() const {
        if (!has_value()) {
            std::rethrow_exception(std::get<1>(state_));
        }
    }

    std::variant<T, std::exception_ptr> state_;
};

}  // namespace spillway::exec
