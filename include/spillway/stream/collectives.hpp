#pragma once
/// @file
/// The collectives as actors: a hash shuffle of the tables that stream in,
/// and an all-gather of the messages that stream in.

#include <cstddef>
#include <string>
#include <vector>

#include <spillway/shuffle/all_gather.hpp>
#include <spillway/shuffle/shuffler.hpp>
#include <spillway/stream/actor.hpp>
#include <spillway/stream/channel.hpp>

namespace spillway::stream {

/// An actor that runs one rank's part of a hash shuffle of tables. Each
/// message of `input` holds a table (`pack_table`); its rows are split by
/// the hash of `key_columns` into `shuffler.total_partitions()` partitions,
/// packed (`table_shuffle::pack_pieces`, into memory waited for with
/// `reserve_memory`) and inserted into `shuffler`. Tables smaller than
/// `min_split_bytes` (0: none) are kept, unpacked, until those kept reach
/// it together (or the input ends), and are split as one table, so that no
/// partition's piece of a small table is a handful of rows. At the end of the input it
/// calls `insert_finished`, and then sends each of this rank's partitions,
/// as it completes, to `output`: one message per chunk, in the shuffler's
/// order, each a table (`unpack_table`) numbered by the partition, so that
/// the messages of one partition share a sequence number and a consumer
/// knows a partition is whole when the number changes or the stream ends.
/// A partition without rows sends nothing. Chunks go out one at a time
/// (`Shuffler::extract_chunk`), without a copy, so a partition larger than
/// memory streams through. It polls the shuffler (`Shuffler::poll_any`),
/// sleeping on the executor between polls, so no thread waits while other
/// ranks work; it stops polling when its pipeline is aborted.
///
/// Every rank of the shuffler's communicator runs one, on a shuffler made
/// with the same op id, with the same key columns. The tables the actor
/// makes count against its context's resource, which must be the
/// shuffler's. It closes `input` and `output` when it ends, and aborts its
/// pipeline if the shuffle fails.
/// @throws (from the actor) InvalidArgument as `table::partition_rows`;
///         the shuffle's errors; OutOfMemory as `reserve_memory`;
///         PipelineAborted if its pipeline is aborted.
[[nodiscard]] Actor shuffle_tables(
    shuffle::Shuffler& shuffler, std::vector<std::size_t> key_columns, Channel& input, Channel& output,
    std::size_t min_split_bytes = 0
);

/// As `shuffle_tables`, with the key columns named: each table's are looked
/// up in its schema.
/// @throws (from the actor) InvalidArgument naming the columns there are if
///         a table has no column of a key's name; as `shuffle_tables`.
[[nodiscard]] Actor shuffle_tables_by_name(
    shuffle::Shuffler& shuffler, std::vector<std::string> key_names, Channel& input, Channel& output,
    std::size_t min_split_bytes = 0
);

/// An actor that runs one rank's part of an all-gather of messages: each
/// message of `input` is inserted into `gather` as it is, under its sequence
/// number. At the end of the input it calls `insert_finished`, and once
/// every rank's messages have arrived it sends all of them to `output`, one
/// message per chunk, ordered by rank, then by sequence number, and
/// numbered 0, 1, ... in that order. Chunks go out one at a time
/// (`AllGather::extract_chunk`), without a copy. It polls the all-gather
/// (`AllGather::poll`), sleeping on the executor between polls, until its
/// pipeline is aborted.
///
/// Every rank of the all-gather's communicator runs one. The context's
/// resource must be the all-gather's. It closes `input` and `output` when it
/// ends, and aborts its pipeline if the all-gather fails.
/// @throws (from the actor) the all-gather's errors; InvalidArgument as
///         `AllGather::insert`; PipelineAborted if its pipeline is aborted.
[[nodiscard]] Actor all_gather(shuffle::AllGather& gather, Channel& input, Channel& output);

}  // namespace spillway::stream
