#include "views/editors/network_editor.h"

#include <algorithm>
#include <string_view>

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHeaderView>
#include <QPushButton>
#include <QTableWidget>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QVBoxLayout>

#include "common/diagnostics.h"
#include "common/quantity.h"
#include "scenario/applicability.h"
#include "scenario/scenario.h"

namespace orrery::views {
namespace {

QString rate_text(BitsPerSecond r) { return QString::fromStdString(format_rate(r)); }
QString time_text(Picoseconds t) { return QString::fromStdString(format_time(t)); }
QString size_text(Bytes b) { return QString::fromStdString(format_size(b)); }
QString num(double v) { return QString::number(v, 'g', 10); }
QString flag(bool b) { return b ? "true" : "false"; }

// A form row shown or hidden with its label.
void show_row(QWidget* field, bool visible) {
    field->setVisible(visible);
    if (auto* form = qobject_cast<QFormLayout*>(field->parentWidget()->layout()))
        if (QWidget* label = form->labelForField(field)) label->setVisible(visible);
}

// A CC parameter's default as the form shows it, by the type of its field (net/cc_params.h).
QString param_text(BitsPerSecond r) { return rate_text(r); }
QString param_text(Picoseconds t) { return time_text(t); }
QString param_text(double v) { return num(v); }
QString param_text(int v) { return QString::number(v); }
QString param_text(bool b) { return flag(b); }

}  // namespace

const std::vector<ParameterField>& parameter_fields() {
    // Defaults are read off the engine's own structs, so the editor can never disagree with a run.
    static const std::vector<ParameterField> fields = [] {
        const CcSpec c;
        const NetworkSpec n;
        const SkippingSpec k;
        using F = ParameterField;
        std::vector<ParameterField> list{
            {"cc.min_rate", "Minimum rate", F::rate, rate_text(c.min_rate), ""},
            {"cc.rate_bound", "Pace at the QP's rate", F::boolean, flag(c.rate_bound), ""},
            {"cc.window", "Window (BDP-sized)", F::boolean, "per algorithm", ""},
            {"cc.ack_high_priority", "ACKs in the NIC's high-priority class", F::boolean, "per algorithm", ""},
            {"network.packet_payload", "Packet payload (MTU)", F::size, size_text(n.packet_payload), "net"},
            {"network.buffer_per_switch", "Buffer per switch (shared)", F::size, size_text(n.buffer_per_switch), "net"},
            {"network.ecn.enabled", "ECN marking", F::boolean, flag(n.ecn_enabled), "net"},
            {"network.pfc.enabled", "PFC (off: lossy, switches drop)", F::boolean, flag(n.pfc_enabled), "net"},
            {"network.pfc.dynamic_threshold", "PFC dynamic threshold", F::boolean, flag(n.pfc_dynamic_threshold), "net"},
            {"network.pfc.alpha_shift", "PFC threshold = free buffer >> shift", F::integer, QString::number(n.pfc_alpha_shift), "net"},
            {"network.pfc.static_threshold", "PFC static threshold (dynamic off)", F::size,
             n.pfc_static_threshold ? size_text(*n.pfc_static_threshold) : QString("even split"), "net"},
            {"network.pfc.port_reserve", "Reserved buffer per port and priority", F::size, size_text(n.pfc_port_reserve), "net"},
            {"network.pfc.resume_offset", "PFC resume offset", F::size, size_text(n.pfc_resume_offset), "net"},
            {"network.error_rate_per_link", "Packet loss probability per link", F::number, num(n.error_rate_per_link), "net"},
            {"network.flowlet_gap", "Flowlet gap", F::time, time_text(n.flowlet_gap), "net"},
            {"network.nic.retransmit_timeout", "Retransmission timeout (off: none)", F::time_or_off, "NCCL's, 4.096us × 2^20", "net"},
            {"network.routing.convergence", "Routing convergence after a failure", F::time, time_text(n.routing_convergence), "net"},
            {"skipping.enabled", "Steady-state skipping", F::boolean, flag(k.enabled), "skip"},
            {"skipping.theta", "Steady when rate spread below θ", F::number, num(k.theta), "skip"},
            {"skipping.window", "Samples per window l (3–64)", F::integer, "appendix F", "skip"},
            {"skipping.sample_interval", "Rate sampling interval", F::time, "largest base RTT", "skip"},
            {"skipping.memo", "Memoize transients", F::boolean, flag(k.memo), "skip"},
        };
        // Each congestion control's own parameters, as net/cc_params.h declares them, before the network's.
        auto at = std::find_if(list.begin(), list.end(), [](const ParameterField& f) { return f.path == "network.packet_payload"; });
        std::vector<ParameterField> cc;
#define ORRERY_CC_PARAM_ROW(name, type, member, value, kind, min, max, reference, label) \
    if (std::string_view(label).size()) cc.push_back({"cc." #name "." #member, label, F::kind, param_text(c.name.member), #name});
        ORRERY_CC_PARAMS(ORRERY_CC_PARAM_ROW)
#undef ORRERY_CC_PARAM_ROW
        list.insert(at, cc.begin(), cc.end());
        return list;
    }();
    return fields;
}

nlohmann::json parse_field(const ParameterField& f, const QString& text, QString* why) {
    const std::string t = text.trimmed().toStdString();
    std::string reason;
    switch (f.kind) {
    case ParameterField::rate:
        if (parse_rate(t, &reason)) return t;
        break;
    case ParameterField::time_or_off:
        if (t == "off") return t;
        [[fallthrough]];
    case ParameterField::time:
        if (parse_time(t, false, &reason)) return t;
        break;
    case ParameterField::size:
        if (parse_size(t, &reason)) return t;
        break;
    case ParameterField::number: {
        bool ok = false;
        const double v = text.trimmed().toDouble(&ok);
        if (ok) return v;
        reason = "expected a number";
        break;
    }
    case ParameterField::integer: {
        bool ok = false;
        const int v = text.trimmed().toInt(&ok);
        if (ok) return v;
        reason = "expected a whole number";
        break;
    }
    case ParameterField::boolean:
        if (t == "true") return true;
        if (t == "false") return false;
        reason = "expected true or false";
        break;
    }
    *why = QString::fromStdString(f.path) + " = \"" + text + "\": " + QString::fromStdString(reason);
    return nullptr;
}

QStringList NetworkEditor::take_pending_fields() {
    QStringList problems;
    for (const ParameterField& f : parameter_fields()) {
        auto e = fields_.find(f.path);
        if (e == fields_.end()) continue;
        QLineEdit* edit = e->second;
        if (edit->text() == taken_text_[f.path] && edit->styleSheet().isEmpty()) continue;
        QString why;
        if (!take_field(f, edit, &why)) problems << why;
    }
    return problems;
}

bool NetworkEditor::take_field(const ParameterField& f, QLineEdit* edit, QString* why) {
    if (edit->text().trimmed().isEmpty()) {
        taken_text_[f.path] = edit->text();
        emit_remove(QString::fromStdString(f.path));
        return true;
    }
    const nlohmann::json v = parse_field(f, edit->text(), why);
    if (v.is_null()) {
        edit->setStyleSheet("background:#fdd");
        return false;
    }
    edit->setStyleSheet("");
    taken_text_[f.path] = edit->text();
    emit_edit(QString::fromStdString(f.path), v);
    return true;
}

NetworkEditor::NetworkEditor(const PresetLibrary& presets, QWidget* parent) : ScenarioForm(parent), presets_(presets) {
    auto* cc_box = new QGroupBox("Congestion control", this);
    cc_form_ = new QFormLayout(cc_box);
    cc_preset_ = new QComboBox(cc_box);
    cc_preset_->addItem("(none: fields below)");
    for (const PresetInfo& p : presets.list("cc")) cc_preset_->addItem(QString::fromStdString(p.name));
    cc_form_->addRow("Preset", cc_preset_);
    connect(cc_preset_, &QComboBox::activated, this, [this](int i) {
        if (loading_) return;
        if (i == 0) emit_remove("cc.preset");
        else emit_edit("cc", nlohmann::json{{"preset", cc_preset_->currentText().toStdString()}});
    });
    algorithm_ = new QComboBox(cc_box);
    for (const std::string& name : cc_algorithm_names()) algorithm_->addItem(QString::fromStdString(name));
    cc_form_->addRow("Algorithm", algorithm_);
    connect(algorithm_, &QComboBox::activated, this, [this] {
        if (loading_) return;
        const QString algorithm = algorithm_->currentText();
        show_algorithm(algorithm);
        // A preset belongs to one algorithm (its name begins with it): the same tuning for the new algorithm
        // (dcqcn-100g → hpcc-100g) where there is one, else no preset, so the Preset box never names another
        // algorithm's parameters.
        const QString preset = cc_preset_->currentIndex() > 0 ? cc_preset_->currentText() : QString();
        if (!preset.isEmpty() && !preset.startsWith(algorithm + "-")) {
            const QString counterpart = algorithm + preset.mid(preset.indexOf('-'));
            if (preset.contains('-') && cc_preset_->findText(counterpart) > 0) {
                emit_edit("cc.preset", counterpart.toStdString());
                cc_preset_->setCurrentIndex(cc_preset_->findText(counterpart));
            } else {
                emit_remove("cc.preset");
                cc_preset_->setCurrentIndex(0);
            }
        }
        emit_edit("cc.algorithm", algorithm.toStdString());
    });
    // ECN marking thresholds per port rate that this CC is tuned for (cc.ecn overrides network.ecn; empty:
    // the reference's 4 KB / 16 KB per Gb/s).
    ecn_ = new QTableWidget(0, 4, cc_box);
    ecn_->setHorizontalHeaderLabels({"Port rate", "Kmin (size)", "Kmax (size)", "Pmax"});
    ecn_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    ecn_->setMinimumHeight(110);
    // Queued: committing reloads the form, which must not delete the item whose change is being signalled.
    connect(ecn_, &QTableWidget::cellChanged, this, [this] {
        if (!loading_) QMetaObject::invokeMethod(this, [this] { commit_ecn(); }, Qt::QueuedConnection);
    });
    auto* ecn_add = new QPushButton("Add rate", cc_box);
    auto* ecn_remove = new QPushButton("Remove rate", cc_box);
    connect(ecn_add, &QPushButton::clicked, this, [this] {
        loading_ = true;
        const int row = ecn_->rowCount();
        ecn_->insertRow(row);
        const QStringList defaults = {"100Gbps", "400KB", "1600KB", "0.2"};
        for (int c = 0; c < 4; ++c) ecn_->setItem(row, c, new QTableWidgetItem(defaults[c]));
        loading_ = false;
        commit_ecn();
    });
    connect(ecn_remove, &QPushButton::clicked, this, [this] {
        if (ecn_->currentRow() < 0) return;
        ecn_->removeRow(ecn_->currentRow());
        commit_ecn();
    });
    auto* ecn_buttons = new QHBoxLayout;
    ecn_buttons->addWidget(ecn_add);
    ecn_buttons->addWidget(ecn_remove);
    auto* net_box = new QGroupBox("Network: buffers, ECN, PFC, routing", this);
    auto* net_form = new QFormLayout(net_box);
    load_balancing_ = new QComboBox(net_box);
    load_balancing_->addItems({"ecmp", "spray", "adaptive", "flowlet"});
    load_balancing_->setToolTip("ecmp: one path per flow (hash of its 5-tuple); spray: a port drawn per packet; adaptive: the least-loaded "
                                "port per packet; flowlet: the least-loaded port again after a silence of the flowlet gap");
    net_form->addRow("Load balancing", load_balancing_);
    connect(load_balancing_, &QComboBox::activated, this, [this] {
        if (loading_) return;
        const QString lb = load_balancing_->currentText();
        // The gap is refused by any other mode: it goes with flowlet switching.
        if (lb != "flowlet" && !fields_["network.flowlet_gap"]->text().isEmpty()) emit_remove("network.flowlet_gap");
        emit_edit("network.load_balancing", lb.toStdString());
    });
    // A choice that writes its scenario key as picked (its first item is the key's default: load()).
    auto key_choice = [&](const char* label, const char* path, const QStringList& items, const QString& tip) {
        auto* c = new QComboBox(net_box);
        c->addItems(items);
        c->setToolTip(tip);
        net_form->addRow(label, c);
        connect(c, &QComboBox::activated, this, [this, c, path] {
            if (!loading_) emit_edit(path, c->currentText().toStdString());
        });
        key_choices_.push_back({c, path});
        rows_[path] = c;  // greyed, as the fields are, where the job's mode does not honour it
        return c;
    };
    delivery_ = key_choice("NIC delivery", "network.nic.delivery", {"in_order", "out_of_order"},
                           "in_order: go-back-N, the reference's RoCE NIC; out_of_order: the NIC places packets by sequence "
                           "and resends only the holes it is told of (RoCE with out-of-order placement, Ultra Ethernet)");
    weights_ = key_choice("Routing weights", "network.routing.weights", {"equal", "capacity"},
                          "equal: every equal-cost next hop alike (the reference's ECMP); capacity: each weighted by the capacity it leads to "
                          "(mixed-rate uplinks, a fabric with failed links), for ecmp and spray");
    ack_queue_ = key_choice("ACKs at switches", "network.ack.switch_queue", {"data", "control"},
                            "data: ACKs and NACKs travel in the class of the data they acknowledge, counted in its PFC buffer (the "
                            "reference); control: in queue 0, strict priority, never paused and outside the buffer, as a fabric that "
                            "gives RoCE ACKs their own class. With data, a NIC that sends high-priority ACKs while paused can overflow "
                            "its leaf's headroom: packets drop on a lossless fabric");
    auto* skip_box = new QGroupBox("Steady-state skipping (Wormhole)", this);
    auto* skip_form = new QFormLayout(skip_box);

    for (const ParameterField& f : parameter_fields()) {
        QFormLayout* form = f.algorithm == "net" ? net_form : f.algorithm == "skip" ? skip_form : cc_form_;
        QWidget* w;
        if (f.kind == ParameterField::boolean && f.default_text != "per algorithm") {
            auto* c = new QCheckBox(this);
            checks_[f.path] = c;
            connect(c, &QCheckBox::toggled, this, [this, path = f.path](bool on) {
                if (!loading_) emit_edit(QString::fromStdString(path), on);
            });
            w = c;
        } else if (f.kind == ParameterField::boolean) {
            // Three states: the algorithm's own default (the key absent), on, off.
            auto* c = new QComboBox(this);
            c->addItems({"the algorithm's default", "on", "off"});
            c->setToolTip(QString::fromStdString(f.path) + ": left out, each algorithm uses its own default");
            choices_[f.path] = c;
            connect(c, &QComboBox::activated, this, [this, path = f.path](int i) {
                if (loading_) return;
                if (i == 0) emit_remove(QString::fromStdString(path));
                else emit_edit(QString::fromStdString(path), i == 1);
            });
            w = c;
        } else {
            auto* e = new QLineEdit(this);
            e->setPlaceholderText("default " + f.default_text);
            e->setToolTip(QString::fromStdString(f.path) + ": empty = default (" + f.default_text + ")");
            fields_[f.path] = e;
            connect(e, &QLineEdit::editingFinished, this, [this, e, &f] {
                if (loading_) return;
                QString why;
                if (!take_field(f, e, &why)) emit message(why);
            });
            w = e;
        }
        const QString unit = f.kind == ParameterField::rate ? " (rate)" : f.kind == ParameterField::time ? " (time)" : f.kind == ParameterField::time_or_off ? " (time or off)" : f.kind == ParameterField::size ? " (size)" : "";
        form->addRow(f.label + unit, w);
        rows_[f.path] = w;
    }
    cc_form_->addRow("ECN thresholds", ecn_);
    cc_form_->addRow("", ecn_buttons);
    auto* right = new QVBoxLayout;
    right->addWidget(net_box);
    right->addWidget(skip_box);
    right->addStretch();
    auto* inner = new QWidget(this);
    auto* h = new QHBoxLayout(inner);
    h->addWidget(cc_box, 1);
    h->addLayout(right, 1);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(inner);
    scroll->setWidgetResizable(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    mode_note_ = new QLabel(this);
    mode_note_->setWordWrap(true);
    mode_note_->setStyleSheet("background:#fff4d6; padding:6px;");
    mode_note_->hide();
    layout->addWidget(mode_note_);
    layout->addWidget(scroll);
}

void NetworkEditor::show_applicability(const nlohmann::json& resolved) {
    // The one table validate and run consult: fields the job's mode does not honour are greyed, their labels
    // say why, and a line above the form names the mode.
    const std::optional<TimingMode> mode = timing_mode_of(resolved);
    bool any = false;
    for (const auto& [path, w] : rows_) {
        const std::string note = mode ? applicability_note(path, *mode) : "";
        QWidget* label = nullptr;
        for (QFormLayout* form : findChildren<QFormLayout*>())
            if (QWidget* l = form->labelForField(w)) label = l;
        if (label) {
            label->setEnabled(note.empty());
            label->setToolTip(QString::fromStdString(note));
        }
        any |= !note.empty();
    }
    if (any) {
        mode_note_->setText("This job is timed " + QString::fromStdString(timing_mode_phrase(*mode)) +
                            ": the greyed settings have no effect there (their labels' tooltips say why); validate and run warn of them.");
        mode_note_->show();
    } else {
        mode_note_->hide();
    }
}

QString NetworkEditor::applicability_of_field(const std::string& path) const {
    auto it = rows_.find(path);
    if (it == rows_.end()) return {};
    for (QFormLayout* form : findChildren<QFormLayout*>())
        if (QWidget* l = form->labelForField(it->second)) return l->toolTip();
    return {};
}

QString NetworkEditor::mode_note() const { return mode_note_->isHidden() ? QString() : mode_note_->text(); }

QLineEdit* NetworkEditor::field(const std::string& path) const {
    auto it = fields_.find(path);
    return it == fields_.end() ? nullptr : it->second;
}

void NetworkEditor::commit_ecn() {
    nlohmann::json list = nlohmann::json::array();
    const ParameterField rate{"cc.ecn.rate", "", ParameterField::rate, "", ""}, size{"cc.ecn.kmin", "", ParameterField::size, "", ""},
        pmax{"cc.ecn.pmax", "", ParameterField::number, "", ""};
    for (int r = 0; r < ecn_->rowCount(); ++r) {
        auto cell = [&](int c) { return ecn_->item(r, c) ? ecn_->item(r, c)->text() : QString(); };
        QString why;
        const nlohmann::json v[4] = {parse_field(rate, cell(0), &why), parse_field(size, cell(1), &why), parse_field(size, cell(2), &why),
                                     parse_field(pmax, cell(3), &why)};
        for (const nlohmann::json& x : v)
            if (x.is_null()) {
                emit message(QString("ECN thresholds row %1: ").arg(r + 1) + why);
                return;
            }
        list.push_back({{"rate", v[0]}, {"kmin", v[1]}, {"kmax", v[2]}, {"pmax", v[3]}});
    }
    if (list.empty()) emit_remove("cc.ecn");
    else emit_edit("cc.ecn", list);
}

void NetworkEditor::show_algorithm(const QString& algorithm) {
    for (const ParameterField& f : parameter_fields()) {
        if (f.algorithm.isEmpty() || f.algorithm == "net" || f.algorithm == "skip") continue;
        const bool visible = f.algorithm == algorithm;
        rows_[f.path]->setVisible(visible);
        if (QWidget* label = cc_form_->labelForField(rows_[f.path])) label->setVisible(visible);
    }
}

void NetworkEditor::load(const nlohmann::json& doc) {
    loading_ = true;
    Diagnostics diags;
    nlohmann::json resolved = resolve_presets(doc, presets_, "scenario", diags);
    if (resolved.is_null()) resolved = doc;
    const nlohmann::json preset = json_at(doc, "cc.preset");
    cc_preset_->setCurrentIndex(preset.is_string() ? std::max(0, cc_preset_->findText(QString::fromStdString(preset.get<std::string>()))) : 0);
    const nlohmann::json algo = json_at(resolved, "cc.algorithm");
    algorithm_->setCurrentText(algo.is_string() ? QString::fromStdString(algo.get<std::string>()) : "dcqcn");
    const nlohmann::json lb = json_at(resolved, "network.load_balancing");
    load_balancing_->setCurrentText(lb.is_string() ? QString::fromStdString(lb.get<std::string>()) : "ecmp");
    show_row(rows_["network.flowlet_gap"], load_balancing_->currentText() == "flowlet");
    for (const auto& [choice, path] : key_choices_) {
        const nlohmann::json v = json_at(resolved, path);
        choice->setCurrentIndex(v.is_string() ? std::max(0, choice->findText(QString::fromStdString(v.get<std::string>()))) : 0);
    }
    for (const ParameterField& f : parameter_fields()) {
        const nlohmann::json v = json_at(resolved, f.path);
        if (auto c = checks_.find(f.path); c != checks_.end()) {
            c->second->setChecked(v.is_boolean() ? v.get<bool>() : f.default_text == "true");
        } else if (auto k = choices_.find(f.path); k != choices_.end()) {
            k->second->setCurrentIndex(v.is_boolean() ? (v.get<bool>() ? 1 : 2) : 0);
        } else if (auto e = fields_.find(f.path); e != fields_.end()) {
            e->second->setText(v.is_null() ? QString() : v.is_string() ? QString::fromStdString(v.get<std::string>()) : QString::fromStdString(v.dump()));
            e->second->setStyleSheet("");
            taken_text_[f.path] = e->second->text();
        }
    }
    ecn_->setRowCount(0);
    const nlohmann::json ecn = json_at(resolved, "cc.ecn");
    if (ecn.is_array())
        for (const nlohmann::json& t : ecn) {
            const int row = ecn_->rowCount();
            ecn_->insertRow(row);
            int c = 0;
            for (const char* key : {"rate", "kmin", "kmax", "pmax"}) {
                const nlohmann::json v = t.contains(key) ? t[key] : nlohmann::json();
                ecn_->setItem(row, c++, new QTableWidgetItem(QString::fromStdString(v.is_string() ? v.get<std::string>() : v.dump())));
            }
        }
    show_algorithm(algorithm_->currentText());
    show_applicability(resolved);
    loading_ = false;
}

}  // namespace orrery::views
