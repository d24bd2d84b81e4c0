#pragma once
/// @file
/// Serializes a table into one contiguous payload plus a small metadata
/// record, and back. docs/table_format.md specifies the format.

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include <spillway/table/table.hpp>

namespace spillway::table {

/// The current version of the packed format; `unpack` reads this version only.
inline constexpr std::uint16_t packed_format_version = 1;

/// A packed table: the metadata record (schema, row count, checksums) and the
/// payload (every column buffer, 8-byte aligned within it).
struct PackedTable {
    std::vector<std::byte> metadata;
    std::vector<std::byte> payload;
};

/// The bytes `pack_into` writes for `table`.
[[nodiscard]] std::size_t packed_size(Table const& table) noexcept;

/// Writes the payload of `table` to the first `packed_size(table)` bytes of
/// `destination` and returns the metadata that describes it. The caller owns
/// both; `unpack` needs exactly those payload bytes and the metadata.
/// @throws InvalidArgument if `destination` is smaller than `packed_size(table)`
/// or a column name is longer than 65535 bytes.
[[nodiscard]] std::vector<std::byte> pack_into(Table const& table, std::span<std::byte> destination);

/// `table` packed into a payload of its own.
/// @throws InvalidArgument as `pack_into` does.
[[nodiscard]] PackedTable pack(Table const& table);

/// The table that `pack_into` packed into `metadata` and `payload`. Copies
/// the data; neither span is kept. The payload needs no particular alignment.
/// @throws CorruptData naming the first problem if the metadata or the payload
/// is truncated, fails its checksum, has another format version, or does not
/// describe a valid table. Malformed input never causes undefined behaviour.
[[nodiscard]] Table unpack(std::span<std::byte const> metadata, std::span<std::byte const> payload);

/// A packed table as `pack_into` wrote it: its metadata and its payload.
struct PackedTableView {
    std::span<std::byte const> metadata;
    std::span<std::byte const> payload;
};

/// The tables packed in `pieces`, concatenated in their order: what
/// `Table::concatenate` of their `unpack`s returns, but each column's buffers
/// are made once, not once per piece and again for the whole. Copies the
/// data; no span is kept. No pieces give an empty table without columns.
/// @throws CorruptData as `unpack` does, for the first piece that is not valid.
/// @throws InvalidArgument if the pieces' schemas differ, or the result
///         would exceed a column's limits.
[[nodiscard]] Table unpack_concatenated(std::span<PackedTableView const> pieces);

/// Where `pack_concatenated` writes a payload: given its size in bytes, the
/// memory to write it to, at least that large.
using PayloadDestination = std::function<std::span<std::byte>(std::size_t size)>;

/// Whether reading a packed table checks its payload against the checksum in
/// its metadata.
enum class PayloadChecksum {
    /// Checked: for a packed table that has been anywhere a byte could
    /// change, such as a file, a network or another process.
    verify,
    /// Not checked: for a packed table that this process packed and has kept
    /// in its own memory since. Everything else is still checked, so a
    /// malformed table still fails with `CorruptData`, never with undefined
    /// behaviour; only a changed value would pass.
    trust,
};

/// The tables packed in `pieces`, concatenated in their order and packed
/// again as one: byte for byte what `pack_into(unpack_concatenated(pieces))`
/// writes, but straight from the pieces, without making the table. Checks
/// every piece first, then calls `destination` once with the payload's size,
/// writes the payload to the start of the span it returns, and returns the
/// metadata. Many small pieces of a table become one, each byte copied once.
/// `payload_checksum` says whether the pieces' payloads are checked against
/// their checksums; the result's checksum is computed either way.
/// @throws CorruptData or InvalidArgument as `unpack_concatenated` does,
///         before `destination` is called.
/// @throws InvalidArgument if the span `destination` returns is smaller
///         than the payload, or a column name is longer than 65535 bytes.
[[nodiscard]] std::vector<std::byte> pack_concatenated(std::span<PackedTableView const> pieces,
                                                       PayloadDestination const& destination,
                                                       PayloadChecksum payload_checksum = PayloadChecksum::verify);

}  // namespace spillway::table
