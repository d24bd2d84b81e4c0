#pragma once
/// @file
/// Serializes a table into one contiguous payload plus a small metadata
/// record, and back. docs/table_format.md specifies the format.

#include <cstddef>
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

}  // namespace spillway::table
