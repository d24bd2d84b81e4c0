#include <spillway/stream/transform.hpp>

#include <memory>
#include <optional>
#include <utility>

#include <spillway/core/error.hpp>
#include <spillway/memory/host_allocator.hpp>
#include <spillway/stream/lineariser.hpp>
#include <spillway/stream/table_message.hpp>

namespace spillway::stream {
namespace {

/// Applies `function` to the tables it takes from `input` and sends the
/// results to `results`, which it owns with the lineariser.
Actor transform_worker(Channel& input, std::shared_ptr<Channel> results, std::shared_ptr<TableFunction const> function) {
    CloseAtExit closer{&input, results.get()};
    Context& context = input.context();
    while (std::optional<Message> message = co_await input.receive()) {
        std::optional<table::Table> result;
        {
            // No co_await inside: a scope ends on the thread that began it.
            memory::ScopedHostResource const scope(&context.resource());
            result = (*function)(unpack_table(*message));
        }
        auto const sequence = message->sequence;
        message.reset();
        Message packed = co_await pack_table(context, sequence, *result);
        result.reset();
        if (!co_await results->send(std::move(packed))) {
            co_return;
        }
    }
}

/// `linearise` of `results` into `output`, keeping the channels alive.
Actor merge(std::vector<std::shared_ptr<Channel>> results, Channel& output) {
    std::vector<Channel*> inputs;
    for (auto const& channel : results) {
        inputs.push_back(channel.get());
    }
    co_await linearise(std::move(inputs), output);
}

}  // namespace

std::vector<Actor> transform_tables(Channel& input, Channel& output, TableFunction function, std::size_t workers) {
    SPILLWAY_EXPECTS(workers > 0, "transform_tables needs at least one worker", InvalidArgument);
    SPILLWAY_EXPECTS(static_cast<bool>(function), "transform_tables needs a function", InvalidArgument);
    auto const shared_function = std::make_shared<TableFunction const>(std::move(function));
    std::vector<std::shared_ptr<Channel>> results;
    std::vector<Actor> actors;
    for (std::size_t worker = 0; worker < workers; ++worker) {
        results.push_back(std::make_shared<Channel>(input.context(), ChannelLimits{.messages = 2}));
        actors.push_back(transform_worker(input, results.back(), shared_function));
    }
    actors.push_back(merge(std::move(results), output));
    return actors;
}

}  // namespace spillway::stream
