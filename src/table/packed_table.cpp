#include <spillway/table/packed_table.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <string>

#include <spillway/core/error.hpp>
#include <spillway/memory/checksum.hpp>

#include "bitmap.hpp"
#include "column_access.hpp"
#include "column_concatenation.hpp"
#include "packed_layout.hpp"
#include "xxhash.hpp"

namespace spillway::table {
namespace {

using detail::buffer_sizes;
using detail::BufferSizes;
using detail::PackedColumn;
using detail::padded;

static_assert(std::endian::native == std::endian::little,
              "the packed format is little-endian, and this build reads and writes it natively");

constexpr std::array<std::byte, 4> magic{std::byte{'S'}, std::byte{'P'}, std::byte{'W'}, std::byte{'T'}};
constexpr std::size_t header_bytes = 40;
constexpr std::size_t column_header_bytes = 12;
constexpr std::size_t trailer_bytes = 8;
constexpr std::uint8_t has_validity_flag = 1;
constexpr std::size_t max_name_bytes = 0xffff;

BufferSizes buffer_sizes(Column const& column) noexcept {
    return buffer_sizes(column.type(), column.size(), column.null_count() != 0, column.character_buffer().size());
}

/// Writes little-endian fields into metadata of a size known in advance.
class MetadataWriter {
  public:
    explicit MetadataWriter(std::size_t size) : bytes_(size) {}

    template <typename T>
    void put(T value) {
        put_bytes(std::as_bytes(std::span(&value, 1)));
    }
    void put_bytes(std::span<std::byte const> bytes) {
        SPILLWAY_ASSERT(bytes.size() <= bytes_.size() - position_, "packed table metadata overflows its size");
        std::ranges::copy(bytes, bytes_.begin() + static_cast<std::ptrdiff_t>(position_));
        position_ += bytes.size();
    }
    [[nodiscard]] std::span<std::byte const> written() const noexcept { return std::span(bytes_).first(position_); }
    [[nodiscard]] std::vector<std::byte> finish() && {
        SPILLWAY_ASSERT(position_ == bytes_.size(), "packed table metadata of " << position_ << " bytes, expected "
                                                                                << bytes_.size());
        return std::move(bytes_);
    }

  private:
    std::vector<std::byte> bytes_;
    std::size_t position_ = 0;
};

/// Reads little-endian fields from the metadata, never past its end.
class MetadataReader {
  public:
    explicit MetadataReader(std::span<std::byte const> bytes) : bytes_(bytes) {}

    template <typename T>
    T get() {
        T value;
        std::memcpy(&value, get_bytes(sizeof(T)).data(), sizeof(T));
        return value;
    }
    std::span<std::byte const> get_bytes(std::size_t count) {
        SPILLWAY_EXPECTS(count <= bytes_.size() - position_,
                         "packed table metadata is truncated: " << count << " bytes needed at byte " << position_
                                                                << " of " << bytes_.size(),
                         CorruptData);
        auto const bytes = bytes_.subspan(position_, count);
        position_ += count;
        return bytes;
    }
    [[nodiscard]] std::size_t position() const noexcept { return position_; }

  private:
    std::span<std::byte const> bytes_;
    std::size_t position_ = 0;
};

/// Copies `source` to `destination` at `position` and zeroes the padding
/// after it; returns the position after the padding.
std::size_t write_buffer(std::span<std::byte const> source, std::span<std::byte> destination, std::size_t position) {
    std::ranges::copy(source, destination.begin() + static_cast<std::ptrdiff_t>(position));
    auto const end = position + source.size();
    std::fill(destination.begin() + static_cast<std::ptrdiff_t>(end),
              destination.begin() + static_cast<std::ptrdiff_t>(padded(end)), std::byte{0});
    return padded(end);
}

/// A column's description in the metadata; its name views the metadata.
struct ColumnHeader {
    std::string_view name;
    DataType type;
    bool has_validity;
    std::size_t characters;
};

ColumnHeader read_column_header(MetadataReader& reader, std::size_t index) {
    auto const type = reader.get<std::uint8_t>();
    auto const flags = reader.get<std::uint8_t>();
    auto const name_bytes = reader.get<std::uint16_t>();
    auto const characters = reader.get<std::uint64_t>();
    auto const name = reader.get_bytes(name_bytes);
    SPILLWAY_EXPECTS(is_data_type(type), "packed table column " << index << " has unknown type code " << int{type},
                     CorruptData);
    SPILLWAY_EXPECTS((flags & ~has_validity_flag) == 0,
                     "packed table column " << index << " has unknown flags " << int{flags}, CorruptData);
    auto const data_type = static_cast<DataType>(type);
    SPILLWAY_EXPECTS(characters <= Column::max_characters && (data_type == DataType::string || characters == 0),
                     "packed table column " << index << " of type " << to_string(data_type) << " claims " << characters
                                            << " bytes of characters",
                     CorruptData);
    return {std::string_view(reinterpret_cast<char const*>(name.data()), name.size()), data_type,
            (flags & has_validity_flag) != 0, static_cast<std::size_t>(characters)};
}

}  // namespace

void detail::check_packable_names(std::span<Field const> fields) {
    for (auto const& field : fields) {
        SPILLWAY_EXPECTS(field.name.size() <= max_name_bytes,
                         "column name of " << field.name.size() << " bytes; the packed format allows "
                                           << max_name_bytes,
                         InvalidArgument);
    }
}

std::vector<std::byte> detail::packed_metadata(std::span<Field const> fields, std::size_t rows,
                                               std::span<PackedColumn const> columns,
                                               std::span<std::byte const> payload) {
    auto metadata_size = header_bytes + trailer_bytes;
    for (auto const& field : fields) {
        metadata_size += column_header_bytes + field.name.size();
    }
    check_packable_names(fields);
    MetadataWriter metadata(metadata_size);
    metadata.put_bytes(magic);
    metadata.put(packed_format_version);
    metadata.put(std::uint16_t{0});
    metadata.put(std::uint64_t{rows});
    metadata.put(static_cast<std::uint32_t>(fields.size()));
    metadata.put(std::uint32_t{0});
    metadata.put(std::uint64_t{payload.size()});
    metadata.put(std::uint64_t{memory::checksum(payload)});
    for (std::size_t index = 0; index < fields.size(); ++index) {
        auto const& field = fields[index];
        metadata.put(static_cast<std::uint8_t>(field.type));
        metadata.put(static_cast<std::uint8_t>(columns[index].has_validity ? has_validity_flag : 0));
        metadata.put(static_cast<std::uint16_t>(field.name.size()));
        metadata.put(std::uint64_t{columns[index].characters});
        metadata.put_bytes(std::as_bytes(std::span(field.name)));
    }
    metadata.put(std::uint64_t{XXH3_64bits(metadata.written().data(), metadata.written().size())});
    return std::move(metadata).finish();
}

std::size_t packed_size(Table const& table) noexcept {
    std::size_t size = 0;
    for (auto const& column : table.columns()) {
        size += buffer_sizes(column).padded_total();
    }
    return size;
}

std::vector<std::byte> pack_into(Table const& table, std::span<std::byte> destination) {
    auto const size = packed_size(table);
    SPILLWAY_EXPECTS(destination.size() >= size,
                     "packing a table of " << size << " bytes into a buffer of " << destination.size(), InvalidArgument);
    std::size_t position = 0;
    for (auto const& column : table.columns()) {
        position = write_buffer(column.validity_buffer(), destination, position);
        position = write_buffer(column.data_buffer(), destination, position);
        position = write_buffer(column.character_buffer(), destination, position);
    }
    SPILLWAY_ASSERT(position == size, "packed " << position << " bytes, expected " << size);

    std::vector<PackedColumn> columns;
    columns.reserve(table.num_columns());
    for (auto const& column : table.columns()) {
        columns.push_back({column.null_count() != 0, column.character_buffer().size()});
    }
    return packed_metadata(table.schema().fields(), table.num_rows(), columns, destination.first(size));
}

PackedTable pack(Table const& table) {
    PackedTable packed;
    packed.payload.resize(packed_size(table));
    packed.metadata = pack_into(table, packed.payload);
    return packed;
}

namespace {

/// A packed table checked against its metadata: its rows, its columns'
/// headers (their names view the metadata), and where each column's buffers
/// lie in the payload.
struct ParsedTable {
    std::size_t rows = 0;
    std::vector<ColumnHeader> headers;
    std::vector<detail::ColumnParts> columns;
};

/// Whether `a` and `b` have the same columns: names and types, in order.
bool same_fields(std::span<ColumnHeader const> a, std::span<ColumnHeader const> b) {
    return std::ranges::equal(a, b, [](ColumnHeader const& x, ColumnHeader const& y) {
        return x.name == y.name && x.type == y.type;
    });
}

/// The fields `headers` describe, their names copied.
std::vector<Field> fields_of(std::span<ColumnHeader const> headers) {
    std::vector<Field> fields;
    fields.reserve(headers.size());
    for (auto const& header : headers) {
        fields.push_back({std::string(header.name), header.type});
    }
    return fields;
}

/// @throws CorruptData if two of `headers` have one name.
void check_distinct_names(std::span<ColumnHeader const> headers) {
    std::vector<std::string_view> names;
    names.reserve(headers.size());
    for (auto const& header : headers) {
        names.push_back(header.name);
    }
    std::ranges::sort(names);
    auto const twice = std::ranges::adjacent_find(names);
    SPILLWAY_EXPECTS(twice == names.end(), "packed table has two columns named '" << *twice << "'", CorruptData);
}

/// Parses the packed table of `metadata` and `payload` into `parsed`, whose
/// vectors are reused, and checks it, all but its names' distinctness
/// (`check_distinct_names`).
/// @throws CorruptData as `unpack` does.
void parse(std::span<std::byte const> metadata, std::span<std::byte const> payload, ParsedTable& parsed) {
    SPILLWAY_EXPECTS(metadata.size() >= header_bytes + trailer_bytes,
                     "packed table metadata is " << metadata.size() << " bytes; the smallest valid is "
                                                 << header_bytes + trailer_bytes,
                     CorruptData);
    MetadataReader reader(metadata);
    SPILLWAY_EXPECTS(std::ranges::equal(reader.get_bytes(magic.size()), magic),
                     "not a packed spillway table: the metadata does not start with 'SPWT'", CorruptData);
    auto const version = reader.get<std::uint16_t>();
    SPILLWAY_EXPECTS(version == packed_format_version,
                     "packed table format version " << version << "; this build reads version " << packed_format_version,
                     CorruptData);
    auto const body = metadata.first(metadata.size() - trailer_bytes);
    std::uint64_t stored_metadata_checksum;
    std::memcpy(&stored_metadata_checksum, metadata.data() + body.size(), sizeof(stored_metadata_checksum));
    SPILLWAY_EXPECTS(XXH3_64bits(body.data(), body.size()) == stored_metadata_checksum,
                     "packed table metadata fails its checksum", CorruptData);

    auto const flags = reader.get<std::uint16_t>();
    auto const rows = reader.get<std::uint64_t>();
    auto const column_count = reader.get<std::uint32_t>();
    static_cast<void>(reader.get<std::uint32_t>());  // reserved
    auto const payload_size = reader.get<std::uint64_t>();
    auto const payload_checksum = reader.get<std::uint64_t>();
    SPILLWAY_EXPECTS(flags == 0, "packed table has unknown flags " << flags, CorruptData);
    SPILLWAY_EXPECTS(rows <= Column::max_rows && (column_count != 0 || rows == 0),
                     "packed table claims " << rows << " rows in " << column_count << " columns", CorruptData);

    auto& headers = parsed.headers;
    headers.clear();
    // No more than the metadata can hold, however large the count it claims.
    headers.reserve(std::min<std::size_t>(column_count, body.size() / column_header_bytes));
    std::size_t layout_size = 0;
    for (std::uint32_t index = 0; index < column_count; ++index) {
        // Each header read is bounded by the metadata, so a huge count fails
        // as truncated metadata before it allocates anything large.
        headers.push_back(read_column_header(reader, index));
        auto const& header = headers.back();
        layout_size += buffer_sizes(header.type, rows, header.has_validity, header.characters).padded_total();
    }
    SPILLWAY_EXPECTS(reader.position() == body.size(),
                     "packed table metadata has " << body.size() - reader.position() << " unexpected bytes after its columns",
                     CorruptData);
    SPILLWAY_EXPECTS(payload.size() == payload_size,
                     "packed table payload is " << payload.size() << " bytes but its metadata says " << payload_size
                                                << " (truncated or mismatched)",
                     CorruptData);
    SPILLWAY_EXPECTS(layout_size == payload_size,
                     "packed table columns need " << layout_size << " payload bytes but the metadata says " << payload_size,
                     CorruptData);
    SPILLWAY_EXPECTS(memory::checksum(payload) == payload_checksum,
                     "packed table payload fails its checksum", CorruptData);

    parsed.rows = static_cast<std::size_t>(rows);
    parsed.columns.clear();
    parsed.columns.reserve(headers.size());
    std::size_t position = 0;
    auto const take = [&](std::size_t size) {
        auto const bytes = payload.subspan(position, size);
        position += padded(size);
        return bytes;
    };
    for (auto const& header : headers) {
        auto const sizes = buffer_sizes(header.type, parsed.rows, header.has_validity, header.characters);
        auto const validity = take(sizes.validity);
        auto const data = take(sizes.data);
        auto const characters = take(sizes.characters);
        auto const problem = detail::column_problem(header.type, parsed.rows, validity, data, characters);
        SPILLWAY_EXPECTS(problem.empty(), "packed table column '" << header.name << "': " << problem, CorruptData);
        parsed.columns.push_back({parsed.rows, validity, data, characters});
    }
}

}  // namespace

Table unpack(std::span<std::byte const> metadata, std::span<std::byte const> payload) {
    PackedTableView const piece{metadata, payload};
    return unpack_concatenated(std::span(&piece, 1));
}

namespace {

/// Packed tables parsed and checked to have the same columns: the first's
/// headers (their names view its metadata) and every piece's column parts.
struct ParsedPieces {
    ParsedTable first;
    std::size_t pieces = 0;
    std::vector<detail::ColumnParts> parts;  ///< by column, then piece

    /// The parts of column `index`, one per piece.
    [[nodiscard]] std::span<detail::ColumnParts const> column(std::size_t index) const {
        return std::span(parts).subspan(index * pieces, pieces);
    }
};

/// Parses every piece of `pieces` into one reused `ParsedTable`, so that
/// many small pieces cost no allocations of their own.
/// @throws CorruptData as `unpack` does, for the first piece that is not
///         valid.
/// @throws InvalidArgument if the pieces' columns differ.
ParsedPieces parse_pieces(std::span<PackedTableView const> pieces) {
    ParsedPieces parsed;
    parsed.pieces = pieces.size();
    if (pieces.empty()) {
        return parsed;
    }
    auto const& first = parsed.first;
    parse(pieces.front().metadata, pieces.front().payload, parsed.first);
    check_distinct_names(first.headers);
    auto const column_count = first.headers.size();
    parsed.parts.resize(pieces.size() * column_count);
    auto const keep = [&](std::size_t piece, ParsedTable const& table) {
        for (std::size_t index = 0; index < column_count; ++index) {
            parsed.parts[index * pieces.size() + piece] = table.columns[index];
        }
    };
    keep(0, first);
    ParsedTable next;
    for (std::size_t piece = 1; piece < pieces.size(); ++piece) {
        parse(pieces[piece].metadata, pieces[piece].payload, next);
        if (!same_fields(next.headers, first.headers)) {
            check_distinct_names(next.headers);
            SPILLWAY_FAIL("cannot concatenate a packed table of (" << Schema(fields_of(next.headers)).to_string()
                                                                   << ") to one of ("
                                                                   << Schema(fields_of(first.headers)).to_string()
                                                                   << ")",
                          InvalidArgument);
        }
        keep(piece, next);
    }
    return parsed;
}

}  // namespace

Table unpack_concatenated(std::span<PackedTableView const> pieces) {
    if (pieces.empty()) {
        return Table();
    }
    auto const parsed = parse_pieces(pieces);
    auto const& headers = parsed.first.headers;
    std::vector<Column> columns;
    columns.reserve(headers.size());
    for (std::size_t index = 0; index < headers.size(); ++index) {
        columns.push_back(detail::concatenate_columns(headers[index].type, parsed.column(index)));
    }
    return Table(Schema(fields_of(headers)), std::move(columns));
}

}  // namespace spillway::table
