#pragma once
/// @file
/// The settings of the collectives (`Shuffler` and `AllGather`).
/// docs/configuration.md lists the options they are read from.

#include <spillway/core/options.hpp>

namespace spillway::shuffle {

/// Settings of a `Shuffler` or `AllGather`, with their defaults. Plain data:
/// fill it in code, or read it from options with `from_options`. Percentages
/// are of the HOST limit of the collective's `BufferResource`, resolved each
/// time they are used, so they follow `BufferResource::set_memory_limit`.
struct ShuffleConfig {
    /// The most payload bytes this rank keeps in flight: sent but not yet
    /// taken by their receivers (option `shuffle_send_window`). Chunks in
    /// flight cannot be spilled, so this bounds the HOST memory a slow
    /// receiver can pin at the sender. One chunk is always allowed, however
    /// large, so that the shuffle progresses.
    SizeSpec send_window = SizeSpec::percent(25);

    /// How far ahead of extraction spilled chunks are read back: of the
    /// chunks extracted next, up to this many bytes are brought to HOST
    /// (option `shuffle_prefetch`); `0` turns prefetching off. Prefetching
    /// only uses free HOST memory, it never spills for it.
    SizeSpec prefetch = SizeSpec::percent(10);

    /// The configuration given by `options`, with the defaults above for
    /// options that are not set.
    /// @throws InvalidArgument naming the option if a value does not parse.
    static ShuffleConfig from_options(Options const& options);
};

}  // namespace spillway::shuffle
