#include "views/run/inspector_view.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <QVBoxLayout>
#include <imgui.h>

#include "views/run/inspector_labels.h"
#include "views/run/timeline_legend.h"
#include "views/topology/job_marks.h"

namespace orrery::views {
namespace {

struct Line {
    const Series* series;
    ImU32 color;
    const char* name;
};

void plot(InspectorState& st, const char* id, const std::vector<Line>& lines, const char* unit, float height, const std::vector<SkipBand>& bands);

// Each switch tier's uplinks: a bar per uplink for the latest sample interval (imbalance at a glance), the
// busiest and the mean over time; then what the fabric lost and resent so far.
void uplinks(InspectorState& st, const ExperimentTelemetry& e, const std::vector<SkipBand>& bands) {
    int tiers = 0;
    for (const auto& now : e.uplinks_now) tiers += !now.empty();
    if (tiers == 0) {
        ImGui::TextWrapped("No uplink samples: they are taken with the queue samples (output.record: queues), at packet level.");
        return;
    }
    const float h = std::max(70.0f, (ImGui::GetContentRegionAvail().y - 40 * float(tiers) - 30) / float(2 * tiers + 1));
    for (size_t t = 0; t < e.uplinks_now.size(); ++t) {
        const std::vector<float>& now = e.uplinks_now[t];
        if (now.empty()) continue;
        float busiest = 0, sum = 0;
        for (float u : now) busiest = std::max(busiest, u), sum += u;
        ImGui::Text("Tier %zu to %zu uplinks (%zu): busiest %.0f %%, mean %.0f %% over the interval to %s", t + 1, t + 2, now.size(), busiest * 100,
                    sum / float(now.size()) * 100, time_label(e.uplinks_at).c_str());
        const std::string id = "##uplinks" + std::to_string(t);
        ImGui::PlotHistogram(id.c_str(), now.data(), int(now.size()), 0, nullptr, 0.0f, 1.0f, ImVec2(ImGui::GetContentRegionAvail().x, h));
        plot(st, ("uplink-time" + std::to_string(t)).c_str(),
             {{&e.uplink_busiest[t], IM_COL32(240, 90, 90, 255), "busiest"}, {&e.uplink_mean[t], IM_COL32(90, 200, 120, 255), "mean"}}, "", h, bands);
    }
    const double timeouts = e.timeouts.v.empty() ? 0 : e.timeouts.v.back();
    ImGui::Text("Lost and resent so far, packets (retransmission timeouts: %.0f)", timeouts);
    plot(st, "losses",
         {{&e.drops, IM_COL32(240, 190, 70, 255), "dropped"}, {&e.lost_to_failures, IM_COL32(240, 90, 90, 255), "lost to failures"},
          {&e.retransmits, IM_COL32(90, 160, 240, 255), "resent"}},
         "", h, bands);
}

// One plot: every line downsampled to min/max per pixel column, skips shaded, wheel zooms at the cursor,
// dragging pans. Returns nothing: interaction changes the state's window.
void plot(InspectorState& st, const char* id, const std::vector<Line>& lines, const char* unit, float height, const std::vector<SkipBand>& bands) {
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float width = std::max(50.0f, ImGui::GetContentRegionAvail().x);
    const float left = 70;  // y labels
    ImGui::InvisibleButton(id, ImVec2(width, height));
    const bool hovered = ImGui::IsItemHovered();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 p0(origin.x + left, origin.y), p1(origin.x + width, origin.y + height - 16);
    dl->AddRectFilled(p0, p1, IM_COL32(25, 25, 30, 255));
    const double t0 = st.t0(), t1 = st.t1();
    const int columns = std::max(1, int(p1.x - p0.x));
    auto x_of = [&](double t) { return float(p0.x + (t - t0) / (t1 - t0) * (p1.x - p0.x)); };
    for (const SkipBand& b : bands) {
        if (b.end < t0 || b.start > t1) continue;
        dl->AddRectFilled(ImVec2(std::max(p0.x, x_of(b.start)), p0.y), ImVec2(std::min(p1.x, std::max(x_of(b.end), x_of(b.start) + 1)), p1.y),
                          IM_COL32(230, 200, 60, 45));
    }
    std::vector<std::vector<ColumnRange>> cols;
    double top = 0;
    for (const Line& l : lines) {
        cols.push_back(downsample(*l.series, t0, t1, columns));
        for (const ColumnRange& c : cols.back())
            if (c.count) top = std::max(top, c.hi);
    }
    if (top <= 0) top = 1;
    auto y_of = [&](double v) { return float(p1.y - v / top * (p1.y - p0.y - 4)); };
    for (size_t i = 0; i < lines.size(); ++i) {
        float prev_x = -1, prev_y = 0;
        for (int c = 0; c < columns; ++c) {
            const ColumnRange& r = cols[i][size_t(c)];
            if (!r.count) continue;
            const float x = p0.x + float(c) + 0.5f;
            dl->AddLine(ImVec2(x, y_of(r.lo)), ImVec2(x, y_of(r.hi) - 0.5f), lines[i].color);
            const float mid = (y_of(r.lo) + y_of(r.hi)) / 2;
            if (prev_x >= 0) dl->AddLine(ImVec2(prev_x, prev_y), ImVec2(x, mid), lines[i].color);
            prev_x = x;
            prev_y = mid;
        }
    }
    dl->AddText(ImVec2(origin.x, p0.y), IM_COL32(200, 200, 200, 255), value_label(top, unit).c_str());
    dl->AddText(ImVec2(origin.x, p1.y - 14), IM_COL32(200, 200, 200, 255), value_label(0, unit).c_str());
    dl->AddText(ImVec2(p0.x, p1.y + 1), IM_COL32(200, 200, 200, 255), time_label(t0).c_str());
    const std::string end = time_label(t1);
    dl->AddText(ImVec2(p1.x - ImGui::CalcTextSize(end.c_str()).x, p1.y + 1), IM_COL32(200, 200, 200, 255), end.c_str());
    float lx = p0.x + 120;
    for (const Line& l : lines) {
        dl->AddText(ImVec2(lx, p1.y + 1), l.color, l.name);
        lx += ImGui::CalcTextSize(l.name).x + 14;
    }
    if (hovered) {
        ImGuiIO& io = ImGui::GetIO();
        const double t = t0 + (io.MousePos.x - p0.x) / (p1.x - p0.x) * (t1 - t0);
        if (io.MouseWheel != 0) st.zoom_at(t, std::pow(0.8, io.MouseWheel));
        if (ImGui::IsMouseDragging(ImGuiMouseButton_Left)) {
            st.pan(-io.MouseDelta.x / (p1.x - p0.x));
        }
        ImGui::SetTooltip("%s", time_label(t).c_str());
    }
}

ImU32 color_of(const SpanStyle& style) { return IM_COL32(style.r, style.g, style.b, 255); }

ImU32 span_color(const Span& s) { return color_of(span_style(s.stream, s.kind)); }

// One line of coloured squares and names above the timeline, and the shading of skipped spans.
void timeline_legend() {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    for (const SpanStyle& style : kSpanLegend) {
        const ImVec2 p = ImGui::GetCursorScreenPos();
        dl->AddRectFilled(ImVec2(p.x, p.y + 3), ImVec2(p.x + 10, p.y + 13), color_of(style));
        ImGui::Dummy(ImVec2(12, 14));
        ImGui::SameLine();
        ImGui::TextUnformatted(style.label);
        ImGui::SameLine(0, 14);
    }
    const ImVec2 p = ImGui::GetCursorScreenPos();
    dl->AddRectFilled(ImVec2(p.x, p.y + 3), ImVec2(p.x + 10, p.y + 13), IM_COL32(230, 200, 60, 110));
    ImGui::Dummy(ImVec2(12, 14));
    ImGui::SameLine();
    ImGui::TextUnformatted("skipped (steady state)");
}

// The time ruler across the top of the timeline: ticks at round times, labelled, with faint lines down
// through every rank's row.
void time_ruler(ImDrawList* dl, float x0, float x1, float top, float bottom, float height, double t0, double t1) {
    const int count = std::max(2, int((x1 - x0) / 110));
    const std::vector<double> ticks = ruler_ticks(t0, t1, count);
    const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : t1 - t0;
    dl->AddLine(ImVec2(x0, top + height - 1), ImVec2(x1, top + height - 1), IM_COL32(120, 120, 130, 255));
    for (double t : ticks) {
        const float x = float(x0 + (t - t0) / (t1 - t0) * (x1 - x0));
        if (x < x0 || x > x1) continue;
        dl->AddLine(ImVec2(x, top + height - 6), ImVec2(x, top + height - 1), IM_COL32(200, 200, 200, 255));
        dl->AddLine(ImVec2(x, top + height), ImVec2(x, bottom), IM_COL32(255, 255, 255, 18));
        const std::string label = ruler_label(t, step);
        const float w = ImGui::CalcTextSize(label.c_str()).x;
        dl->AddText(ImVec2(std::min(x1 - w, std::max(x0, x - w / 2)), top), IM_COL32(200, 200, 200, 255), label.c_str());
    }
}

void timeline(InspectorState& st, const ExperimentTelemetry& e, const std::vector<SkipBand>& bands) {
    int ranks = 0;
    for (const Span& s : e.spans) ranks = std::max(ranks, s.rank + 1);
    if (ranks == 0) {
        ImGui::TextWrapped("No timeline yet: spans appear as their tasks finish, written every output.sample_interval of simulated time "
                           "(flow-only scenarios have none).");
        return;
    }
    timeline_legend();
    const float row = 18, lane = 7, left = 60, ruler = 20;
    const float details = st.selected ? 90.0f : 0.0f;
    ImGui::BeginChild("timeline", ImVec2(0, -details), false);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float width = std::max(100.0f, ImGui::GetContentRegionAvail().x);
    ImGui::InvisibleButton("spans", ImVec2(width, ruler + row * ranks + 4));
    const bool hovered = ImGui::IsItemHovered();
    const bool clicked = ImGui::IsItemClicked(ImGuiMouseButton_Left);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float x0 = origin.x + left, x1 = origin.x + width, rows_top = origin.y + ruler;
    const double t0 = st.t0(), t1 = st.t1();
    auto x_of = [&](double t) { return float(x0 + (t - t0) / (t1 - t0) * (x1 - x0)); };
    for (const SkipBand& b : bands)
        if (b.end >= t0 && b.start <= t1)
            dl->AddRectFilled(ImVec2(std::max(x0, x_of(b.start)), rows_top), ImVec2(std::min(x1, std::max(x_of(b.end), x_of(b.start) + 1)), rows_top + row * ranks),
                              IM_COL32(230, 200, 60, 35));
    time_ruler(dl, x0, x1, origin.y, rows_top + row * ranks, ruler, t0, t1);
    // A mix of jobs: each row named for its job and its rank there, in the job's colour (as on the canvas), a line
    // between jobs.
    const std::vector<RankRow> rows = rank_rows(e.spans, ranks, e.job_names);
    for (int r = 0; r < ranks; ++r) {
        const RankRow& rr = rows[size_t(r)];
        const QColor c = rr.job >= 0 ? job_color(rr.job) : QColor(200, 200, 200);
        dl->AddText(ImVec2(origin.x, rows_top + r * row + 2), IM_COL32(c.red(), c.green(), c.blue(), 255), rr.label.c_str());
        if (r > 0 && rr.job != rows[size_t(r) - 1].job)
            dl->AddLine(ImVec2(origin.x, rows_top + r * row), ImVec2(x1, rows_top + r * row), IM_COL32(c.red(), c.green(), c.blue(), 160));
    }
    for (const Span& s : e.spans) {
        if (s.end < t0 || s.start > t1) continue;
        const float y = rows_top + s.rank * row + (s.stream == "compute" ? 1 : lane + 2);
        const float a = std::max(x0, x_of(s.start)), b = std::min(x1, std::max(x_of(s.end), a + 1));
        dl->AddRectFilled(ImVec2(a, y), ImVec2(b, y + lane), span_color(s));
    }
    if (hovered) {
        ImGuiIO& io = ImGui::GetIO();
        const double t = t0 + (io.MousePos.x - x0) / (x1 - x0) * (t1 - t0);
        if (io.MouseWheel != 0) st.zoom_at(t, std::pow(0.8, io.MouseWheel));
        if (ImGui::IsMouseDragging(ImGuiMouseButton_Left)) st.pan(-io.MouseDelta.x / (x1 - x0));
        const float y = io.MousePos.y - rows_top;
        // Within a pixel of a span counts as on it: at a wide window a short span is narrower than a pixel.
        const double slack = (t1 - t0) / std::max(1.0f, x1 - x0);
        std::optional<Span> under;
        if (y >= 0 && io.MousePos.x >= x0) {
            const int rank = int(y / row);
            const bool comm = std::fmod(y, row) > lane + 1;
            under = st.span_at(rank, t, comm, slack);
            if (clicked) st.selected = under;
        }
        if (under) ImGui::SetTooltip("%s", span_description(*under).c_str());
        else ImGui::SetTooltip("%s", time_label(t).c_str());
    }
    ImGui::EndChild();
    if (st.selected) {
        ImGui::Separator();
        ImGui::TextUnformatted(span_description(*st.selected).c_str());
    }
}

}  // namespace

InspectorView::InspectorView(QWidget* parent) : QWidget(parent) {
    canvas_ = new ImGuiWidget(this);
    canvas_->draw = [this] { draw(); };
    canvas_->on_key = [this](int k) { return key(k); };
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(canvas_);
}

void InspectorView::add(const TelemetryChunk& chunk) {
    state_.add(chunk);
    canvas_->request_frames();  // drawn on demand: new data is a change
}

bool InspectorView::key(int k) {
    canvas_->request_frames();
    const double mid = (state_.t0() + state_.t1()) / 2;
    switch (k) {
    case Qt::Key_W: state_.zoom_at(mid, 0.8); return true;
    case Qt::Key_S: state_.zoom_at(mid, 1.25); return true;
    case Qt::Key_A: state_.pan(-0.1); return true;
    case Qt::Key_D: state_.pan(0.1); return true;
    default: return false;
    }
}

void InspectorView::draw() {
    const ImGuiIO& io = ImGui::GetIO();
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(io.DisplaySize);
    ImGui::Begin("inspector", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoBringToFrontOnFocus);
    InspectorState& st = state_;
    if (st.experiments().empty()) {
        ImGui::TextWrapped("Run a scenario (Run > Run, F5) or open a run in the Results view: queue occupancy, flow rates and the iteration "
                           "timeline of every rank appear here as the engine writes them.");
        ImGui::End();
        return;
    }
    ImGui::SetNextItemWidth(110);
    if (ImGui::BeginCombo("##experiment", st.shown_id().c_str())) {
        for (const auto& [id, e] : st.experiments())
            if (ImGui::Selectable((id + "  " + e.status).c_str(), id == st.shown_id())) st.show(id);
        ImGui::EndCombo();
    }
    ImGui::SameLine();
    bool pinned = st.pinned();
    if (ImGui::Checkbox("Pin", &pinned)) st.pin(pinned);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Pinned: keep showing this experiment.\nUnpinned: follow the sweep, showing each experiment as it starts running.");
    ImGui::SameLine();
    bool paused = st.paused();
    if (ImGui::Checkbox("Pause", &paused)) st.set_paused(paused);
    ImGui::SameLine();
    if (ImGui::Button("Whole run")) st.whole_run();
    ImGui::SameLine();
    if (ImGui::Button(st.following() ? "Following" : "Follow")) st.follow();
    ImGui::SameLine();
    ImGui::TextDisabled("%s to %s%s   W/S zoom, A/D pan, wheel zooms at the cursor", time_label(st.t0()).c_str(), time_label(st.t1()).c_str(),
                        st.paused() ? QString(" (paused, %1 updates waiting)").arg(st.pending_chunks()).toUtf8().constData() : "");
    const ExperimentTelemetry* e = st.shown();
    if (!e) {
        ImGui::End();
        return;
    }
    const std::vector<SkipBand> bands = merge_bands(e->skips);
    if (!bands.empty()) {
        double skipped = 0;
        for (const SkipBand& b : bands) skipped += b.end - b.start;
        ImGui::TextColored(ImVec4(0.9f, 0.8f, 0.3f, 1), "Shaded: steady-state skipping froze some flows there (%zu spans, %s): rates and queues show the frozen state.",
                           e->skips.size(), time_label(skipped).c_str());
    }
    if (ImGui::BeginTabBar("views")) {
        if (ImGui::BeginTabItem("Queues", nullptr, st.tab_request == 0 ? ImGuiTabItemFlags_SetSelected : 0)) {
            const float h = std::max(90.0f, (ImGui::GetContentRegionAvail().y - 10) / (e->ports.empty() ? 3.0f : 4.0f));
            const ImU32 colors[3] = {IM_COL32(240, 90, 90, 255), IM_COL32(240, 190, 70, 255), IM_COL32(90, 200, 120, 255)};
            for (int tier = 0; tier < 3; ++tier) {
                if (e->tier_max[size_t(tier)].t.empty()) continue;
                ImGui::Text("Tier %d switch egress queues (bytes)", tier + 1);
                plot(st, ("tier" + std::to_string(tier)).c_str(),
                     {{&e->tier_max[size_t(tier)], colors[0], "max"}, {&e->tier_p99[size_t(tier)], colors[1], "p99"}, {&e->tier_median[size_t(tier)], colors[2], "median"}},
                     "B", h, bands);
            }
            if (!e->ports.empty()) {
                ImGui::Text("Ports of the switches picked on the topology (bytes)");
                std::vector<Line> lines;
                static const ImU32 palette[] = {IM_COL32(230, 120, 60, 255), IM_COL32(90, 160, 240, 255), IM_COL32(120, 220, 120, 255), IM_COL32(220, 100, 220, 255),
                                                IM_COL32(240, 220, 80, 255), IM_COL32(80, 220, 220, 255), IM_COL32(240, 140, 160, 255), IM_COL32(180, 180, 180, 255)};
                std::vector<std::string> names;
                for (const auto& [port, s] : e->ports) {
                    std::string name = "n";  // appended piece by piece: "n" + to_string(...) trips GCC 12's -Wrestrict
                    name += std::to_string(port.first);
                    name += " if";
                    name += std::to_string(port.second);
                    names.push_back(std::move(name));
                }
                size_t i = 0;
                for (const auto& [port, s] : e->ports) {
                    lines.push_back({&s, palette[i % 8], names[i].c_str()});
                    if (++i == 8) break;
                }
                plot(st, "ports", lines, "B", h, bands);
            }
            if (e->tier_max[0].t.empty() && e->ports.empty()) ImGui::TextWrapped("%s", st.no_queue_samples_text());
            ImGui::EndTabItem();
        }
        if (ImGui::BeginTabItem("Flow rates", nullptr, st.tab_request == 1 ? ImGuiTabItemFlags_SetSelected : 0)) {
            const float h = std::max(90.0f, (ImGui::GetContentRegionAvail().y - 30) / 2);
            ImGui::Text("Sending rate summed over active flows (b/s)");
            plot(st, "rate", {{&e->total_rate, IM_COL32(90, 160, 240, 255), "total"}}, "b/s", h, bands);
            ImGui::Text("Active flows");
            plot(st, "active", {{&e->active_flows, IM_COL32(200, 200, 120, 255), "flows"}}, "", h, bands);
            ImGui::EndTabItem();
        }
        if (ImGui::BeginTabItem("Timeline", nullptr, st.tab_request == 2 ? ImGuiTabItemFlags_SetSelected : 0)) {
            timeline(st, *e, bands);
            ImGui::EndTabItem();
        }
        if (ImGui::BeginTabItem("Uplinks", nullptr, st.tab_request == 3 ? ImGuiTabItemFlags_SetSelected : 0)) {
            uplinks(st, *e, bands);
            ImGui::EndTabItem();
        }
        ImGui::EndTabBar();
        st.tab_request = -1;
    }
    ImGui::End();
}

}  // namespace orrery::views
