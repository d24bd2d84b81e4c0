#include <spillway/memory/buffer_resource.hpp>

#include <sys/statvfs.h>

#include <cstdlib>
#include <utility>

#include <spillway/core/error.hpp>
#include <spillway/memory/system_memory.hpp>

namespace spillway::memory {
namespace {

constexpr std::size_t round_up_to_alignment(std::size_t size) noexcept {
    return (size + host_buffer_alignment - 1) / host_buffer_alignment * host_buffer_alignment;
}

/// The total size of the file system holding `path`, or of its nearest
/// existing ancestor.
std::uint64_t filesystem_capacity(std::filesystem::path path) {
    path = std::filesystem::absolute(path);
    struct statvfs info {};
    while (statvfs(path.c_str(), &info) != 0) {
        SPILLWAY_EXPECTS(
            path.has_relative_path(),
            "cannot find the file system of spill_directory '" << path.string() << "'",
            IoError
        );
        path = path.parent_path();
    }
    return static_cast<std::uint64_t>(info.f_blocks) * info.f_frsize;
}

}  // namespace

BufferResource::BufferResource(MemoryConfig config, std::shared_ptr<Statistics> statistics)
    : config_(std::move(config)), statistics_(std::move(statistics)) {
    SPILLWAY_EXPECTS(statistics_ != nullptr, "BufferResource needs a Statistics", InvalidArgument);
    SPILLWAY_EXPECTS(
        !config_.spill_directory.empty(), "spill_directory must not be empty", InvalidArgument
    );
    MutexLock lock(accounting_mutex_);
    tier(MemoryType::HOST).capacity = host_memory_capacity();
    tier(MemoryType::DISK).capacity = filesystem_capacity(config_.spill_directory);
    tier(MemoryType::HOST).limit = config_.host_limit.resolve(tier(MemoryType::HOST).capacity);
    tier(MemoryType::DISK).limit = config_.disk_limit.resolve(tier(MemoryType::DISK).capacity);
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
    MutexLock lock(accounting_mutex_);
    tier(type).limit = limit.resolve(tier(type).capacity);
}

std::int64_t BufferResource::memory_available(MemoryType type) const {
    MutexLock lock(accounting_mutex_);
    Tier const& state = tier(type);
    return static_cast<std::int64_t>(state.limit)
           - static_cast<std::int64_t>(state.used + state.reserved);
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

MemoryReservation BufferResource::try_reserve(MemoryType type, std::size_t size) {
    MutexLock lock(accounting_mutex_);
    Tier& state = tier(type);
    auto const committed = state.used + state.reserved;
    if (committed > state.limit || size > state.limit - committed) {
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
        MutexLock lock(accounting_mutex_);
        tier(type).reserved += size;
        return MemoryReservation(this, type, size);
    }
    auto reservation = try_reserve(type, size);
    if (reservation.size() == size) {
        return reservation;
    }
    MutexLock lock(accounting_mutex_);
    Tier const& state = tier(type);
    SPILLWAY_FAIL(
        "cannot reserve " << format_bytes(size) << " of " << type << ": its limit is "
            << format_bytes(state.limit) << " (" << MemoryConfig::limit_option(type) << "), "
            << format_bytes(state.used) << " are in use and " << format_bytes(state.reserved)
            << " reserved; raise " << MemoryConfig::limit_option(type)
            << (type == MemoryType::HOST ? " or use reserve_and_spill to spill first" : ""),
        OutOfMemory
    );
}

Buffer BufferResource::make_buffer(std::size_t size, MemoryReservation& reservation) {
    check_reservation(reservation, MemoryType::HOST, size, "make_buffer");
    auto const capacity = round_up_to_alignment(size);
    detail::HostBytes bytes;
    if (capacity > 0) {
        // NOLINTNEXTLINE(cppcoreguidelines-no-malloc): freed by detail::AlignedFree
        bytes.reset(static_cast<std::byte*>(std::aligned_alloc(host_buffer_alignment, capacity)));
        SPILLWAY_EXPECTS(
            bytes != nullptr,
            "allocating " << format_bytes(capacity) << " of HOST memory failed although "
                          << "memory_limit_host allows it; lower memory_limit_host",
            OutOfMemory
        );
        // The padding after the data is written to spill files; zero it so no
        // stale heap contents reach the disk.
        std::fill(bytes.get() + size, bytes.get() + capacity, std::byte{0});
    }
    consume(reservation, size);
    statistics_->add_bytes("memory.allocate.bytes", size);
    return Buffer(*this, size, std::move(bytes));
}

void BufferResource::release_reservation(MemoryType type, std::size_t size) noexcept {
    MutexLock lock(accounting_mutex_);
    Tier& state = tier(type);
    SPILLWAY_ASSERT(state.reserved >= size, type << " reserved total would go negative");
    state.reserved -= size;
}

void BufferResource::release_buffer(MemoryType type, std::size_t size) noexcept {
    MutexLock lock(accounting_mutex_);
    Tier& state = tier(type);
    SPILLWAY_ASSERT(state.used >= size, type << " used total would go negative");
    state.used -= size;
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
    Tier& state = tier(reservation.mem_type());
    state.reserved -= size;
    state.used += size;
    state.peak_used = std::max(state.peak_used, state.used);
    reservation.size_ -= size;
}

}  // namespace spillway::memory
