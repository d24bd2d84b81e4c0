#include <spillway/table/data_type.hpp>

#include <algorithm>
#include <array>
#include <string>

#include <spillway/core/ascii_case.hpp>
#include <spillway/core/error.hpp>

namespace spillway::table {

namespace {
constexpr std::array all_types{DataType::int32,        DataType::int64,        DataType::float64,
                               DataType::date32,       DataType::string,       DataType::boolean,
                               DataType::timestamp_ms, DataType::timestamp_us, DataType::timestamp_ns,
                               DataType::timestamp_ms_utc, DataType::timestamp_us_utc, DataType::timestamp_ns_utc};
}  // namespace

std::string_view to_string(DataType type) noexcept {
    switch (type) {
        case DataType::int32: return "int32";
        case DataType::int64: return "int64";
        case DataType::float64: return "float64";
        case DataType::date32: return "date32";
        case DataType::string: return "string";
        case DataType::boolean: return "boolean";
        case DataType::timestamp_ms: return "timestamp_ms";
        case DataType::timestamp_us: return "timestamp_us";
        case DataType::timestamp_ns: return "timestamp_ns";
        case DataType::timestamp_ms_utc: return "timestamp_ms_utc";
        case DataType::timestamp_us_utc: return "timestamp_us_utc";
        case DataType::timestamp_ns_utc: return "timestamp_ns_utc";
    }
    return "unknown";
}

DataType parse_data_type(std::string_view name) {
    auto const found = std::ranges::find(all_types, to_lower(name), [](DataType type) { return to_string(type); });
    SPILLWAY_EXPECTS(found != all_types.end(),
                     "unknown column type '" << name << "'; the types are int32, int64, float64, date32, string, "
                     "boolean, timestamp_ms, timestamp_us, timestamp_ns, timestamp_ms_utc, timestamp_us_utc and "
                     "timestamp_ns_utc",
                     InvalidArgument);
    return *found;
}

}  // namespace spillway::table
