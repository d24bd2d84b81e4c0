#include "partition_settings.hpp"

#include <spillway/core/error.hpp>
#include <spillway/io/table_file.hpp>

namespace spillway::cli {

void PartitionSettings::describe(nlohmann::ordered_json& settings) const {
    settings["inputs"] = inputs;
    settings["input_format"] = io::to_string(input_format);
    settings["output_format"] = io::to_string(output_format);
    if (output_format != io::FileFormat::csv) {
        settings["compression"] = compression;
    }
    settings["keys"] = keys;
    settings["partitions"] = partitions;
    settings["output"] = output.string();
    settings["threads"] = threads;
}

void check_compression(io::FileFormat format, std::string const& compression) {
    try {
        io::WriteOptions options;
        options.compression = compression;
        io::check_compression(format, options);
    } catch (InvalidArgument const& error) {
        SPILLWAY_FAIL("--compression " << compression << ": " << error.what(), InvalidArgument);
    }
}

}  // namespace spillway::cli
