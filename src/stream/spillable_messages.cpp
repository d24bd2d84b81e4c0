#include <spillway/stream/spillable_messages.hpp>

#include <optional>
#include <utility>

#include <spillway/core/error.hpp>
#include <spillway/stream/reserve_memory.hpp>

namespace spillway::stream {

ParkedMessage::ParkedMessage(
    SpillableMessages& store, memory::SpillableStore::Key key, std::uint64_t sequence,
    std::vector<std::byte> metadata, std::size_t buffer_size
) noexcept
    : store_(&store), key_(key), sequence_(sequence), metadata_(std::move(metadata)), buffer_size_(buffer_size) {}

ParkedMessage::ParkedMessage(ParkedMessage&& other) noexcept
    : store_(std::exchange(other.store_, nullptr)),
      key_(other.key_),
      sequence_(other.sequence_),
      metadata_(std::move(other.metadata_)),
      buffer_size_(other.buffer_size_) {}

ParkedMessage& ParkedMessage::operator=(ParkedMessage&& other) noexcept {
    if (this != &other) {
        ParkedMessage freed(std::move(*this));
        store_ = std::exchange(other.store_, nullptr);
        key_ = other.key_;
        sequence_ = other.sequence_;
        metadata_ = std::move(other.metadata_);
        buffer_size_ = other.buffer_size_;
    }
    return *this;
}

ParkedMessage::~ParkedMessage() {
    if (store_ != nullptr) {
        store_->store_.erase(key_);
    }
}

SpillableMessages::SpillableMessages(memory::BufferResource& resource, exec::Executor& executor, int spill_priority)
    : resource_(resource), executor_(executor), store_(resource, "stream.messages", spill_priority) {}

ParkedMessage SpillableMessages::park(Message message) {
    auto const key = next_key_.fetch_add(1, std::memory_order_relaxed);
    auto const buffer_size = message.payload.data.size();
    store_.insert(key, std::move(message.payload.data));
    return ParkedMessage(*this, key, message.sequence, std::move(message.payload.metadata), buffer_size);
}

exec::Task<Message> SpillableMessages::unpark(ParkedMessage parked, std::stop_token stop) {
    SPILLWAY_EXPECTS(
        parked.store_ == this, "unpark needs a message parked in this store", InvalidArgument
    );
    std::optional<memory::Buffer> buffer = store_.extract_if_in_host(parked.key_);
    if (!buffer) {
        // Spilled: wait for room to read it back. Nothing else takes it
        // meanwhile, so it is still held, in either tier.
        auto reservation = co_await reserve_memory(resource_, executor_, parked.buffer_size_, std::move(stop));
        buffer = store_.extract(parked.key_, reservation);
    }
    SPILLWAY_ASSERT(buffer.has_value(), "a parked message's buffer left the store while it was parked");
    parked.store_ = nullptr;
    Message message{
        .sequence = parked.sequence_,
        .payload = shuffle::PackedData{.metadata = std::move(parked.metadata_), .data = std::move(*buffer)},
    };
    co_return message;
}

}  // namespace spillway::stream
