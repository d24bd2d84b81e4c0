#include <spillway/comm/mpi_config.hpp>

#include <climits>

#include <spillway/core/error.hpp>

namespace spillway::comm {

MpiConfig MpiConfig::from_options(Options const& options) {
    MpiConfig config;
    config.max_message_bytes = options.get_bytes("comm_mpi_max_message_bytes", config.max_message_bytes);
    SPILLWAY_EXPECTS(config.max_message_bytes >= 1 && config.max_message_bytes <= INT_MAX,
                     Options::describe("comm_mpi_max_message_bytes", options.find("comm_mpi_max_message_bytes")->source)
                         << ": must be from 1 B to " << INT_MAX << " bytes (INT_MAX), got " << config.max_message_bytes,
                     InvalidArgument);
    config.shutdown_timeout = options.get_duration("comm_mpi_shutdown_timeout", config.shutdown_timeout);
    SPILLWAY_EXPECTS(config.shutdown_timeout > std::chrono::nanoseconds::zero(),
                     Options::describe("comm_mpi_shutdown_timeout", options.find("comm_mpi_shutdown_timeout")->source)
                         << ": must be above 0; it bounds the wait for operations in flight at shutdown",
                     InvalidArgument);
    return config;
}

}  // namespace spillway::comm
