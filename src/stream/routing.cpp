#include <spillway/stream/routing.hpp>

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <utility>

#include <spillway/core/error.hpp>

namespace spillway::stream {
namespace {

/// The actor of `route_by_sequence`, its outputs checked.
Actor route(Channel& input, std::vector<Channel*> outputs) {
    std::vector<Channel*> closed_at_exit = outputs;
    closed_at_exit.push_back(&input);
    CloseAtExit closer(std::move(closed_at_exit));
    while (std::optional<ParkedMessage> parked = co_await input.receive_parked()) {
        if (std::any_of(outputs.begin(), outputs.end(), [](Channel const* output) { return output->closed(); })) {
            co_return;
        }
        auto& output = *outputs[parked->sequence() % outputs.size()];
        if (!co_await output.send_parked(std::move(*parked))) {
            co_return;
        }
    }
}

/// Closes `output` when the last of the actors sharing `open` ends.
class CloseWhenLast {
  public:
    CloseWhenLast(Channel& output, std::shared_ptr<std::atomic<std::size_t>> open)
        : output_(output), open_(std::move(open)) {}
    ~CloseWhenLast() {
        if (open_->fetch_sub(1) == 1) {
            output_.close();
        }
    }
    CloseWhenLast(CloseWhenLast const&) = delete;
    CloseWhenLast& operator=(CloseWhenLast const&) = delete;

  private:
    Channel& output_;
    std::shared_ptr<std::atomic<std::size_t>> open_;
};

/// Moves every message of `input` to `output`, parked, until the input ends
/// or the output closes; the last of the actors sharing `open` closes `output`.
Actor forward(Channel& input, Channel& output, std::shared_ptr<std::atomic<std::size_t>> open) {
    CloseAtExit closer{&input};
    CloseWhenLast const last(output, std::move(open));
    while (std::optional<ParkedMessage> parked = co_await input.receive_parked()) {
        if (!co_await output.send_parked(std::move(*parked))) {
            co_return;
        }
    }
}

}  // namespace

Actor route_by_sequence(Channel& input, std::vector<Channel*> outputs) {
    SPILLWAY_EXPECTS(!outputs.empty(), "route_by_sequence needs at least one output", InvalidArgument);
    return route(input, std::move(outputs));
}

std::vector<Actor> merge(std::vector<Channel*> inputs, Channel& output) {
    SPILLWAY_EXPECTS(!inputs.empty(), "merge needs at least one input", InvalidArgument);
    SPILLWAY_EXPECTS(std::ranges::find(inputs, &output) == inputs.end(), "merge names its output among its inputs",
                     InvalidArgument);
    auto const open = std::make_shared<std::atomic<std::size_t>>(inputs.size());
    std::vector<Actor> actors;
    actors.reserve(inputs.size());
    for (Channel* input : inputs) {
        actors.push_back(forward(*input, output, open));
    }
    return actors;
}

}  // namespace spillway::stream
