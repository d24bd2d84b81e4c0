#pragma once
/// @file
/// The configuration of the memory layer: tier limits, the disk tier and the
/// spill manager. docs/configuration.md lists the options it reads.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include <spillway/core/options.hpp>
#include <spillway/memory/codec.hpp>
#include <spillway/memory/file_operations.hpp>
#include <spillway/memory/memory_type.hpp>
#include <spillway/memory/spill_manager.hpp>

namespace spillway::memory {

/// Settings of a `BufferResource`, with their defaults. Plain data: fill it
/// in code, or read it from options with `from_options`.
struct MemoryConfig {
    /// The HOST limit (option `memory_limit_host`); a percentage is of
    /// `host_memory_capacity()`, the smaller of physical memory and the
    /// cgroup limit.
    SizeSpec host_limit = SizeSpec::percent(80);
    /// Where the HOST limit comes from, as messages say it: the option by
    /// default; a program that splits one limit between several resources
    /// says so (`memory_limit_host of 2.00 MiB, shared by 4 ranks`).
    std::string host_limit_origin = "memory_limit_host";

    /// The DISK limit, which is the spill quota (option `max_spill_bytes`); a
    /// percentage is of the total size of the file system holding
    /// `spill_directory`. Every tier counts a buffer by its size, so this
    /// bounds the bytes spilled, not the (compressed, block-rounded) bytes
    /// the spill files take.
    SizeSpec disk_limit = SizeSpec::percent(100);

    /// The directory under which each `BufferResource` makes its own spill
    /// directory (option `spill_directory`); by default `$TMPDIR`, or `/tmp`.
    std::filesystem::path spill_directory = default_spill_directory();

    /// The codec buffers are written to disk with (option `spill_codec`:
    /// `none`, `lz4` or `zstd`).
    Codec spill_codec = Codec::none;

    /// Whether spill files use direct I/O, bypassing the page cache (option
    /// `spill_direct_io`). Where the file system refuses it, the disk tier
    /// falls back to buffered I/O by itself.
    bool direct_io = true;

    /// Whether a `BufferResource` keeps the blocks of freed HOST buffers of
    /// 64 KiB or more for reuse, within its HOST limit (option
    /// `host_block_pool`).
    bool pool_host_blocks = true;

    /// Debugging: every buffer put into a `SpillableStore` is moved to DISK
    /// at once, so that every use reads it back through the disk tier and its
    /// checks (option `spill_force_disk`). Lets small tests exercise spilling.
    bool force_disk = false;

    /// How often the spill manager's periodic thread makes sure HOST has
    /// `spill_headroom` bytes available (option `spill_interval`); zero
    /// (`off`) means no periodic thread.
    std::chrono::nanoseconds spill_interval = std::chrono::milliseconds(100);

    /// The HOST bytes the periodic thread keeps available (option
    /// `spill_headroom`); 0 keeps HOST within its limit.
    std::uint64_t spill_headroom = 0;

    /// How long `BufferResource::reserve_or_wait` waits for HOST memory to be
    /// freed or spilled before it fails (option `memory_reserve_timeout`).
    /// The time counts from the last progress, not from the request.
    std::chrono::nanoseconds reserve_timeout = std::chrono::seconds(30);

    /// How the spill manager admits concurrent spillers. `serialized` exists
    /// only for benchmarks that measure what concurrency gains; there is no
    /// option for it.
    SpillMode spill_mode = SpillMode::concurrent;

    /// The file operations of the disk tier; null means the system calls.
    /// Tests set a subclass that injects faults; there is no option for it.
    std::shared_ptr<FileOperations> file_operations;

    /// `$TMPDIR` if it is set and not empty, else `/tmp`.
    static std::filesystem::path default_spill_directory();

    /// The configuration given by `options`, with the defaults above for
    /// options that are not set.
    /// @throws InvalidArgument naming the option if a value does not parse,
    ///         or `memory_reserve_timeout` is 0.
    static MemoryConfig from_options(Options const& options);

    /// The name of the option that sets `tier`'s limit, for error messages:
    /// `memory_limit_host` or `max_spill_bytes`.
    static std::string_view limit_option(MemoryType tier) noexcept;
};

}  // namespace spillway::memory
