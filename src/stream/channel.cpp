#include <spillway/stream/channel.hpp>

#include <utility>

#include <spillway/core/error.hpp>

#include "stream/aborted.hpp"

namespace spillway::stream {

Channel::Channel(Context& context, ChannelLimits limits)
    : context_(context),
      queue_(context.executor(), limits.messages, limits.bytes, [](ParkedMessage const& parked) {
          return parked.bytes();
      }) {
    if (context_.add(*this)) {
        abort();
    }
}

Channel::~Channel() {
    context_.remove(*this);
}

void Channel::abort() noexcept {
    aborted_.store(true, std::memory_order_release);
    queue_.close();
    while (queue_.try_receive()) {
        // Each message taken out is freed here.
    }
}

exec::Task<bool> Channel::send(Message message, std::stop_token stop) {
    co_return co_await queue_.send(context_.messages().park(std::move(message)), std::move(stop));
}

exec::Task<std::optional<ParkedMessage>> Channel::receive_parked(std::stop_token stop) {
    std::optional<ParkedMessage> parked = co_await queue_.receive(std::move(stop));
    if (aborted_.load(std::memory_order_acquire)) {
        detail::fail_aborted();
    }
    co_return parked;
}

exec::Task<std::optional<Message>> Channel::receive(std::stop_token stop) {
    std::optional<ParkedMessage> parked = co_await receive_parked(std::move(stop));
    if (!parked) {
        co_return std::nullopt;
    }
    SpillableMessages* const store = parked->store();
    SPILLWAY_EXPECTS(store != nullptr, "a Channel held a moved-from ParkedMessage", InvalidArgument);
    co_return co_await store->unpark(std::move(*parked), context_.abort_token());
}

}  // namespace spillway::stream
