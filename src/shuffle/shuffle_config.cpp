#include <spillway/shuffle/shuffle_config.hpp>

namespace spillway::shuffle {

ShuffleConfig ShuffleConfig::from_options(Options const& options) {
    ShuffleConfig config;
    config.send_window = options.get_size("shuffle_send_window", config.send_window);
    config.prefetch = options.get_size("shuffle_prefetch", config.prefetch);
    return config;
}

}  // namespace spillway::shuffle
