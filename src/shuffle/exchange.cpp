#include "shuffle/exchange.hpp"

#include <algorithm>
#include <bit>
#include <exception>
#include <limits>
#include <sstream>
#include <set>
#include <span>
#include <tuple>
#include <utility>

#include <spillway/core/error.hpp>
#include <spillway/core/logging.hpp>
#include <spillway/core/options.hpp>
#include <spillway/core/trace.hpp>

#include "shuffle/wire_format.hpp"

namespace spillway::shuffle::detail {
namespace {

// --- Tag registry. ---

Mutex& lease_mutex() {
    static Mutex mutex;
    return mutex;
}

/// The (communicator, tag) pairs held by live exchanges.
std::set<std::pair<comm::Communicator const*, comm::Tag>>& leases() SPILLWAY_REQUIRES(lease_mutex()) {
    static std::set<std::pair<comm::Communicator const*, comm::Tag>> held;
    return held;
}

// --- Policy constants. ---

/// The most messages one step posts, probes or receives per kind, so that
/// sending, probing and receiving interleave under load.
constexpr int max_per_step = 64;

/// How often `extract_chunk` wakes the progress thread to prefetch while it
/// takes one window's worth (`shuffle_prefetch`) of chunks of a partition.
constexpr std::size_t prefetch_wakes_per_window = 4;

/// The most chunks one step prefetches; they are read back together, so a
/// partition of many small chunks comes back in a few large reads.
constexpr std::size_t max_prefetched_per_step = 1024;

/// The most chunks in flight (sent, not yet received) to one destination.
/// MPI holds each message that waits for its receiver in buffers of its own
/// at the receiver, which no limit counts and which it keeps for reuse once
/// they have grown: in OpenMPI's shared-memory transport the chunk's header
/// message and up to 4 KiB (the eager limit) of its payload. The byte window
/// alone let about 5,000 chunks of a few KiB wait at one receiver, whose peak
/// resident set grew 10 to 20 MiB past its limit. This bounds what waits at
/// a receiver to (ranks - 1) x 64 chunks; a shuffle of large chunks reaches
/// the byte window first.
constexpr std::size_t max_chunks_in_flight_per_destination = 64;

/// Messages show up only when probed (the communicator cannot notify), so an
/// idle progress thread polls. The interval doubles from `min_idle` to
/// `max_idle`: a busy exchange reacts within microseconds, an idle one costs
/// about a thousand cheap wake-ups a second. Inserts, extracts and the
/// destructor wake it at once.
constexpr std::chrono::microseconds min_idle{10};
constexpr std::chrono::microseconds max_idle{1000};

/// Received chunks are needed last (at extraction), outgoing ones next (to
/// be sent): spill received ones first.
constexpr int outgoing_spill_priority = 0;
constexpr int received_spill_priority = 1;
/// Chunks smaller than this carry their metadata at the end of their buffer
/// while they wait (and over the wire), so that it is counted and spilled
/// with them: for a chunk of a few KiB, metadata kept beside it in memory
/// can weigh a tenth of the chunk or more.
constexpr std::size_t inline_metadata_below = std::size_t{64} << 10;

/// What each spill of a store frees at least, its small chunks written into
/// one file: with many partitions the chunks are a few KiB each, and a file
/// apiece would cost more to create and remove than its bytes. A 64th of the
/// HOST limit, at most 1 MiB, so that what it spills beyond a request is
/// negligible against the limit.
std::size_t spill_batch_bytes(memory::BufferResource const& resource) {
    return static_cast<std::size_t>(
        std::min<std::uint64_t>(resource.memory_limit(memory::MemoryType::HOST) / 64, std::uint64_t{1} << 20)
    );
}

ShuffleConfig const& checked(ShuffleConfig const& config) {
    SPILLWAY_EXPECTS(config.collective_timeout > std::chrono::nanoseconds::zero(),
                     "collective_timeout must be positive", InvalidArgument);
    return config;
}

std::string describe(Collective collective, OpId op_id) {
    return std::string(collective == Collective::shuffler ? "shuffle" : "allgather") + " op "
           + std::to_string(op_id);
}

comm::Tag tag_of(OpId op_id, Collective collective) {
    SPILLWAY_EXPECTS(
        op_id <= max_op_id, describe(collective, op_id) << ": the op id exceeds shuffle::max_op_id (" << max_op_id << ")",
        InvalidArgument
    );
    return static_cast<comm::Tag>(op_id) * 2 + static_cast<comm::Tag>(collective);
}

/// Orders chunks by source rank, then sequence, then arrival.
constexpr auto in_rank_order = [](auto const& a, auto const& b) {
    return std::tie(a.source, a.sequence, a.key) < std::tie(b.source, b.sequence, b.key);
};

}  // namespace

TagLease::TagLease(comm::Communicator const& communicator, comm::Tag tag, std::string const& what)
    : communicator_(communicator), tag_(tag) {
    MutexLock lock(lease_mutex());
    SPILLWAY_EXPECTS(
        leases().emplace(&communicator, tag).second,
        what << " is already running on this communicator; op ids can be reused only once the collective "
                "that had it is destroyed",
        InvalidArgument
    );
}

TagLease::~TagLease() {
    MutexLock lock(lease_mutex());
    leases().erase({&communicator_, tag_});
}

Exchange::Exchange(
    comm::Communicator& communicator, OpId op_id, Collective collective, Layout layout,
    std::vector<PartitionId> local_partitions, ShuffleConfig const& config
)
    : communicator_(communicator),
      resource_(communicator.buffer_resource()),
      statistics_(resource_.statistics()),
      collective_(collective),
      tag_(tag_of(op_id, collective)),
      config_(checked(config)),
      layout_(layout),
      local_partitions_(std::move(local_partitions)),
      name_(collective == Collective::shuffler ? "shuffle" : "allgather"),
      statistic_names_{
          name_ + ".insert.seconds", name_ + ".wait.seconds", name_ + ".extract.seconds",
          name_ + ".exchange.seconds", name_ + ".send.bytes", name_ + ".receive.bytes", name_ + ".local.bytes",
          name_ + ".overbooked.bytes"
      },
      operation_(describe(collective, op_id) + " on rank " + std::to_string(communicator.rank())),
      started_(std::chrono::steady_clock::now()),
      lease_(communicator, tag_, describe(collective, op_id)),
      partition_bookkeeping_(reserve_partition_bookkeeping()),
      // Each chunk's entry in a queue or a partition counts with its key.
      outgoing_(resource_, name_ + ".outgoing", outgoing_spill_priority, spill_batch_bytes(resource_),
                sizeof(OutgoingChunk)),
      received_(resource_, name_ + ".received", received_spill_priority, spill_batch_bytes(resource_),
                sizeof(ChunkRef)),
      arrival_bits_(std::numeric_limits<Key>::digits - std::bit_width(local_partitions_.size())),
      destinations_(static_cast<std::size_t>(communicator.nranks())),
      open_destinations_(static_cast<std::size_t>(communicator.nranks()) - 1),
      partitions_(local_partitions_.size()),
      sources_pending_(communicator.nranks()),
      chunks_in_flight_(static_cast<std::size_t>(communicator.nranks()), 0),
      probed_(static_cast<std::size_t>(communicator.nranks()), 0),
      source_closed_(static_cast<std::size_t>(communicator.nranks()), false),
      last_heard_(static_cast<std::size_t>(communicator.nranks()), started_),
      next_heartbeat_(started_),
      last_look_(started_) {
    auto const self = static_cast<std::size_t>(communicator.rank());
    destinations_[self].closed = true;  // this rank's own chunks never travel
    source_closed_[self] = true;
    progress_thread_ = std::thread([this] { run(); });
}

memory::MemoryReservation Exchange::reserve_partition_bookkeeping() const {
    auto const bytes = local_partitions_.size() * partition_bookkeeping_bytes;
    if (bytes == 0) {
        return {};
    }
    auto const limit = resource_.memory_limit(memory::MemoryType::HOST);
    auto const count = local_partitions_.size();
    SPILLWAY_EXPECTS(bytes <= limit,
                     operation_ << " cannot keep the state of its " << count
                                << (count == 1 ? " partition, " : " partitions, ") << format_bytes(bytes)
                                << " of HOST memory, within the limit of " << format_bytes(limit) << " ("
                                << resource_.config().host_limit_origin << "); raise memory_limit_host"
                                << (count == 1 ? "" : " or use fewer partitions"),
                     OutOfMemory);
    return resource_.reserve(memory::MemoryType::HOST, bytes, memory::AllowOverbooking::yes);
}

Exchange::~Exchange() {
    bool finished = false;
    bool abandoned = false;
    bool quietly = false;
    {
        MutexLock lock(mutex_);
        quietly = ends_early_quietly_;
        closing_ = true;
        finished = !error_ && insert_finished_ && extracted_ == partitions_.size();
        if (!error_ && !finished && std::uncaught_exceptions() > 0) {
            // Another error ended it: that error, which this rank reports,
            // is the cause, not a misuse.
            abandoned = true;
            fail_locked(std::make_exception_ptr(
                Error(operation_ + " was ended before it finished by an error there, which that rank reports")
            ));
        } else if (!error_ && !finished) {
            abandoned = true;
            fail_locked(std::make_exception_ptr(InvalidArgument(
                operation_ + " was destroyed before it finished (insert_finished "
                + (insert_finished_ ? "was called, but not every partition was extracted)" : "was not called)")
            )));
        }
        wake_ = true;
    }
    // Logged with no lock held: the logger's lock comes first in the lock
    // order. While an error unwinds the stack, that error says what happened.
    if (abandoned && std::uncaught_exceptions() > 0) {
        SPILLWAY_LOG(debug, operation_ << " is destroyed before it finished, by an error; abandoning it");
    } else if (abandoned && quietly) {
        SPILLWAY_LOG(debug, operation_ << " is ended early by its caller; abandoning it");
    } else if (abandoned) {
        SPILLWAY_LOG(warn, operation_ << " is destroyed before it finished; abandoning it");
    }
    progress_wanted_.notify_all();
    progress_thread_.join();
    std::exception_ptr error;
    {
        MutexLock lock(mutex_);
        error = error_;
    }
    if (finished && error) {
        try {
            std::rethrow_exception(error);
        } catch (std::exception const& failure) {
            // While an error unwinds the stack, this is its echo.
            if (std::uncaught_exceptions() > 0) {
                SPILLWAY_LOG(debug, operation_ << " failed after it finished, while sending its last chunks: "
                                               << failure.what());
            } else {
                SPILLWAY_LOG(warn, operation_ << " failed after it finished, while sending its last chunks: "
                                              << failure.what());
            }
        }
    }
}

// --- Callers' side. ---

void Exchange::insert(std::vector<Item> items) {
    ScopedTimer timer(statistics_, statistic_names_.insert_seconds);
    for (auto const& item : items) {
        SPILLWAY_EXPECTS(
            item.data.data.resource() == &resource_,
            operation_ << ": insert needs buffers of the collective's BufferResource (this one is of another, "
                          "or moved from)",
            InvalidArgument
        );
        SPILLWAY_EXPECTS(
            item.data.metadata.size() <= max_packed_metadata_size,
            operation_ << ": a chunk's metadata has " << item.data.metadata.size()
                       << " bytes, more than shuffle::max_packed_metadata_size (" << max_packed_metadata_size
                       << "); put bulk bytes in the data buffer",
            InvalidArgument
        );
    }
    {
        MutexLock lock(mutex_);
        rethrow_locked();
        SPILLWAY_EXPECTS(!insert_finished_, operation_ << ": insert after insert_finished", InvalidArgument);
        ++active_inserts_;
    }
    try {
        for (auto& item : items) {
            store(item);
        }
    } catch (...) {
        // Some chunks are in, others are lost: the exchange cannot be right.
        fail(std::current_exception());
        end_insert();
        throw;
    }
    end_insert();
}

void Exchange::store(Item& item) {
    auto const data_size = item.data.data.size();
    auto const inlined = inline_metadata(item.data);
    auto const size = item.data.data.size();
    if (item.destination == communicator_.rank()) {
        auto const index = index_of(item.partition);
        auto const key = received_key(index);
        received_.insert(key, std::move(item.data.data));
        statistics_.add_bytes(statistic_names_.local_bytes, data_size);
        MutexLock lock(mutex_);
        partitions_[index].chunks.push_back(
            ChunkRef{communicator_.rank(), item.sequence, key, size, inlined, std::move(item.data.metadata)}
        );
        return;
    }
    auto const key = next_key_.fetch_add(1, std::memory_order_relaxed);
    outgoing_.insert(key, std::move(item.data.data));
    MutexLock lock(mutex_);
    destinations_[static_cast<std::size_t>(item.destination)].queue.push_back(
        OutgoingChunk{key, size, inlined, item.partition, item.sequence, std::move(item.data.metadata)}
    );
}

std::uint16_t Exchange::inline_metadata(PackedData& chunk) {
    auto const metadata_size = chunk.metadata.size();
    auto const data_size = chunk.data.size();
    if (metadata_size == 0 || metadata_size > std::numeric_limits<std::uint16_t>::max()
        || data_size >= inline_metadata_below || chunk.data.mem_type() != memory::MemoryType::HOST) {
        return 0;
    }
    memory::MemoryReservation reservation;
    try {
        reservation =
            resource_.reserve_and_spill(memory::MemoryType::HOST, data_size + metadata_size, memory::AllowOverbooking::no);
    } catch (OutOfMemory const&) {
        return 0;  // no room even after spilling: the metadata stays beside the buffer
    }
    auto joined = resource_.make_buffer(data_size + metadata_size, reservation);
    auto const bytes = joined.data();
    std::ranges::copy(chunk.data.data(), bytes.begin());
    std::ranges::copy(chunk.metadata, bytes.begin() + static_cast<std::ptrdiff_t>(data_size));
    chunk.data = std::move(joined);
    // Not `= {}`: that assigns an empty list and keeps the capacity, so the
    // metadata's memory would stay allocated, uncounted, beside its copy.
    chunk.metadata = std::vector<std::byte>();
    return static_cast<std::uint16_t>(metadata_size);
}

void Exchange::end_insert() {
    {
        MutexLock lock(mutex_);
        --active_inserts_;
        if (insert_finished_ && active_inserts_ == 0) {
            finish_inserting_locked();
        }
        wake_ = true;
    }
    progress_wanted_.notify_one();
}

void Exchange::end_early_quietly() noexcept {
    MutexLock lock(mutex_);
    ends_early_quietly_ = true;
}

void Exchange::insert_finished() {
    {
        MutexLock lock(mutex_);
        rethrow_locked();
        SPILLWAY_EXPECTS(!insert_finished_, operation_ << ": insert_finished called twice", InvalidArgument);
        insert_finished_ = true;
        if (active_inserts_ == 0) {
            finish_inserting_locked();
        }
        wake_ = true;
    }
    progress_wanted_.notify_one();
}

std::optional<PartitionId> Exchange::wait_any() {
    ScopedTimer timer(statistics_, statistic_names_.wait_seconds);
    MutexLock lock(mutex_);
    require_insert_finished_locked("wait_any");
    // At the end, wait for this rank's last messages to be posted too, so
    // that a failure to send them reaches the caller.
    partitions_changed_.wait(lock, [this]() SPILLWAY_REQUIRES(mutex_) {
        return error_ || !ready_.empty() || (returned_ == partitions_.size() && open_destinations_ == 0);
    });
    rethrow_locked();
    if (ready_.empty()) {
        return std::nullopt;
    }
    auto const index = *ready_.begin();
    mark_returned_locked(index);
    return local_partitions_[index];
}

std::pair<std::optional<PartitionId>, bool> Exchange::poll_any() {
    MutexLock lock(mutex_);
    require_insert_finished_locked("poll_any");
    rethrow_locked();
    if (ready_.empty()) {
        return {std::nullopt, returned_ == partitions_.size() && open_destinations_ == 0};
    }
    auto const index = *ready_.begin();
    mark_returned_locked(index);
    return {local_partitions_[index], false};
}

void Exchange::wait(PartitionId partition) {
    ScopedTimer timer(statistics_, statistic_names_.wait_seconds);
    auto const index = index_of(partition);
    MutexLock lock(mutex_);
    require_insert_finished_locked("wait");
    partitions_changed_.wait(lock, [&]() SPILLWAY_REQUIRES(mutex_) {
        return error_ || partitions_[index].complete;
    });
    rethrow_locked();
    mark_returned_locked(index);
}

std::vector<PackedData> Exchange::extract(PartitionId partition, bool ordered) {
    ScopedTimer timer(statistics_, statistic_names_.extract_seconds);
    auto const index = index_of(partition);
    std::vector<ChunkRef> chunks;
    {
        MutexLock lock(mutex_);
        auto& state = extractable_locked(index, "extract");
        SPILLWAY_EXPECTS(
            !state.extracted, operation_ << ": partition " << partition << " was extracted already",
            InvalidArgument
        );
        state.drop_taken();
        chunks.swap(state.chunks);
        mark_extracted_locked(index);
    }
    progress_wanted_.notify_one();
    if (!ordered) {
        std::ranges::sort(chunks, {}, &ChunkRef::key);
    }
    return read_back(index, std::move(chunks));
}

std::optional<PackedData> Exchange::extract_chunk(PartitionId partition) {
    ScopedTimer timer(statistics_, statistic_names_.extract_seconds);
    auto const index = index_of(partition);
    std::optional<ChunkRef> chunk;
    bool wake = false;
    {
        MutexLock lock(mutex_);
        auto& state = extractable_locked(index, "extract_chunk");
        if (state.extracted) {
            return std::nullopt;
        }
        if (state.taken < state.chunks.size()) {
            chunk = std::move(state.chunks[state.taken++]);
            if (2 * state.taken > state.chunks.size()) {
                // Those taken go once they are half: each chunk moves at
                // most once more, and the memory of the taken ones is freed.
                state.drop_taken();
                state.chunks.shrink_to_fit();
            }
        }
        if (state.chunks.empty()) {  // the last was taken, and those taken dropped
            mark_extracted_locked(index);
            wake = true;
        } else {
            // The progress thread prefetches from here: wake it when a
            // partition's extraction starts, then once per part of the
            // window taken, not for every chunk, which with chunks of a few
            // KiB rescanned the window thousands of times for nothing.
            extraction_cursor_ = index;
            extracted_since_wake_ += chunk->size;
            auto const budget = prefetch_budget();
            wake = budget > 0
                   && (woken_for_ != index || extracted_since_wake_ >= budget / prefetch_wakes_per_window);
            if (wake) {
                woken_for_ = index;
                wake_ = true;
            }
        }
        if (wake) {
            extracted_since_wake_ = 0;
        }
    }
    if (wake) {
        progress_wanted_.notify_one();
    }
    if (!chunk) {
        return std::nullopt;
    }
    try {
        return read_chunk(*chunk);
    } catch (...) {
        std::vector<ChunkRef> unread;
        unread.push_back(std::move(*chunk));
        std::vector<PackedData> none;
        put_back(index, std::move(unread), none);
        throw;
    }
}

bool Exchange::finished() const {
    MutexLock lock(mutex_);
    return !error_ && insert_finished_ && extracted_ == partitions_.size();
}

std::vector<PackedData> Exchange::read_back(std::size_t index, std::vector<ChunkRef> chunks) {
    std::vector<PackedData> result;
    result.reserve(chunks.size());
    try {
        for (auto& chunk : chunks) {
            result.push_back(read_chunk(chunk));  // `result` has room: no reallocation
        }
    } catch (...) {
        put_back(index, std::move(chunks), result);
        throw;
    }
    return result;
}

PackedData Exchange::read_chunk(ChunkRef& chunk) {
    // The caller asked for these bytes: they are its memory now, read back
    // past the HOST limit if need be (see the memory bound).
    auto buffer = received_.extract(chunk.key, memory::AllowOverbooking::yes);
    SPILLWAY_ASSERT(buffer.has_value(), operation_ << ": chunk " << chunk.key << " left the received store");
    try {
        return detach_metadata(*buffer, chunk);
    } catch (...) {
        received_.restore(chunk.key, std::move(*buffer));
        throw;
    }
}

void Exchange::put_back(std::size_t index, std::vector<ChunkRef> chunks, std::vector<PackedData>& read) {
    for (std::size_t i = 0; i < read.size(); ++i) {
        chunks[i].size = read[i].data.size();
        chunks[i].inline_metadata = 0;
        chunks[i].metadata = std::move(read[i].metadata);
        received_.restore(chunks[i].key, std::move(read[i].data));
    }
    MutexLock lock(mutex_);
    auto& state = partitions_[index];
    state.drop_taken();
    state.chunks.insert(state.chunks.begin(), std::make_move_iterator(chunks.begin()), std::make_move_iterator(chunks.end()));
    std::ranges::sort(state.chunks, in_rank_order);
    if (state.extracted) {
        state.extracted = false;
        --extracted_;
    }
}

PackedData Exchange::detach_metadata(memory::Buffer& buffer, ChunkRef& chunk) {
    if (chunk.inline_metadata == 0) {
        return PackedData{std::move(chunk.metadata), std::move(buffer)};
    }
    auto const bytes = buffer.data();
    auto const data_size = bytes.size() - chunk.inline_metadata;
    std::vector<std::byte> metadata(bytes.begin() + static_cast<std::ptrdiff_t>(data_size), bytes.end());
    resource_.truncate(buffer, data_size);
    return PackedData{std::move(metadata), std::move(buffer)};
}

// --- Progress thread. ---

void Exchange::run() {
    trace::name_this_thread(operation_);
    auto idle = min_idle;
    while (true) {
        bool progressed = true;
        try {
            progressed = step();
        } catch (std::exception const& error) {
            bool failed = false;
            {
                MutexLock lock(mutex_);
                failed = error_ != nullptr;
            }
            if (failed) {
                give_up(error);
            } else {
                fail(std::current_exception());
            }
        }
        MutexLock lock(mutex_);
        if (done()) {
            return;
        }
        if (progressed) {
            idle = min_idle;
            continue;
        }
        auto const woken = [this]() SPILLWAY_REQUIRES(mutex_) { return std::exchange(wake_, false); };
        if (quiet()) {
            progress_wanted_.wait(lock, woken);  // nothing can arrive: only callers can give work
        } else {
            progress_wanted_.wait_for(lock, idle, woken);
            idle = std::min(idle * 2, max_idle);
        }
    }
}

void Exchange::give_up(std::exception const& error) {
    SPILLWAY_LOG(
        warn, operation_ << " stops talking to its peers after a second error while abandoning: " << error.what()
    );
    deferred_.clear();
    receiving_.clear();  // the communicator completes or drops them on its own
    std::fill(source_closed_.begin(), source_closed_.end(), true);
    MutexLock lock(mutex_);
    for (auto& destination : destinations_) {
        destination.closed = true;
    }
    open_destinations_ = 0;
}

bool Exchange::step() {
    bool failed = false;
    {
        MutexLock lock(mutex_);
        failed = error_ != nullptr;
    }
    bool progressed = false;
    if (failed && !deferred_.empty()) {
        deferred_.clear();  // dropping them completes their senders' sends
        progressed = true;
    }
    progressed |= complete_sends();
    progressed |= complete_receives(failed);
    progressed |= post_sends();
    progressed |= post_closing_messages();
    progressed |= post_heartbeats();
    progressed |= probe(failed);
    progressed |= stop_waiting_for_silent_peers(failed);
    if (!failed) {
        progressed |= post_receives();
        progressed |= prefetch();
    }
    return progressed;
}

bool Exchange::done() {
    return closing_ && open_destinations_ == 0 && deferred_.empty() && receiving_.empty()
           && std::ranges::all_of(source_closed_, std::identity{});
}

bool Exchange::quiet() {
    return open_destinations_ == 0 && in_flight_.empty() && receiving_.empty() && deferred_.empty()
           && std::ranges::all_of(source_closed_, std::identity{});
}

bool Exchange::complete_sends() {
    bool progressed = false;
    for (std::size_t i = 0; i < in_flight_.size();) {
        if (!in_flight_[i].sent.test()) {
            ++i;
            continue;
        }
        auto send = std::move(in_flight_[i]);
        in_flight_[i] = std::move(in_flight_.back());
        in_flight_.pop_back();
        in_flight_bytes_ -= send.size;
        if (send.chunk_to) {
            --chunks_in_flight_[*send.chunk_to];
        }
        progressed = true;
        send.sent.get();  // rethrows a failed send
        if (send.size != 0) {
            trace::record(category(), "send in flight", send.posted, std::chrono::steady_clock::now(), send.size);
        }
    }
    return progressed;
}

bool Exchange::complete_receives(bool failed) {
    bool progressed = false;
    for (std::size_t i = 0; i < receiving_.size();) {
        if (!receiving_[i].message.test()) {
            ++i;
            continue;
        }
        auto receiving = std::move(receiving_[i]);
        receiving_[i] = std::move(receiving_.back());
        receiving_.pop_back();
        progressed = true;
        auto message = receiving.message.get();
        if (receiving.size != 0) {
            trace::record(
                category(), "receive in flight", receiving.posted, std::chrono::steady_clock::now(), receiving.size
            );
        }
        if (failed) {
            continue;  // dropped with `message`
        }
        auto const size = message.payload->size();
        auto const header = decode(message.metadata, message.source, operation_);
        auto const body = std::span<std::byte const>(message.metadata).subspan(sizeof(WireHeader));
        SPILLWAY_EXPECTS(
            !communicator_.payloads_may_change_in_transit(message.source)
                || transit_checksum(message.payload->data(), body) == header.checksum,
            operation_ << ": a chunk of partition " << header.partition << " (" << size << " bytes) is corrupt in "
                       << "transit from rank " << message.source << ": its checksum does not match what the "
                       << "sender sent",
            CorruptData
        );
        auto const key = received_key(receiving.partition);
        auto const inlined = header.inline_metadata;
        SPILLWAY_EXPECTS(
            inlined <= size,
            operation_ << ": rank " << message.source << " sent a chunk of " << size << " bytes with "
                       << inlined << " bytes of metadata at its end",
            CorruptData
        );
        received_.insert(key, std::move(*message.payload));
        statistics_.add_bytes(statistic_names_.receive_bytes, size - inlined);
        MutexLock lock(mutex_);
        auto& partition = partitions_[receiving.partition];
        partition.chunks.push_back(
            ChunkRef{message.source, receiving.sequence, key, size, inlined, {body.begin(), body.end()}}
        );
        --partition.receiving;
        try_complete_locked(receiving.partition);
    }
    return progressed;
}

bool Exchange::post_sends() {
    bool progressed = false;
    auto const nranks = communicator_.nranks();
    for (int posted = 0; posted < max_per_step;) {
        bool sent_any = false;
        for (comm::Rank offset = 0; offset < nranks && posted < max_per_step; ++offset) {
            auto const destination = static_cast<std::size_t>((next_destination_ + offset) % nranks);
            Key key = 0;
            std::size_t size = 0;
            {
                MutexLock lock(mutex_);
                auto const& queue = destinations_[destination].queue;
                if (error_ || queue.empty()) {
                    continue;
                }
                if (chunks_in_flight_[destination] == max_chunks_in_flight_per_destination) {
                    continue;
                }
                auto const window = config_.send_window.resolve(resource_.memory_limit(memory::MemoryType::HOST));
                if (!in_flight_.empty() && in_flight_bytes_ + queue.front().size > window) {
                    return progressed;
                }
                key = queue.front().key;
                size = queue.front().size;
            }
            auto buffer = take_outgoing(key, size);
            if (!buffer) {
                return progressed;  // HOST is full; in-flight sends and receives will free some
            }
            OutgoingChunk chunk;
            {
                MutexLock lock(mutex_);
                auto& state = destinations_[destination];
                chunk = std::move(state.queue.front());
                state.queue.pop_front();
                ++state.sent;
            }
            trace::Span span(category(), "send");
            span.set_bytes(size);
            span.set_id(chunk.sequence);
            auto metadata = encode(
                WireHeader{MessageKind::chunk, ErrorKind::error, chunk.inline_metadata, chunk.partition, chunk.sequence,
                           communicator_.payloads_may_change_in_transit(static_cast<comm::Rank>(destination))
                               ? transit_checksum(buffer->data(), chunk.metadata)
                               : 0},
                chunk.metadata
            );
            in_flight_.push_back(InFlight{
                communicator_.send(static_cast<comm::Rank>(destination), tag_, std::move(metadata), std::move(*buffer)),
                size, destination
            });
            in_flight_bytes_ += size;
            ++chunks_in_flight_[destination];
            statistics_.add_bytes(statistic_names_.send_bytes, size - chunk.inline_metadata);
            next_destination_ = static_cast<comm::Rank>((destination + 1) % static_cast<std::size_t>(nranks));
            ++posted;
            sent_any = progressed = true;
        }
        if (!sent_any) {
            break;
        }
    }
    return progressed;
}

bool Exchange::post_closing_messages() {
    std::vector<std::pair<comm::Rank, std::vector<std::byte>>> messages;
    {
        MutexLock lock(mutex_);
        for (std::size_t rank = 0; rank < destinations_.size(); ++rank) {
            auto& destination = destinations_[rank];
            if (destination.closed) {
                continue;
            }
            if (error_) {
                messages.emplace_back(static_cast<comm::Rank>(rank), abandon_message(error_));
            } else if (inserts_done_ && destination.queue.empty()) {
                messages.emplace_back(
                    static_cast<comm::Rank>(rank),
                    encode(WireHeader{MessageKind::finish, ErrorKind::error, 0, layout_.partitions, destination.sent,
                                      static_cast<std::uint64_t>(layout_.owner)})
                );
            } else {
                continue;
            }
            destination.closed = true;
            --open_destinations_;
        }
        if (!messages.empty()) {
            partitions_changed_.notify_all();  // wait_any may wait for the last of them
        }
    }
    for (auto& [rank, metadata] : messages) {
        in_flight_.push_back(InFlight{communicator_.send(rank, tag_, std::move(metadata)), 0, std::nullopt});
    }
    return !messages.empty();
}

bool Exchange::post_heartbeats() {
    auto const now = std::chrono::steady_clock::now();
    if (now < next_heartbeat_) {
        return false;
    }
    next_heartbeat_ = now + config_.collective_timeout / 4;
    std::vector<comm::Rank> open;
    {
        MutexLock lock(mutex_);
        for (std::size_t rank = 0; rank < destinations_.size(); ++rank) {
            if (!destinations_[rank].closed) {
                open.push_back(static_cast<comm::Rank>(rank));
            }
        }
    }
    for (auto const rank : open) {
        in_flight_.push_back(InFlight{
            communicator_.send(rank, tag_, encode(WireHeader{MessageKind::heartbeat, ErrorKind::error, 0, 0, 0})), 0,
            std::nullopt
        });
    }
    return !open.empty();
}

bool Exchange::stop_waiting_for_silent_peers(bool failed) {
    auto const now = std::chrono::steady_clock::now();
    if (now - std::exchange(last_look_, now) >= config_.collective_timeout / 2) {
        std::ranges::fill(last_heard_, now);
        return false;
    }
    bool progressed = false;
    for (comm::Rank source = 0; source < communicator_.nranks(); ++source) {
        auto const from = static_cast<std::size_t>(source);
        auto const silent = now - last_heard_[from];
        if (source_closed_[from] || silent <= config_.collective_timeout) {
            continue;
        }
        std::ostringstream message;
        message << operation_ << ": rank " << source << " sent nothing for " << format_duration(silent)
                << " (collective_timeout is " << format_duration(config_.collective_timeout)
                << "): it has stopped, hangs or cannot be reached";
        if (!failed) {
            fail(std::make_exception_ptr(PeerTimeout(message.str())));
            return true;
        }
        // Failed already: its finish or abandon message may never come, and
        // neither may its receives complete.
        SPILLWAY_LOG(info, message.str() << "; no longer waiting for it");
        source_closed_[from] = true;
        receiving_.clear();
        progressed = true;
    }
    return progressed;
}

bool Exchange::probe(bool failed) {
    bool progressed = false;
    for (comm::Rank source = 0; source < communicator_.nranks(); ++source) {
        auto const from = static_cast<std::size_t>(source);
        for (int i = 0; i < max_per_step && !source_closed_[from]; ++i) {
            auto incoming = communicator_.probe(tag_, source);
            if (!incoming) {
                break;
            }
            progressed = true;
            last_heard_[from] = std::chrono::steady_clock::now();
            auto const header = decode(incoming->metadata(), source, operation_);
            if (header.kind == MessageKind::heartbeat) {
                continue;  // dropped: it only says the peer is alive
            }
            if (header.kind == MessageKind::abandon) {
                source_closed_[from] = true;
                fail(remote_error(
                    header, incoming->metadata(),
                    operation_ + " failed because rank " + std::to_string(source) + " gave up: "
                ));
            } else if (header.kind == MessageKind::finish) {
                source_closed_[from] = true;
                // Failed, not thrown: a throw while the exchange already
                // fails (as another rank's abandon may have made it in this
                // very probe) would end the abandoning early (`give_up`).
                if (auto mismatch = layout_error(header, source)) {
                    fail(std::move(mismatch));
                    continue;
                }
                SPILLWAY_EXPECTS(
                    header.value == probed_[from],
                    operation_ << ": rank " << source << " announced " << header.value << " chunks but "
                               << probed_[from] << " arrived",
                    CorruptData
                );
                MutexLock lock(mutex_);
                source_done_locked();
            } else {
                ++probed_[from];
                if (!failed) {
                    defer(std::move(*incoming), header.partition, header.value, source);
                }
            }
        }
    }
    return progressed;
}

std::exception_ptr Exchange::layout_error(WireHeader const& header, comm::Rank source) const {
    auto const describe_layout = [](PartitionId partitions, std::uint64_t owner) {
        return std::to_string(partitions) + (partitions == 1 ? " partition" : " partitions")
             + (owner == static_cast<std::uint64_t>(PartitionOwner::contiguous) ? " owned in contiguous ranges"
                                                                                 : " owned round robin");
    };
    auto const own = describe_layout(layout_.partitions, static_cast<std::uint64_t>(layout_.owner));
    auto const theirs = describe_layout(header.partition, header.checksum);
    if (theirs == own) {
        return nullptr;
    }
    return std::make_exception_ptr(InvalidArgument(
        operation_ + ": rank " + std::to_string(source) + " has " + theirs + ", this rank " + own
        + "; every rank must give the same partition count and owner"
    ));
}

void Exchange::defer(comm::Incoming incoming, PartitionId partition, std::uint64_t sequence, comm::Rank source) {
    auto const local = std::ranges::lower_bound(local_partitions_, partition);
    SPILLWAY_EXPECTS(
        local != local_partitions_.end() && *local == partition,
        operation_ << ": rank " << source << " sent a chunk of partition " << partition
                   << ", which this rank does not own: the ranks give different partition counts or owners, or "
                      "the message is corrupt",
        CorruptData
    );
    SPILLWAY_EXPECTS(
        incoming.payload_size().has_value(),
        operation_ << ": rank " << source << " sent a chunk without a payload", CorruptData
    );
    auto const index = static_cast<std::size_t>(local - local_partitions_.begin());
    {
        MutexLock lock(mutex_);
        ++partitions_[index].receiving;
    }
    deferred_.push_back(Deferred{std::move(incoming), index, sequence});
}

bool Exchange::post_receives() {
    bool progressed = false;
    for (int i = 0; i < max_per_step && !deferred_.empty(); ++i) {
        auto& next = deferred_.front();
        auto const size = *next.incoming.payload_size();
        comm::Future<comm::Message> message;
        if (size == 0) {
            message = communicator_.receive(std::move(next.incoming));
        } else {
            auto reservation = reserve_for_receive(size);
            if (reservation.size() < size) {
                break;  // deferred: HOST is full and receives in progress will free some
            }
            trace::Span span(category(), "receive");
            span.set_bytes(size);
            span.set_id(next.sequence);
            message = communicator_.receive(std::move(next.incoming), reservation);
        }
        receiving_.push_back(Receiving{std::move(message), next.partition, next.sequence, size});
        deferred_.pop_front();
        progressed = true;
    }
    return progressed;
}

std::size_t Exchange::prefetch_budget() const {
    return static_cast<std::size_t>(config_.prefetch.resolve(resource_.memory_limit(memory::MemoryType::HOST)));
}

bool Exchange::prefetch() {
    if (!deferred_.empty()) {
        return false;  // receives need the memory more
    }
    if (received_.bytes(memory::MemoryType::DISK) == 0) {
        return false;  // nothing is spilled: the window is in HOST already
    }
    // The window is the chunks extraction takes next, wherever they are; the
    // store skips those already in HOST. Chunks of later partitions that are
    // in HOST do not count: an out-of-core shuffle's HOST is full of them, and
    // counting them kept it from ever prefetching.
    auto const budget = prefetch_budget();
    std::size_t planned = 0;
    std::vector<Key> keys;
    {
        MutexLock lock(mutex_);
        for (std::size_t offset = 0; offset < partitions_.size() && planned < budget; ++offset) {
            auto const& partition = partitions_[(extraction_cursor_ + offset) % partitions_.size()];
            if (!partition.complete || partition.extracted) {
                continue;
            }
            for (auto const& chunk : std::span(partition.chunks).subspan(partition.taken)) {
                if (planned + chunk.size > budget || keys.size() == max_prefetched_per_step) {
                    planned = budget;
                    break;
                }
                planned += chunk.size;
                keys.push_back(chunk.key);
            }
        }
    }
    return !keys.empty() && received_.prefetch(keys) > 0;
}

Exchange::Key Exchange::received_key(std::size_t index) {
    auto const arrival = next_key_.fetch_add(1, std::memory_order_relaxed);
    SPILLWAY_ASSERT(arrival >> arrival_bits_ == 0, operation_ << ": more chunks than a key can number");
    return Key{index} << arrival_bits_ | arrival;
}

std::optional<memory::Buffer> Exchange::take_outgoing(Key key, std::size_t size) {
    std::optional<memory::Buffer> buffer;
    try {
        buffer = outgoing_.extract(key);
    } catch (OutOfMemory const&) {
        if (!in_flight_.empty() || !receiving_.empty()) {
            return std::nullopt;
        }
        // Nothing of this exchange will free HOST: the caller's own data
        // fills it. Overbook rather than wait for it forever.
        record_overbooking(size);
        buffer = outgoing_.extract(key, memory::AllowOverbooking::yes);
    }
    SPILLWAY_ASSERT(buffer.has_value(), operation_ << ": chunk " << key << " left the outgoing store");
    return buffer;
}

memory::MemoryReservation Exchange::reserve_for_receive(std::size_t size) {
    try {
        return resource_.reserve_and_spill(memory::MemoryType::HOST, size, memory::AllowOverbooking::no);
    } catch (OutOfMemory const&) {
        if (!receiving_.empty()) {
            return {};
        }
    }
    // No receive is in progress: what holds HOST are the caller's data and
    // this rank's sends, which wait for other ranks to receive. Overbook this
    // one chunk so that receiving always progresses.
    record_overbooking(size);
    return resource_.reserve(memory::MemoryType::HOST, size, memory::AllowOverbooking::yes);
}

void Exchange::record_overbooking(std::size_t size) {
    statistics_.add_bytes(statistic_names_.overbooked_bytes, size);
}

char const* Exchange::category() const noexcept {
    return collective_ == Collective::shuffler ? "shuffle" : "allgather";
}

// --- State transitions (under `mutex_`). ---

void Exchange::fail(std::exception_ptr error) {
    {
        MutexLock lock(mutex_);
        fail_locked(std::move(error));
    }
    progress_wanted_.notify_one();
}

void Exchange::fail_locked(std::exception_ptr error) {
    if (!error_) {
        error_ = std::move(error);
    }
    wake_ = true;
    partitions_changed_.notify_all();
}

void Exchange::rethrow_locked() const {
    if (error_) {
        std::rethrow_exception(error_);
    }
}

void Exchange::require_insert_finished_locked(char const* what) const {
    SPILLWAY_EXPECTS(
        insert_finished_,
        operation_ << ": " << what << " before insert_finished; no partition can complete until this rank's "
                                      "input has ended",
        InvalidArgument
    );
}

void Exchange::finish_inserting_locked() {
    if (!inserts_done_) {
        inserts_done_ = true;
        source_done_locked();
    }
}

void Exchange::source_done_locked() {
    --sources_pending_;
    if (sources_pending_ == 0) {
        for (std::size_t index = 0; index < partitions_.size(); ++index) {
            try_complete_locked(index);
        }
    }
}

void Exchange::try_complete_locked(std::size_t index) {
    auto& partition = partitions_[index];
    if (partition.complete || sources_pending_ > 0 || partition.receiving > 0) {
        return;
    }
    partition.complete = true;
    std::ranges::sort(partition.chunks, in_rank_order);
    ready_.insert(index);
    if (++completed_ == partitions_.size()) {
        statistics_.add_duration(statistic_names_.exchange_seconds, std::chrono::steady_clock::now() - started_);
    }
    partitions_changed_.notify_all();
}

void Exchange::mark_returned_locked(std::size_t index) {
    auto& state = partitions_[index];
    if (!state.returned) {
        state.returned = true;
        ready_.erase(index);
        ++returned_;
    }
}

void Exchange::mark_extracted_locked(std::size_t index) {
    mark_returned_locked(index);
    partitions_[index].extracted = true;
    ++extracted_;
    extraction_cursor_ = index;
    wake_ = true;
    partitions_changed_.notify_all();
}

Exchange::Partition& Exchange::extractable_locked(std::size_t index, char const* what) {
    rethrow_locked();
    require_insert_finished_locked(what);
    auto& state = partitions_[index];
    SPILLWAY_EXPECTS(
        state.complete,
        operation_ << ": " << what << " of partition " << local_partitions_[index]
                   << ", which is not complete yet; wait for it with wait or wait_any first",
        InvalidArgument
    );
    return state;
}

std::size_t Exchange::index_of(PartitionId partition) const {
    auto const local = std::ranges::lower_bound(local_partitions_, partition);
    SPILLWAY_ASSERT(local != local_partitions_.end() && *local == partition, operation_ << ": partition " << partition << " is not local");
    return static_cast<std::size_t>(local - local_partitions_.begin());
}

}  // namespace spillway::shuffle::detail
