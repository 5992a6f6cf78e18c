#pragma once
// Free slots of a table, handed out lowest-first: which slot a row gets then depends only on the order of
// takes and gives, never on anything else, so tables that reuse slots stay deterministic (partition ids,
// rate windows).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

namespace orrery::wormhole {

class FreeSlots {
public:
    bool empty() const { return heap_.empty(); }
    // The lowest free slot, left free. Only when !empty().
    uint32_t lowest() const { return heap_.front(); }
    // The lowest free slot, taken out of the free ones. Only when !empty().
    uint32_t take() {
        std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
        const uint32_t s = heap_.back();
        heap_.pop_back();
        return s;
    }
    void give(uint32_t s) {
        heap_.push_back(s);
        std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
    }

private:
    std::vector<uint32_t> heap_;  // min-heap
};

}  // namespace orrery::wormhole
