// The contract of comm::Communicator, run against every backend: in-process
// groups of 1 to 8 ranks, and (under mpirun) the MPI job.
#include <spillway/comm/communicator.hpp>

#include <common/error_matchers.hpp>
#include <common/rendezvous.hpp>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <spillway/core/error.hpp>

#include <gtest/gtest.h>

#include <comm/communicator_testing.hpp>

using namespace spillway;
using namespace spillway::comm;
using spillway::test::await;
using spillway::test::holds_pattern;
using spillway::test::make_payload;
using spillway::test::metadata_of;
using spillway::test::metadata_value;
using spillway::test::next_rank;
using spillway::test::previous_rank;
using spillway::test::probe_until;
using spillway::test::receive_now;

namespace {

class CommunicatorContract : public ::testing::TestWithParam<test::CommunicatorBackend> {
  protected:
    void run(test::RankBody const& body) { test::run_on_every_rank(GetParam(), body); }
};

/// A payload size for message `seq`: none, empty, small, or spanning several
/// MPI parts, so that every kind travels interleaved with the others.
std::optional<std::size_t> payload_size_for(std::uint64_t seq) {
    switch (seq % 5) {
        case 0: return std::nullopt;
        case 1: return 0;
        case 2: return 1 + seq * 37 % 4000;
        case 3: return 3 * test::mpi_test_message_bytes + seq;
        default: return 100;
    }
}

/// Sends message `seq` from `communicator` to `destination`: metadata
/// (sender, seq, user), payload `payload_size_for(seq)` with a seed derived
/// from them.
Future<void> send_numbered(
    Communicator& communicator, Rank destination, Tag tag, std::uint64_t seq, std::uint64_t user = 0
) {
    auto const rank = static_cast<std::uint64_t>(communicator.rank());
    std::optional<memory::Buffer> payload;
    if (auto const size = payload_size_for(seq)) {
        payload = make_payload(communicator.buffer_resource(), *size, rank * 1000003 + seq + user);
    }
    return communicator.send(destination, tag, metadata_of({rank, seq, user}), std::move(payload));
}

/// Sends messages 0 to `count` - 1 of `user` to every rank on `tag`.
std::vector<Future<void>> send_numbered_to_all(
    Communicator& communicator, Tag tag, std::uint64_t count, std::uint64_t user = 0
) {
    std::vector<Future<void>> sends;
    for (std::uint64_t seq = 0; seq < count; ++seq) {
        for (Rank destination = 0; destination < communicator.nranks(); ++destination) {
            sends.push_back(send_numbered(communicator, destination, tag, seq, user));
        }
    }
    return sends;
}

/// A message made by `send_numbered`, as received.
struct Numbered {
    Rank source;
    std::uint64_t seq;
    std::uint64_t user;
};

/// Receives `incoming`, a message made by `send_numbered`, and checks its
/// metadata and payload.
Numbered receive_numbered(Communicator& communicator, Incoming&& incoming) {
    auto const source = incoming.source();
    EXPECT_EQ(metadata_value(incoming.metadata(), 0), static_cast<std::uint64_t>(source));
    auto const seq = metadata_value(incoming.metadata(), 1);
    auto const user = metadata_value(incoming.metadata(), 2);
    auto const expected = payload_size_for(seq);
    EXPECT_EQ(incoming.payload_size(), expected);
    auto message = receive_now(communicator, std::move(incoming));
    EXPECT_EQ(message.payload.has_value(), expected.has_value());
    if (expected && message.payload) {
        EXPECT_TRUE(holds_pattern(*message.payload, *expected, static_cast<std::uint64_t>(source) * 1000003 + seq + user));
    }
    return {source, seq, user};
}

/// Receives `expected` messages made by `send_numbered` on `tag` from any
/// rank, and checks that each (source, user) stream arrives in order with
/// nothing missing in between. Returns how many arrived per stream.
std::map<std::pair<Rank, std::uint64_t>, std::uint64_t> receive_numbered_from_any(
    Communicator& communicator, Tag tag, std::uint64_t expected
) {
    std::map<std::pair<Rank, std::uint64_t>, std::uint64_t> next_seq;
    for (std::uint64_t i = 0; i < expected; ++i) {
        auto const message = receive_numbered(communicator, probe_until(communicator, tag));
        auto& next = next_seq[std::make_pair(message.source, message.user)];
        EXPECT_EQ(message.seq, next++)
            << "from rank " << message.source << ", user " << message.user;
    }
    return next_seq;
}

void wait_all(std::vector<Future<void>>& sends) {
    for (auto& send : sends) {
        await(std::move(send));
    }
}

}  // namespace

TEST_P(CommunicatorContract, EveryRankHasADistinctRankInTheGroup) {
    run([&](Communicator& comm) {
        if (!GetParam().is_mpi()) {
            EXPECT_EQ(comm.nranks(), GetParam().ranks);
        }
        ASSERT_GE(comm.rank(), 0);
        ASSERT_LT(comm.rank(), comm.nranks());
        std::vector<Future<void>> sends;
        for (Rank destination = 0; destination < comm.nranks(); ++destination) {
            sends.push_back(comm.send(destination, 1, metadata_of({static_cast<std::uint64_t>(comm.rank())})));
        }
        std::set<Rank> sources;
        for (Rank i = 0; i < comm.nranks(); ++i) {
            auto incoming = probe_until(comm, 1);
            EXPECT_EQ(metadata_value(incoming.metadata(), 0), static_cast<std::uint64_t>(incoming.source()));
            sources.insert(incoming.source());
            static_cast<void>(receive_now(comm, std::move(incoming)));
        }
        EXPECT_EQ(sources.size(), static_cast<std::size_t>(comm.nranks()));
        wait_all(sends);
    });
}

TEST_P(CommunicatorContract, MessagesBetweenTwoRanksOnOneTagArriveInSendOrder) {
    constexpr std::uint64_t count = 30;
    run([&](Communicator& comm) {
        auto sends = send_numbered_to_all(comm, 2, count);
        // Probe each source in turn, so later sources' messages wait while
        // earlier ones are taken.
        for (Rank source = 0; source < comm.nranks(); ++source) {
            for (std::uint64_t seq = 0; seq < count; ++seq) {
                auto incoming = probe_until(comm, 2, source);
                EXPECT_EQ(incoming.source(), source);
                EXPECT_EQ(incoming.tag(), 2);
                EXPECT_EQ(receive_numbered(comm, std::move(incoming)).seq, seq);
            }
        }
        wait_all(sends);
    });
}

TEST_P(CommunicatorContract, AnySourceProbesReceiveEveryRanksMessagesInPerSourceOrder) {
    constexpr std::uint64_t count = 20;
    run([&](Communicator& comm) {
        auto sends = send_numbered_to_all(comm, 3, count);
        auto const received = receive_numbered_from_any(comm, 3, count * static_cast<std::uint64_t>(comm.nranks()));
        EXPECT_EQ(received.size(), static_cast<std::size_t>(comm.nranks()));
        for (auto const& [stream, messages] : received) {
            EXPECT_EQ(messages, count) << "from rank " << stream.first;
        }
        wait_all(sends);
    });
}

TEST_P(CommunicatorContract, ManyThreadsSendAndReceiveConcurrentlyWithoutLosingOrder) {
    // Per rank, `threads` threads start together. Thread t sends `count`
    // messages to every rank on tag 10 + t % 2, so two threads share each
    // tag; threads 0 and 1 meanwhile receive tags 10 and 11 and check that
    // messages from each (rank, thread) arrive in order, none lost.
    constexpr int threads = 4;
    constexpr std::uint64_t count = 12;
    run([&](Communicator& comm) {
        test::Rendezvous start(threads);
        std::vector<std::thread> workers;
        for (int t = 0; t < threads; ++t) {
            workers.emplace_back([&, t] {
                EXPECT_TRUE(start.arrive_and_wait());
                try {
                    auto sends = send_numbered_to_all(comm, 10 + t % 2, count, t);
                    if (t < 2) {
                        auto const received = receive_numbered_from_any(
                            comm, 10 + t, 2 * count * static_cast<std::uint64_t>(comm.nranks())
                        );
                        for (auto const& [stream, messages] : received) {
                            EXPECT_EQ(stream.second % 2, static_cast<std::uint64_t>(t)) << "a message of another tag";
                            EXPECT_EQ(messages, count);
                        }
                    }
                    wait_all(sends);
                } catch (std::exception const& error) {
                    ADD_FAILURE() << "thread " << t << ": " << error.what();
                }
            });
        }
        for (auto& worker : workers) {
            worker.join();
        }
    });
}

TEST_P(CommunicatorContract, ProbeAnnouncesAMessageBeforeAnyMemoryIsTakenForItsPayload) {
    constexpr std::size_t size = 10000;
    run([&](Communicator& comm) {
        // The payload comes from a resource of its own, so that this rank's
        // resource shows only what receiving takes.
        memory::BufferResource outbox;
        auto& resource = comm.buffer_resource();
        auto const to = next_rank(comm.rank(), comm.nranks());
        auto const from = previous_rank(comm.rank(), comm.nranks());
        auto sent = comm.send(to, 4, metadata_of({7, 8}), make_payload(outbox, size, comm.rank()));

        auto incoming = probe_until(comm, 4, from);
        EXPECT_EQ(incoming.source(), from);
        EXPECT_EQ(incoming.tag(), 4);
        EXPECT_EQ(metadata_value(incoming.metadata(), 1), 8U);
        EXPECT_EQ(incoming.payload_size(), size);
        EXPECT_EQ(resource.memory_used(memory::MemoryType::HOST), 0U);
        EXPECT_EQ(resource.memory_reserved(memory::MemoryType::HOST), 0U);

        auto reservation = resource.reserve(memory::MemoryType::HOST, size, memory::AllowOverbooking::no);
        auto message = await(comm.receive(std::move(incoming), reservation));
        EXPECT_EQ(reservation.size(), 0U);
        EXPECT_EQ(resource.memory_used(memory::MemoryType::HOST), size);
        ASSERT_TRUE(message.payload.has_value());
        EXPECT_TRUE(holds_pattern(*message.payload, size, from));
        EXPECT_EQ(message.metadata, metadata_of({7, 8}));
        await(std::move(sent));
    });
}

TEST_P(CommunicatorContract, ProbedPayloadsCanBeReceivedInAnyOrder) {
    // Small, several MPI parts with a remainder, one byte, exactly two parts.
    std::vector<std::size_t> const sizes{
        3000, 4 * test::mpi_test_message_bytes + 11, 1, 2 * test::mpi_test_message_bytes
    };
    run([&](Communicator& comm) {
        auto const to = next_rank(comm.rank(), comm.nranks());
        auto const from = previous_rank(comm.rank(), comm.nranks());
        std::vector<Future<void>> sends;
        for (std::uint64_t seq = 0; seq < sizes.size(); ++seq) {
            sends.push_back(comm.send(
                to, 5, metadata_of({seq}), make_payload(comm.buffer_resource(), sizes[seq], 100 * comm.rank() + seq)
            ));
        }
        std::vector<Incoming> probed;
        for (std::uint64_t seq = 0; seq < sizes.size(); ++seq) {
            probed.push_back(probe_until(comm, 5, from));
            EXPECT_EQ(metadata_value(probed.back().metadata(), 0), seq);
        }
        for (std::uint64_t seq : {2, 0, 3, 1}) {
            auto message = receive_now(comm, std::move(probed[seq]));
            ASSERT_TRUE(message.payload.has_value());
            EXPECT_TRUE(holds_pattern(*message.payload, sizes[seq], 100 * from + seq)) << "message " << seq;
        }
        wait_all(sends);
    });
}

TEST_P(CommunicatorContract, MessagesWithoutPayloadOrWithAnEmptyOneArriveAsSent) {
    run([&](Communicator& comm) {
        auto& resource = comm.buffer_resource();
        auto nothing = resource.try_reserve(memory::MemoryType::HOST, 0);
        auto empty = resource.make_buffer(0, nothing);
        auto moved_from = resource.make_buffer(0, nothing);
        auto taken = std::move(moved_from);
        auto one_byte = resource.reserve(memory::MemoryType::HOST, 1, memory::AllowOverbooking::no);
        auto to_disk = resource.reserve(memory::MemoryType::DISK, 1, memory::AllowOverbooking::no);
        auto on_disk = resource.move(resource.make_buffer(1, one_byte), to_disk);
        auto spilled = std::move(on_disk);  // leaves a DISK buffer of 0 bytes
        std::vector<Future<void>> sends;
        sends.push_back(comm.send(comm.rank(), 6, metadata_of({0})));
        sends.push_back(comm.send(comm.rank(), 6, metadata_of({1}), std::move(empty)));
        sends.push_back(comm.send(comm.rank(), 6, {}, std::move(moved_from)));
        sends.push_back(comm.send(comm.rank(), 6, {}, std::move(on_disk)));

        auto absent = probe_until(comm, 6, comm.rank());
        EXPECT_EQ(absent.payload_size(), std::nullopt);
        auto message = await(comm.receive(std::move(absent)));
        EXPECT_FALSE(message.payload.has_value());
        EXPECT_EQ(message.metadata, metadata_of({0}));

        for (int i = 0; i < 3; ++i) {
            auto zero = probe_until(comm, 6, comm.rank());
            EXPECT_EQ(zero.payload_size(), 0U);
            message = await(comm.receive(std::move(zero)));
            ASSERT_TRUE(message.payload.has_value());
            EXPECT_EQ(message.payload->size(), 0U);
        }
        EXPECT_TRUE(message.metadata.empty());
        wait_all(sends);
    });
}

TEST_P(CommunicatorContract, TheLargestMetadataArrivesIntact) {
    run([&](Communicator& comm) {
        std::vector<std::byte> metadata(max_metadata_size);
        for (std::size_t i = 0; i < metadata.size(); i += 4093) {
            metadata[i] = static_cast<std::byte>(i / 4093 + comm.rank());
        }
        auto const to = next_rank(comm.rank(), comm.nranks());
        auto const from = previous_rank(comm.rank(), comm.nranks());
        auto sent = comm.send(to, 14, metadata, make_payload(comm.buffer_resource(), 10, 1));
        auto incoming = probe_until(comm, 14, from);
        ASSERT_EQ(incoming.metadata().size(), max_metadata_size);
        for (std::size_t i = 0; i < metadata.size(); i += 4093) {
            ASSERT_EQ(incoming.metadata()[i], static_cast<std::byte>(i / 4093 + from)) << "at byte " << i;
        }
        auto message = receive_now(comm, std::move(incoming));
        EXPECT_TRUE(holds_pattern(*message.payload, 10, 1));
        await(std::move(sent));
    });
}

TEST_P(CommunicatorContract, LargePayloadsArriveIntact) {
    constexpr std::size_t size = (std::size_t{24} << 20) + 12345;
    run([&](Communicator& comm) {
        auto const to = next_rank(comm.rank(), comm.nranks());
        auto const from = previous_rank(comm.rank(), comm.nranks());
        auto sent = comm.send(to, 7, {}, make_payload(comm.buffer_resource(), size, comm.rank()));
        auto message = receive_now(comm, probe_until(comm, 7, from));
        ASSERT_TRUE(message.payload.has_value());
        EXPECT_TRUE(holds_pattern(*message.payload, size, from));
        await(std::move(sent));
    });
}

TEST_P(CommunicatorContract, TagsIsolateConcurrentUsersOfOneCommunicator) {
    constexpr std::uint64_t count = 15;
    run([&](Communicator& comm) {
        // Two users, as two shuffles with different op ids would be.
        auto user = [&](Tag tag, std::uint64_t id) {
            try {
                auto sends = send_numbered_to_all(comm, tag, count, id);
                auto const received =
                    receive_numbered_from_any(comm, tag, count * static_cast<std::uint64_t>(comm.nranks()));
                for (auto const& [stream, messages] : received) {
                    EXPECT_EQ(stream.second, id) << "a message of the other user";
                }
                wait_all(sends);
            } catch (std::exception const& error) {
                ADD_FAILURE() << "user " << id << ": " << error.what();
            }
        };
        std::thread first(user, 30, 1);
        std::thread second(user, 31, 2);
        first.join();
        second.join();

        // A message of one tag is never returned by a probe of another.
        auto sent = comm.send(comm.rank(), 32, {});
        for (;;) {
            EXPECT_FALSE(comm.probe(33).has_value());
            if (auto incoming = comm.probe(32)) {
                static_cast<void>(receive_now(comm, std::move(*incoming)));
                break;
            }
        }
        await(std::move(sent));
    });
}

TEST_P(CommunicatorContract, DroppingAnIncomingDiscardsOnlyThatMessageAndCompletesItsSend) {
    run([&](Communicator& comm) {
        memory::BufferResource outbox;
        auto const to = next_rank(comm.rank(), comm.nranks());
        auto const from = previous_rank(comm.rank(), comm.nranks());
        auto dropped_send = comm.send(to, 8, metadata_of({0}), make_payload(outbox, 300000, 1));
        auto kept_send = comm.send(to, 8, metadata_of({1}), make_payload(outbox, 5000, 2));

        {
            auto dropped = probe_until(comm, 8, from);
            EXPECT_EQ(metadata_value(dropped.metadata(), 0), 0U);
        }
        auto message = receive_now(comm, probe_until(comm, 8, from));
        EXPECT_EQ(metadata_value(message.metadata, 0), 1U);
        ASSERT_TRUE(message.payload.has_value());
        EXPECT_TRUE(holds_pattern(*message.payload, 5000, 2));
        await(std::move(dropped_send));
        await(std::move(kept_send));
        EXPECT_EQ(outbox.memory_used(memory::MemoryType::HOST), 0U);
    });
}

TEST_P(CommunicatorContract, DroppingManyIncomingsAtOnceHoldsAtMostOneOfTheirPayloadsInMemory) {
    constexpr std::uint64_t count = 8;
    constexpr std::size_t size = 300000;  // several MPI parts of mpi_test_message_bytes
    run([&](Communicator& comm) {
        memory::BufferResource outbox;
        auto const to = next_rank(comm.rank(), comm.nranks());
        auto const from = previous_rank(comm.rank(), comm.nranks());
        std::vector<Future<void>> sends;
        for (std::uint64_t i = 0; i < count; ++i) {
            sends.push_back(comm.send(to, 9, metadata_of({i}), make_payload(outbox, size, i)));
        }
        std::vector<Incoming> dropped;
        for (std::uint64_t i = 0; i < count; ++i) {
            dropped.push_back(probe_until(comm, 9, from));
        }
        auto const& resource = comm.buffer_resource();
        EXPECT_EQ(resource.peak_memory_used(memory::MemoryType::HOST), 0U) << "a probe takes no memory";
        dropped.clear();
        for (auto& send : sends) {
            await(std::move(send));
        }
        EXPECT_LE(resource.peak_memory_used(memory::MemoryType::HOST), size)
            << "the dropped payloads were in memory at the same time";
    });
}

TEST_P(CommunicatorContract, OperationsCompleteWhileTheirOwnersOnlyWait) {
    // Every thread below blocks in wait() once it has posted its operation,
    // so no caller drives progress: the communicator must do it by itself.
    constexpr std::size_t size = 4 << 20;
    run([&](Communicator& comm) {
        auto const to = next_rank(comm.rank(), comm.nranks());
        auto const from = previous_rank(comm.rank(), comm.nranks());
        std::thread receiver([&] {
            try {
                auto incoming = probe_until(comm, 9, from);
                auto reservation = comm.buffer_resource().reserve(
                    memory::MemoryType::HOST, size, memory::AllowOverbooking::no
                );
                auto received = comm.receive(std::move(incoming), reservation);
                received.wait();
                auto message = received.get();
                ASSERT_TRUE(message.payload.has_value());
                EXPECT_TRUE(holds_pattern(*message.payload, size, from));
            } catch (std::exception const& error) {
                ADD_FAILURE() << error.what();
            }
        });
        auto sent = comm.send(to, 9, {}, make_payload(comm.buffer_resource(), size, comm.rank()));
        sent.wait();
        receiver.join();
    });
}

TEST_P(CommunicatorContract, SentAndReceivedBytesAreRecordedInTheResourcesStatistics) {
    run([&](Communicator& comm) {
        auto& statistics = comm.buffer_resource().statistics();
        auto sent = comm.send(comm.rank(), 12, {}, make_payload(comm.buffer_resource(), 1000, 0));
        static_cast<void>(receive_now(comm, probe_until(comm, 12, comm.rank())));
        await(std::move(sent));
        EXPECT_EQ(statistics.get("comm.send.bytes")->total, 1000.0);
        EXPECT_EQ(statistics.get("comm.receive.bytes")->total, 1000.0);
    });
}

TEST_P(CommunicatorContract, MisuseIsReportedAtTheCallAndLeavesTheMessageWhole) {
    run([&](Communicator& comm) {
        auto& resource = comm.buffer_resource();
        EXPECT_THROW_WITH(comm.send(-1, 0, {}), InvalidArgument, "destination rank -1");
        EXPECT_THROW_WITH(comm.send(comm.nranks(), 0, {}), InvalidArgument, "destination rank");
        EXPECT_THROW_WITH(comm.send(0, -1, {}), InvalidArgument, "comm::max_tag");
        EXPECT_THROW_WITH(comm.send(0, max_tag + 1, {}), InvalidArgument, "comm::max_tag");
        EXPECT_THROW_WITH(
            comm.send(0, 0, std::vector<std::byte>(max_metadata_size + 1)), InvalidArgument, "max_metadata_size"
        );
        EXPECT_THROW_WITH(static_cast<void>(comm.probe(max_tag + 1)), InvalidArgument, "comm::max_tag");
        EXPECT_THROW_WITH(static_cast<void>(comm.probe(0, comm.nranks())), InvalidArgument, "source rank");
        EXPECT_THROW_WITH(static_cast<void>(comm.probe(0, -2)), InvalidArgument, "source rank");

        auto sent = comm.send(comm.rank(), 13, metadata_of({5}), make_payload(resource, 1000, 5));
        auto incoming = probe_until(comm, 13, comm.rank());
        EXPECT_THROW_WITH(
            static_cast<void>(comm.receive(std::move(incoming))), InvalidArgument, "receive it with a reservation"
        );
        auto small = resource.reserve(memory::MemoryType::HOST, 999, memory::AllowOverbooking::no);
        EXPECT_THROW_WITH(
            static_cast<void>(comm.receive(std::move(incoming), small)), ReservationError, "holds 999 B"
        );
        auto disk = resource.reserve(memory::MemoryType::DISK, 1000, memory::AllowOverbooking::no);
        EXPECT_THROW_WITH(
            static_cast<void>(comm.receive(std::move(incoming), disk)), ReservationError, "HOST reservation"
        );
        memory::BufferResource other;
        auto foreign = other.reserve(memory::MemoryType::HOST, 1000, memory::AllowOverbooking::no);
        EXPECT_THROW_WITH(
            static_cast<void>(comm.receive(std::move(incoming), foreign)), ReservationError,
            "communicator's BufferResource"
        );
        EXPECT_EQ(small.size(), 999U);
        EXPECT_EQ(incoming.payload_size(), 1000U);

        auto message = receive_now(comm, std::move(incoming));
        ASSERT_TRUE(message.payload.has_value());
        EXPECT_TRUE(holds_pattern(*message.payload, 1000, 5));
        EXPECT_THROW_WITH(
            static_cast<void>(comm.receive(std::move(incoming))), InvalidArgument, "already been received"
        );
        await(std::move(sent));
    });
}

INSTANTIATE_TEST_SUITE_P(Local, CommunicatorContract, ::testing::ValuesIn(test::local_backends()), test::BackendName());
INSTANTIATE_TEST_SUITE_P(Mpi, CommunicatorContract, ::testing::ValuesIn(test::mpi_backends()), test::BackendName());

namespace {

/// A backend of a user's own that says nothing of where payloads may change;
/// it is never asked to move a message.
class BackendOfItsOwn final : public Communicator {
  public:
    BackendOfItsOwn(Rank rank, Rank nranks, memory::BufferResource& resource) : Communicator(rank, nranks, resource) {}

  private:
    Future<void> do_send(Rank, Tag, std::vector<std::byte>, std::optional<memory::Buffer>) override {
        throw std::logic_error("not used");
    }
    std::optional<Incoming> do_probe(Tag, Rank) override { throw std::logic_error("not used"); }
    Future<Message> do_receive(comm::detail::ProbedMessage&, memory::MemoryReservation&) override {
        throw std::logic_error("not used");
    }
};

}  // namespace

TEST(Communicator, PayloadsMayChangeInTransitUnlessTheBackendSaysOtherwise) {
    memory::BufferResource resource;
    BackendOfItsOwn const communicator(0, 2, resource);
    EXPECT_TRUE(communicator.payloads_may_change_in_transit(0));
    EXPECT_TRUE(communicator.payloads_may_change_in_transit(1));
}
