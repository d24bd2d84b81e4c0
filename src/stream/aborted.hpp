#pragma once
/// @file
/// The error of an actor that finds its pipeline aborted.

#include <spillway/core/error.hpp>
#include <spillway/stream/context.hpp>

namespace spillway::stream::detail {

/// Throws the `PipelineAborted` of an actor whose pipeline another actor's
/// failure aborted.
[[noreturn]] inline void fail_aborted() {
    SPILLWAY_FAIL("the pipeline was aborted: another of its actors failed", stream::PipelineAborted);
}

}  // namespace spillway::stream::detail
