/// @file
/// Fuzzes the `spillway` tool's command line and the option parsing behind
/// it: CLI11 with the tool's flag checks, then every module's reading of the
/// options the flags set (sizes, percentages, durations, integers, choices).
///
/// Input: `read_command_line_input`, the arguments after the program's name.
/// Parsing may print help or a usage error; a command line that asks for a
/// job has its options read by every module's `from_options`, as the job's
/// construction does, without making the job (which would touch the file
/// system the arguments name). Every error must be a spillway error;
/// anything else, or a crash, is a finding.
///
/// The command line is built once every 10,000 inputs, not for each: building
/// it does not depend on the input, and each parse starts afresh. (CLI11 2.1
/// keeps a pointer for every value it ever parsed; rebuilding bounds them.)

#include <cstddef>
#include <cstdint>
#include <memory>
#include <sstream>
#include <span>
#include <string>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/exec/seq_join_options.hpp>
#include <spillway/exec/thread_pool.hpp>
#include <spillway/memory/memory_config.hpp>
#include <spillway/shuffle/shuffle_config.hpp>
#include <spillway/io/csv_options.hpp>

#include "command_line.hpp"
#include "input_layouts.hpp"

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    using namespace spillway;
    auto const arguments = fuzz::read_command_line_input(std::as_bytes(std::span(data, size)));
    static std::unique_ptr<cli::CommandLine> command_line;
    static std::size_t inputs = 0;
    if (inputs++ % 10'000 == 0) {
        command_line = std::make_unique<cli::CommandLine>();
    }
    std::ostringstream out;
    std::ostringstream err;
    if (command_line->parse(arguments, out, err)) {
        return 0;  // help, or a usage error
    }
    try {
        auto const options = command_line->options();
        (void)memory::MemoryConfig::from_options(options);
        (void)exec::ThreadPool::Config::from_options(options);
        (void)exec::SeqJoinOptions::from_options(options);
        (void)shuffle::ShuffleConfig::from_options(options);
        (void)io::CsvOptions::from_options(options);
    } catch (Error const& error) {
        (void)command_line->name_flags(error.what());  // how the tool reports it
    }
    return 0;
}
