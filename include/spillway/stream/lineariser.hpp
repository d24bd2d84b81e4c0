#pragma once
/// @file
/// `linearise`: merges several streams of messages, each in sequence order,
/// into one stream in sequence order.

#include <vector>

#include <spillway/stream/actor.hpp>
#include <spillway/stream/channel.hpp>

namespace spillway::stream {

/// An actor that merges `inputs` into `output` in sequence order. Each input
/// must carry its messages in non-decreasing sequence order, as the workers
/// of a stream split across them produce it; the merge holds the next
/// message of every open input and sends the one with the smallest sequence
/// number (of equal numbers, the one of the input listed first).
/// So it sends a message once every input has either offered a later one
/// or ended. Messages move parked, without being read back.
///
/// It ends when every input has ended, or early, at the next message it
/// sends, once `output` has closed; it closes `output` and every input when
/// it ends (`CloseAtExit`).
/// @throws InvalidArgument (from the actor) naming the input and both
///         numbers if an input's sequence numbers decrease, or if `inputs`
///         is empty.
[[nodiscard]] Actor linearise(std::vector<Channel*> inputs, Channel& output);

}  // namespace spillway::stream
