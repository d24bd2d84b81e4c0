#include <spillway/shuffle/shuffle_config.hpp>

#include <spillway/core/error.hpp>

namespace spillway::shuffle {

ShuffleConfig ShuffleConfig::from_options(Options const& options) {
    ShuffleConfig config;
    config.send_window = options.get_size("shuffle_send_window", config.send_window);
    config.prefetch = options.get_size("shuffle_prefetch", config.prefetch);
    config.collective_timeout = options.get_duration("collective_timeout", config.collective_timeout);
    if (auto const value = options.find("collective_timeout")) {
        SPILLWAY_EXPECTS(config.collective_timeout > std::chrono::nanoseconds::zero(),
                         Options::describe("collective_timeout", value->source)
                             << ": invalid value '" << value->text << "': expected a duration above zero",
                         InvalidArgument);
    }
    return config;
}

}  // namespace spillway::shuffle
