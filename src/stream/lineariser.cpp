#include <spillway/stream/lineariser.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include <spillway/core/error.hpp>

namespace spillway::stream {

Actor linearise(std::vector<Channel*> inputs, Channel& output) {
    std::vector<Channel*> closed_at_exit = inputs;
    closed_at_exit.push_back(&output);
    CloseAtExit closer(std::move(closed_at_exit));
    SPILLWAY_EXPECTS(!inputs.empty(), "linearise needs at least one input", InvalidArgument);

    // heads[i]: the next message of input i; nothing once it has ended.
    std::vector<std::optional<ParkedMessage>> heads(inputs.size());
    // The sequence number input i sent last.
    std::vector<std::optional<std::uint64_t>> previous(inputs.size());
    auto const refill = [&](std::size_t input) -> exec::Task<void> {
        heads[input] = co_await inputs[input]->receive_parked();
        SPILLWAY_EXPECTS(
            !previous[input] || !heads[input] || heads[input]->sequence() >= *previous[input],
            "linearise: input " << input << " sent sequence number " << heads[input]->sequence() << " after "
                                << *previous[input] << "; each input must send non-decreasing sequence numbers",
            InvalidArgument
        );
    };
    for (std::size_t input = 0; input < inputs.size(); ++input) {
        co_await refill(input);
    }
    while (true) {
        std::optional<std::size_t> smallest;
        for (std::size_t input = 0; input < heads.size(); ++input) {
            if (heads[input] && (!smallest || heads[input]->sequence() < heads[*smallest]->sequence())) {
                smallest = input;
            }
        }
        if (!smallest) {
            co_return;  // every input has ended
        }
        previous[*smallest] = heads[*smallest]->sequence();
        if (!co_await output.send_parked(std::move(*heads[*smallest]))) {
            co_return;  // the consumer has stopped
        }
        co_await refill(*smallest);
    }
}

}  // namespace spillway::stream
