#pragma once
// The Inspector timeline's colours and the legend drawn above it, from one table: a span's colour is its
// entry's, so the legend cannot disagree with the spans. Plain data (tested without OpenGL).
#include <array>
#include <cstdint>
#include <string>

namespace orrery::views {

struct SpanStyle {
    const char* label;
    uint8_t r, g, b;
};

inline constexpr std::array<SpanStyle, 8> kSpanLegend = {{
    {"forward", 80, 140, 230},
    {"backward", 90, 190, 110},
    {"optimizer", 150, 150, 150},
    {"TP collective", 240, 150, 50},
    {"PP send/receive", 180, 110, 220},
    {"DP collective", 230, 80, 80},
    {"EP all-to-all", 60, 200, 200},
    {"embedding grad sync", 200, 170, 60},
}};

// The legend entry of a span of `stream` ("compute", "tp", "pp", "dp", "ep", "embedding") and `kind` (for compute:
// "forward", "backward", "optimizer", ...).
inline const SpanStyle& span_style(const std::string& stream, const std::string& kind) {
    if (stream == "compute") return kind == "forward" ? kSpanLegend[0] : kind == "optimizer" ? kSpanLegend[2] : kSpanLegend[1];
    if (stream == "tp") return kSpanLegend[3];
    if (stream == "pp") return kSpanLegend[4];
    if (stream == "dp") return kSpanLegend[5];
    if (stream == "embedding") return kSpanLegend[7];
    return kSpanLegend[6];
}

}  // namespace orrery::views
