#include <spillway/table/schema.hpp>

#include <algorithm>
#include <set>

#include <spillway/core/error.hpp>

namespace spillway::table {

Schema::Schema(std::vector<Field> fields) : fields_(std::move(fields)) {
    std::set<std::string_view> names;
    for (auto const& field : fields_) {
        SPILLWAY_EXPECTS(names.insert(field.name).second,
                         "two columns are named '" << field.name << "'; column names must be unique",
                         InvalidArgument);
    }
}

std::optional<std::size_t> Schema::find(std::string_view name) const noexcept {
    auto const found = std::ranges::find(fields_, name, &Field::name);
    if (found == fields_.end()) {
        return std::nullopt;
    }
    return static_cast<std::size_t>(found - fields_.begin());
}

std::size_t Schema::index_of(std::string_view name) const {
    auto const index = find(name);
    SPILLWAY_EXPECTS(index.has_value(),
                     "no column is named '" << name << "'; "
                         << (size() == 0 ? std::string("there are no columns") : "the columns are " + to_string()),
                     InvalidArgument);
    return *index;
}

std::string Schema::to_string() const {
    std::string text;
    for (auto const& field : fields_) {
        if (!text.empty()) {
            text += ", ";
        }
        text += field.name;
        text += ':';
        text += table::to_string(field.type);
    }
    return text;
}

}  // namespace spillway::table
