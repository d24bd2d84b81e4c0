#pragma once
/// @file
/// Actors, the coroutines of a streaming pipeline: running them together,
/// and closing their channels however they end.

#include <exception>
#include <initializer_list>
#include <vector>

#include <spillway/exec/executor.hpp>
#include <spillway/exec/task.hpp>
#include <spillway/stream/channel.hpp>

namespace spillway::stream {

/// An actor: a coroutine that receives from some channels and sends to
/// others until its inputs end. It closes every channel it uses when it
/// ends (`CloseAtExit`), so that the end of a stream travels along the
/// pipeline: consumers drain and stop, producers' sends fail and they stop.
/// An actor that fails aborts its pipeline instead (`Context::abort`), so
/// that no actor downstream takes the failure for the end of its input.
using Actor = exec::Task<void>;

/// Closes channels when it goes out of scope. An actor makes one first
/// thing, naming its inputs and outputs, so that whichever way it ends its
/// consumers see the end of its stream and its producers stop sending. If
/// it ends by an exception, it aborts the channels' contexts first, so
/// that consumers see the failure, not an end.
class CloseAtExit {
  public:
    /// Closes `channels` on destruction; each must outlive this object.
    CloseAtExit(std::initializer_list<Channel*> channels) : channels_(channels) {}
    /// As above, for a list built at run time.
    explicit CloseAtExit(std::vector<Channel*> channels) : channels_(std::move(channels)) {}
    ~CloseAtExit() {
        bool const failing = exec::unwinding_since_work_began(uncaught_);
        for (Channel* channel : channels_) {
            if (failing) {
                channel->context().abort();
            }
            channel->close();
        }
    }
    CloseAtExit(CloseAtExit const&) = delete;
    CloseAtExit& operator=(CloseAtExit const&) = delete;

  private:
    std::vector<Channel*> channels_;
    /// Exceptions in flight on the constructing thread: more at destruction
    /// means the actor is unwinding, where it ends outside any executor's
    /// work (within one, the count when that work began decides).
    int const uncaught_ = std::uncaught_exceptions();
};

/// Runs `actors` concurrently on `context`'s executor and blocks until every
/// one has ended, running the executor's work meanwhile (so it may be called
/// on one of its threads). Every actor runs, even after another has failed,
/// since one that never started would never close its channels. The first
/// actor to fail aborts `context` (`Context::abort`), which stops the
/// others at their next send or receive.
/// @throws the first exception an actor threw, once all have ended,
///         preferring any other to the `PipelineAborted` that an abort makes
///         receives throw.
void run_actors(Context& context, std::vector<Actor> actors);

}  // namespace spillway::stream
