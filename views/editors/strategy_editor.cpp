#include "views/editors/strategy_editor.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include "common/diagnostics.h"
#include "workload/tables.h"

namespace orrery::views {
namespace {

QString gib(double bytes) { return QString::number(bytes / double(1ull << 30), 'f', 2) + " GiB"; }

}  // namespace

StrategyEditor::StrategyEditor(const PresetLibrary& presets, QWidget* parent) : ScenarioForm(parent), presets_(presets) {
    auto* model_box = new QGroupBox("Model", this);
    auto* mf = new QFormLayout(model_box);
    model_preset_ = new QComboBox(model_box);
    for (const PresetInfo& p : presets.list("model")) model_preset_->addItem(QString::fromStdString(p.name));
    model_preset_->setToolTip("presets/models/: choosing one replaces the model's fields");
    mf->addRow("Preset", model_preset_);
    connect(model_preset_, &QComboBox::activated, this, [this] {
        if (!loading_) emit_edit(key("model"), nlohmann::json{{"preset", model_preset_->currentText().toStdString()}});
    });
    const std::vector<std::tuple<std::string, QString, int, int, QString>> model_rows = {
        {"layers", "Layers", 1, 1000, ""},          {"hidden", "Hidden size", 64, 1 << 20, ""}, {"heads", "Attention heads", 1, 1024, ""},
        {"ffn", "MLP size", 64, 1 << 22, ""},      {"seq", "Sequence length", 1, 1 << 20, " tokens"}, {"vocab", "Vocabulary", 1, 1 << 22, " tokens"},
        {"experts", "Experts (0 = dense)", 0, 1024, ""}, {"top_k", "Experts per token", 0, 64, ""}};
    for (const auto& [key, label, lo, hi, suffix] : model_rows) {
        auto* s = new QSpinBox(model_box);
        s->setObjectName(QString::fromStdString(key));
        s->setRange(lo, hi);
        s->setSuffix(suffix);
        mf->addRow(label, s);
        model_fields_[key] = s;
        connect(s, &QSpinBox::editingFinished, this, [this, key = key, s] {
            if (!loading_ && check_.job) emit_edit(this->key("model." + key), s->value());
        });
    }

    auto* par_box = new QGroupBox("Parallel strategy and GPU", this);
    auto* pf = new QFormLayout(par_box);
    gpu_ = new QComboBox(par_box);
    try {
        for (const auto& [name, spec] : load_workload_tables(presets).gpus)
            gpu_->addItem(QString("%1").arg(QString::fromStdString(name)), QString::fromStdString(name));
    } catch (const InputError&) {
    }
    pf->addRow("GPU", gpu_);
    connect(gpu_, &QComboBox::activated, this, [this] {
        if (!loading_) emit_edit(key("gpu"), gpu_->currentData().toString().toStdString());
    });
    const std::vector<std::tuple<std::string, QString, int, int>> par_rows = {
        {"tp", "TP (tensor)", 1, 1024},  {"pp", "PP (pipeline)", 1, 1024}, {"dp", "DP (data)", 1, 65536}, {"ep", "EP (expert)", 1, 1024},
        {"micro_batches", "Micro-batches per iteration", 1, 100000}, {"micro_batch_size", "Micro-batch size (sequences)", 1, 4096}};
    for (const auto& [key, label, lo, hi] : par_rows) {
        auto* s = new QSpinBox(par_box);
        s->setObjectName(QString::fromStdString(key));
        s->setRange(lo, hi);
        pf->addRow(label, s);
        parallel_fields_[key] = s;
        connect(s, &QSpinBox::editingFinished, this, [this, key = key, s] {
            if (!loading_) emit_edit(this->key("parallel." + key), s->value());
        });
    }
    sp_ = new QCheckBox("Sequence parallelism (SP)", par_box);
    recompute_ = new QCheckBox("Full activation recomputation", par_box);
    zero_ = new QComboBox(par_box);
    zero_->addItems({"0: plain data parallel", "1: optimizer states sharded", "2: + gradients sharded", "3: + parameters sharded"});
    pf->addRow("", sp_);
    pf->addRow("", recompute_);
    pf->addRow("ZeRO stage", zero_);
    connect(sp_, &QCheckBox::toggled, this, [this](bool on) {
        if (!loading_) emit_edit(key("parallel.sp"), on);
    });
    connect(recompute_, &QCheckBox::toggled, this, [this](bool on) {
        if (!loading_) emit_edit(key("parallel.recompute"), on);
    });
    connect(zero_, &QComboBox::activated, this, [this](int stage) {
        if (!loading_) emit_edit(key("parallel.zero"), stage);
    });

    auto* net_box = new QGroupBox("Network and collectives", this);
    auto* nf = new QFormLayout(net_box);
    network_mode_ = add_choice(nf, "Network", "workload.network_mode",
                               {{"Packet level (the reference model)", "packet"},
                                {"Flow level (fluid, max-min fair: fast, for sweeps)", "flow"},
                                {"α-β: contention-free bound (no sharing)", "analytic"}},
                               "Packet: every packet through queues, PFC and congestion control. Flow: every transfer a fluid flow on its ECMP path, "
                               "rates max-min fair over links and NVLink ports. α-β: each transfer alone on its path — a lower bound, not a prediction.");
    granularity_ = add_choice(nf, "Task graph", "workload.granularity",
                              {{"Automatic (lanes from 1,024 GPUs, off the packet level)", "auto"},
                               {"Every rank", "rank"},
                               {"One lane per pipeline stage (ranks in lockstep)", "stage"}},
                              "Every rank: each GPU's program and every transfer built. Lanes: each pipeline stage built once, its GPUs in step, "
                              "each collective one task over all the stage's groups — for flow and α-β runs of thousands of GPUs "
                              "(not at packet level, not with PXN).");
    channels_ = new QSpinBox(net_box);
    channels_->setObjectName("channels");
    channels_->setRange(1, 64);
    channels_->setToolTip("NCCL channels: each carries a share of the data on its own ring order, leaving a server through its own NIC");
    nf->addRow("NCCL channels", channels_);
    connect(channels_, &QSpinBox::editingFinished, this, [this] {
        if (!loading_) emit_edit(key("collectives.channels"), channels_->value());
    });
    pxn_ = new QCheckBox("PXN: cross-rail data crosses NVLink to the receiver's rail first", net_box);
    pxn_->setObjectName("pxn");
    nf->addRow("", pxn_);
    connect(pxn_, &QCheckBox::toggled, this, [this](bool on) {
        if (!loading_) emit_edit(key("collectives.pxn"), on);
    });

    auto* mem_box = new QGroupBox("Memory per GPU (per pipeline stage; every rank of a stage needs the same)", this);
    auto* ml = new QVBoxLayout(mem_box);
    table_ = new QTableWidget(0, 8, mem_box);
    table_->setHorizontalHeaderLabels({"Stage", "Parameters", "Weights", "Gradients", "Optimizer", "Activations", "Overhead", "Total / HBM"});
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    table_->verticalHeader()->hide();
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    status_ = new QLabel(mem_box);
    status_->setWordWrap(true);
    ml->addWidget(status_);
    ml->addWidget(table_);

    auto* top = new QHBoxLayout;
    top->addWidget(model_box);
    top->addWidget(par_box);
    top->addWidget(net_box);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(mem_box, 1);
}

void StrategyEditor::load(const nlohmann::json& doc, const std::filesystem::path& base_dir, size_t hosts) {
    loading_ = true;
    if (root_ == "workload") {
        check_ = check_llm_job(doc, base_dir, presets_, hosts);
    } else {  // a job of a mix, checked as one job on the GPUs its placement gives it
        nlohmann::json one = doc;
        nlohmann::json job = json_at(doc, root_.toStdString());
        if (job.is_object())
            for (const char* k : {"name", "placement", "start", "stragglers"}) job.erase(k);
        job["kind"] = "llm";
        if (const nlohmann::json mode = json_at(doc, "workload.network_mode"); !mode.is_null()) job["network_mode"] = mode;
        one["workload"] = job;
        check_ = check_llm_job(one, base_dir, presets_, 0);
    }
    const nlohmann::json model = json_at(doc, key("model").toStdString());
    if (model.is_object() && model.contains("preset") && model["preset"].is_string())
        model_preset_->setCurrentText(QString::fromStdString(model["preset"].get<std::string>()));
    if (check_.job) {
        const LlmWorkload& w = *check_.job;
        const std::map<std::string, int64_t> m = {{"layers", w.model.layers}, {"hidden", w.model.hidden}, {"heads", w.model.heads}, {"ffn", w.model.ffn},
                                                  {"seq", w.model.seq},       {"vocab", w.model.vocab},   {"experts", w.model.experts}, {"top_k", w.model.top_k}};
        for (const auto& [k, v] : m) model_fields_[k]->setValue(int(v));
        const std::map<std::string, int> p = {{"tp", w.parallel.tp}, {"pp", w.parallel.pp}, {"dp", w.parallel.dp}, {"ep", w.parallel.ep},
                                              {"micro_batches", w.parallel.micro_batches}, {"micro_batch_size", w.parallel.micro_batch_size}};
        for (const auto& [k, v] : p) parallel_fields_[k]->setValue(v);
        sp_->setChecked(w.parallel.sequence_parallel);
        recompute_->setChecked(w.parallel.recompute);
        zero_->setCurrentIndex(w.parallel.zero_stage);
        gpu_->setCurrentIndex(gpu_->findData(QString::fromStdString(w.gpu)));
        const char* mode = w.network_mode == NetworkMode::flow ? "flow" : w.network_mode == NetworkMode::analytic ? "analytic" : "packet";
        network_mode_->setCurrentIndex(network_mode_->findData(QString(mode)));
        channels_->setValue(w.collectives.channels);
        pxn_->setChecked(w.collectives.pxn);
        const char* granularity = w.granularity == Granularity::stage ? "stage" : w.granularity == Granularity::rank ? "rank" : "auto";
        granularity_->setCurrentIndex(granularity_->findData(QString(granularity)));
    }
    setEnabled(true);
    loading_ = false;
    show_check();
}

QComboBox* StrategyEditor::add_choice(QFormLayout* form, const QString& label, const QString& key,
                                      const std::vector<std::pair<QString, QString>>& items, const QString& tooltip) {
    auto* box = new QComboBox(form->parentWidget());
    box->setObjectName(key.section('.', -1));  // the scenario key's last part: tests find the box by it
    for (const auto& [text, value] : items) box->addItem(text, value);
    box->setToolTip(tooltip);
    form->addRow(label, box);
    connect(box, &QComboBox::activated, this, [this, box, key] {
        // The network mode is the experiment's; the rest is the job's (set_root).
        const QString path = key == "workload.network_mode" ? key : this->key(key.section('.', 1).toStdString());
        if (!loading_) emit_edit(path, box->currentData().toString().toStdString());
    });
    return box;
}

void StrategyEditor::show_check() {
    const MemoryCheck& c = check_;
    table_->setRowCount(0);
    if (!c.errors.empty()) {
        status_->setText("<span style='color:#b00'>" + QString::fromStdString(c.errors.front()).toHtmlEscaped() +
                         (c.errors.size() > 1 ? QString(" (and %1 more)").arg(c.errors.size() - 1) : QString()) + "</span>");
        return;
    }
    const double hbm = c.report.available;
    table_->setRowCount(int(c.report.per_stage.size()));
    for (size_t i = 0; i < c.report.per_stage.size(); ++i) {
        const RankMemory& r = c.report.per_stage[i];
        const QStringList cells = {QString::number(r.stage), QString::number(double(r.params) / 1e9, 'f', 2) + " billion",
                                   gib(r.weights), gib(r.gradients), gib(r.optimizer), gib(r.activations), gib(r.overhead),
                                   gib(r.total()) + " / " + gib(hbm)};
        for (int col = 0; col < cells.size(); ++col) {
            auto* item = new QTableWidgetItem(cells[col]);
            if (col == 7) item->setForeground(r.total() <= hbm ? QColor(0, 120, 0) : QColor(190, 0, 0));
            table_->setItem(int(i), col, item);
        }
    }
    QStringList lines;
    const RankMemory& worst = c.report.worst();
    lines << (c.report.fits() ? QString("<span style='color:#070'>Fits: the fullest stage (%1) needs %2 of the %3's %4.</span>")
                                    .arg(worst.stage).arg(gib(worst.total()), QString::fromStdString(c.gpu), gib(hbm))
                              : QString("<span style='color:#b00'>Does not fit: stage %1 needs %2, the %3 has %4.</span>")
                                    .arg(worst.stage).arg(gib(worst.total()), QString::fromStdString(c.gpu), gib(hbm)));
    if (!c.world_message.empty()) lines << "<span style='color:#b00'>World size: " + QString::fromStdString(c.world_message).toHtmlEscaped() + "</span>";
    else if (c.hosts) lines << QString("World size %1 GPUs = the fabric's %2 hosts.").arg(c.world).arg(c.hosts);
    status_->setText(lines.join("<br>"));
}

}  // namespace orrery::views
