#pragma once
/// @file
/// Measures how many threads are inside a region at once, so a test can
/// check a bound from both sides: the peak never exceeds the limit, and it
/// reaches it (which a serialized implementation would not).

#include <algorithm>
#include <atomic>
#include <cstddef>

namespace spillway::test {

/// Counts current and peak occupancy of a region.
///
/// Thread safety: safe to use concurrently.
class ConcurrencyTracker {
  public:
    /// Marks one thread inside the region for the lifetime of the scope.
    class Scope {
      public:
        explicit Scope(ConcurrencyTracker& tracker) : tracker_(tracker) { tracker_.enter(); }
        ~Scope() { tracker_.leave(); }
        Scope(Scope const&) = delete;
        Scope& operator=(Scope const&) = delete;

      private:
        ConcurrencyTracker& tracker_;
    };

    /// The largest number of threads seen inside at once.
    [[nodiscard]] std::size_t peak() const noexcept { return peak_.load(std::memory_order_acquire); }
    /// The number of threads inside now.
    [[nodiscard]] std::size_t current() const noexcept {
        return current_.load(std::memory_order_acquire);
    }

  private:
    void enter() noexcept {
        // acq_rel: the increment is ordered with the matching leave().
        auto const now = current_.fetch_add(1, std::memory_order_acq_rel) + 1;
        auto seen = peak_.load(std::memory_order_relaxed);
        while (seen < now
               && !peak_.compare_exchange_weak(seen, now, std::memory_order_acq_rel,
                                               std::memory_order_relaxed))
        {
        }
    }
    void leave() noexcept { current_.fetch_sub(1, std::memory_order_acq_rel); }

    std::atomic<std::size_t> current_{0};
    std::atomic<std::size_t> peak_{0};
};

}  // namespace spillway::test
