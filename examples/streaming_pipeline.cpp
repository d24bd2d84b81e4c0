// streaming_pipeline: a pipeline of actors whose messages spill. Two
// producers generate the chunks of a TPC-H lineitem table, the even and the
// odd ones, and send each as a message numbered by its chunk into a channel
// that does not bound them. A lineariser merges the two streams back into
// chunk order, and one consumer checks each chunk against the generator's,
// which makes it the slowest stage: the messages pile up in the producers'
// channels, under a HOST limit far below the data, and spill to disk.
//
// Usage: streaming_pipeline [SCALE]   (TPC-H scale factor, default 0.05)

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/core/options.hpp>
#include <spillway/exec/thread_pool.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/memory/host_allocator.hpp>
#include <spillway/stream/actor.hpp>
#include <spillway/stream/channel.hpp>
#include <spillway/stream/context.hpp>
#include <spillway/stream/lineariser.hpp>
#include <spillway/stream/table_message.hpp>
#include <spillway/table/tpch_generator.hpp>

using namespace spillway;

namespace {

/// Generates chunks first, first + step, ... and sends each, numbered by
/// its chunk, to `output`.
stream::Actor generate(
    stream::Context& context, table::TpchGenerator const& generator, std::size_t first, std::size_t step,
    stream::Channel& output
) {
    stream::CloseAtExit closer{&output};
    for (std::size_t chunk = first; chunk < generator.num_chunks(); chunk += step) {
        std::optional<table::Table> table;
        {
            // A scope ends on the thread that began it: no co_await inside.
            memory::ScopedHostResource const scope(&context.resource());
            table = generator.lineitem(chunk);
        }
        stream::Message message = co_await stream::pack_table(context, chunk, *table);
        table.reset();
        if (!co_await output.send(std::move(message))) {
            co_return;
        }
    }
}

/// Receives every message of `input` and checks that it is the next chunk
/// of `generator`, row for row.
stream::Actor check(
    stream::Context& context, table::TpchGenerator const& generator, stream::Channel& input, std::size_t& rows,
    bool& verified
) {
    stream::CloseAtExit closer{&input};
    std::uint64_t expected = 0;
    while (std::optional<stream::Message> message = co_await input.receive()) {
        memory::ScopedHostResource const scope(&context.resource());
        auto const table = stream::unpack_table(*message);
        verified = verified && message->sequence == expected && table == generator.lineitem(expected);
        rows += table.num_rows();
        ++expected;
    }
    verified = verified && expected == generator.num_chunks();
}

}  // namespace

int main(int argc, char** argv) {
    try {
        double const scale = argc > 1 ? std::atof(argv[1]) : 0.05;
        // Chunks of 2,000 orders, about 1 MiB of lineitem each: each actor
        // holds one or two at a time, well within the limit.
        table::TpchGenerator const generator(scale, 0, 2000);
        memory::MemoryConfig config;
        config.host_limit = SizeSpec::bytes(16 << 20);
        memory::BufferResource resource(config);
        exec::ThreadPool pool;
        stream::Context context(pool, resource);

        stream::Channel evens(context, stream::ChannelLimits::unbounded());
        stream::Channel odds(context, stream::ChannelLimits::unbounded());
        stream::Channel merged(context, stream::ChannelLimits{.messages = 2});
        std::size_t rows = 0;
        bool verified = true;
        std::vector<stream::Actor> actors;
        actors.push_back(generate(context, generator, 0, 2, evens));
        actors.push_back(generate(context, generator, 1, 2, odds));
        actors.push_back(stream::linearise({&evens, &odds}, merged));
        actors.push_back(check(context, generator, merged, rows, verified));
        stream::run_actors(context, std::move(actors));

        auto const spilled = resource.statistics().get("stream.messages.spill.bytes");
        std::cout << "received " << rows << " rows in " << generator.num_chunks() << " messages; "
                  << (verified ? "each in order and equal to its chunk" : "SOME OUT OF ORDER OR DIFFERENT") << "\n"
                  << "spilled " << format_bytes(spilled ? static_cast<std::uint64_t>(spilled->total) : 0)
                  << " of waiting messages; peak HOST "
                  << format_bytes(resource.peak_memory_used(memory::MemoryType::HOST)) << "\n"
                  << (verified ? "verified" : "VERIFICATION FAILED") << "\n";
        return verified ? EXIT_SUCCESS : EXIT_FAILURE;
    } catch (Error const& error) {
        std::cerr << "streaming_pipeline: " << error.what() << "\n";
        return EXIT_FAILURE;
    }
}
