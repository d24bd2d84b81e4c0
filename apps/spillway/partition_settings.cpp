#include "partition_settings.hpp"

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

}  // namespace spillway::cli
