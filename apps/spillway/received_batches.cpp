#include "received_batches.hpp"

#include <algorithm>
#include <utility>

namespace spillway::cli {

ReceivedBatches::ReceivedBatches(shuffle::Shuffler& shuffler, std::uint64_t batch_bytes, EmptyPartitions empty,
                                 Waited waited)
    : shuffler_(&shuffler), batch_bytes_(batch_bytes), empty_(empty), waited_(std::move(waited)) {}

std::optional<ReceivedChunks> ReceivedBatches::operator()() {
    while (true) {
        if (current_) {
            ReceivedChunks batch{*current_, {}};
            batch.chunks.reserve(most_batch_chunks_);
            std::uint64_t bytes = 0;
            while (bytes < batch_bytes_) {
                auto chunk = shuffler_->extract_chunk(*current_);
                if (!chunk) {
                    break;
                }
                bytes += chunk->data.size();
                batch.chunks.push_back(std::move(*chunk));
            }
            most_batch_chunks_ = std::max(most_batch_chunks_, batch.chunks.size());
            bool const first = !std::exchange(current_started_, true);
            if (!batch.chunks.empty() || (first && empty_ == EmptyPartitions::yield)) {
                return batch;
            }
        }
        current_ = shuffler_->wait_any();
        current_started_ = false;
        waited_(current_);
        if (!current_) {
            return std::nullopt;
        }
    }
}

}  // namespace spillway::cli
