#pragma once
/// @file
/// The settings of the MPI backend. docs/configuration.md lists the options
/// it reads.

#include <chrono>
#include <cstddef>

#include <spillway/core/options.hpp>

namespace spillway::comm {

/// Settings of an `MpiCommunicator`, with their defaults. Plain data: fill it
/// in code, or read it from options with `from_options`.
struct MpiConfig {
    /// The largest single MPI message (option `comm_mpi_max_message_bytes`).
    /// A payload larger than this travels as several MPI messages, which is
    /// how payloads of more than `INT_MAX` bytes (MPI's count type) are sent.
    /// From 1 to `INT_MAX` (checked by `from_options` and
    /// `MpiCommunicator`). Only the sender's setting matters: the receiver
    /// learns it from the message.
    std::size_t max_message_bytes = std::size_t{1} << 30;

    /// How long the destructor waits for sends and receives still in flight
    /// (option `comm_mpi_shutdown_timeout`) before it aborts the process with
    /// a message saying what is still pending. A send stays in flight until
    /// its destination receives it, so this turns a protocol error (a message
    /// that is never received) into a clear failure instead of a hang.
    /// Above 0 when read by `from_options`.
    std::chrono::nanoseconds shutdown_timeout = std::chrono::seconds(60);

    /// The configuration given by `options`, with the defaults above for
    /// options that are not set.
    /// @throws InvalidArgument naming the option if a value does not parse
    ///         or is out of its range.
    static MpiConfig from_options(Options const& options);
};

}  // namespace spillway::comm
