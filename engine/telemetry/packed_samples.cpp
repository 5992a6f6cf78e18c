#include "telemetry/packed_samples.h"

#include <algorithm>
#include <stdexcept>
#include <tuple>

namespace orrery {
namespace {

void put(std::string& out, uint64_t v) {
    while (v >= 0x80) {
        out.push_back(char(uint8_t(v) | 0x80));
        v >>= 7;
    }
    out.push_back(char(v));
}

class Reader {
public:
    explicit Reader(const std::string& blob) : p_(blob.data()), end_(blob.data() + blob.size()) {}
    bool done() const { return p_ == end_; }
    uint64_t next() {
        uint64_t v = 0;
        for (int shift = 0;; shift += 7) {
            if (p_ == end_) throw std::runtime_error("a packed sample set is cut short");
            if (shift > 63) throw std::runtime_error("a packed sample set holds a number longer than 64 bits");
            const uint8_t b = uint8_t(*p_++);
            v |= uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80)) return v;
        }
    }
    uint32_t id(uint64_t previous) {
        const uint64_t v = previous + next();
        if (v > UINT32_MAX) throw std::runtime_error("a packed sample set names an id beyond 32 bits");
        return uint32_t(v);
    }

private:
    const char* p_;
    const char* end_;
};

}  // namespace

std::string pack_queue_samples(std::vector<QueueSample> ports) {
    std::sort(ports.begin(), ports.end(), [](const QueueSample& a, const QueueSample& b) { return std::tie(a.node, a.ifindex) < std::tie(b.node, b.ifindex); });
    std::string out;
    out.reserve(ports.size() * 5);
    uint32_t node = 0;
    for (const QueueSample& p : ports) {
        put(out, p.node - node);
        put(out, p.ifindex);
        put(out, p.bytes);
        node = p.node;
    }
    return out;
}

std::string pack_rate_samples(std::vector<RateSample> rates) {
    std::sort(rates.begin(), rates.end(), [](const RateSample& a, const RateSample& b) { return a.flow < b.flow; });
    std::string out;
    out.reserve(rates.size() * 6);
    uint32_t flow = 0;
    for (const RateSample& r : rates) {
        put(out, r.flow - flow);
        put(out, r.rate_bps);
        flow = r.flow;
    }
    return out;
}

std::vector<QueueSample> unpack_queue_samples(const std::string& blob) {
    std::vector<QueueSample> out;
    Reader in(blob);
    uint32_t node = 0;
    while (!in.done()) {
        node = in.id(node);
        const uint32_t ifindex = in.id(0);
        out.push_back({node, ifindex, in.next()});
    }
    return out;
}

std::vector<RateSample> unpack_rate_samples(const std::string& blob) {
    std::vector<RateSample> out;
    Reader in(blob);
    uint32_t flow = 0;
    while (!in.done()) {
        flow = in.id(flow);
        out.push_back({flow, in.next()});
    }
    return out;
}

}  // namespace orrery
