#include "views/welcome.h"

#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

namespace orrery::views {
namespace {

nlohmann::json with_topology(const nlohmann::json& topology, const std::string& rate) {
    return {{"format", "orrery-scenario"},
            {"version", 1},
            {"topology", topology},
            {"network", {{"preset", "reference-" + rate}}},
            {"cc", {{"preset", "dcqcn-" + rate}}},
            {"workload", {{"kind", "llm"}, {"model", {{"preset", "gpt3-6.7b"}}}, {"gpu", "H100"},
                          {"parallel", {{"tp", 8}, {"pp", 2}, {"dp", 1}, {"micro_batches", 2}, {"sp", true}, {"zero", 1}}}, {"network_mode", "packet"}}},
            {"output", {{"record", {"fct", "pfc", "queues", "flow_rates"}}}}};
}

}  // namespace

std::vector<ScenarioTemplate> scenario_templates() {
    const nlohmann::json links400 = {{"all", {{"rate", "400Gbps"}, {"delay", "1us"}}}};
    std::vector<ScenarioTemplate> t;
    t.push_back({"Rail-optimized: 2 servers of 8 H100, 400 Gb/s rails", "rail-optimized",
                 with_topology({{"generator", "rail-optimized"}, {"gpus", 16}, {"gpus_per_server", 8}, {"tiers", 2}, {"link_defaults", links400}}, "400g")});
    t.push_back({"Fat-tree k = 4: 16 hosts, 100 Gb/s", "fat-tree", with_topology({{"generator", "fat-tree"}, {"k", 4}}, "100g")});
    t.push_back({"Leaf-spine: 2 leaves of 8 hosts, 2 spines, 400 Gb/s", "leaf-spine",
                 with_topology({{"generator", "leaf-spine"}, {"leaves", 2}, {"spines", 2}, {"hosts_per_leaf", 8}, {"link_defaults", links400}}, "400g")});
    for (ScenarioTemplate& s : t) s.document["name"] = s.name;
    return t;
}

WelcomePage::WelcomePage(const QStringList& recent, QWidget* parent) : QDialog(parent) {
    setWindowTitle("Welcome to Orrery");
    setObjectName("welcome-page");
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel("Orrery designs LLM-training clusters: draw or generate a fabric, pick a model and a parallel strategy, "
                             "sweep congestion control and collectives, run at packet level and watch what happens inside.",
                             this);
    intro->setWordWrap(true);
    layout->addWidget(intro);

    auto* demo = new QPushButton("Open the demo project", this);
    demo->setObjectName("welcome-demo");
    demo->setToolTip("A GPT job on 32 H100 swept over four congestion controls; press F5 to run it");
    connect(demo, &QPushButton::clicked, this, [this] { choose({WelcomeChoice::demo, -1, {}}); });
    layout->addWidget(demo);

    auto* templates = new QComboBox(this);
    templates->setObjectName("welcome-templates");
    for (const ScenarioTemplate& s : scenario_templates()) templates->addItem(s.title);
    auto* start = new QPushButton("Start from this template", this);
    start->setObjectName("welcome-template");
    connect(start, &QPushButton::clicked, this, [this, templates] { choose({WelcomeChoice::from_template, templates->currentIndex(), {}}); });
    auto* row = new QHBoxLayout;
    row->addWidget(templates, 1);
    row->addWidget(start);
    layout->addLayout(row);

    auto* list = new QListWidget(this);
    list->setObjectName("welcome-recent");
    for (const QString& f : recent) {
        auto* item = new QListWidgetItem(QFileInfo(f).fileName() + "  —  " + QFileInfo(f).absolutePath(), list);
        item->setData(Qt::UserRole, f);
    }
    if (!recent.isEmpty()) {
        layout->addWidget(new QLabel("Recent projects (double-click to open):", this));
        layout->addWidget(list);
    } else {
        list->hide();
    }
    connect(list, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
        choose({WelcomeChoice::recent, -1, item->data(Qt::UserRole).toString()});
    });

    auto* buttons = new QHBoxLayout;
    auto* open = new QPushButton("Open another project…", this);
    connect(open, &QPushButton::clicked, this, [this] { choose({WelcomeChoice::open_other, -1, {}}); });
    auto* close = new QPushButton("Start with an empty scenario", this);
    connect(close, &QPushButton::clicked, this, [this] { choose({WelcomeChoice::empty, -1, {}}); });
    buttons->addWidget(open);
    buttons->addStretch();
    buttons->addWidget(close);
    layout->addLayout(buttons);
}

void WelcomePage::choose(WelcomeChoice c) {
    choice_ = c;
    accept();
}

}  // namespace orrery::views
