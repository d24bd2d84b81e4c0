#include <spillway/memory/spillable_store.hpp>

#include <algorithm>
#include <iterator>
#include <limits>
#include <unordered_set>

#include <spillway/core/error.hpp>
#include <spillway/core/trace.hpp>

namespace spillway::memory {
namespace {

/// What a node of a red-black tree holds before its value: its colour and
/// three links.
constexpr std::size_t tree_node_header = 4 * sizeof(void*);

std::string checked_name(std::string name) {
    SPILLWAY_EXPECTS(!name.empty(), "a SpillableStore needs a name for its statistics", InvalidArgument);
    return name;
}

}  // namespace

std::size_t SpillableStore::bookkeeping_bytes_for(std::size_t owner_bytes_per_key) noexcept {
    return BufferResource::allocated_capacity(tree_node_header + sizeof(Entries::value_type))
         + BufferResource::allocated_capacity(tree_node_header + sizeof(std::pair<std::size_t, Key>))
         + owner_bytes_per_key;
}

SpillableStore::SpillableStore(BufferResource& resource, std::string name, int spill_priority,
                               std::size_t batch_bytes, std::optional<std::size_t> owner_bytes_per_key)
    : resource_(resource),
      name_(checked_name(std::move(name))),
      batch_bytes_(batch_bytes),
      bytes_per_key_(owner_bytes_per_key ? bookkeeping_bytes_for(*owner_bytes_per_key) : 0),
      bookkeeping_(resource),
      spill_function_id_(resource.spill_manager().add_spill_function(
          [this](std::size_t amount) { return spill(amount); }, spill_priority, SpillConcurrency::shared,
          SpillAnnouncement::victims
      )) {}

SpillableStore::~SpillableStore() {
    resource_.spill_manager().remove_spill_function(spill_function_id_);
}

void SpillableStore::insert(Key key, Buffer buffer) {
    SPILLWAY_EXPECTS(
        buffer.resource() == &resource_,
        "SpillableStore '" << name_ << "': insert needs a non-empty buffer of the store's resource",
        InvalidArgument
    );
    if (resource_.config().force_disk && buffer.mem_type() == MemoryType::HOST) {
        auto reservation = resource_.reserve(MemoryType::DISK, buffer.size(), AllowOverbooking::no);
        buffer = resource_.move(std::move(buffer), reservation);
    }
    MutexLock lock(mutex_);
    bool const added = add(key, std::move(buffer));
    SPILLWAY_EXPECTS(added, "SpillableStore '" << name_ << "' already holds key " << key, InvalidArgument);
}

void SpillableStore::restore(Key key, Buffer buffer) noexcept {
    MutexLock lock(mutex_);
    bool const added = add(key, std::move(buffer));
    SPILLWAY_ASSERT(added, "SpillableStore '" << name_ << "' already holds key " << key);
}

bool SpillableStore::add(Key key, Buffer&& buffer) {
    auto const tier = buffer.mem_type();
    auto const size = buffer.size();
    auto const [entry, added] = entries_.try_emplace(key);
    if (!added) {
        return false;
    }
    entry->second = Entry{.buffer = std::move(buffer), .tier = tier, .size = size};
    bytes_[tier_index(tier)] += size;
    if (tier == MemoryType::HOST) {
        add_candidate(key, size);
    }
    bookkeeping_.cover(entries_.size() * bytes_per_key_);
    return true;
}

void SpillableStore::add_candidate(Key key, std::size_t size) {
    if (size == 0) {
        return;
    }
    if (size < batch_bytes_) {
        small_spillable_.insert(key);
    } else {
        spillable_.emplace(size, key);
    }
}

void SpillableStore::remove_candidate(Key key, std::size_t size) {
    if (size < batch_bytes_) {
        small_spillable_.erase(key);
    } else {
        spillable_.erase({size, key});
    }
}

std::optional<Buffer> SpillableStore::extract(Key key, AllowOverbooking allow_overbooking) {
    return extract(key, nullptr, allow_overbooking);
}

std::optional<Buffer> SpillableStore::extract(Key key, MemoryReservation& reservation) {
    SPILLWAY_EXPECTS(
        reservation.empty() || reservation.mem_type() == MemoryType::HOST,
        "SpillableStore '" << name_ << "': extract needs a HOST reservation, got one in " << reservation.mem_type(),
        ReservationError
    );
    return extract(key, &reservation, AllowOverbooking::no);
}

std::optional<Buffer> SpillableStore::extract_if_in_host(Key key) {
    MutexLock lock(mutex_);
    auto const entry = settled(lock, key);
    if (entry == entries_.end() || entry->second.tier != MemoryType::HOST) {
        return std::nullopt;
    }
    return remove(entry);
}

std::optional<Buffer> SpillableStore::extract(
    Key key, MemoryReservation* reservation, AllowOverbooking allow_overbooking
) {
    std::size_t size = 0;
    {
        MutexLock lock(mutex_);
        auto const entry = settled(lock, key);
        if (entry == entries_.end()) {
            return std::nullopt;
        }
        if (entry->second.tier == MemoryType::HOST) {
            return remove(entry);
        }
        size = entry->second.size;
    }
    // Reserve before taking the buffer out, so that the spilling this may
    // cause never waits on this entry.
    MemoryReservation own;
    if (reservation == nullptr) {
        own = resource_.reserve_and_spill(MemoryType::HOST, size, allow_overbooking);
        reservation = &own;
    }
    std::optional<Buffer> spilled;
    {
        MutexLock lock(mutex_);
        auto const entry = settled(lock, key);
        if (entry == entries_.end()) {
            return std::nullopt;  // extracted by another caller meanwhile
        }
        if (entry->second.tier == MemoryType::HOST) {
            return remove(entry);  // prefetched meanwhile
        }
        spilled = take(entry);
    }
    std::optional<Buffer> host;
    try {
        trace::Span span("spill", "unspill");
        span.set_bytes(size);
        span.set_id(key);
        host = resource_.move(std::move(*spilled), *reservation);
    } catch (...) {
        put_back(key, std::move(*spilled));
        throw;
    }
    {
        MutexLock lock(mutex_);
        bytes_[tier_index(MemoryType::DISK)] -= size;
        entries_.erase(key);
        bookkeeping_.cover(entries_.size() * bytes_per_key_);
    }
    settled_.notify_all();
    resource_.statistics().add_bytes(name_ + ".unspill.bytes", size);
    return host;
}

bool SpillableStore::erase(Key key) {
    std::optional<Buffer> freed;  // freed outside the lock
    {
        MutexLock lock(mutex_);
        auto const entry = settled(lock, key);
        if (entry == entries_.end()) {
            return false;
        }
        freed.emplace(remove(entry));
    }
    return true;
}

std::optional<std::pair<SpillableStore::Key, Buffer>> SpillableStore::extract_first() {
    while (true) {
        Key key = 0;
        {
            MutexLock lock(mutex_);
            if (entries_.empty()) {
                return std::nullopt;
            }
            key = entries_.begin()->first;
        }
        if (auto buffer = extract(key)) {
            return std::pair{key, std::move(*buffer)};
        }
    }
}

std::size_t SpillableStore::prefetch(std::span<Key const> keys) {
    std::vector<Key> taken;
    std::vector<Buffer> buffers;
    MemoryReservation reservation;
    {
        MutexLock lock(mutex_);
        // Room that requests wait for is theirs: a buffer read back into it
        // would be spilled again for them, which frees memory, so they
        // would wait on as if something progressed.
        auto const room = resource_.memory_available(MemoryType::HOST)
                        - static_cast<std::int64_t>(resource_.memory_waiting());
        std::size_t total = 0;
        std::vector<Entries::iterator> chosen;
        std::unordered_set<Key> listed;
        for (auto const key : keys) {
            auto const entry = entries_.find(key);
            if (entry == entries_.end() || !entry->second.buffer || entry->second.tier != MemoryType::DISK
                || !listed.insert(key).second) {
                continue;
            }
            if (room < 0 || entry->second.size > static_cast<std::uint64_t>(room) - total) {
                break;
            }
            total += entry->second.size;
            chosen.push_back(entry);
        }
        if (chosen.empty()) {
            return 0;
        }
        reservation = resource_.try_reserve(MemoryType::HOST, total);
        if (reservation.size() != total) {
            return 0;  // taken by another caller since
        }
        taken.reserve(chosen.size());
        buffers.reserve(chosen.size());
        for (auto const entry : chosen) {
            taken.push_back(entry->first);
            buffers.push_back(take(entry));
        }
    }
    auto const fetched = reservation.size();
    try {
        trace::Span span("spill", "prefetch");
        span.set_bytes(fetched);
        span.set_id(taken.front());
        resource_.move_to_host(buffers, reservation);
    } catch (...) {
        for (std::size_t i = 0; i < taken.size(); ++i) {
            put_back(taken[i], std::move(buffers[i]));
        }
        throw;
    }
    for (std::size_t i = 0; i < taken.size(); ++i) {
        put_back(taken[i], std::move(buffers[i]));
    }
    resource_.statistics().add_bytes(name_ + ".prefetch.bytes", fetched);
    return fetched;
}

std::size_t SpillableStore::spill(std::size_t amount) {
    std::vector<std::pair<Key, Buffer>> victims;
    {
        MutexLock lock(mutex_);
        victims = choose_victims(amount == 0 ? 0 : std::max(amount, batch_bytes_));
    }
    std::size_t chosen = 0;
    for (auto const& victim : victims) {
        chosen += victim.second.size();
    }
    resource_.spill_manager().announce_victims(chosen);
    // The victims smaller than a batch first, written together; the rest
    // one by one.
    auto const alone = std::stable_partition(victims.begin(), victims.end(), [this](auto const& victim) {
        return victim.second.size() < batch_bytes_;
    });
    std::size_t spilled = 0;
    auto victim = victims.begin();
    try {
        if (std::distance(victims.begin(), alone) > 1) {
            spilled += spill_together(std::span(victims.begin(), alone));
            victim = alone;
        }
        for (; victim != victims.end(); ++victim) {
            auto& [key, buffer] = *victim;
            trace::Span span("spill", "spill");
            span.set_bytes(buffer.size());
            span.set_id(key);
            auto reservation = resource_.reserve(MemoryType::DISK, buffer.size(), AllowOverbooking::no);
            buffer = resource_.move(std::move(buffer), reservation);
            spilled += buffer.size();
            put_back(key, std::move(buffer));
        }
    } catch (...) {
        for (; victim != victims.end(); ++victim) {
            put_back(victim->first, std::move(victim->second));
        }
        throw;
    }
    resource_.statistics().add_bytes(name_ + ".spill.bytes", spilled);
    return spilled;
}

std::size_t SpillableStore::spill_together(std::span<std::pair<Key, Buffer>> victims) {
    std::size_t bytes = 0;
    std::vector<Buffer> buffers;
    buffers.reserve(victims.size());
    for (auto& [key, buffer] : victims) {
        bytes += buffer.size();
        buffers.push_back(std::move(buffer));
    }
    trace::Span span("spill", "spill");
    span.set_bytes(bytes);
    span.set_id(victims.front().first);
    try {
        auto reservation = resource_.reserve(MemoryType::DISK, bytes, AllowOverbooking::no);
        resource_.move_to_disk(buffers, reservation);
    } catch (...) {
        for (std::size_t i = 0; i < victims.size(); ++i) {
            victims[i].second = std::move(buffers[i]);
        }
        throw;
    }
    for (std::size_t i = 0; i < victims.size(); ++i) {
        put_back(victims[i].first, std::move(buffers[i]));
    }
    return bytes;
}

bool SpillableStore::contains(Key key) const {
    MutexLock lock(mutex_);
    return entries_.contains(key);
}

std::size_t SpillableStore::size() const {
    MutexLock lock(mutex_);
    return entries_.size();
}

std::vector<SpillableStore::Key> SpillableStore::keys() const {
    MutexLock lock(mutex_);
    std::vector<Key> keys;
    keys.reserve(entries_.size());
    for (auto const& [key, entry] : entries_) {
        keys.push_back(key);
    }
    return keys;
}

std::uint64_t SpillableStore::bytes(MemoryType tier) const {
    MutexLock lock(mutex_);
    return bytes_[tier_index(tier)];
}

SpillableStore::Entries::iterator SpillableStore::settled(MutexLock& lock, Key key) {
    auto entry = entries_.find(key);
    settled_.wait(lock, [&]() SPILLWAY_REQUIRES(mutex_) {
        entry = entries_.find(key);
        return entry == entries_.end() || entry->second.buffer.has_value();
    });
    return entry;
}

Buffer SpillableStore::take(Entries::iterator entry) {
    auto& [key, held] = *entry;
    remove_candidate(key, held.size);
    Buffer buffer = std::move(*held.buffer);
    held.buffer.reset();
    return buffer;
}

void SpillableStore::put_back(Key key, Buffer buffer) {
    {
        MutexLock lock(mutex_);
        auto& held = entries_.at(key);
        bytes_[tier_index(held.tier)] -= held.size;
        held.tier = buffer.mem_type();
        bytes_[tier_index(held.tier)] += held.size;
        if (held.tier == MemoryType::HOST) {
            add_candidate(key, held.size);
        }
        held.buffer = std::move(buffer);
    }
    settled_.notify_all();
}

Buffer SpillableStore::remove(Entries::iterator entry) {
    auto& [key, held] = *entry;
    remove_candidate(key, held.size);
    bytes_[tier_index(held.tier)] -= held.size;
    Buffer buffer = std::move(*held.buffer);
    entries_.erase(entry);
    bookkeeping_.cover(entries_.size() * bytes_per_key_);
    return buffer;
}

std::vector<std::pair<SpillableStore::Key, Buffer>> SpillableStore::choose_victims(std::size_t amount) {
    std::vector<std::pair<Key, Buffer>> victims;
    std::size_t chosen = 0;
    while (chosen < amount && !(spillable_.empty() && small_spillable_.empty())) {
        auto const missing = amount - chosen;
        Key key = 0;
        if (spillable_.empty() || (missing < batch_bytes_ && !small_spillable_.empty())) {
            // Small buffers go into one file whatever their number: the one
            // needed last.
            key = *small_spillable_.rbegin();
        } else {
            // The smallest buffer that covers what is missing, else the
            // largest; of equal sizes, the one with the largest key.
            auto candidate = spillable_.lower_bound({missing, Key{0}});
            if (candidate != spillable_.end()) {
                candidate = spillable_.upper_bound({candidate->first, std::numeric_limits<Key>::max()});
            }
            key = std::prev(candidate)->second;
        }
        auto const entry = entries_.find(key);
        chosen += entry->second.size;
        victims.emplace_back(key, take(entry));
    }
    return victims;
}

}  // namespace spillway::memory
