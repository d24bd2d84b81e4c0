#include <spillway/comm/mpi_config.hpp>

namespace spillway::comm {

MpiConfig MpiConfig::from_options(Options const& options) {
    MpiConfig config;
    config.max_message_bytes = options.get_bytes("comm_mpi_max_message_bytes", config.max_message_bytes);
    config.shutdown_timeout = options.get_duration("comm_mpi_shutdown_timeout", config.shutdown_timeout);
    return config;
}

}  // namespace spillway::comm
