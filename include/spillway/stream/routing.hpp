#pragma once
/// @file
/// `route_by_sequence` and `merge`: one stream spread over several
/// consumers by sequence number, and several streams joined into one as
/// their messages come.

#include <vector>

#include <spillway/stream/actor.hpp>
#include <spillway/stream/channel.hpp>

namespace spillway::stream {

/// An actor that sends each message of `input`, parked, to
/// `outputs[sequence % outputs.size()]`, in the input's order. Every message
/// of one sequence number (a shuffle's partition) goes to one output, in
/// order, so that an actor per output can work on whole partitions side by
/// side with the others.
///
/// It ends when the input ends, or early, at its next message, once any
/// output has closed (whichever output that message is for); it closes the
/// input and every output when it ends (`CloseAtExit`).
/// @throws InvalidArgument if `outputs` is empty.
[[nodiscard]] Actor route_by_sequence(Channel& input, std::vector<Channel*> outputs);

/// The actors that move the messages of `inputs` into `output`, parked,
/// each as it comes: one actor per input, so that no input waits for
/// another (`linearise` merges in sequence order instead). The messages of
/// one input keep their order; those of different inputs interleave.
/// Run all of them (`run_actors`).
///
/// `output` closes once every input has ended. If `output` closes first,
/// each actor closes its input at its next message and ends.
/// @throws InvalidArgument if `inputs` is empty or names `output`.
[[nodiscard]] std::vector<Actor> merge(std::vector<Channel*> inputs, Channel& output);

}  // namespace spillway::stream
