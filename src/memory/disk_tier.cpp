#include "memory/disk_tier.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>
#include <numeric>
#include <string>
#include <tuple>

#include <spillway/core/error.hpp>
#include <spillway/core/logging.hpp>

#include "memory/aligned_allocation.hpp"
#include "memory/spill_codec.hpp"

namespace spillway::memory::detail {
namespace {

/// Buffers at least this large are checksummed on a second thread while they
/// are written: XXH3 runs at about 12 GB/s, so hashing first would cost a
/// 2 GB/s disk a sixth of its throughput. Below this size starting a thread
/// costs more than it saves.
constexpr std::size_t parallel_checksum_bytes = std::size_t{8} << 20;

/// `read_together` reads through a gap up to this large between payloads it
/// wants in one file instead of skipping it with a request of its own: a
/// request costs about 100 microseconds on a virtual disk, in which that disk
/// reads 32 KiB or more.
constexpr std::uint64_t max_read_gap = std::uint64_t{32} << 10;

/// Runs `write()` and returns the checksum of `data`, computed at the same
/// time on another thread when `data` is large.
template <typename Write>
std::uint64_t write_and_checksum(std::span<std::byte const> data, Write write) {
    if (data.size() < parallel_checksum_bytes) {
        write();
        return checksum(data);
    }
    // If write() throws, the future's destructor waits for the checksum.
    auto digest = std::async(std::launch::async, [data] { return checksum(data); });
    write();
    return digest.get();
}

/// The capacity a spill file of `bytes` is counted with in the pool: its
/// blocks, and at least one, so that the file of an empty buffer is reused and
/// removed like any other instead of piling up beside them.
constexpr std::uint64_t pool_capacity(std::uint64_t bytes) noexcept {
    return std::max<std::uint64_t>(align_up(bytes), host_buffer_alignment);
}

/// Whether the file system of the open file `fd` takes direct I/O at the
/// tier's alignment (`host_buffer_alignment`, for offsets and memory), as
/// statx's `STATX_DIOALIGN` reports it; assumed so where the kernel does not
/// report it. A reported offset alignment of 0 means no direct I/O at all.
bool takes_block_aligned_direct_io(FileOperations& operations, int fd) {
    struct statx info {};
    if (operations.statx(fd, STATX_DIOALIGN, &info) != 0 || (info.stx_mask & STATX_DIOALIGN) == 0) {
        return true;
    }
    auto const divides_block = [](std::uint32_t alignment) {
        return alignment != 0 && host_buffer_alignment % alignment == 0;
    };
    return divides_block(info.stx_dio_offset_align) && divides_block(info.stx_dio_mem_align);
}

}  // namespace

SpillFile::~SpillFile() {
    tier_.give_back(*this);
}

DiskTier::DiskTier(MemoryConfig const& config, Statistics& statistics)
    : statistics_(statistics),
      operations_(config.file_operations ? config.file_operations : std::make_shared<FileOperations>()),
      codec_(config.spill_codec),
      directory_(config.spill_directory, statistics),
      direct_io_(config.direct_io) {}

std::unique_ptr<SpillSlot> DiskTier::write(std::span<std::byte const> padded, std::size_t size) {
    if (codec_ != Codec::none) {
        std::span<std::byte const> const payload[] = {padded.first(size)};
        return std::move(write_together(payload).front());
    }
    return with_direct_io_fallback([&] { return write_unstaged(padded, size); });
}

std::unique_ptr<SpillSlot> DiskTier::write_unstaged(std::span<std::byte const> padded, std::size_t size) {
    auto file = claim_file(pool_capacity(size));
    // No O_TRUNC: a reused file keeps the blocks it has, which is the point.
    OpenFile out = open(file->path(), O_WRONLY | O_CREAT);
    SpillRecord record{.codec = codec_, .size = size, .stored_size = size};
    record.payload_checksum = write_and_checksum(padded.first(size), [&] {
        out.write_at(padded.first(align_up(size)), 0);
    });
    out.close();
    finish_writing(*file, align_up(size));
    return std::make_unique<SpillSlot>(std::move(file), 0, record);
}

std::vector<std::unique_ptr<SpillSlot>> DiskTier::write_together(
    std::span<std::span<std::byte const> const> payloads
) {
    return with_direct_io_fallback([&] { return write_staged(payloads); });
}

std::vector<std::unique_ptr<SpillSlot>> DiskTier::write_staged(std::span<std::span<std::byte const> const> payloads) {
    std::uint64_t capacity = 0;
    for (auto const payload : payloads) {
        capacity += pool_capacity(payload.size());
    }
    auto file = claim_file(capacity);
    OpenFile out = open(file->path(), O_WRONLY | O_CREAT);
    std::vector<std::pair<std::uint64_t, SpillRecord>> written;
    written.reserve(payloads.size());
    {
        auto const staging = allocate_aligned(codec_staging_bytes);
        StagedWriter writer(out, {staging.get(), codec_staging_bytes});
        for (auto const payload : payloads) {
            auto const offset = writer.begin_payload();
            if (codec_ == Codec::none) {
                writer.append(payload);
            } else {
                compress(codec_, payload, writer);
            }
            written.emplace_back(offset, SpillRecord{.codec = codec_,
                                                     .size = payload.size(),
                                                     .stored_size = writer.stored_size(),
                                                     .payload_checksum = writer.checksum()});
        }
        writer.finish();
    }
    out.close();
    finish_writing(*file, written.back().first + align_up(written.back().second.stored_size));
    std::vector<std::unique_ptr<SpillSlot>> slots;
    slots.reserve(written.size());
    for (auto const& [offset, record] : written) {
        slots.push_back(std::make_unique<SpillSlot>(file, offset, record));
    }
    return slots;
}

void DiskTier::read(SpillSlot const& slot, std::span<std::byte> padded) {
    with_direct_io_fallback([&] { read_once(slot, padded); });
}

void DiskTier::read_once(SpillSlot const& slot, std::span<std::byte> padded) {
    auto const& path = slot.path();
    auto const& record = slot.record();
    OpenFile in = open(path, O_RDONLY);
    if (record.codec == Codec::none) {
        auto const payload = padded.first(align_up(record.size));
        auto const read = in.read_at(payload, slot.offset());
        statistics_.add_count("memory.disk.read.requests");
        if (read < payload.size()) {
            throw_truncated(path, payload.size(), slot.offset(), read);
        }
        check_read(slot, checksum(padded.first(record.size)));
        return;
    }
    auto const staging = allocate_aligned(codec_staging_bytes);
    read_decoded(in, slot, padded.first(record.size), {staging.get(), codec_staging_bytes});
}

void DiskTier::read_together(
    std::span<SpillSlot const* const> slots, std::span<std::span<std::byte> const> destinations
) {
    with_direct_io_fallback([&] { read_together_once(slots, destinations); });
}

void DiskTier::read_together_once(
    std::span<SpillSlot const* const> slots, std::span<std::span<std::byte> const> destinations
) {
    // By file, then by offset: payloads next to each other in a file follow
    // each other here. An empty payload shares its offset with the next one
    // and goes first.
    std::vector<std::size_t> order(slots.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::ranges::sort(order, {}, [&](std::size_t i) {
        return std::tuple{reinterpret_cast<std::uintptr_t>(&slots[i]->file()), slots[i]->offset(),
                          slots[i]->record().stored_size};
    });
    std::vector<SpillSlot const*> sorted;
    std::vector<std::span<std::byte>> sorted_destinations;
    sorted.reserve(slots.size());
    sorted_destinations.reserve(slots.size());
    for (auto const i : order) {
        sorted.push_back(slots[i]);
        sorted_destinations.push_back(destinations[i]);
    }
    // Runs of payloads without a codec in one file, at most `max_read_gap`
    // apart; a payload with a codec is a run of its own.
    struct Run {
        std::size_t begin, end;
        std::uint64_t bytes;  ///< from the first payload's offset to the last one's end
    };
    std::vector<Run> runs;
    for (std::size_t i = 0; i < sorted.size(); ++i) {
        auto const& slot = *sorted[i];
        if (i > 0) {
            auto const& last = *sorted[i - 1];
            if (&last.file() == &slot.file() && last.record().codec == Codec::none
                && slot.record().codec == Codec::none && slot.offset() >= last.end()
                && slot.offset() - last.end() <= max_read_gap) {
                runs.back().end = i + 1;
                runs.back().bytes += slot.end() - last.end();
                continue;
            }
        }
        runs.push_back(Run{i, i + 1, slot.end() - slot.offset()});
    }
    // No larger than the longest run: short runs of small chunks need no 4 MiB.
    auto const longest = std::ranges::max(runs, {}, &Run::bytes).bytes;
    auto const staging_bytes = std::clamp<std::uint64_t>(longest, host_buffer_alignment, codec_staging_bytes);
    auto const staging = allocate_aligned(staging_bytes);
    std::span<std::byte> const area{staging.get(), staging_bytes};
    for (std::size_t next = 0; next < runs.size();) {
        auto const& file = sorted[runs[next].begin]->file();
        OpenFile in = open(file.path(), O_RDONLY);
        for (; next < runs.size() && &sorted[runs[next].begin]->file() == &file; ++next) {
            auto const& run = runs[next];
            if (sorted[run.begin]->record().codec != Codec::none) {
                read_decoded(in, *sorted[run.begin], sorted_destinations[run.begin], area);
                continue;
            }
            read_run(in, std::span(sorted).subspan(run.begin, run.end - run.begin),
                     std::span(sorted_destinations).subspan(run.begin, run.end - run.begin), area);
        }
    }
}

void DiskTier::read_run(
    OpenFile& in, std::span<SpillSlot const* const> run, std::span<std::span<std::byte> const> destinations,
    std::span<std::byte> staging
) {
    auto const end = run.back()->end();
    std::size_t first = 0;  // the first payload not yet read whole
    for (auto position = run.front()->offset(); position < end;) {
        auto const piece = staging.first(std::min<std::uint64_t>(staging.size(), end - position));
        auto const read = in.read_at(piece, position);
        statistics_.add_count("memory.disk.read.requests");
        if (read < piece.size()) {
            auto const reached = position + read;
            auto const* cut =
                *std::ranges::find_if(run, [&](SpillSlot const* slot) { return slot->end() > reached; });
            throw_truncated(cut->path(), align_up(cut->record().size), cut->offset(),
                            reached > cut->offset() ? reached - cut->offset() : 0);
        }
        auto const piece_end = position + piece.size();
        for (auto i = first; i < run.size() && run[i]->offset() < piece_end; ++i) {
            auto const from = std::max(run[i]->offset(), position);
            auto const to = std::min(run[i]->offset() + run[i]->record().size, piece_end);
            if (from < to) {
                std::memcpy(destinations[i].data() + (from - run[i]->offset()), piece.data() + (from - position),
                            to - from);
            }
        }
        while (first < run.size() && run[first]->end() <= piece_end) {
            ++first;
        }
        position = piece_end;
    }
    for (std::size_t i = 0; i < run.size(); ++i) {
        check_read(*run[i], checksum(destinations[i]));
    }
}

void DiskTier::read_decoded(OpenFile& in, SpillSlot const& slot, std::span<std::byte> destination,
                            std::span<std::byte> staging) {
    auto const& record = slot.record();
    StagedReader reader(in, slot.offset(), record.stored_size, staging);
    decompress(record.codec, reader, destination, slot.path());
    auto const pieces = (align_up(record.stored_size) + staging.size() - 1) / staging.size();
    statistics_.add_count("memory.disk.read.requests", std::max<std::uint64_t>(1, pieces));
    check_read(slot, reader.checksum());
}

void DiskTier::check_read(SpillSlot const& slot, std::uint64_t actual_checksum) {
    // A file holding other bytes than were written to it, another buffer's
    // included, fails here.
    SPILLWAY_EXPECTS(
        actual_checksum == slot.record().payload_checksum,
        "spill file '" << slot.path().string() << "' is corrupt: the payload checksum at offset " << slot.offset()
                       << " does not match",
        CorruptData
    );
    statistics_.add_bytes("memory.disk.read.bytes", align_up(slot.record().stored_size));
}

std::shared_ptr<SpillFile> DiskTier::claim_file(std::uint64_t bytes) {
    // Made before a free file is taken, so that no allocation can fail while
    // the taken file is held by nothing that gives it back.
    auto file = std::make_shared<SpillFile>(*this, SpillFilePool::File{});
    file->file_ = files_.take(bytes);
    if (file->file_) {
        statistics_.add_count("memory.disk.files_reused");
        return file;
    }
    // relaxed: only uniqueness matters, no data is published through it
    auto const number = next_file_.fetch_add(1, std::memory_order_relaxed);
    file->file_ =
        SpillFilePool::new_file(directory() / (std::string(SpillDirectory::spill_file_prefix) + std::to_string(number)));
    statistics_.add_count("memory.disk.files_created");
    return file;
}

void DiskTier::finish_writing(SpillFile& file, std::uint64_t end) {
    files_.add_in_use(file.file_, pool_capacity(end));
    file.written_ = true;
    statistics_.add_bytes("memory.disk.write.bytes", end);
    trim();
}

void DiskTier::give_back(SpillFile& file) noexcept {
    if (file.file_.empty()) {
        return;  // claim_file failed before it had a file
    }
    if (!file.written_) {
        files_.forget(file.file_);
        remove(file.path());
        return;
    }
    files_.release(std::move(file.file_));
    trim();
}

void DiskTier::remove_free_files() noexcept {
    while (auto file = files_.take_free()) {
        remove(file.mapped());
        statistics_.add_count("memory.disk.files_removed");
    }
}

void DiskTier::trim() noexcept {
    while (auto excess = files_.take_excess()) {
        remove(excess.mapped());
        statistics_.add_count("memory.disk.files_removed");
    }
}

OpenFile DiskTier::open(std::filesystem::path const& path, int flags) {
    // relaxed: a hint that only selects the open flags; nothing is published through it
    bool direct = direct_io_.load(std::memory_order_relaxed);
    int fd = operations_->open(path.c_str(), flags | (direct ? O_DIRECT : 0), 0600);
    if (fd < 0 && errno == EINVAL && direct) {
        stop_direct_io();
        direct = false;
        fd = operations_->open(path.c_str(), flags, 0600);
    }
    // relaxed: exchange makes exactly one thread check; a write racing it
    // that the file system refuses falls back on its own
    if (fd >= 0 && direct && !alignment_checked_.exchange(true, std::memory_order_relaxed)
        && !takes_block_aligned_direct_io(*operations_, fd)) {
        operations_->close(fd);
        stop_direct_io();
        direct = false;
        fd = operations_->open(path.c_str(), flags, 0600);
    }
    if (fd < 0) {
        auto const error = errno;
        SPILLWAY_EXPECTS(
            error != ENOENT || (flags & O_CREAT) != 0,
            "spill file '" << path.string() << "' is missing: " << describe_errno(error), IoError
        );
        SPILLWAY_FAIL("cannot open spill file '" << path.string() << "': " << describe_errno(error), IoError);
    }
    return OpenFile(*operations_, path, fd, direct);
}

void DiskTier::stop_direct_io() {
    // relaxed: as in `open`; exchange makes exactly one thread report the fallback
    if (direct_io_.exchange(false, std::memory_order_relaxed)) {
        SPILLWAY_LOG(info, "the file system of '" << directory().string()
                                                   << "' does not take direct I/O at 4 KiB alignment; using buffered I/O");
        statistics_.add_count("memory.disk.direct_io_fallbacks");
    }
}

void DiskTier::remove(std::filesystem::path const& path) noexcept {
    if (operations_->unlink(path.c_str()) != 0 && errno != ENOENT) {
        SPILLWAY_LOG(warn, "cannot remove spill file '" << path.string() << "': " << describe_errno(errno));
    }
}

}  // namespace spillway::memory::detail
