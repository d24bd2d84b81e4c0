#include <spillway/stream/table_message.hpp>

#include <utility>

#include <spillway/core/error.hpp>
#include <spillway/stream/reserve_memory.hpp>
#include <spillway/table/packed_table.hpp>

namespace spillway::stream {

exec::Task<Message> pack_table(Context& context, std::uint64_t sequence, table::Table const& table) {
    auto const size = table::packed_size(table);
    auto reservation = co_await reserve_memory(context.resource(), context.executor(), size, context.abort_token());
    auto buffer = context.resource().make_buffer(size, reservation);
    auto metadata = table::pack_into(table, buffer.data());
    Message message{
        .sequence = sequence,
        .payload = shuffle::PackedData{.metadata = std::move(metadata), .data = std::move(buffer)},
    };
    co_return message;
}

table::Table unpack_table(Message const& message) {
    SPILLWAY_EXPECTS(message.payload.data.resource() != nullptr,
                     "unpack_table needs a message whose buffer was not moved from", InvalidArgument);
    return table::unpack(message.payload.metadata, message.payload.data.data());
}

}  // namespace spillway::stream
