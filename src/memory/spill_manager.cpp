#include <spillway/memory/spill_manager.hpp>

#include <algorithm>
#include <exception>
#include <limits>
#include <tuple>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/core/logging.hpp>
#include <spillway/core/options.hpp>
#include <spillway/memory/buffer_resource.hpp>

namespace spillway::memory {
namespace {

/// The manager whose spill function this thread is running, or null when it
/// runs none. Spilling is refused whenever it is set, whatever the manager:
/// a spill function that spilled through another manager could wait for a
/// function of that manager whose caller waits for this one.
thread_local SpillManager const* running_spill_function_of = nullptr;

/// Marks the thread as inside a spill function of `manager` for its lifetime.
class InsideSpillFunction {
  public:
    explicit InsideSpillFunction(SpillManager const* manager) noexcept
        : previous_(std::exchange(running_spill_function_of, manager)) {}
    ~InsideSpillFunction() { running_spill_function_of = previous_; }
    InsideSpillFunction(InsideSpillFunction const&) = delete;
    InsideSpillFunction& operator=(InsideSpillFunction const&) = delete;

  private:
    SpillManager const* previous_;
};

}  // namespace

thread_local SpillManager::Claim* SpillManager::claim_of_this_thread_ = nullptr;

SpillManager::SpillManager(
    BufferResource& resource, Statistics& statistics, SpillMode mode,
    std::chrono::nanoseconds interval, std::size_t headroom
)
    : resource_(resource), statistics_(statistics), mode_(mode), periodic_headroom_(headroom) {
    if (interval > std::chrono::nanoseconds::zero()) {
        periodic_thread_ = std::thread([this, interval] { run_periodically(interval); });
    }
}

SpillManager::~SpillManager() {
    {
        MutexLock lock(periodic_mutex_);
        stopping_ = true;
    }
    periodic_wake_.notify_all();
    if (periodic_thread_.joinable()) {
        periodic_thread_.join();
    }
    WriterLock lock(registry_);
    if (!functions_.empty()) {
        SPILLWAY_FATAL(
            "SpillManager destroyed with " << functions_.size()
                                           << " spill functions registered; their owners must "
                                              "remove them before the BufferResource is destroyed"
        );
    }
}

SpillManager::SpillFunctionId SpillManager::add_spill_function(
    SpillFunction function, int priority, SpillConcurrency concurrency, SpillAnnouncement announcement
) {
    reject_registry_change_inside_own_function("add_spill_function");
    SPILLWAY_EXPECTS(function, "add_spill_function needs a callable spill function", InvalidArgument);
    MutexLock gate(registry_gate_);
    WriterLock lock(registry_);
    auto const id = next_id_++;
    functions_.emplace(
        std::piecewise_construct, std::forward_as_tuple(Order{priority, id}),
        std::forward_as_tuple(std::move(function), concurrency, announcement)
    );
    return id;
}

void SpillManager::remove_spill_function(SpillFunctionId id) {
    reject_registry_change_inside_own_function("remove_spill_function");
    MutexLock gate(registry_gate_);
    WriterLock lock(registry_);  // waits for every spill() in progress: the drain
    auto const found =
        std::ranges::find_if(functions_, [id](auto const& entry) { return entry.first.id == id; });
    SPILLWAY_EXPECTS(
        found != functions_.end(), "remove_spill_function: no spill function has id " << id,
        InvalidArgument
    );
    functions_.erase(found);
}

std::size_t SpillManager::spill(std::size_t amount) {
    reject_spill_inside_spill_function("spill");
    if (amount == 0) {
        return 0;
    }
    ScopedTimer const timer(statistics_, "memory.spill.seconds");
    std::size_t spilled = 0;
    if (mode_ == SpillMode::serialized) {
        WriterLock lock(registry_);
        for (auto& [order, registration] : functions_) {
            if (spilled >= amount) {
                break;
            }
            claim_when_idle(registration);
            spilled += run_claimed(registration, amount - spilled);
        }
    } else {
        { MutexLock pass(registry_gate_); }
        ReaderLock lock(registry_);
        std::vector<Registration*> skipped;
        for (auto& [order, registration] : functions_) {
            if (spilled >= amount) {
                break;
            }
            if (!try_claim(registration)) {
                skipped.push_back(&registration);
                continue;
            }
            spilled += run_claimed(registration, amount - spilled);
        }
        for (auto* registration : skipped) {
            if (spilled >= amount) {
                break;
            }
            if (claim_of_this_thread_ != nullptr) {
                stop_choosing(*claim_of_this_thread_);  // let others claim while this one waits
            }
            claim_when_idle(*registration);
            spilled += run_claimed(*registration, amount - spilled);
        }
    }
    statistics_.add_bytes("memory.spill.bytes", spilled);
    return spilled;
}

SpillManager::HeadroomResult SpillManager::spill_to_make_headroom(std::size_t headroom) {
    return make_headroom(headroom, std::numeric_limits<std::size_t>::max(), Waiting::excluded);
}

SpillManager::HeadroomResult SpillManager::make_headroom(
    std::size_t headroom, std::size_t max_claim, Waiting waiting
) {
    reject_spill_inside_spill_function("spill_to_make_headroom");
    // With the waiting requests, the target moves: one that got its bytes
    // stops counting, and must not be spilled for again.
    // Taken up to 2^62 bytes, more than any machine has, so that sums and
    // differences with it stay in range.
    constexpr std::size_t most = std::size_t{1} << 62;
    auto const target = [&] {
        auto const waited_for = waiting == Waiting::included ? resource_.memory_waiting() : 0;
        return static_cast<std::int64_t>(std::min(std::min(headroom, most) + std::min(waited_for, most), most));
    };
    HeadroomResult result;
    bool exhausted = false;  // this caller's last spill freed nothing
    while (true) {
        Claim claim;
        {
            MutexLock lock(headroom_mutex_);
            std::int64_t missing = 0;
            headroom_changed_.wait(lock, [&]() SPILLWAY_REQUIRES(headroom_mutex_) {
                missing = target() - resource_.memory_available(MemoryType::HOST);
                auto const in_flight = static_cast<std::int64_t>(in_flight_);
                return missing <= 0
                       || (choosing_ == nullptr && (in_flight == 0 || (!exhausted && missing > in_flight)));
            });
            if (missing <= 0) {
                result.reached = true;
                return result;
            }
            if (exhausted) {
                return result;  // nobody is spilling and this caller found nothing
            }
            claim.bytes = std::min(static_cast<std::size_t>(missing) - in_flight_, max_claim);
            in_flight_ += claim.bytes;
            choosing_ = &claim;
        }
        auto const released_before = resource_.host_bytes_freed();
        std::size_t spilled = 0;
        try {
            claim_of_this_thread_ = &claim;
            spilled = spill(claim.bytes);
            claim_of_this_thread_ = nullptr;
        } catch (...) {
            claim_of_this_thread_ = nullptr;
            release_claim(claim);
            throw;
        }
        release_claim(claim);
        if (spilled > 0 && resource_.host_bytes_freed() == released_before) {
            // Nothing of HOST was freed while it spilled, by anyone: the
            // reported bytes were not freed, and asking again would spin.
            note_unfreed_report(spilled);
            spilled = 0;
        }
        result.spilled += spilled;
        exhausted = spilled == 0;
    }
}

void SpillManager::announce_victims(std::size_t bytes) {
    if (running_spill_function_of != this || claim_of_this_thread_ == nullptr) {
        return;  // not spilling for a headroom claim of this manager
    }
    Claim& claim = *claim_of_this_thread_;
    {
        MutexLock lock(headroom_mutex_);
        claim.announced += bytes;
        auto const surplus = claim.announced > claim.bytes ? claim.announced - claim.bytes : 0;
        in_flight_ += surplus - claim.surplus;  // surplus only grows
        claim.surplus = surplus;
        if (choosing_ == &claim) {
            choosing_ = nullptr;
        }
    }
    headroom_changed_.notify_all();
}

void SpillManager::reject_spill_inside_spill_function(char const* what) {
    SPILLWAY_EXPECTS(
        running_spill_function_of == nullptr,
        "SpillManager::" << what << " called from inside a spill function; a spill function must "
                         << "not spill, spill_to_make_headroom or reserve_and_spill through any "
                            "manager (it could wait for itself, or for a spill function waiting for it)",
        InvalidArgument
    );
}

void SpillManager::reject_registry_change_inside_own_function(char const* what) const {
    SPILLWAY_EXPECTS(
        running_spill_function_of != this,
        "SpillManager::" << what << " called from inside a spill function of the same manager; a "
                         << "spill function must not add or remove spill functions of its own "
                            "manager (it would wait for itself)",
        InvalidArgument
    );
}

bool SpillManager::try_claim(Registration& registration) noexcept {
    // acquire: pairs with the release in run_claimed(), so this caller sees
    // what the function's previous caller did.
    return registration.concurrency == SpillConcurrency::shared
           || !registration.busy.exchange(true, std::memory_order_acquire);
}

std::size_t SpillManager::run_claimed(Registration& registration, std::size_t amount) {
    struct Release {
        SpillManager& manager;
        Registration& registration;
        ~Release() {
            if (registration.concurrency == SpillConcurrency::shared) {
                return;
            }
            // release: pairs with the acquiring claim of the next caller.
            registration.busy.store(false, std::memory_order_release);
            { MutexLock lock(manager.function_idle_mutex_); }
            manager.function_idle_.notify_all();
        }
    } const release{*this, registration};
    if (registration.announcement == SpillAnnouncement::none && claim_of_this_thread_ != nullptr) {
        stop_choosing(*claim_of_this_thread_);  // this function will not say what it frees
    }
    InsideSpillFunction const inside(this);
    return registration.function(amount);
}

void SpillManager::claim_when_idle(Registration& registration) {
    MutexLock lock(function_idle_mutex_);
    function_idle_.wait(lock, [&] { return try_claim(registration); });
}

void SpillManager::note_unfreed_report(std::size_t reported) {
    statistics_.add_count("memory.spill.unfreed_reports");
    // relaxed: only makes one warning of many; nothing else is published.
    if (!warned_unfreed_report_.exchange(true, std::memory_order_relaxed)) {
        SPILLWAY_LOG(
            warn, "a spill function reported " << format_bytes(reported)
                                               << " freed, but no HOST memory was released while it ran; "
                                                  "spill_to_make_headroom counts it as having freed nothing "
                                                  "(further such reports are counted in "
                                                  "memory.spill.unfreed_reports)"
        );
    }
}

void SpillManager::stop_choosing(Claim const& claim) {
    {
        MutexLock lock(headroom_mutex_);
        if (choosing_ != &claim) {
            return;
        }
        choosing_ = nullptr;
    }
    headroom_changed_.notify_all();
}

void SpillManager::release_claim(Claim const& claim) noexcept {
    {
        MutexLock lock(headroom_mutex_);
        in_flight_ -= claim.bytes + claim.surplus;
        if (choosing_ == &claim) {
            choosing_ = nullptr;
        }
    }
    headroom_changed_.notify_all();
}

void SpillManager::run_periodically(std::chrono::nanoseconds interval) {
    while (true) {
        {
            MutexLock lock(periodic_mutex_);
            if (periodic_wake_.wait_for(lock, interval, [&]() SPILLWAY_REQUIRES(periodic_mutex_) {
                    return stopping_;
                }))
            {
                return;
            }
        }
        try {
            make_headroom(periodic_headroom_, std::numeric_limits<std::size_t>::max(), Waiting::included);
        } catch (std::exception const& error) {
            statistics_.add_count("memory.spill.periodic_errors");
            SPILLWAY_LOG(warn, "periodic spill failed: " << error.what());
        }
    }
}

}  // namespace spillway::memory
