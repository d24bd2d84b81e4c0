#include <spillway/memory/memory_type.hpp>

#include <ostream>

namespace spillway::memory {

std::string_view to_string(MemoryType tier) noexcept {
    switch (tier) {
    case MemoryType::HOST:
        return "HOST";
    case MemoryType::DISK:
        return "DISK";
    }
    return "unknown";
}

std::ostream& operator<<(std::ostream& out, MemoryType tier) {
    return out << to_string(tier);
}

}  // namespace spillway::memory
