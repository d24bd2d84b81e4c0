// partition_and_spill: generates a TPC-H lineitem table chunk by chunk on a
// thread pool (seq_join), hash-partitions each chunk by l_orderkey, packs
// each piece into a buffer paid for by a memory reservation, and keeps the
// pieces in a spillable store under a HOST limit far below the data, so that
// most of them go to disk. Then it reads every partition back, unpacks it,
// and checks that each row is in its key's partition and that the rows'
// checksum equals the generated table's.
//
// Usage: partition_and_spill [SCALE]   (TPC-H scale factor, default 0.05)

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <ranges>
#include <unordered_map>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/core/options.hpp>
#include <spillway/exec/seq_join.hpp>
#include <spillway/exec/thread_pool.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/memory/spillable_store.hpp>
#include <spillway/table/hash_partition.hpp>
#include <spillway/table_shuffle/packed_partitions.hpp>
#include <spillway/table/packed_table.hpp>
#include <spillway/table/table_checksum.hpp>
#include <spillway/table/tpch_generator.hpp>

using namespace spillway;

namespace {

constexpr std::uint32_t partitions = 8;

/// A chunk's rows split by partition and packed (empty partitions left
/// out), with the chunk's checksum.
struct PackedChunk {
    std::unordered_map<shuffle::PartitionId, shuffle::PackedData> pieces;
    table::TableChecksum checksum;
};

}  // namespace

int main(int argc, char** argv) {
    try {
        double const scale = argc > 1 ? std::atof(argv[1]) : 0.05;
        table::TpchGenerator const generator(scale);
        std::size_t const key[] = {0};  // l_orderkey

        memory::MemoryConfig config;
        config.host_limit = SizeSpec::bytes(8 << 20);
        memory::BufferResource resource(config);
        exec::ThreadPool pool;

        table::TableChecksum generated;
        // Each piece waits in the store under key chunk * partitions + partition,
        // with its metadata here (metadata is small and never spilled).
        std::map<std::uint64_t, std::vector<std::byte>> metadata;
        {
            memory::SpillableStore store(resource, "example");
            auto const pack_chunk = [&](std::size_t chunk, std::stop_token const&) {
                auto const table = generator.lineitem(chunk);
                return PackedChunk{table_shuffle::hash_partition_and_pack(table, key, partitions, resource,
                                                                  memory::AllowOverbooking::yes),
                                   table::TableChecksum::of(table)};
            };
            auto const chunks = std::views::iota(std::size_t{0}, generator.num_chunks());
            std::size_t chunk = 0;
            for (auto& packed : exec::seq_join(pool, 2 * pool.concurrency(), chunks, pack_chunk)) {
                generated += packed.checksum;
                for (auto& [partition, piece] : packed.pieces) {
                    auto const store_key = chunk * partitions + partition;
                    metadata[store_key] = std::move(piece.metadata);
                    store.insert(store_key, std::move(piece.data));
                }
                ++chunk;
            }
            std::cout << "generated " << generated.rows << " rows; " << format_bytes(store.bytes(memory::MemoryType::HOST))
                      << " in memory, " << format_bytes(store.bytes(memory::MemoryType::DISK)) << " spilled to disk\n";

            table::TableChecksum read_back;
            std::uint64_t misplaced = 0;
            for (std::uint32_t partition = 0; partition < partitions; ++partition) {
                for (std::size_t chunk_index = 0; chunk_index < generator.num_chunks(); ++chunk_index) {
                    auto const store_key = chunk_index * partitions + partition;
                    auto const found = metadata.find(store_key);
                    if (found == metadata.end()) {
                        continue;  // no rows of this chunk hash to this partition
                    }
                    auto const buffer = store.extract(store_key);
                    auto const piece = table::unpack(found->second, buffer->data());
                    for (auto const row_partition : table::partition_rows(piece, key, partitions)) {
                        misplaced += row_partition != partition ? 1 : 0;
                    }
                    read_back += table::TableChecksum::of(piece);
                }
            }
            bool const verified = misplaced == 0 && read_back == generated;
            std::cout << "read back " << read_back.rows << " rows; " << misplaced << " misplaced; checksum "
                      << (read_back == generated ? "equal" : "DIFFERENT") << "\n"
                      << "peak HOST " << format_bytes(resource.peak_memory_used(memory::MemoryType::HOST))
                      << ", peak DISK " << format_bytes(resource.peak_memory_used(memory::MemoryType::DISK)) << "\n"
                      << (verified ? "verified" : "VERIFICATION FAILED") << "\n";
            return verified ? EXIT_SUCCESS : EXIT_FAILURE;
        }
    } catch (Error const& error) {
        std::cerr << "partition_and_spill: " << error.what() << "\n";
        return EXIT_FAILURE;
    }
}
