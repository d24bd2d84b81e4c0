#pragma once
/// @file
/// `fanout`: every message of one stream to each of several consumers.

#include <vector>

#include <spillway/stream/actor.hpp>
#include <spillway/stream/channel.hpp>

namespace spillway::stream {

/// How a fanout paces its outputs.
enum class FanoutPolicy {
    /// Each message goes to every output in turn, and the next is not taken
    /// before all have it: the slowest consumer sets the pace, and the
    /// outputs' limits bound what waits.
    bounded,
    /// Each output gets its messages as fast as its consumer takes them: what
    /// a slow consumer has not taken yet waits in a queue of its own,
    /// without bound but spillable like every waiting message.
    unbounded,
};

/// The actors that send a copy of every message of `input` to each of
/// `outputs`, in the input's order. The last output gets the message
/// itself, the others copies whose memory is reserved with
/// `reserve_memory` (waiting for room, never overbooking). Run all of them
/// (`run_actors`): one for `bounded`, and for `unbounded` one more per
/// output, which forwards from the output's queue.
///
/// They end when `input` has ended and every message is delivered, or
/// early, at the next message of `input`, once every output has closed (a
/// closed output gets nothing more; the others go on). They close `input`
/// and every output when they end.
/// @throws InvalidArgument if `outputs` is empty, or a channel appears
///         twice among `input` and `outputs`.
[[nodiscard]] std::vector<Actor> fanout(Channel& input, std::vector<Channel*> outputs, FanoutPolicy policy);

}  // namespace spillway::stream
