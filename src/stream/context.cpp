#include <spillway/stream/context.hpp>

#include <algorithm>

#include <spillway/stream/channel.hpp>

namespace spillway::stream {

void Context::abort() noexcept {
    MutexLock lock(mutex_);
    aborted_ = true;
    abort_source_.request_stop();
    for (Channel* channel : channels_) {
        channel->abort();
    }
}

bool Context::aborted() const noexcept {
    MutexLock lock(mutex_);
    return aborted_;
}

bool Context::add(Channel& channel) {
    MutexLock lock(mutex_);
    channels_.push_back(&channel);
    return aborted_;
}

void Context::remove(Channel& channel) noexcept {
    MutexLock lock(mutex_);
    std::erase(channels_, &channel);
}

}  // namespace spillway::stream
