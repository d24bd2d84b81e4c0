#include "memory/spill_codec.hpp"

#include <lz4frame.h>
#include <zstd.h>

#include <algorithm>
#include <memory>

#include <spillway/core/error.hpp>

namespace spillway::memory::detail {
namespace {

/// Input is fed to the compressors in pieces this large, so one piece's
/// compressed bound always fits in the staging area.
constexpr std::size_t compress_piece_bytes = std::size_t{1} << 20;
/// Level 1: spilling is about throughput, and higher levels cost several
/// times the CPU for a few percent of size.
constexpr int zstd_level = 1;

[[noreturn]] void fail_codec(StagedWriter const& writer, char const* what, char const* reason) {
    SPILLWAY_FAIL(
        "writing spill file '" << writer.path().string() << "' failed: " << what << ": " << reason,
        IoError
    );
}

[[noreturn]] void fail_corrupt(std::filesystem::path const& path, std::string const& reason) {
    SPILLWAY_FAIL("spill file '" << path.string() << "' is corrupt: " << reason, CorruptData);
}

struct Lz4CompressionContextDeleter {
    void operator()(LZ4F_cctx* context) const noexcept { LZ4F_freeCompressionContext(context); }
};
struct Lz4DecompressionContextDeleter {
    void operator()(LZ4F_dctx* context) const noexcept { LZ4F_freeDecompressionContext(context); }
};
struct ZstdCompressionContextDeleter {
    void operator()(ZSTD_CCtx* context) const noexcept { ZSTD_freeCCtx(context); }
};
struct ZstdDecompressionContextDeleter {
    void operator()(ZSTD_DCtx* context) const noexcept { ZSTD_freeDCtx(context); }
};

std::size_t checked_lz4(StagedWriter const& writer, std::size_t result, char const* what) {
    if (LZ4F_isError(result) != 0U) {
        fail_codec(writer, what, LZ4F_getErrorName(result));
    }
    return result;
}

void compress_lz4(std::span<std::byte const> input, StagedWriter& writer) {
    LZ4F_cctx* raw = nullptr;
    SPILLWAY_EXPECTS(
        LZ4F_isError(LZ4F_createCompressionContext(&raw, LZ4F_VERSION)) == 0U,
        "cannot allocate an lz4 context", OutOfMemory
    );
    std::unique_ptr<LZ4F_cctx, Lz4CompressionContextDeleter> const context(raw);

    auto room = writer.room(LZ4F_HEADER_SIZE_MAX);
    writer.commit(checked_lz4(
        writer, LZ4F_compressBegin(context.get(), room.data(), room.size(), nullptr), "lz4"
    ));
    while (!input.empty()) {
        auto const piece = input.first(std::min(input.size(), compress_piece_bytes));
        room = writer.room(LZ4F_compressBound(piece.size(), nullptr));
        writer.commit(checked_lz4(
            writer,
            LZ4F_compressUpdate(context.get(), room.data(), room.size(), piece.data(), piece.size(), nullptr),
            "lz4"
        ));
        input = input.subspan(piece.size());
    }
    room = writer.room(LZ4F_compressBound(0, nullptr));
    writer.commit(checked_lz4(
        writer, LZ4F_compressEnd(context.get(), room.data(), room.size(), nullptr), "lz4"
    ));
}

void compress_zstd(std::span<std::byte const> input, StagedWriter& writer) {
    std::unique_ptr<ZSTD_CCtx, ZstdCompressionContextDeleter> const context(ZSTD_createCCtx());
    SPILLWAY_EXPECTS(context != nullptr, "cannot allocate a zstd context", OutOfMemory);
    ZSTD_CCtx_setParameter(context.get(), ZSTD_c_compressionLevel, zstd_level);
    ZSTD_inBuffer in{input.data(), input.size(), 0};
    std::size_t left = 0;
    do {
        auto const room = writer.room(ZSTD_CStreamOutSize());
        ZSTD_outBuffer out{room.data(), room.size(), 0};
        left = ZSTD_compressStream2(context.get(), &out, &in, ZSTD_e_end);
        if (ZSTD_isError(left) != 0U) {
            fail_codec(writer, "zstd", ZSTD_getErrorName(left));
        }
        writer.commit(out.pos);
    } while (left != 0);
}

/// Feeds every piece of `reader` to `step(piece, output)`, which consumes
/// input and produces output and returns whether the stream has ended.
template <typename Step>
void decompress_pieces(
    StagedReader& reader, std::span<std::byte> output, std::filesystem::path const& path, Step step
) {
    bool ended = false;
    for (auto piece = reader.next(); !piece.empty(); piece = reader.next()) {
        while (!piece.empty()) {
            if (ended) {
                fail_corrupt(path, "bytes follow the end of the compressed stream");
            }
            auto const before = std::pair{piece.size(), output.size()};
            ended = step(piece, output);
            if (std::pair{piece.size(), output.size()} == before && !ended) {
                fail_corrupt(path, "the compressed stream decodes to more bytes than were spilled");
            }
        }
    }
    if (!ended || !output.empty()) {
        fail_corrupt(path, "the compressed stream ends before all spilled bytes");
    }
}

void decompress_lz4(StagedReader& reader, std::span<std::byte> output, std::filesystem::path const& path) {
    LZ4F_dctx* raw = nullptr;
    SPILLWAY_EXPECTS(
        LZ4F_isError(LZ4F_createDecompressionContext(&raw, LZ4F_VERSION)) == 0U,
        "cannot allocate an lz4 context", OutOfMemory
    );
    std::unique_ptr<LZ4F_dctx, Lz4DecompressionContextDeleter> const context(raw);
    decompress_pieces(reader, output, path, [&](auto& piece, auto& out) {
        std::size_t produced = out.size();
        std::size_t consumed = piece.size();
        auto const hint =
            LZ4F_decompress(context.get(), out.data(), &produced, piece.data(), &consumed, nullptr);
        if (LZ4F_isError(hint) != 0U) {
            fail_corrupt(path, std::string("lz4: ") + LZ4F_getErrorName(hint));
        }
        piece = piece.subspan(consumed);
        out = out.subspan(produced);
        return hint == 0;
    });
}

void decompress_zstd(StagedReader& reader, std::span<std::byte> output, std::filesystem::path const& path) {
    std::unique_ptr<ZSTD_DCtx, ZstdDecompressionContextDeleter> const context(ZSTD_createDCtx());
    SPILLWAY_EXPECTS(context != nullptr, "cannot allocate a zstd context", OutOfMemory);
    decompress_pieces(reader, output, path, [&](auto& piece, auto& out) {
        ZSTD_inBuffer in{piece.data(), piece.size(), 0};
        ZSTD_outBuffer produced{out.data(), out.size(), 0};
        auto const left = ZSTD_decompressStream(context.get(), &produced, &in);
        if (ZSTD_isError(left) != 0U) {
            fail_corrupt(path, std::string("zstd: ") + ZSTD_getErrorName(left));
        }
        piece = piece.subspan(in.pos);
        out = out.subspan(produced.pos);
        return left == 0;
    });
}

}  // namespace

void compress(Codec codec, std::span<std::byte const> input, StagedWriter& writer) {
    SPILLWAY_ASSERT(codec != Codec::none, "the none codec is written directly");
    if (codec == Codec::lz4) {
        compress_lz4(input, writer);
    } else {
        compress_zstd(input, writer);
    }
}

void decompress(
    Codec codec, StagedReader& reader, std::span<std::byte> output, std::filesystem::path const& path
) {
    SPILLWAY_ASSERT(codec != Codec::none, "the none codec is read directly");
    if (codec == Codec::lz4) {
        decompress_lz4(reader, output, path);
    } else {
        decompress_zstd(reader, output, path);
    }
}

}  // namespace spillway::memory::detail
