#include "rank_group.hpp"

#include <exception>
#include <memory>
#include <thread>
#include <utility>

#include <spillway/comm/local_communicator.hpp>
#include <spillway/core/error.hpp>
#include <spillway/core/mutex.hpp>
#include <spillway/memory/system_memory.hpp>

#ifdef SPILLWAY_CLI_HAVE_MPI
#include <mpi.h>

#include <spillway/comm/mpi_communicator.hpp>
#endif

#include "job_limits.hpp"

namespace spillway::cli {
namespace {

/// Whether `error` is a spillway error relayed from another rank.
bool relayed_from_peer(std::exception_ptr const& error) {
    try {
        std::rethrow_exception(error);
    } catch (Error const& relayed) {
        return relayed.relayed_from_peer();
    } catch (...) {
        return false;
    }
}

}  // namespace

RankMemoryFigures RankMemoryFigures::of(memory::BufferResource const& resource) {
    auto const total = [&](char const* name) {
        return static_cast<std::uint64_t>(resource.statistics().get(name).value_or(Statistics::Entry{}).total);
    };
    return {
        .spilled_bytes = total("memory.copy.host_to_disk.bytes"),
        .read_back_bytes = total("memory.copy.disk_to_host.bytes"),
        .sent_bytes = total("shuffle.send.bytes") + total("allgather.send.bytes"),
        .peak_host = resource.peak_memory_used(memory::MemoryType::HOST),
        .peak_disk = resource.peak_memory_used(memory::MemoryType::DISK),
    };
}

RankGroup::RankGroup(Options const& options, memory::MemoryConfig config, int default_ranks)
    : uses_mpi_(options.get_choice("comm", {"local", "mpi"}, "local") == "mpi"),
      mpi_config_(uses_mpi_ ? comm::MpiConfig::from_options(options) : comm::MpiConfig{}) {
    auto const ranks = static_cast<comm::Rank>(options.get_int("ranks", default_ranks, 1, max_ranks));
    auto const local_ranks = in_process_ranks(options, default_ranks);
    size_ = ranks;
#ifdef SPILLWAY_CLI_HAVE_MPI
    if (uses_mpi_) {
        MPI_Comm_size(MPI_COMM_WORLD, &size_);
        MPI_Comm_rank(MPI_COMM_WORLD, &first_rank_);
        SPILLWAY_EXPECTS(!options.find("ranks") || ranks == size_,
                         "--ranks " << ranks << " differs from the " << size_
                                    << " MPI processes; with --comm mpi, mpirun -np sets the ranks",
                         InvalidArgument);
    }
#endif
    auto const limit = config.host_limit.resolve(memory::host_memory_capacity());
    config.host_limit = SizeSpec::bytes(limit / local_ranks);
    if (local_ranks > 1) {
        config.host_limit_origin = config.host_limit_origin + " of " + format_bytes(limit) + ", shared by "
                                 + std::to_string(local_ranks) + " ranks";
    }
    for (std::size_t rank = 0; rank < local_ranks; ++rank) {
        // The resource makes its spill directory: registered as it is made.
        spill_removals_.emplace_back([&] {
            resources_.push_back(std::make_unique<memory::BufferResource>(config));
            return resources_.back()->spill_directory();
        });
    }
}

std::size_t RankGroup::in_process_ranks(Options const& options, int default_ranks) {
    auto const ranks = static_cast<std::size_t>(options.get_int("ranks", default_ranks, 1, max_ranks));
#ifdef SPILLWAY_CLI_HAVE_MPI
    if (options.get_choice("comm", {"local", "mpi"}, "local") == "mpi") {
        return 1;
    }
#endif
    return ranks;
}

std::uint64_t RankGroup::host_limit_per_rank() const {
    return resources_.front()->memory_limit(memory::MemoryType::HOST);
}

void RankGroup::report_memory(RunSummary& summary, std::span<RankMemoryFigures const> ranks) const {
    TierPeak host{"HOST", host_limit_per_rank(), {}};
    TierPeak disk{"DISK", resources_.front()->memory_limit(memory::MemoryType::DISK), {}};
    summary.spilled_bytes = 0;
    summary.read_back_bytes = 0;
    summary.sent_bytes = 0;
    for (auto const& rank : ranks) {
        summary.spilled_bytes += rank.spilled_bytes;
        summary.read_back_bytes += rank.read_back_bytes;
        *summary.sent_bytes += rank.sent_bytes;
        host.ranks.push_back(rank.peak_host);
        disk.ranks.push_back(rank.peak_disk);
    }
    summary.peak_memory = {std::move(host), std::move(disk)};
}

void RankGroup::finish(RunSummary& summary, Progress& progress, std::chrono::steady_clock::time_point started,
                       std::chrono::steady_clock::time_point cleaning) {
    progress.start("clean up", resources_.size(), Progress::Unit::items);
    // One thread a resource: removing spill files waits on the disk, and the
    // disk takes several removals at once.
    {
        std::vector<std::jthread> threads;
        for (auto& resource : resources_) {
            threads.emplace_back([&] {
                resource.reset();
                progress.advance(1);
            });
        }
    }
    resources_.clear();
    spill_removals_.clear();
    progress.finish();
    auto const finished = std::chrono::steady_clock::now();
    summary.seconds = to_seconds(finished - started);
    summary.phases.push_back({"clean up", to_seconds(finished - cleaning)});
    summary.peak_resident_bytes = peak_resident_bytes();
}

void RankGroup::note_failure(std::exception_ptr error) {
    MutexLock lock(failure_mutex_);
    if (!noted_failure_ || (relayed_from_peer(noted_failure_) && !relayed_from_peer(error))) {
        noted_failure_ = std::move(error);
    }
}

void RankGroup::run(std::function<void(comm::Communicator&)> const& body) {
#ifdef SPILLWAY_CLI_HAVE_MPI
    if (uses_mpi_) {
        auto communicator = std::make_unique<comm::MpiCommunicator>(MPI_COMM_WORLD, *resources_.front(),
                                                                    mpi_config_);
        try {
            body(*communicator);
        } catch (PeerTimeout const&) {
            // Sends to the silent rank never complete, so destroying the
            // communicator would wait for them and then abort the process
            // before the error is reported. The caller ends the job instead.
            static_cast<void>(communicator.release());
            throw;
        }
        return;
    }
#endif
    std::vector<memory::BufferResource*> resources;
    for (auto const& resource : resources_) {
        resources.push_back(resource.get());
    }
    auto communicators = comm::LocalCommunicator::make_group(resources);
    Mutex mutex;
    std::exception_ptr first_error;
    std::exception_ptr first_cause;  // the first error that no other rank relayed
    {
        std::vector<std::jthread> threads;
        for (auto& communicator : communicators) {
            threads.emplace_back([&, &rank = *communicator] {
                try {
                    body(rank);
                } catch (...) {
                    auto const error = std::current_exception();
                    MutexLock lock(mutex);
                    if (!first_error) {
                        first_error = error;
                    }
                    if (!first_cause && !relayed_from_peer(error)) {
                        first_cause = error;
                    }
                }
            });
        }
    }
    if (first_error) {
        MutexLock lock(failure_mutex_);
        if (noted_failure_ && (!relayed_from_peer(noted_failure_) || !first_cause)) {
            std::rethrow_exception(noted_failure_);
        }
        std::rethrow_exception(first_cause ? first_cause : first_error);
    }
}

}  // namespace spillway::cli
