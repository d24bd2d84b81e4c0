#include <comm/communicator_testing.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>

#include <spillway/comm/local_communicator.hpp>
#include <spillway/memory/memory_type.hpp>

#ifdef SPILLWAY_TEST_HAVE_MPI
#include <spillway/comm/mpi_communicator.hpp>
#include <spillway/comm/mpi_environment.hpp>
#endif

namespace spillway::test {
namespace {

/// Runs `body` on one rank; an escaping exception fails the test.
void run_rank(comm::Communicator& communicator, RankBody const& body) {
    try {
        body(communicator);
    } catch (std::exception const& error) {
        ADD_FAILURE() << "rank " << communicator.rank() << " threw: " << error.what();
    }
    try {
        barrier(communicator);
    } catch (std::exception const& error) {
        ADD_FAILURE() << "rank " << communicator.rank() << " failed the final barrier: " << error.what();
    }
}

void expect_at_zero(memory::BufferResource const& resource, comm::Rank rank) {
    for (auto const tier : memory::memory_types) {
        EXPECT_EQ(resource.memory_used(tier), 0U) << "rank " << rank << " " << tier;
        EXPECT_EQ(resource.memory_reserved(tier), 0U) << "rank " << rank << " " << tier;
    }
}

void run_local(comm::Rank ranks, RankBody const& body) {
    auto const resources = rank_resources(static_cast<std::size_t>(ranks));
    {
        auto group = comm::LocalCommunicator::make_group(resources.pointers);
        std::vector<std::thread> threads;
        for (auto& communicator : group) {
            threads.emplace_back([&communicator, &body] { run_rank(*communicator, body); });
        }
        for (auto& thread : threads) {
            thread.join();
        }
    }
    for (comm::Rank rank = 0; rank < ranks; ++rank) {
        expect_at_zero(*resources.pointers[static_cast<std::size_t>(rank)], rank);
    }
}

#ifdef SPILLWAY_TEST_HAVE_MPI
/// Owns MPI for the whole test program in MPI mode.
class MpiTestEnvironment : public ::testing::Environment {
  public:
    void SetUp() override { mpi_.emplace(); }
    void TearDown() override { mpi_.reset(); }

  private:
    std::optional<comm::MpiEnvironment> mpi_;
};

// googletest takes ownership of the environment.
[[maybe_unused]] ::testing::Environment* const mpi_test_environment =
    mpi_mode() ? ::testing::AddGlobalTestEnvironment(new MpiTestEnvironment) : nullptr;

void run_mpi(RankBody const& body) {
    memory::BufferResource resource;
    comm::MpiConfig config;
    config.max_message_bytes = mpi_test_message_bytes;
    {
        comm::MpiCommunicator communicator(MPI_COMM_WORLD, resource, config);
        run_rank(communicator, body);
    }
    expect_at_zero(resource, 0);
}
#endif

}  // namespace

std::string CommunicatorBackend::name() const {
    return is_mpi() ? "mpi" : "ranks_" + std::to_string(ranks);
}

bool mpi_mode() {
    char const* const value = std::getenv("SPILLWAY_TEST_COMMUNICATOR");
    return value != nullptr && std::string_view(value) == "mpi";
}

std::vector<CommunicatorBackend> local_backends() {
    std::vector<CommunicatorBackend> backends;
    if (!mpi_mode()) {
        for (comm::Rank ranks = 1; ranks <= 8; ++ranks) {
            backends.push_back({ranks});
        }
    }
    return backends;
}

std::vector<CommunicatorBackend> mpi_backends() {
    if (mpi_mode()) {
        return {CommunicatorBackend{0}};
    }
    return {};
}

void run_on_every_rank(CommunicatorBackend const& backend, RankBody const& body) {
    if (!backend.is_mpi()) {
        run_local(backend.ranks, body);
        return;
    }
#ifdef SPILLWAY_TEST_HAVE_MPI
    run_mpi(body);
#else
    FAIL() << "this build has no MPI";
#endif
}

comm::Incoming probe_until(comm::Communicator& communicator, comm::Tag tag, comm::Rank source) {
    auto const give_up = std::chrono::steady_clock::now() + deadline;
    for (;;) {
        if (auto incoming = communicator.probe(tag, source)) {
            return std::move(*incoming);
        }
        if (std::chrono::steady_clock::now() > give_up) {
            throw std::runtime_error(
                "rank " + std::to_string(communicator.rank()) + ": no message on tag " + std::to_string(tag)
                + " arrived within the test deadline"
            );
        }
        std::this_thread::yield();
    }
}

comm::Message receive_now(comm::Communicator& communicator, comm::Incoming&& incoming) {
    auto reservation = communicator.buffer_resource().reserve(
        memory::MemoryType::HOST, incoming.payload_size().value_or(0), memory::AllowOverbooking::no
    );
    return await(communicator.receive(std::move(incoming), reservation));
}

void barrier(comm::Communicator& communicator, comm::Tag tag) {
    std::vector<comm::Future<void>> sends;
    for (comm::Rank rank = 0; rank < communicator.nranks(); ++rank) {
        sends.push_back(communicator.send(rank, tag, {}));
    }
    for (comm::Rank rank = 0; rank < communicator.nranks(); ++rank) {
        static_cast<void>(await(communicator.receive(probe_until(communicator, tag))));
    }
    for (auto& send : sends) {
        await(std::move(send));
    }
}

namespace {

/// Word `index` of the pattern of `seed`; whole words keep filling and
/// checking cheap under the sanitizers.
std::uint64_t pattern_word(std::size_t index, std::uint64_t seed) {
    return (index + 1) * 0x9E3779B97F4A7C15ULL ^ (seed * 0xBF58476D1CE4E5B9ULL + 1);
}

constexpr std::size_t word_size = sizeof(std::uint64_t);

}  // namespace

memory::Buffer make_payload(memory::BufferResource& resource, std::size_t size, std::uint64_t seed) {
    auto reservation = resource.reserve(memory::MemoryType::HOST, size, memory::AllowOverbooking::no);
    auto buffer = resource.make_buffer(size, reservation);
    auto const bytes = buffer.data();
    for (std::size_t offset = 0; offset < size; offset += word_size) {
        auto const word = pattern_word(offset / word_size, seed);
        std::memcpy(bytes.data() + offset, &word, std::min(word_size, size - offset));
    }
    return buffer;
}

::testing::AssertionResult holds_pattern(memory::Buffer const& payload, std::size_t size, std::uint64_t seed) {
    if (payload.size() != size) {
        return ::testing::AssertionFailure() << "the payload has " << payload.size() << " bytes, expected " << size;
    }
    auto const bytes = payload.data();
    for (std::size_t offset = 0; offset < size; offset += word_size) {
        auto const word = pattern_word(offset / word_size, seed);
        if (std::memcmp(bytes.data() + offset, &word, std::min(word_size, size - offset)) != 0) {
            return ::testing::AssertionFailure()
                   << "the payload differs in bytes " << offset << ".." << offset + word_size << " of " << size
                   << " (seed " << seed << ")";
        }
    }
    return ::testing::AssertionSuccess();
}

std::vector<std::byte> metadata_of(std::initializer_list<std::uint64_t> values) {
    std::vector<std::byte> bytes(values.size() * sizeof(std::uint64_t));
    std::memcpy(bytes.data(), values.begin(), bytes.size());
    return bytes;
}

std::uint64_t metadata_value(std::span<std::byte const> metadata, std::size_t index) {
    std::uint64_t value = 0;
    if ((index + 1) * sizeof value > metadata.size()) {
        throw std::runtime_error("metadata too short");
    }
    std::memcpy(&value, metadata.data() + index * sizeof value, sizeof value);
    return value;
}

}  // namespace spillway::test
