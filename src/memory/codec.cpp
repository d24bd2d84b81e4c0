#include <spillway/memory/codec.hpp>

#include <array>
#include <ostream>

#include <spillway/core/error.hpp>

namespace spillway::memory {
namespace {

constexpr std::array codecs{Codec::none, Codec::lz4, Codec::zstd};

}  // namespace

std::string_view to_string(Codec codec) noexcept {
    switch (codec) {
    case Codec::none:
        return "none";
    case Codec::lz4:
        return "lz4";
    case Codec::zstd:
        return "zstd";
    }
    return "unknown";
}

Codec parse_codec(std::string_view name) {
    for (auto const codec : codecs) {
        if (to_string(codec) == name) {
            return codec;
        }
    }
    SPILLWAY_FAIL("unknown codec '" << name << "': expected none, lz4 or zstd", InvalidArgument);
}

std::ostream& operator<<(std::ostream& out, Codec codec) {
    return out << to_string(codec);
}

}  // namespace spillway::memory
