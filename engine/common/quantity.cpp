#include "common/quantity.h"

#include <cmath>
#include <cstdio>
#include <utility>

namespace orrery {
namespace {

struct Unit {
    std::string_view suffix;
    long double scale;
};

// Splits "12.5Gbps" into 12.5 and "Gbps". The number is decimal, optionally signed, with an optional exponent.
bool split_number(std::string_view text, long double& value, std::string_view& unit, std::string* why) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    size_t i = 0;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    bool digits = false;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
        digits = digits || text[i] != '.';
        ++i;
    }
    if (digits && i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        size_t j = i + 1;
        if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
        if (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) {
            i = j;
            while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
        }
    }
    if (!digits) {
        if (why) *why = "no number";
        return false;
    }
    std::string number(text.substr(0, i));
    char* end = nullptr;
    value = std::strtold(number.c_str(), &end);
    if (end != number.c_str() + number.size()) {
        if (why) *why = "malformed number";
        return false;
    }
    unit = text.substr(i);
    while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
    return true;
}

template <class Q, size_t N>
std::optional<Q> parse_with(std::string_view text, const Unit (&units)[N], std::string_view kind,
                            std::string_view examples, std::string* why, bool unitless_ok, long double unitless_scale) {
    long double value = 0;
    std::string_view unit;
    std::string reason;
    if (!split_number(text, value, unit, &reason)) {
        if (why) *why = "not a " + std::string(kind) + " (" + reason + "); write it like " + std::string(examples);
        return std::nullopt;
    }
    long double scale = 0;
    if (unit.empty()) {
        if (!unitless_ok) {
            if (why) *why = "a " + std::string(kind) + " needs a unit, like " + std::string(examples);
            return std::nullopt;
        }
        scale = unitless_scale;
    } else {
        for (const Unit& u : units)
            if (u.suffix == unit) scale = u.scale;
        if (scale == 0) {
            if (why) *why = "unknown " + std::string(kind) + " unit '" + std::string(unit) + "'; write it like " + std::string(examples);
            return std::nullopt;
        }
    }
    if (value < 0) {
        if (why) *why = "a " + std::string(kind) + " cannot be negative";
        return std::nullopt;
    }
    long double scaled = value * scale;
    if (!(scaled < 9.2e18L)) {
        if (why) *why = std::string(kind) + " out of range";
        return std::nullopt;
    }
    return Q(static_cast<int64_t>(std::llround(scaled)));
}

constexpr Unit kRateUnits[] = {
    {"bps", 1}, {"b/s", 1}, {"Bps", 8}, {"B/s", 8},
    {"kbps", 1e3}, {"Kbps", 1e3}, {"kb/s", 1e3}, {"Kb/s", 1e3}, {"kBps", 8e3}, {"KBps", 8e3}, {"kB/s", 8e3}, {"KB/s", 8e3},
    {"Kibps", 1024.0L}, {"Kib/s", 1024.0L}, {"KiBps", 8 * 1024.0L}, {"KiB/s", 8 * 1024.0L},
    {"Mbps", 1e6}, {"Mb/s", 1e6}, {"MBps", 8e6}, {"MB/s", 8e6},
    {"Mibps", 1048576.0L}, {"Mib/s", 1048576.0L}, {"MiBps", 8 * 1048576.0L}, {"MiB/s", 8 * 1048576.0L},
    {"Gbps", 1e9}, {"Gb/s", 1e9}, {"GBps", 8e9}, {"GB/s", 8e9},
    {"Gibps", 1073741824.0L}, {"Gib/s", 1073741824.0L}, {"GiBps", 8 * 1073741824.0L}, {"GiB/s", 8 * 1073741824.0L},
    {"Tbps", 1e12}, {"Tb/s", 1e12}, {"TBps", 8e12}, {"TB/s", 8e12},
};

constexpr Unit kTimeUnits[] = {
    {"s", 1e12}, {"ms", 1e9}, {"us", 1e6}, {"µs", 1e6}, {"ns", 1e3}, {"ps", 1}, {"min", 60e12}, {"h", 3600e12},
};

constexpr Unit kSizeUnits[] = {
    {"B", 1}, {"KB", 1e3}, {"kB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
    {"KiB", 1024.0L}, {"MiB", 1048576.0L}, {"GiB", 1073741824.0L}, {"TiB", 1099511627776.0L},
};

// Picks the largest unit that divides the value exactly, so that formatting then parsing gives the same integer.
template <size_t N>
std::string format_exact(int64_t value, const std::pair<std::string_view, int64_t> (&units)[N]) {
    for (const auto& [suffix, scale] : units)
        if (value != 0 && value % scale == 0) return std::to_string(value / scale) + std::string(suffix);
    return std::to_string(value) + std::string(units[N - 1].first);
}

std::string format_scaled(long double value, std::string_view unit) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4Lg %s", value, std::string(unit).c_str());
    return buf;
}

}  // namespace

std::optional<BitsPerSecond> parse_rate(std::string_view text, std::string* why) {
    return parse_with<BitsPerSecond>(text, kRateUnits, "rate", "\"100Gbps\" or \"400Gb/s\"", why, false, 0);
}

std::optional<Picoseconds> parse_time(std::string_view text, bool allow_unitless_seconds, std::string* why) {
    return parse_with<Picoseconds>(text, kTimeUnits, "time", "\"1us\" or \"1000ns\"", why, allow_unitless_seconds, 1e12);
}

std::optional<Bytes> parse_size(std::string_view text, std::string* why) {
    return parse_with<Bytes>(text, kSizeUnits, "size", "\"1000B\", \"64KB\" or \"32MiB\"", why, false, 0);
}

std::string format_rate(BitsPerSecond rate) {
    static constexpr std::pair<std::string_view, int64_t> units[] = {
        {"Tbps", 1000000000000}, {"Gbps", 1000000000}, {"Mbps", 1000000}, {"Kbps", 1000}, {"bps", 1}};
    return format_exact(rate.count, units);
}

std::string format_time(Picoseconds time) {
    static constexpr std::pair<std::string_view, int64_t> units[] = {
        {"s", 1000000000000}, {"ms", 1000000000}, {"us", 1000000}, {"ns", 1000}, {"ps", 1}};
    return format_exact(time.count, units);
}

std::string format_size(Bytes size) {
    static constexpr std::pair<std::string_view, int64_t> units[] = {
        {"GiB", 1073741824}, {"MiB", 1048576}, {"KiB", 1024}, {"B", 1}};
    if (size.count != 0 && size.count % 1000 == 0 && size.count % 1024 != 0) {
        static constexpr std::pair<std::string_view, int64_t> decimal[] = {
            {"GB", 1000000000}, {"MB", 1000000}, {"KB", 1000}, {"B", 1}};
        return format_exact(size.count, decimal);
    }
    return format_exact(size.count, units);
}

std::string describe_rate(BitsPerSecond rate) {
    long double v = rate.count;
    if (v >= 1e12) return format_scaled(v / 1e12, "Tb/s");
    if (v >= 1e9) return format_scaled(v / 1e9, "Gb/s");
    if (v >= 1e6) return format_scaled(v / 1e6, "Mb/s");
    return format_scaled(v, "b/s");
}

std::string describe_time(Picoseconds time) {
    long double v = time.count;
    if (v >= 1e12) return format_scaled(v / 1e12, "s");
    if (v >= 1e9) return format_scaled(v / 1e9, "ms");
    if (v >= 1e6) return format_scaled(v / 1e6, "us");
    if (v >= 1e3) return format_scaled(v / 1e3, "ns");
    return format_scaled(v, "ps");
}

std::string describe_size(Bytes size) {
    long double v = size.count;
    if (v >= 1073741824.0L) return format_scaled(v / 1073741824.0L, "GiB");
    if (v >= 1048576.0L) return format_scaled(v / 1048576.0L, "MiB");
    if (v >= 1024.0L) return format_scaled(v / 1024.0L, "KiB");
    return format_scaled(v, "B");
}

}  // namespace orrery
