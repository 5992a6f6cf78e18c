#pragma once
// Parsing and printing of quantities with units, in the syntax this field already writes:
// ns-3 DataRate strings ("100Gbps", "1000Mb/s", "900GBps") and Time strings ("1000ns", "0.001ms", "2.5us").
#include <optional>
#include <string>
#include <string_view>

#include "common/units.h"

namespace orrery {

// Each parser returns nullopt and fills `why` when the text is not a valid quantity.
std::optional<BitsPerSecond> parse_rate(std::string_view text, std::string* why = nullptr);
// allow_unitless_seconds: ns-3 reads a bare number as seconds; Orrery scenarios demand a unit.
std::optional<Picoseconds> parse_time(std::string_view text, bool allow_unitless_seconds, std::string* why = nullptr);
std::optional<Bytes> parse_size(std::string_view text, std::string* why = nullptr);

// Exact, compact, re-parseable forms: "100Gbps", "1us", "1000ns", "32MiB".
std::string format_rate(BitsPerSecond rate);
std::string format_time(Picoseconds time);
std::string format_size(Bytes size);
// Human forms for reports: "100 Gb/s", "1.5 us", "32 MiB".
std::string describe_rate(BitsPerSecond rate);
std::string describe_time(Picoseconds time);
std::string describe_size(Bytes size);

}  // namespace orrery
