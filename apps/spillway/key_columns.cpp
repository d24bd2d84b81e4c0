#include "key_columns.hpp"

#include <algorithm>
#include <charconv>

#include <spillway/core/error.hpp>

namespace spillway::cli {
namespace {

/// The column `key` names: a column name, or else a column number.
std::size_t resolve_key(table::Schema const& schema, std::string const& key) {
    SPILLWAY_EXPECTS(!key.empty(), "an empty key column was given; name one of the columns: " << schema.to_string(),
                     InvalidArgument);
    if (auto const index = schema.find(key)) {
        return *index;
    }
    std::size_t number = 0;
    auto const [end, error] = std::from_chars(key.data(), key.data() + key.size(), number);
    if (error == std::errc{} && end == key.data() + key.size()) {
        SPILLWAY_EXPECTS(number < schema.size(),
                         "no column is named '" << key << "', and there is no column number " << key << ": the "
                                                << schema.size() << " columns, numbered from 0, are "
                                                << schema.to_string(),
                         InvalidArgument);
        return number;
    }
    return schema.index_of(key);  // throws, listing the columns
}

}  // namespace

std::vector<std::size_t> resolve_keys(table::Schema const& schema, std::vector<std::string> const& keys) {
    SPILLWAY_EXPECTS(!keys.empty(),
                     "no key column was given; name one or more with --key from: " << schema.to_string(),
                     InvalidArgument);
    std::vector<std::size_t> indices;
    for (auto const& key : keys) {
        auto const index = resolve_key(schema, key);
        SPILLWAY_EXPECTS(std::find(indices.begin(), indices.end(), index) == indices.end(),
                         "key column '" << key << "' was given twice", InvalidArgument);
        indices.push_back(index);
    }
    return indices;
}

}  // namespace spillway::cli
