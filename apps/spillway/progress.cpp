#include "progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include <spillway/core/options.hpp>

namespace spillway::cli {
namespace {

/// How often a bar is redrawn at most.
constexpr auto bar_interval = std::chrono::milliseconds(100);
/// The characters of a bar between its brackets.
constexpr std::size_t bar_width = 30;

std::string format_amount(std::uint64_t amount, Progress::Unit unit) {
    return unit == Progress::Unit::bytes ? format_bytes(amount) : std::to_string(amount);
}

}  // namespace

Progress::Style Progress::choose(bool quiet, int descriptor) noexcept {
    if (quiet) {
        return Style::none;
    }
    return ::isatty(descriptor) == 1 ? Style::bar : Style::lines;
}

void Progress::start(std::string name, std::uint64_t total, Unit unit) {
    name_ = std::move(name);
    total_ = total;
    unit_ = unit;
    started_ = std::chrono::steady_clock::now();
    done_.store(0, std::memory_order_relaxed);
    MutexLock lock(print_mutex_);
    printed_tenths_ = 0;
    last_print_ = started_;
}

void Progress::advance(std::uint64_t amount) {
    // Relaxed: the count is only displayed; finish() reads it after the
    // threads that advanced were joined.
    auto const done = done_.fetch_add(amount, std::memory_order_relaxed) + amount;
    if (style_ == Style::none) {
        return;
    }
    if (style_ == Style::lines) {
        // One line per tenth crossed; the last tenth is finish()'s line.
        auto const tenths = total_ == 0 ? 0 : std::min<std::uint64_t>(done * 10 / total_, 10);
        MutexLock lock(print_mutex_);
        if (tenths > printed_tenths_ && tenths < 10) {
            printed_tenths_ = tenths;
            print(done, false);
        }
        return;
    }
    auto const now = std::chrono::steady_clock::now();
    MutexLock lock(print_mutex_);
    if (now - last_print_ >= bar_interval) {
        last_print_ = now;
        print(done, false);
    }
}

void Progress::complete() {
    auto const done = done_.load(std::memory_order_relaxed);
    if (done < total_) {
        advance(total_ - done);
    }
}

void Progress::finish() {
    if (style_ == Style::none) {
        return;
    }
    MutexLock lock(print_mutex_);
    print(done_.load(std::memory_order_relaxed), true);
}

void Progress::print(std::uint64_t done, bool last) {
    if (style_ == Style::listener) {
        listener_(name_, done, total_, unit_ == Unit::bytes, last);
        return;
    }
    std::chrono::duration<double> const elapsed = std::chrono::steady_clock::now() - started_;
    std::ostringstream line;
    if (style_ == Style::bar) {
        auto const filled = total_ == 0 ? 0 : std::min(bar_width, static_cast<std::size_t>(done * bar_width / total_));
        line << '\r' << name_ << " [" << std::string(filled, '#') << std::string(bar_width - filled, '.') << "]";
    } else {
        line << name_ << ":";
    }
    if (total_ != 0) {
        char percent[16];
        std::snprintf(percent, sizeof percent, " %3.0f%%",
                      100.0 * static_cast<double>(std::min(done, total_)) / static_cast<double>(total_));
        line << percent;
    }
    line << " " << format_amount(done, unit_);
    if (total_ != 0) {
        line << " of " << format_amount(total_, unit_);
    }
    if (elapsed.count() > 0) {
        auto const rate = static_cast<std::uint64_t>(static_cast<double>(done) / elapsed.count());
        line << ", " << format_amount(rate, unit_) << (unit_ == Unit::bytes ? "/s" : " per s");
    }
    if (last) {
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, ", done in %.1f s", elapsed.count());
        line << seconds;
    }
    // A bar pads over the remains of a longer one drawn before.
    line << (style_ == Style::bar ? "   " : "") << (last || style_ == Style::lines ? "\n" : "");
    out_ << line.str() << std::flush;
}

}  // namespace spillway::cli
