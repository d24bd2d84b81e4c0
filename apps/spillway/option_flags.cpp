#include "option_flags.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string_view>

#include <spillway/core/error.hpp>

namespace spillway::cli {
namespace {

/// `message` without the name a check gave the value it parsed ("the
/// value", or an option "value"): CLI11 puts the flag before the message.
std::string unnamed(std::string message) {
    for (std::string_view const name : {"option 'value': ", "the value: "}) {
        if (message.starts_with(name)) {
            return message.substr(name.size());
        }
    }
    return message;
}

}  // namespace

ValueCheck size_value() {
    return [](std::string const& value) { static_cast<void>(parse_bytes(value, "the value")); };
}

ValueCheck positive_duration_value() {
    return [](std::string const& value) {
        std::optional<std::chrono::nanoseconds> duration;
        try {
            duration = parse_duration(value, "the value");
        } catch (InvalidArgument const&) {
            // said below: its message offers 0 and off, which are no durations here
        }
        SPILLWAY_EXPECTS(duration && *duration > std::chrono::nanoseconds::zero(),
                         "invalid duration '" << value
                                              << "': expected a number above zero with a unit (ns, us, ms, s, "
                                                 "min, h), such as 90s",
                         InvalidArgument);
    };
}

ValueCheck size_or_percent_value() {
    return [](std::string const& value) { static_cast<void>(parse_size(value, "the value")); };
}

ValueCheck integer_value(std::int64_t min, std::int64_t max) {
    return [min, max](std::string const& value) {
        // Options::get_int is the parser the readers use.
        static_cast<void>(Options().set("value", value).get_int("value", 0, min, max));
    };
}

double positive_number_option(Options const& options, std::string_view name, double fallback, double max) {
    auto const value = options.find(name);
    if (!value) {
        return fallback;
    }
    std::optional<double> number;
    try {
        number = options.get_double(name, fallback, 0, max);
    } catch (InvalidArgument const&) {
        // said below, with the range this option takes
    }
    SPILLWAY_EXPECTS(number && *number > 0,
                     options.describe(name, value->source)
                         << ": invalid value '" << value->text << "': expected a number above 0 and at most " << max,
                     InvalidArgument);
    return *number;
}

ValueCheck positive_number_value(double max) {
    return [max](std::string const& value) {
        static_cast<void>(positive_number_option(Options().set("value", value), "value", 0, max));
    };
}

ValueCheck choice_value(std::vector<std::string> choices) {
    return [choices = std::move(choices)](std::string const& value) {
        // As the option's reader (`Options::get_choice`) compares them.
        if (std::ranges::find(choices, normalized_choice(value)) != choices.end()) {
            return;
        }
        std::ostringstream list;
        for (auto const& choice : choices) {
            list << (&choice == &choices.front() ? "" : ", ") << choice;
        }
        SPILLWAY_FAIL("invalid value '" << value << "': expected one of " << list.str(), InvalidArgument);
    };
}

ValueCheck bool_value() {
    return [](std::string const& value) { static_cast<void>(parse_bool(value, "the value")); };
}

ValueCheck any_value() {
    return [](std::string const&) {};
}

void OptionFlags::add(CLI::App& command, std::string const& flag, std::string const& option,
                      std::string const& value_name, std::string const& help, ValueCheck check) {
    auto& bound = bound_.emplace_back(Bound{option, {}, nullptr});
    auto const validator = [check = std::move(check)](std::string& value) -> std::string {
        try {
            check(value);
            return {};
        } catch (Error const& error) {
            return unnamed(error.what());
        }
    };
    bound.flag = command.add_option(flag, bound.value, help + " [" + Options::environment_variable(option) + "]")
                     ->type_name(value_name)
                     ->check(CLI::Validator(validator, ""));
}

void OptionFlags::apply(Options& options) const {
    for (auto const& bound : bound_) {
        if (bound.flag->count() > 0) {
            options.set(bound.option, bound.value, OptionSource::command_line);
        }
    }
}

void OptionFlags::clear() noexcept {
    for (auto& bound : bound_) {
        bound.value.clear();
    }
}

std::string OptionFlags::name_flags(std::string message) const {
    auto const is_word = [](char character) {
        return std::isalnum(static_cast<unsigned char>(character)) != 0 || character == '_';
    };
    for (auto const& bound : bound_) {
        if (bound.option.find('_') == std::string::npos) {
            continue;  // a plain word (threads, window): the flag says it the same way
        }
        auto const variable = Options::environment_variable(bound.option);
        auto const flag = bound.flag->count() == 0 && std::getenv(variable.c_str()) != nullptr
                            ? variable
                            : "--" + bound.flag->get_single_name();
        // "option 'x_y' (from environment variable SPILLWAY_X_Y)" says the
        // variable's name twice once the option is named by it.
        auto const described = Options::describe(bound.option, OptionSource::environment);
        for (auto at = message.find(described); at != std::string::npos; at = message.find(described, at)) {
            message.replace(at, described.size(), variable);
            at += variable.size();
        }
        for (auto at = message.find(bound.option); at != std::string::npos; at = message.find(bound.option, at)) {
            auto const end = at + bound.option.size();
            if ((at != 0 && (is_word(message[at - 1]) || message[at - 1] == '-'))
                || (end < message.size() && is_word(message[end]))) {
                at = end;
                continue;
            }
            message.replace(at, bound.option.size(), flag);
            at += flag.size();
        }
    }
    return message;
}

}  // namespace spillway::cli
