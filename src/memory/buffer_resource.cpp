#include <spillway/memory/buffer_resource.hpp>

#include <sys/statvfs.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <span>
#include <sstream>
#include <utility>
#include <vector>

#include <spillway/core/deadline.hpp>
#include <spillway/core/error.hpp>
#include <spillway/memory/system_memory.hpp>

#include "memory/aligned_allocation.hpp"
#include "memory/disk_tier.hpp"
#include "memory/host_block_pool.hpp"

namespace spillway::memory {
namespace {

/// The total size of the file system holding `path`.
std::uint64_t filesystem_capacity(std::filesystem::path const& path) {
    struct statvfs info {};
    SPILLWAY_EXPECTS(
        statvfs(path.c_str(), &info) == 0,
        "cannot read the size of the file system of '" << path.string() << "'", IoError
    );
    return static_cast<std::uint64_t>(info.f_blocks) * info.f_frsize;
}

MemoryConfig checked(MemoryConfig config) {
    SPILLWAY_EXPECTS(
        !config.spill_directory.empty(), "spill_directory must not be empty", InvalidArgument
    );
    return config;
}

/// A HOST block's bytes, padded to 4 KiB and aligned for direct I/O: the
/// block itself where it is mapped, else a copy (`bounce`) of its first `size` bytes.
struct PaddedBytes {
    detail::HostBytes bounce;
    std::span<std::byte const> bytes;
};

/// Whether a block for `size` bytes is spilled and read back through an
/// aligned copy: it has bytes, and the C library's alignment.
bool needs_bounce(std::size_t size) { return size != 0 && !detail::is_mapped_block(size); }

PaddedBytes padded_for_direct_io(detail::HostBytes const& block, std::size_t size) {
    if (!needs_bounce(size)) {
        return {{}, {block.get(), detail::align_up(size)}};
    }
    auto bounce = detail::allocate_aligned(size);
    std::memcpy(bounce.get(), block.get(), size);
    std::span<std::byte const> const bytes{bounce.get(), detail::align_up(size)};
    return {std::move(bounce), bytes};
}

}  // namespace

BufferResource::BufferResource(MemoryConfig config, std::shared_ptr<Statistics> statistics)
    : config_(checked(std::move(config))),
      statistics_(statistics ? std::move(statistics) : std::make_shared<Statistics>()),
      disk_(std::make_unique<detail::DiskTier>(config_, *statistics_)),
      tiers_(initial_tiers(config_, disk_->directory())),
      host_pool_(std::make_unique<detail::HostBlockPool>()),
      spill_manager_(
          *this, *statistics_, config_.spill_mode, config_.spill_interval, config_.spill_headroom
      ) {}

std::array<BufferResource::Tier, memory_type_count> BufferResource::initial_tiers(
    MemoryConfig const& config, std::filesystem::path const& spill_directory
) {
    std::array<Tier, memory_type_count> tiers;
    auto& host = tiers[tier_index(MemoryType::HOST)];
    host.capacity = host_memory_capacity();
    host.limit = config.host_limit.resolve(host.capacity);
    auto& disk = tiers[tier_index(MemoryType::DISK)];
    disk.capacity = filesystem_capacity(spill_directory);
    disk.limit = config.disk_limit.resolve(disk.capacity);
    return tiers;
}

BufferResource::~BufferResource() {
    MutexLock lock(accounting_mutex_);
    for (auto const type : memory_types) {
        Tier const& state = tier(type);
        if (state.used != 0 || state.reserved != 0) {
            SPILLWAY_FATAL(
                "BufferResource destroyed while " << state.used << " bytes of " << type
                    << " buffers and " << state.reserved
                    << " reserved bytes are alive; destroy every buffer and reservation first"
            );
        }
    }
}

std::uint64_t BufferResource::memory_limit(MemoryType type) const {
    MutexLock lock(accounting_mutex_);
    return tier(type).limit;
}

void BufferResource::set_memory_limit(MemoryType type, SizeSpec limit) {
    detail::HostBlockPool::Blocks unpooled;  // freed once the lock is dropped
    MutexLock lock(accounting_mutex_);
    tier(type).limit = limit.resolve(tier(type).capacity);
    unpooled = host_pool_->trim(pool_room());
}

std::int64_t BufferResource::memory_available(MemoryType type) const {
    MutexLock lock(accounting_mutex_);
    Tier const& state = tier(type);
    // Both are at most max_committed_bytes, INT64_MAX: the difference fits.
    return static_cast<std::int64_t>(state.accounted_limit()) - static_cast<std::int64_t>(state.committed());
}

std::uint64_t BufferResource::memory_used(MemoryType type) const {
    MutexLock lock(accounting_mutex_);
    return tier(type).used;
}

std::uint64_t BufferResource::memory_reserved(MemoryType type) const {
    MutexLock lock(accounting_mutex_);
    return tier(type).reserved;
}

std::uint64_t BufferResource::peak_memory_used(MemoryType type) const {
    MutexLock lock(accounting_mutex_);
    return tier(type).peak_used;
}

std::uint64_t BufferResource::memory_pooled() const {
    MutexLock lock(accounting_mutex_);
    return host_pool_->bytes();
}

void BufferResource::release_pooled_memory() {
    detail::HostBlockPool::Blocks unpooled;  // freed once the lock is dropped
    MutexLock lock(accounting_mutex_);
    unpooled = host_pool_->trim(0);
}

std::uint64_t BufferResource::pool_room() const {
    Tier const& host = tier(MemoryType::HOST);
    auto const limit = host.accounted_limit();
    auto const committed = host.committed();
    return config_.pool_host_blocks && committed < limit ? limit - committed : 0;
}

template <typename Fill>
detail::HostBytes BufferResource::allocate_host(
    MemoryReservation& reservation, std::size_t size, std::size_t counted, Fill fill, HostUse use
) {
    auto const capacity = detail::block_capacity(size);
    detail::HostBytes block;
    {
        detail::HostBlockPool::Blocks unpooled;  // freed once the lock is dropped, before the new block grows
        MutexLock lock(accounting_mutex_);
        consume_locked(reservation, counted);
        if (use == HostUse::container) {
            host_container_bytes_ += counted;
        }
        if (detail::is_mapped_block(size)) {
            block = host_pool_->take(capacity);
        }
        // A block too small for the pool takes room from it all the same:
        // the reservation may have been made while the pool held the rest
        // of the limit.
        unpooled = host_pool_->trim(pool_room());
    }
    try {
        if (block != nullptr && !detail::HostBlockPool::fit(block, size, capacity)) {
            block.reset();
        }
        if (block == nullptr) {
            block = detail::allocate_block(size);
        } else {
            statistics_->add_count("memory.host.blocks_reused");
        }
        fill(block);
        return block;
    } catch (...) {
        if (use == HostUse::container) {
            MutexLock lock(accounting_mutex_);
            host_container_bytes_ -= counted;
        }
        unconsume(reservation, counted);
        throw;
    }
}

MemoryReservation BufferResource::try_reserve(MemoryType type, std::size_t size) {
    MutexLock lock(accounting_mutex_);
    Tier& state = tier(type);
    auto const committed = state.committed();
    auto const limit = state.accounted_limit();
    if (committed > limit || size > limit - committed) {
        return MemoryReservation(this, type, 0);
    }
    state.reserved += size;
    return MemoryReservation(this, type, size);
}

Buffer BufferResource::adopt(Buffer&& buffer, MemoryReservation& reservation) {
    SPILLWAY_EXPECTS(
        buffer.resource_ != nullptr && buffer.mem_type() == MemoryType::HOST,
        "adopt needs a HOST buffer that has not been moved from", InvalidArgument
    );
    auto const size = buffer.size();
    check_reservation(reservation, MemoryType::HOST, size, "adopt");
    // Release from the old resource before consuming here, so that adopting a
    // buffer of this very resource does not raise its peak.
    buffer.resource_->release_buffer(MemoryType::HOST, size);
    consume(reservation, size);
    auto bytes = std::move(buffer.host_);
    buffer.resource_ = nullptr;
    buffer.size_ = 0;
    return Buffer(*this, size, std::move(bytes));
}

MemoryReservation BufferResource::reserve(
    MemoryType type, std::size_t size, AllowOverbooking allow_overbooking
) {
    if (allow_overbooking == AllowOverbooking::yes) {
        {
            MutexLock lock(accounting_mutex_);
            Tier& state = tier(type);
            if (size <= max_committed_bytes - state.committed()) {
                state.reserved += size;
                return MemoryReservation(this, type, size);
            }
        }
        SPILLWAY_FAIL(
            "cannot reserve " << format_bytes(size) << " (" << size << " bytes) of " << type
                              << ": a tier holds at most " << format_bytes(max_committed_bytes)
                              << " used and reserved together, even when overbooking, and "
                              << describe_usage(type),
            OutOfMemory
        );
    }
    auto reservation = try_reserve(type, size);
    SPILLWAY_EXPECTS(
        reservation.size() == size,
        "cannot reserve " << format_bytes(size) << " of " << type << ": " << describe_usage(type)
                          << (type == MemoryType::HOST ? "; raise memory_limit_host or use reserve_and_spill to "
                                                         "spill first"
                              : config_.disk_limit.is_percent() && config_.disk_limit.resolve(100) >= 100
                                  ? "; the quota is the whole file system: set spill_directory on a larger one "
                                    "(or, with a spill_codec, set max_spill_bytes in bytes above it)"
                                  : "; raise max_spill_bytes, or set spill_directory on a larger file system"),
        OutOfMemory
    );
    return reservation;
}

BufferResource::SpillingReservation BufferResource::reserve_spilling(std::size_t size) {
    auto reservation = reserve(MemoryType::HOST, size, AllowOverbooking::yes);
    if (size == 0 || memory_available(MemoryType::HOST) >= 0) {
        return {std::move(reservation), {0, true}};  // 0 bytes take no room, however full HOST is
    }
    auto const headroom = spill_manager_.make_headroom(0, size, SpillManager::Waiting::excluded);
    return {std::move(reservation), headroom};
}

MemoryReservation BufferResource::reserve_and_spill(
    MemoryType type, std::size_t size, AllowOverbooking allow_overbooking
) {
    if (type != MemoryType::HOST) {
        return reserve(type, size, allow_overbooking);
    }
    auto [reservation, headroom] = reserve_spilling(size);
    if (headroom.reached || allow_overbooking == AllowOverbooking::yes) {
        return std::move(reservation);
    }
    // Not freed: requests that wait for memory must not take a failed
    // attempt, which a caller may repeat for as long as they wait, for progress.
    return_attempt(reservation);
    SPILLWAY_FAIL(
        "cannot reserve " << format_bytes(size) << " of HOST even after spilling "
                          << format_bytes(headroom.spilled) << ": " << describe_usage(type)
                          << "; raise memory_limit_host, or keep more of the data in spillable stores",
        OutOfMemory
    );
}

MemoryReservation BufferResource::reserve_or_wait(std::size_t size) {
    check_within_host_limit(size);
    auto freed_at_progress = host_bytes_freed();
    auto progressed = std::chrono::steady_clock::now();
    while (true) {
        std::uint64_t released_before = 0;
        {
            MutexLock lock(accounting_mutex_);
            released_before = host_released_;
        }
        auto [reservation, headroom] = reserve_spilling(size);
        if (headroom.reached) {
            return std::move(reservation);
        }
        return_attempt(reservation);  // waiting holds nothing
        bool timed_out = false;
        {
            MutexLock lock(accounting_mutex_);
            auto const now = std::chrono::steady_clock::now();
            if (host_released_ - host_returned_by_attempts_ != freed_at_progress) {
                freed_at_progress = host_released_ - host_returned_by_attempts_;
                progressed = now;
            }
            auto const deadline = deadline_after(progressed, config_.reserve_timeout);
            timed_out = now >= deadline;
            if (!timed_out) {
                host_waiting_ += size;
                // Anything released beyond this caller's own attempt wakes it
                // to try again; only memory freed counts as progress.
                host_released_signal_.wait_for(lock, deadline - now, [&]() SPILLWAY_REQUIRES(accounting_mutex_) {
                    return host_released_ - released_before > size;
                });
                host_waiting_ -= size;
            }
        }
        if (timed_out) {
            fail_waiting(size);
        }
    }
}

void BufferResource::check_within_host_limit(std::size_t size) const {
    auto const limit = memory_limit(MemoryType::HOST);
    SPILLWAY_EXPECTS(
        size <= limit,
        "cannot reserve " << format_bytes(size) << " of HOST: that is more than the limit of "
                          << format_bytes(limit) << " (" << config_.host_limit_origin << "); raise memory_limit_host",
        OutOfMemory
    );
}

void BufferResource::fail_waiting(std::size_t size) const {
    MutexLock lock(accounting_mutex_);
    Tier const& host = tier(MemoryType::HOST);
    SPILLWAY_FAIL(
        "cannot reserve " << format_bytes(size) << " of HOST: nothing was freed or spilled for "
                          << std::chrono::duration<double>(config_.reserve_timeout).count()
                          << " s while it waited; the limit is " << format_bytes(host.limit)
                          << " (" << config_.host_limit_origin << "), " << format_bytes(host.used)
                          << " are in use (" << format_bytes(host_container_bytes_)
                          << " by containers, such as the columns of tables being worked on, and "
                          << format_bytes(host.used - host_container_bytes_) << " by buffers), "
                          << format_bytes(host.reserved) << " reserved and " << format_bytes(host_waiting_)
                          << " more waited for; raise memory_limit_host, keep more of the data in spillable "
                             "stores, or raise memory_reserve_timeout",
        OutOfMemory
    );
}

std::uint64_t BufferResource::memory_waiting() const {
    MutexLock lock(accounting_mutex_);
    return host_waiting_;
}

std::string BufferResource::describe_usage(MemoryType type) const {
    MutexLock lock(accounting_mutex_);
    Tier const& state = tier(type);
    std::ostringstream text;
    text << "the limit is " << format_bytes(state.limit) << " (";
    if (type == MemoryType::HOST) {
        text << config_.host_limit_origin;
    } else if (config_.disk_limit.is_percent()) {
        // What frees room then is a larger file system, not a larger quota.
        text << MemoryConfig::limit_option(type) << " " << config_.disk_limit.to_string() << " of the "
             << format_bytes(state.capacity) << " file system holding spill_directory";
    } else {
        text << MemoryConfig::limit_option(type);
    }
    text << "), " << format_bytes(state.used) << " are in use and " << format_bytes(state.reserved)
         << " reserved";
    return text.str();
}

Buffer BufferResource::make_buffer(std::size_t size, MemoryReservation& reservation) {
    check_reservation(reservation, MemoryType::HOST, size, "make_buffer");
    auto bytes = allocate_host(reservation, size, size, [](detail::HostBytes const&) {});
    statistics_->add_bytes("memory.allocate.bytes", size);
    return Buffer(*this, size, std::move(bytes));
}

void BufferResource::truncate(Buffer& buffer, std::size_t size) {
    SPILLWAY_EXPECTS(buffer.resource_ == this && buffer.mem_type() == MemoryType::HOST,
                     "truncate needs a HOST buffer of this BufferResource", InvalidArgument);
    auto const old_size = buffer.size();
    SPILLWAY_EXPECTS(size <= old_size,
                     "truncate cannot lengthen a buffer of " << old_size << " bytes to " << size, InvalidArgument);
    if (size == old_size) {
        return;
    }
    detail::shrink_block(buffer.host_, old_size, size);
    buffer.size_ = size;
    release_buffer(MemoryType::HOST, old_size - size, {});  // no block: the bytes are gone already
}

std::size_t BufferResource::allocated_capacity(std::size_t size) noexcept {
    return detail::block_capacity(size);
}

std::size_t BufferResource::container_capacity(std::size_t size) noexcept {
    return detail::container_block_capacity(size);
}

void* BufferResource::allocate_bytes(std::size_t size) {
    auto const capacity = container_capacity(size);
    auto reservation = reserve_and_spill(MemoryType::HOST, capacity, AllowOverbooking::yes);
    // A block of the whole capacity, so that the pool matches it by its class.
    auto const block_size = detail::is_mapped_block(size) ? capacity : size;
    return allocate_host(reservation, block_size, capacity, [](detail::HostBytes const&) {}, HostUse::container)
        .release();
}

void BufferResource::deallocate_bytes(void* memory, std::size_t size) noexcept {
    auto const capacity = container_capacity(size);
    release_buffer(
        MemoryType::HOST, capacity, detail::HostBytes(static_cast<std::byte*>(memory), detail::AlignedFree{capacity}),
        HostUse::container
    );
}

Buffer BufferResource::move(Buffer&& buffer, MemoryReservation& reservation) {
    SPILLWAY_EXPECTS(
        buffer.resource_ == this, "move needs a non-empty buffer of this BufferResource", InvalidArgument
    );
    auto const target = reservation.mem_type();
    check_reservation(reservation, target, buffer.size(), "move");
    if (target == buffer.mem_type()) {
        return std::move(buffer);
    }
    auto const size = buffer.size();
    if (target == MemoryType::DISK) {
        ScopedTimer timer(*statistics_, "memory.copy.host_to_disk.seconds");
        auto file = disk_->write(padded_for_direct_io(buffer.host_, size).bytes, size);
        consume(reservation, size);
        Buffer const source(std::move(buffer));
        statistics_->add_bytes("memory.copy.host_to_disk.bytes", size);
        return Buffer(*this, size, std::move(file));
    }
    ScopedTimer timer(*statistics_, "memory.copy.disk_to_host.seconds");
    auto bytes = allocate_host(reservation, size, size, [&](detail::HostBytes const& block) {
        if (!needs_bounce(size)) {
            disk_->read(*buffer.slot_, {block.get(), detail::align_up(size)});
            return;
        }
        auto const bounce = detail::allocate_aligned(size);
        disk_->read(*buffer.slot_, {bounce.get(), detail::align_up(size)});
        std::memcpy(block.get(), bounce.get(), size);
    });
    Buffer const source(std::move(buffer));
    statistics_->add_bytes("memory.copy.disk_to_host.bytes", size);
    return Buffer(*this, size, std::move(bytes));
}

void BufferResource::move_to_disk(std::span<Buffer> buffers, MemoryReservation& reservation) {
    std::size_t total = 0;
    std::vector<std::span<std::byte const>> payloads;
    payloads.reserve(buffers.size());
    for (auto const& buffer : buffers) {
        SPILLWAY_EXPECTS(
            buffer.resource_ == this && buffer.mem_type() == MemoryType::HOST,
            "move_to_disk needs HOST buffers of this BufferResource", InvalidArgument
        );
        total += buffer.size();
        payloads.emplace_back(buffer.host_.get(), buffer.size());
    }
    check_reservation(reservation, MemoryType::DISK, total, "move_to_disk");
    if (buffers.empty()) {
        return;
    }
    ScopedTimer timer(*statistics_, "memory.copy.host_to_disk.seconds");
    auto slots = disk_->write_together(payloads);
    consume(reservation, total);
    for (std::size_t i = 0; i < buffers.size(); ++i) {
        auto const size = buffers[i].size();
        Buffer const source(std::move(buffers[i]));
        buffers[i] = Buffer(*this, size, std::move(slots[i]));
    }
    statistics_->add_bytes("memory.copy.host_to_disk.bytes", total);
}

void BufferResource::move_to_host(std::span<Buffer> buffers, MemoryReservation& reservation) {
    std::size_t total = 0;
    for (auto const& buffer : buffers) {
        SPILLWAY_EXPECTS(
            buffer.resource_ == this && buffer.mem_type() == MemoryType::DISK,
            "move_to_host needs DISK buffers of this BufferResource", InvalidArgument
        );
        total += buffer.size();
    }
    check_reservation(reservation, MemoryType::HOST, total, "move_to_host");
    if (buffers.empty()) {
        return;
    }
    ScopedTimer timer(*statistics_, "memory.copy.disk_to_host.seconds");
    // Every block first, then the reads: on failure no buffer has left DISK.
    std::vector<detail::HostBytes> blocks;
    std::vector<detail::SpillSlot const*> slots;
    std::vector<std::span<std::byte>> destinations;
    blocks.reserve(buffers.size());
    slots.reserve(buffers.size());
    destinations.reserve(buffers.size());
    try {
        for (auto const& buffer : buffers) {
            blocks.push_back(allocate_host(reservation, buffer.size(), buffer.size(), [](detail::HostBytes const&) {}));
            slots.push_back(buffer.slot_.get());
            destinations.emplace_back(blocks.back().get(), buffer.size());
        }
        disk_->read_together(slots, destinations);
    } catch (...) {
        for (std::size_t i = 0; i < blocks.size(); ++i) {
            unconsume(reservation, buffers[i].size());
        }
        throw;
    }
    for (std::size_t i = 0; i < buffers.size(); ++i) {
        auto const size = buffers[i].size();
        Buffer const source(std::move(buffers[i]));
        buffers[i] = Buffer(*this, size, std::move(blocks[i]));
    }
    statistics_->add_bytes("memory.copy.disk_to_host.bytes", total);
}

std::filesystem::path const& BufferResource::spill_directory() const noexcept {
    return disk_->directory();
}

void BufferResource::remove_free_spill_files() noexcept { disk_->remove_free_files(); }

void BufferResource::note_host_released(std::size_t size) noexcept {
    host_released_ += size;
    if (host_waiting_ != 0) {
        host_released_signal_.notify_all();
    }
}

std::uint64_t BufferResource::host_bytes_freed() const {
    MutexLock lock(accounting_mutex_);
    return host_released_ - host_returned_by_attempts_;
}

void BufferResource::return_attempt(MemoryReservation& reservation) noexcept {
    auto const size = std::exchange(reservation.size_, 0);
    MutexLock lock(accounting_mutex_);
    Tier& state = tier(MemoryType::HOST);
    SPILLWAY_ASSERT(state.reserved >= size, "HOST reserved total would go negative");
    state.reserved -= size;
    host_returned_by_attempts_ += size;
    note_host_released(size);
}

void BufferResource::release_reservation(MemoryType type, std::size_t size) noexcept {
    MutexLock lock(accounting_mutex_);
    Tier& state = tier(type);
    SPILLWAY_ASSERT(state.reserved >= size, type << " reserved total would go negative");
    state.reserved -= size;
    if (type == MemoryType::HOST) {
        note_host_released(size);
    }
}

void BufferResource::release_buffer(MemoryType type, std::size_t size, detail::HostBytes bytes,
                                    HostUse use) noexcept {
    detail::HostBytes unpooled;  // freed once the lock is dropped
    MutexLock lock(accounting_mutex_);
    Tier& state = tier(type);
    SPILLWAY_ASSERT(state.used >= size, type << " used total would go negative");
    state.used -= size;
    if (use == HostUse::container) {
        SPILLWAY_ASSERT(host_container_bytes_ >= size, "the HOST bytes of containers would go negative");
        host_container_bytes_ -= size;
    }
    if (type == MemoryType::HOST) {
        note_host_released(size);
    }
    if (bytes != nullptr) {
        auto const capacity = bytes.get_deleter().capacity;
        unpooled = host_pool_->give(std::move(bytes), capacity, pool_room());
    }
}

void BufferResource::check_reservation(
    MemoryReservation const& reservation, MemoryType type, std::size_t size, char const* what
) const {
    SPILLWAY_EXPECTS(
        reservation.resource() == this,
        what << " needs a reservation of this BufferResource", ReservationError
    );
    SPILLWAY_EXPECTS(
        reservation.mem_type() == type,
        what << " needs a " << type << " reservation, got one in " << reservation.mem_type(),
        ReservationError
    );
    SPILLWAY_EXPECTS(
        reservation.size() >= size,
        what << " needs " << format_bytes(size) << " of " << type << " but the reservation holds "
             << format_bytes(reservation.size()),
        ReservationError
    );
}

void BufferResource::consume(MemoryReservation& reservation, std::size_t size) {
    MutexLock lock(accounting_mutex_);
    consume_locked(reservation, size);
}

void BufferResource::consume_locked(MemoryReservation& reservation, std::size_t size) {
    Tier& state = tier(reservation.mem_type());
    SPILLWAY_ASSERT(
        state.reserved >= size, reservation.mem_type() << " reserved total would go negative"
    );
    // The committed total does not change, so it stays within max_committed_bytes.
    state.reserved -= size;
    state.used += size;
    state.peak_used = std::max(state.peak_used, state.used);
    reservation.size_ -= size;
}

void BufferResource::unconsume(MemoryReservation& reservation, std::size_t size) noexcept {
    MutexLock lock(accounting_mutex_);
    Tier& state = tier(reservation.mem_type());
    SPILLWAY_ASSERT(state.used >= size, reservation.mem_type() << " used total would go negative");
    state.used -= size;
    state.reserved += size;
    reservation.size_ += size;
}

}  // namespace spillway::memory
