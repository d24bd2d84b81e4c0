#include "local_shuffle.hpp"

#include <thread>

#include <spillway/comm/local_communicator.hpp>
#include <spillway/core/error.hpp>
#include <spillway/memory/memory_config.hpp>
#include <spillway/memory/system_memory.hpp>
#include <spillway/shuffle/partition_owner.hpp>
#include <spillway/table/table_builder.hpp>

#include "job_limits.hpp"

namespace spillway::python {

LocalShuffle::LocalShuffle(std::vector<std::string> keys, std::uint32_t partitions, int ranks,
                           Options const& options)
    : partitions_(partitions) {
    SPILLWAY_EXPECTS(ranks >= 1 && ranks <= cli::max_ranks,
                     "ranks must be in [1, " << cli::max_ranks << "], not " << ranks, InvalidArgument);
    auto config = memory::MemoryConfig::from_options(options);
    auto const shuffle_config = shuffle::ShuffleConfig::from_options(options);
    options.expect_read(OptionSource::code, "spillway.shuffle");
    auto const limit = config.host_limit.resolve(memory::host_memory_capacity());
    config.host_limit = SizeSpec::bytes(limit / static_cast<std::uint64_t>(ranks));
    std::vector<memory::BufferResource*> resources;
    for (int rank = 0; rank < ranks; ++rank) {
        resources_.push_back(std::make_unique<memory::BufferResource>(config));
        resources.push_back(resources_.back().get());
    }
    communicators_ = comm::LocalCommunicator::make_group(resources);
    for (auto const& communicator : communicators_) {
        shufflers_.push_back(
            std::make_unique<TableShuffler>(*communicator, shuffle::OpId{0}, keys, partitions, shuffle_config)
        );
    }
}

LocalShuffle::~LocalShuffle() { close(); }

void LocalShuffle::check_open(char const* action) const {
    SPILLWAY_EXPECTS(!closed_, "cannot " << action << ": the shuffle is closed", InvalidArgument);
}

void LocalShuffle::insert(io::TableFileReader& reader) {
    check_open("insert");
    SPILLWAY_EXPECTS(!finished_, "cannot insert after the shuffle's input was finished", InvalidArgument);
    for (auto& shuffler : shufflers_) {
        static_cast<void>(shuffler->expect_schema(reader.schema()));
    }
    while (shufflers_[next_rank_]->insert_next(reader)) {
        next_rank_ = (next_rank_ + 1) % shufflers_.size();
    }
}

void LocalShuffle::finish() {
    check_open("finish");
    SPILLWAY_EXPECTS(!finished_, "the shuffle's input was finished already", InvalidArgument);
    finished_ = true;
    for (auto& shuffler : shufflers_) {
        shuffler->insert_finished();
    }
}

std::optional<table::Table> LocalShuffle::extract(std::uint32_t partition) {
    check_open("extract a partition");
    SPILLWAY_EXPECTS(finished_, "finish the shuffle's input before extracting partitions", InvalidArgument);
    SPILLWAY_EXPECTS(partition < partitions_,
                     "partition " << partition << " is out of range: the shuffle has " << partitions_, InvalidArgument);
    auto const owner = shuffle::partition_owner(shuffle::PartitionOwner::round_robin, partition, partitions_,
                                                 static_cast<comm::Rank>(shufflers_.size()));
    if (auto rows = shufflers_[static_cast<std::size_t>(owner)]->extract(partition)) {
        return rows;
    }
    for (auto const& shuffler : shufflers_) {
        if (auto const schema = shuffler->schema()) {
            return table::TableBuilder(*schema).finish();
        }
    }
    return std::nullopt;
}

ResourceFigures LocalShuffle::figures() const {
    check_open("report figures");
    return ResourceFigures::of(resources_);
}

void LocalShuffle::close() noexcept {
    if (closed_) {
        return;
    }
    closed_ = true;
    for (auto& shuffler : shufflers_) {
        shuffler->end_early_quietly();
    }
    // A shuffle closed before its input ended (the caller's data failed,
    // say) ends it first, without the rows held for sending, so that the
    // ranks end together; the error of a shuffle that failed was reported
    // already.
    if (!finished_) {
        for (auto& shuffler : shufflers_) {
            shuffler->discard_held();
            try {
                shuffler->insert_finished();
            } catch (Error const&) {  // NOLINT(bugprone-empty-catch): see above
            }
        }
    }
    // An unfinished shuffler waits in its destructor for every other rank
    // to finish or go too, so the ranks are ended side by side.
    {
        std::vector<std::jthread> threads;
        for (auto& shuffler : shufflers_) {
            threads.emplace_back([&shuffler] { shuffler.reset(); });
        }
    }
    shufflers_.clear();
    communicators_.clear();
    resources_.clear();
}

}  // namespace spillway::python
