#pragma once
/// @file
/// An environment variable set for a scope, and restored when it ends, even
/// when an assertion returns early.

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace spillway::test {

/// Sets `name` to `value` for the lifetime of the object, then puts back
/// what it was (or unsets it). Not thread-safe, as `setenv` is not.
class ScopedEnvironment {
  public:
    ScopedEnvironment(std::string name, std::string const& value) : name_(std::move(name)) {
        if (char const* previous = std::getenv(name_.c_str())) {
            previous_ = previous;
        }
        ::setenv(name_.c_str(), value.c_str(), 1);
    }
    ~ScopedEnvironment() {
        if (previous_) {
            ::setenv(name_.c_str(), previous_->c_str(), 1);
        } else {
            ::unsetenv(name_.c_str());
        }
    }
    ScopedEnvironment(ScopedEnvironment const&) = delete;
    ScopedEnvironment& operator=(ScopedEnvironment const&) = delete;

  private:
    std::string name_;
    std::optional<std::string> previous_;
};

}  // namespace spillway::test
