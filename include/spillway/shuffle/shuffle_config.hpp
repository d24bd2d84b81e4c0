#pragma once
/// @file
/// The settings of the collectives (`Shuffler` and `AllGather`).
/// docs/configuration.md lists the options they are read from.

#include <chrono>

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
    /// large, so that the shuffle progresses. Whatever the window, at most 64
    /// chunks are in flight to one destination.
    SizeSpec send_window = SizeSpec::percent(25);

    /// How far ahead of extraction spilled chunks are read back: of the
    /// chunks extracted next, up to this many bytes are brought to HOST
    /// (option `shuffle_prefetch`); `0` turns prefetching off. Prefetching
    /// only uses free HOST memory, it never spills for it.
    SizeSpec prefetch = SizeSpec::percent(10);

    /// How long a collective waits for a word from a peer whose chunks or
    /// finish it still expects before it fails with `PeerTimeout` naming the
    /// peer (option `collective_timeout`). Every rank's progress thread sends
    /// a heartbeat to each peer it still owes messages at a quarter of this
    /// interval, so a peer that is merely busy or slow never times out; one
    /// that is stopped, hung or unreachable does, within this time. The same
    /// bound limits how long a failed collective's destructor waits for a
    /// silent peer. All ranks must create a collective within this time of
    /// each other. Must be positive.
    std::chrono::nanoseconds collective_timeout = std::chrono::seconds(60);

    /// The configuration given by `options`, with the defaults above for
    /// options that are not set.
    /// @throws InvalidArgument naming the option if a value does not parse,
    ///         or `collective_timeout` is not positive.
    static ShuffleConfig from_options(Options const& options);
};

}  // namespace spillway::shuffle
