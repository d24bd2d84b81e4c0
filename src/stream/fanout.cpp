#include <spillway/stream/fanout.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include <spillway/core/error.hpp>
#include <spillway/stream/reserve_memory.hpp>

namespace spillway::stream {
namespace {

/// A copy of `original`, its buffer reserved in `context` with
/// `reserve_memory`.
exec::Task<Message> copy(Context& context, Message const& original) {
    auto const& data = original.payload.data;
    auto reservation =
        co_await reserve_memory(context.resource(), context.executor(), data.size(), context.abort_token());
    auto buffer = context.resource().make_buffer(data.size(), reservation);
    std::ranges::copy(data.data(), buffer.data().begin());
    Message copied{
        .sequence = original.sequence,
        .payload = shuffle::PackedData{.metadata = original.payload.metadata, .data = std::move(buffer)},
    };
    co_return copied;
}

/// Sends every message of `input` to each open output in turn (copies to
/// all but the last), until the input ends or every output has closed.
/// `owned` keeps outputs that belong to the fanout alive.
Actor send_to_each(
    Channel& input, std::vector<Channel*> outputs, [[maybe_unused]] std::vector<std::shared_ptr<Channel>> owned
) {
    std::vector<Channel*> closed_at_exit = outputs;
    closed_at_exit.push_back(&input);
    CloseAtExit closer(std::move(closed_at_exit));
    while (!outputs.empty()) {
        std::optional<Message> message = co_await input.receive();
        if (!message) {
            co_return;
        }
        std::vector<Channel*> open;
        for (std::size_t index = 0; index < outputs.size(); ++index) {
            std::optional<Message> sent;
            if (index + 1 == outputs.size()) {
                sent = std::move(message);
            } else {
                sent = co_await copy(input.context(), *message);
            }
            if (co_await outputs[index]->send(std::move(*sent))) {
                open.push_back(outputs[index]);
            }
        }
        outputs = std::move(open);
    }
}

/// Moves every message of `queue` to `output`, parked, until the queue ends
/// or the output closes.
Actor forward(std::shared_ptr<Channel> queue, Channel& output) {
    CloseAtExit closer{queue.get(), &output};
    while (std::optional<ParkedMessage> parked = co_await queue->receive_parked()) {
        if (!co_await output.send_parked(std::move(*parked))) {
            co_return;
        }
    }
}

}  // namespace

std::vector<Actor> fanout(Channel& input, std::vector<Channel*> outputs, FanoutPolicy policy) {
    SPILLWAY_EXPECTS(!outputs.empty(), "fanout needs at least one output", InvalidArgument);
    std::vector<Channel*> sorted = outputs;
    std::ranges::sort(sorted);
    SPILLWAY_EXPECTS(
        std::ranges::adjacent_find(sorted) == sorted.end() && !std::ranges::binary_search(sorted, &input),
        "fanout names a channel twice among its input and outputs", InvalidArgument
    );
    std::vector<Actor> actors;
    if (policy == FanoutPolicy::bounded) {
        actors.push_back(send_to_each(input, std::move(outputs), {}));
        return actors;
    }
    std::vector<std::shared_ptr<Channel>> queues;
    std::vector<Channel*> queue_pointers;
    for (Channel* output : outputs) {
        queues.push_back(std::make_shared<Channel>(input.context(), ChannelLimits::unbounded()));
        queue_pointers.push_back(queues.back().get());
        actors.push_back(forward(queues.back(), *output));
    }
    actors.push_back(send_to_each(input, std::move(queue_pointers), std::move(queues)));
    return actors;
}

}  // namespace spillway::stream
