#pragma once
/// @file
/// Whether a thread of this process is blocked in the kernel: a way for a test
/// to know that a call is waiting, without guessing how long that takes.

#include <sys/types.h>

#include <fstream>
#include <string>

namespace spillway::test {

/// Whether the thread `tid` of this process is blocked (state S or D in
/// /proc/self/task/<tid>/stat): waiting on a lock, a condition variable or
/// I/O, not running or runnable. False if the thread is gone.
inline bool thread_blocked(pid_t tid) {
    std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
    std::string text;
    std::getline(stat, text);
    // The thread's name, in parentheses, may hold spaces: the state follows the last ')'.
    auto const name_end = text.rfind(')');
    if (name_end == std::string::npos || name_end + 2 >= text.size()) {
        return false;
    }
    char const state = text[name_end + 2];
    return state == 'S' || state == 'D';
}

}  // namespace spillway::test
