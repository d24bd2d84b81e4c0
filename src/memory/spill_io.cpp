#include "memory/spill_io.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <spillway/core/error.hpp>
#include <spillway/core/logging.hpp>

#include "memory/aligned_allocation.hpp"

namespace spillway::memory::detail {
std::string describe_errno(int error) {
    std::string text = std::strerror(error);  // NOLINT(concurrency-mt-unsafe): glibc's is thread-safe
    text += " (errno " + std::to_string(error) + ")";
    if (error == ENOSPC || error == EDQUOT) {
        text += "; free space on that file system or point spill_directory at another one";
    }
    return text;
}

OpenFile::~OpenFile() {
    if (fd_ >= 0 && operations_.close(fd_) != 0) {
        SPILLWAY_LOG(warn, "closing spill file '" << path_.string() << "': " << describe_errno(errno));
    }
}

void OpenFile::write_at(std::span<std::byte const> data, std::uint64_t offset) {
    while (!data.empty()) {
        auto const piece = std::min(data.size(), max_io_bytes);
        auto const written =
            operations_.pwrite(fd_, data.data(), piece, static_cast<off_t>(offset));
        if (written < 0 && errno == EINTR) {
            continue;
        }
        SPILLWAY_EXPECTS(
            written >= 0 || errno != EINVAL || !direct_,
            "writing spill file '" << path_.string() << "' with direct I/O failed: " << describe_errno(EINVAL),
            memory::detail::DirectIoRefused
        );
        SPILLWAY_EXPECTS(
            written > 0,
            "writing spill file '" << path_.string() << "' failed: "
                                   << describe_errno(written < 0 ? errno : EIO),
            IoError
        );
        data = data.subspan(static_cast<std::size_t>(written));
        offset += static_cast<std::uint64_t>(written);
    }
}

std::size_t OpenFile::read_at(std::span<std::byte> data, std::uint64_t offset) {
    std::size_t total = 0;
    while (total < data.size()) {
        auto const piece = std::min(data.size() - total, max_io_bytes);
        auto const read =
            operations_.pread(fd_, data.data() + total, piece, static_cast<off_t>(offset + total));
        if (read < 0 && errno == EINTR) {
            continue;
        }
        SPILLWAY_EXPECTS(
            read >= 0 || errno != EINVAL || !direct_,
            "reading spill file '" << path_.string() << "' with direct I/O failed: " << describe_errno(EINVAL),
            memory::detail::DirectIoRefused
        );
        SPILLWAY_EXPECTS(
            read >= 0, "reading spill file '" << path_.string() << "' failed: " << describe_errno(errno),
            IoError
        );
        if (read == 0) {
            break;
        }
        total += static_cast<std::size_t>(read);
    }
    return total;
}

void OpenFile::close() {
    auto const fd = std::exchange(fd_, -1);
    SPILLWAY_EXPECTS(
        operations_.close(fd) == 0,
        "closing spill file '" << path_.string() << "' failed: " << describe_errno(errno), IoError
    );
}

std::span<std::byte> StagedWriter::room(std::size_t at_least) {
    SPILLWAY_ASSERT(at_least + host_buffer_alignment <= staging_.size(), "staging area too small");
    if (staging_.size() - staged_ < at_least) {
        write_full_blocks();
    }
    return staging_.subspan(staged_);
}

void StagedWriter::commit(std::size_t bytes) noexcept {
    checksum_.update(staging_.subspan(staged_, bytes));
    staged_ += bytes;
    stored_size_ += bytes;
}

void StagedWriter::pad_to_block() noexcept {
    auto const padded = align_up(staged_);  // the staging area is a multiple of the alignment
    std::fill(staging_.begin() + static_cast<std::ptrdiff_t>(staged_),
              staging_.begin() + static_cast<std::ptrdiff_t>(padded), std::byte{0});
    staged_ = padded;
}

std::uint64_t StagedWriter::begin_payload() noexcept {
    pad_to_block();
    stored_size_ = 0;
    checksum_.reset();
    return offset_ + staged_;
}

void StagedWriter::append(std::span<std::byte const> bytes) {
    auto const most = staging_.size() / 2;
    while (!bytes.empty()) {
        auto const piece = bytes.first(std::min(bytes.size(), most));
        std::memcpy(room(piece.size()).data(), piece.data(), piece.size());
        commit(piece.size());
        bytes = bytes.subspan(piece.size());
    }
}

void StagedWriter::write_full_blocks() {
    auto const full = staged_ / host_buffer_alignment * host_buffer_alignment;
    file_.write_at(staging_.first(full), offset_);
    offset_ += full;
    std::copy(staging_.begin() + static_cast<std::ptrdiff_t>(full),
              staging_.begin() + static_cast<std::ptrdiff_t>(staged_), staging_.begin());
    staged_ -= full;
}

void StagedWriter::finish() {
    pad_to_block();
    file_.write_at(staging_.first(staged_), offset_);
    offset_ += staged_;
    staged_ = 0;
}

std::span<std::byte const> StagedReader::next() {
    if (remaining_ == 0) {
        return {};
    }
    auto const wanted = std::min<std::uint64_t>(align_up(remaining_), staging_.size());
    auto const read = file_.read_at(staging_.first(wanted), offset_);
    if (read < wanted) {
        throw_truncated(file_.path(), wanted, offset_, read);
    }
    auto const piece = staging_.first(std::min<std::uint64_t>(remaining_, wanted));
    checksum_.update(piece);
    offset_ += wanted;
    remaining_ -= piece.size();
    return piece;
}

void throw_truncated(
    std::filesystem::path const& path, std::uint64_t expected, std::uint64_t offset, std::uint64_t found
) {
    SPILLWAY_FAIL(
        "spill file '" << path.string() << "' is truncated: expected " << expected
                       << " bytes at offset " << offset << ", found " << found,
        CorruptData
    );
}

}  // namespace spillway::memory::detail
