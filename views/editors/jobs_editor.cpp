#include "views/editors/jobs_editor.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QStackedWidget>
#include <QVBoxLayout>

namespace orrery::views {
namespace {

std::string text_of(const nlohmann::json& v) {
    if (v.is_string()) return v.get<std::string>();
    return v.is_null() ? "" : v.dump();
}

// A name no job has yet: "b", "c", … then "job 27".
std::string fresh_name(const nlohmann::json& jobs) {
    auto taken = [&](const std::string& n) {
        for (const nlohmann::json& j : jobs)
            if (j.is_object() && text_of(j.value("name", nlohmann::json())) == n) return true;
        return false;
    };
    for (char c = 'a'; c <= 'z'; ++c)
        if (!taken(std::string(1, c))) return std::string(1, c);
    for (int i = 27;; ++i)
        if (!taken("job " + std::to_string(i))) return "job " + std::to_string(i);
}

}  // namespace

JobsEditor::JobsEditor(const PresetLibrary& presets, QWidget* parent) : ScenarioForm(parent) {
    pages_ = new QStackedWidget(this);
    // Page 0: one job; the offer to make it the first of several.
    auto* single = new QWidget(pages_);
    auto* sl = new QVBoxLayout(single);
    auto* explain = new QLabel("This scenario trains one job on the whole fabric. Several jobs can share it: each placed on its own servers "
                               "(packed, spread over the leaves, random, or the hosts you choose on the canvas), each also run alone for "
                               "its slowdown.",
                               single);
    explain->setWordWrap(true);
    auto* convert = new QPushButton("Make this job the first of several", single);
    convert->setObjectName("make-mix");
    connect(convert, &QPushButton::clicked, this, &JobsEditor::make_mix);
    sl->addWidget(explain);
    sl->addWidget(convert, 0, Qt::AlignLeft);
    sl->addStretch(1);
    pages_->addWidget(single);

    // Page 1: the jobs.
    auto* mix = new QWidget(pages_);
    auto* page = new QVBoxLayout(mix);
    auto* ml = new QHBoxLayout;  // the list and the chosen job's placement above, its model and strategy below
    page->addLayout(ml);
    auto* left = new QVBoxLayout;
    list_ = new QListWidget(mix);
    list_->setObjectName("jobs");
    list_->setMaximumWidth(260);
    list_->setMaximumHeight(160);
    connect(list_, &QListWidget::currentRowChanged, this, [this](int row) {
        if (loading_ || row < 0) return;
        current_ = row;
        show_job();
    });
    auto* buttons = new QHBoxLayout;
    add_ = new QPushButton("Add", mix);
    duplicate_ = new QPushButton("Duplicate", mix);
    remove_ = new QPushButton("Remove", mix);
    for (QPushButton* b : {add_, duplicate_, remove_}) buttons->addWidget(b);
    connect(add_, &QPushButton::clicked, this, &JobsEditor::add_job);
    connect(duplicate_, &QPushButton::clicked, this, &JobsEditor::duplicate_job);
    connect(remove_, &QPushButton::clicked, this, &JobsEditor::remove_job);
    left->addWidget(list_, 1);
    left->addLayout(buttons);
    auto* mode_box = new QGroupBox("Every job", mix);
    auto* mf = new QFormLayout(mode_box);
    isolation_ = new QComboBox(mode_box);
    isolation_->addItem("Also run each job alone (its slowdown)", true);
    isolation_->addItem("Only together", false);
    isolation_->setToolTip("workload.isolation: each job alone on the same hosts, for its slowdown = time with the others / alone");
    connect(isolation_, &QComboBox::activated, this, [this] {
        if (!loading_) emit_edit("workload.isolation", isolation_->currentData().toBool());
    });
    mf->addRow("Isolation", isolation_);
    left->addWidget(mode_box);
    ml->addLayout(left);

    auto* job_box = new QGroupBox("Job", mix);
    auto* jf = new QFormLayout(job_box);
    name_ = new QLineEdit(job_box);
    name_->setObjectName("job-name");
    connect(name_, &QLineEdit::editingFinished, this, [this] {
        if (!loading_ && !name_->text().trimmed().isEmpty()) emit_edit(job_key("name"), name_->text().trimmed().toStdString());
    });
    jf->addRow("Name", name_);
    policy_ = new QComboBox(job_box);
    policy_->setObjectName("policy");
    policy_->addItem("Packed: the lowest free servers", "packed");
    policy_->addItem("Spread: servers dealt over the leaves", "spread");
    policy_->addItem("Random whole servers (seed)", "random");
    policy_->addItem("These hosts (select servers on the canvas)", "hosts");
    connect(policy_, &QComboBox::activated, this, [this] {
        if (loading_) return;
        nlohmann::json p = {{"policy", policy_->currentData().toString().toStdString()}};
        if (p["policy"] == "random") p["seed"] = seed_->value();
        if (p["policy"] == "hosts") p["hosts"] = nlohmann::json::array({"0-" + std::to_string(std::max(1, strategy_->check().world) - 1)});
        emit_edit(job_key("placement"), p);
    });
    jf->addRow("Placement", policy_);
    seed_ = new QSpinBox(job_box);
    seed_->setRange(0, 1 << 30);
    connect(seed_, &QSpinBox::editingFinished, this, [this] {
        if (!loading_ && policy_->currentData().toString() == "random") emit_edit(job_key("placement.seed"), seed_->value());
    });
    jf->addRow("Seed", seed_);
    hosts_list_ = new QLineEdit(job_box);
    hosts_list_->setPlaceholderText("host indices or ranges, e.g. 0-7, 16-23");
    connect(hosts_list_, &QLineEdit::editingFinished, this, [this] {
        if (loading_ || policy_->currentData().toString() != "hosts") return;
        nlohmann::json hosts = nlohmann::json::array();
        for (const QString& part : hosts_list_->text().split(',', Qt::SkipEmptyParts)) hosts.push_back(part.trimmed().toStdString());
        emit_edit(job_key("placement.hosts"), hosts);
    });
    jf->addRow("Hosts", hosts_list_);
    start_ = new QLineEdit(job_box);
    start_->setPlaceholderText("0us");
    connect(start_, &QLineEdit::editingFinished, this, [this] {
        if (loading_) return;
        if (start_->text().trimmed().isEmpty()) emit_remove(job_key("start"));
        else emit_edit(job_key("start"), start_->text().trimmed().toStdString());
    });
    jf->addRow("Starts at", start_);
    note_ = new QLabel(job_box);
    note_->setWordWrap(true);
    jf->addRow("", note_);
    ml->addWidget(job_box, 1);
    strategy_ = new StrategyEditor(presets, mix);
    strategy_->setObjectName("job-strategy");
    connect(strategy_, &ScenarioForm::edited, this, &ScenarioForm::edited);
    page->addWidget(strategy_, 1);
    pages_->addWidget(mix);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(pages_);
}

QString JobsEditor::job_key(const std::string& under) const {
    return QString("workload.jobs[%1].").arg(current_) + QString::fromStdString(under);
}

void JobsEditor::load(const nlohmann::json& doc, const std::filesystem::path& base_dir, size_t hosts) {
    doc_ = doc;
    base_dir_ = base_dir;
    hosts_ = hosts;
    const nlohmann::json jobs = json_at(doc, "workload.jobs");
    const bool mix = text_of(json_at(doc, "workload.kind")) == "jobs" && jobs.is_array();
    pages_->setCurrentIndex(mix ? 1 : 0);
    pages_->widget(0)->setEnabled(text_of(json_at(doc, "workload.kind")) == "llm");
    if (!mix) return;
    loading_ = true;
    list_->clear();
    for (size_t i = 0; i < jobs.size(); ++i) {
        const std::string name = jobs[i].is_object() ? text_of(jobs[i].value("name", nlohmann::json())) : "";
        list_->addItem(QString::fromStdString(name.empty() ? "(job " + std::to_string(i) + ")" : name));
    }
    current_ = std::clamp(current_, 0, std::max(0, int(jobs.size()) - 1));
    list_->setCurrentRow(current_);
    remove_->setEnabled(jobs.size() > 1);
    const nlohmann::json iso = json_at(doc, "workload.isolation");
    isolation_->setCurrentIndex(iso.is_boolean() && !iso.get<bool>() ? 1 : 0);
    loading_ = false;
    show_job();
}

void JobsEditor::select(int job) {
    if (job < 0 || job >= list_->count()) return;
    current_ = job;
    list_->setCurrentRow(job);
    show_job();
}

void JobsEditor::show_job() {
    loading_ = true;
    const nlohmann::json job = json_at(doc_, "workload.jobs[" + std::to_string(current_) + "]");
    const nlohmann::json placement = job.is_object() ? job.value("placement", nlohmann::json::object()) : nlohmann::json::object();
    name_->setText(QString::fromStdString(job.is_object() ? text_of(job.value("name", nlohmann::json())) : ""));
    const std::string policy = placement.is_object() ? text_of(placement.value("policy", nlohmann::json("packed"))) : "packed";
    policy_->setCurrentIndex(std::max(0, policy_->findData(QString::fromStdString(policy))));
    seed_->setValue(placement.is_object() && placement.value("seed", nlohmann::json()).is_number_integer() ? placement["seed"].get<int>() : 1);
    seed_->setEnabled(policy == "random");
    QStringList hosts;
    if (placement.is_object() && placement.contains("hosts") && placement["hosts"].is_array())
        for (const nlohmann::json& h : placement["hosts"]) hosts << QString::fromStdString(text_of(h));
    hosts_list_->setText(hosts.join(", "));
    hosts_list_->setEnabled(policy == "hosts");
    start_->setText(QString::fromStdString(job.is_object() ? text_of(job.value("start", nlohmann::json())) : ""));
    note_->setText(QString("The fabric has %1 GPUs. Every policy but listed hosts takes whole servers; to list them, select servers on "
                           "the canvas and right-click one.")
                       .arg(hosts_));
    // Background flows hold no hosts and have no model: their flows are the scenario's list, edited as JSON.
    const bool background = job.is_object() && text_of(job.value("kind", nlohmann::json())) == "flows";
    for (QWidget* w : std::initializer_list<QWidget*>{policy_, seed_, hosts_list_}) w->setEnabled(!background && w->isEnabled());
    policy_->setEnabled(!background);
    if (background) {
        const size_t flows = job.contains("flows") && job["flows"].is_array() ? job["flows"].size() : 0;
        note_->setText(QString("Background flows: %1 flows between the hosts they name, sharing them with the training jobs; measured by their "
                               "mean completion time. Their list is workload.jobs[%2].flows in the scenario.")
                           .arg(flows)
                           .arg(current_));
    }
    strategy_->setVisible(!background);
    loading_ = false;
    if (background) return;
    strategy_->set_root(QString("workload.jobs[%1]").arg(current_));
    strategy_->load(doc_, base_dir_, hosts_);
}

void JobsEditor::set_jobs(const QString&, nlohmann::json jobs, int select_after) {
    current_ = select_after;
    emit_edit("workload.jobs", jobs);
}

void JobsEditor::add_job() {
    nlohmann::json jobs = json_at(doc_, "workload.jobs");
    if (!jobs.is_array() || jobs.empty()) return;
    nlohmann::json fresh = jobs.back();  // the last job's model and strategy, its own name, packed
    fresh["name"] = fresh_name(jobs);
    fresh["placement"] = {{"policy", "packed"}};
    fresh.erase("start");
    fresh.erase("stragglers");
    jobs.push_back(fresh);
    set_jobs("Add job", jobs, int(jobs.size()) - 1);
}

void JobsEditor::duplicate_job() {
    nlohmann::json jobs = json_at(doc_, "workload.jobs");
    if (!jobs.is_array() || size_t(current_) >= jobs.size()) return;
    nlohmann::json copy = jobs[size_t(current_)];
    copy["name"] = fresh_name(jobs);
    if (copy.contains("placement") && copy["placement"].is_object() && text_of(copy["placement"].value("policy", nlohmann::json())) == "hosts")
        copy["placement"] = {{"policy", "packed"}};  // the same hosts twice would be refused
    jobs.insert(jobs.begin() + current_ + 1, copy);
    set_jobs("Duplicate job", jobs, current_ + 1);
}

void JobsEditor::remove_job() {
    nlohmann::json jobs = json_at(doc_, "workload.jobs");
    if (!jobs.is_array() || jobs.size() < 2 || size_t(current_) >= jobs.size()) return;
    jobs.erase(jobs.begin() + current_);
    set_jobs("Remove job", jobs, std::max(0, current_ - 1));
}

void JobsEditor::make_mix() {
    nlohmann::json w = json_at(doc_, "workload");
    if (!w.is_object() || text_of(w.value("kind", nlohmann::json())) != "llm") return;
    nlohmann::json job = w;
    job.erase("kind");
    job.erase("network_mode");
    job["name"] = "a";
    job["placement"] = {{"policy", "packed"}};
    nlohmann::json mix = {{"kind", "jobs"}, {"jobs", nlohmann::json::array({job})}};
    if (w.contains("network_mode")) mix["network_mode"] = w["network_mode"];
    current_ = 0;
    emit_edit("workload", mix);
}

}  // namespace orrery::views
