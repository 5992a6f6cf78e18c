#include "views/results_view.h"

#include <fstream>

#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

#include "common/diagnostics.h"
#include "telemetry/chrome_trace.h"
#include "telemetry/store_reader.h"

namespace orrery::views {
namespace {

bool write_file(const QString& file, const std::string& text, QString* why) {
    std::ofstream out(file.toStdString(), std::ios::binary);
    if (!out) {
        *why = "cannot write " + file;
        return false;
    }
    out << text;
    if (!out) {
        *why = "writing " + file + " failed";
        return false;
    }
    return true;
}

constexpr int kSortRole = Qt::UserRole + 1;

}  // namespace

ResultsView::ResultsView(QWidget* parent) : QWidget(parent) {
    runs_ = new QComboBox(this);
    filter_ = new QLineEdit(this);
    filter_->setPlaceholderText("Filter rows (any column)");
    model_ = new QStandardItemModel(this);
    proxy_ = new QSortFilterProxyModel(this);
    proxy_->setSourceModel(model_);
    proxy_->setSortRole(kSortRole);
    proxy_->setFilterKeyColumn(-1);
    proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
    view_ = new QTableView(this);
    view_->setModel(proxy_);
    view_->setSortingEnabled(true);
    view_->sortByColumn(0, Qt::AscendingOrder);  // experiments in sweep order until the user sorts
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->setSelectionMode(QAbstractItemView::SingleSelection);
    view_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    view_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    notes_ = new QLabel(this);
    notes_->setWordWrap(true);
    connect(filter_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);
    connect(runs_, &QComboBox::activated, this, [this] { show_run(runs_->currentData().toLongLong()); });

    auto* pin = new QPushButton("Pin as baseline", this);
    auto* unpin = new QPushButton("Unpin", this);
    auto* timeline = new QPushButton("Open timeline", this);
    auto* html = new QPushButton("Export report (HTML)…", this);
    auto* csv = new QPushButton("Export CSV…", this);
    auto* trace = new QPushButton("Export Chrome trace…", this);
    connect(pin, &QPushButton::clicked, this, [this] {
        const QModelIndex i = view_->currentIndex();
        if (i.isValid()) pin_baseline(proxy_->mapToSource(i).row());
    });
    connect(unpin, &QPushButton::clicked, this, [this] { pin_baseline(-1); });
    connect(timeline, &QPushButton::clicked, this, [this] {
        if (!selected_experiment().isEmpty()) emit openTimeline(table_.run.run_id, selected_experiment());
    });
    connect(view_, &QTableView::doubleClicked, this, [this] {
        if (!selected_experiment().isEmpty()) emit openTimeline(table_.run.run_id, selected_experiment());
    });
    connect(html, &QPushButton::clicked, this, &ResultsView::ask_export_html);
    connect(csv, &QPushButton::clicked, this, &ResultsView::ask_export_csv);
    connect(trace, &QPushButton::clicked, this, &ResultsView::ask_export_chrome_trace);

    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel("Run", this));
    top->addWidget(runs_, 1);
    top->addWidget(filter_, 1);
    auto* buttons = new QHBoxLayout;
    for (QPushButton* b : {pin, unpin, timeline, html, csv, trace}) buttons->addWidget(b);
    buttons->addStretch();
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(view_, 1);
    layout->addWidget(notes_);
    layout->addLayout(buttons);
}

void ResultsView::set_store(const QString& store) {
    store_ = store;
    runs_->clear();
    if (store.isEmpty()) {  // a new project, not saved yet: no store, nothing to list (and nothing wrong)
        table_ = {};
        fill();
        return;
    }
    try {
        for (const RunInfo& r : list_runs(store.toStdString()))
            runs_->addItem(QString("run %1: %2 (%3 experiments, %4, %5 UTC)")
                               .arg(r.run_id)
                               .arg(QString::fromStdString(r.scenario))
                               .arg(r.experiments)
                               .arg(QString::fromStdString(r.status), QString::fromStdString(r.started_utc)),
                           qlonglong(r.run_id));
    } catch (const InputError& e) {
        emit message(e.what());
    }
    if (runs_->count() > 0) show_run(runs_->itemData(0).toLongLong());
    else {
        table_ = {};
        fill();
    }
}

void ResultsView::show_run(int64_t run_id) {
    try {
        table_ = read_results(store_.toStdString(), run_id);
    } catch (const InputError& e) {
        emit message(e.what());
        table_ = {};
    }
    runs_->setCurrentIndex(runs_->findData(qlonglong(run_id)));
    baseline_ = -1;
    fill();
}

void ResultsView::pin_baseline(int row) {
    baseline_ = row >= 0 && row < int(table_.rows.size()) ? row : -1;
    fill();
}

QString ResultsView::selected_experiment() const {
    const QModelIndex i = view_->currentIndex();
    if (!i.isValid()) return {};
    const int row = proxy_->mapToSource(i).row();
    return row < int(table_.rows.size()) ? QString::fromStdString(table_.rows[size_t(row)].experiment) : QString();
}

void ResultsView::fill() {
    model_->clear();
    QStringList headers = {"experiment", "status"};
    for (size_t p = 0; p < table_.parameter_paths.size(); ++p) headers << QString::fromStdString(table_.parameter_paths[p]);
    for (const MetricColumn& m : table_.metrics) headers << QString::fromStdString(m.header());
    model_->setHorizontalHeaderLabels(headers);
    const QColor differs(255, 244, 200), base(225, 225, 225);
    for (size_t i = 0; i < table_.rows.size(); ++i) {
        const ResultRow& r = table_.rows[i];
        QList<QStandardItem*> items;
        auto text_item = [&](const QString& s) {
            auto* item = new QStandardItem(s);
            item->setData(s, kSortRole);
            return item;
        };
        items << text_item(QString::fromStdString(r.experiment) + (int(i) == baseline_ ? "  (baseline)" : ""));
        items << text_item(QString::fromStdString(r.status));
        if (!r.message.empty()) items.back()->setToolTip(QString::fromStdString(r.message));
        for (size_t p = 0; p < r.parameters.size(); ++p) {
            QStandardItem* item = text_item(QString::fromStdString(r.parameters[p]));
            if (table_.parameter_differs[p]) item->setBackground(differs);
            items << item;
        }
        for (size_t m = 0; m < r.metrics.size(); ++m) {
            const auto& v = r.metrics[m];
            QString text = v ? QString::number(*v, 'g', 6) : QString("–");
            if (baseline_ >= 0 && int(i) != baseline_)
                if (auto d = relative_to(v, table_.rows[size_t(baseline_)].metrics[m])) text += QString(" (%1%2%)").arg(*d >= 0 ? "+" : "").arg(*d * 100, 0, 'f', 2);
            auto* item = new QStandardItem(text);
            item->setData(v ? *v : -1e300, kSortRole);
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            items << item;
        }
        if (int(i) == baseline_)
            for (QStandardItem* item : items) item->setBackground(base);
        model_->appendRow(items);
    }
    QStringList notes;
    for (const std::string& n : table_.notes) notes << QString::fromStdString(n);
    notes_->setText(notes.join("\n"));
    notes_->setVisible(!notes.isEmpty());
}

void ResultsView::ask_export_html() {
    const QString f = QFileDialog::getSaveFileName(this, "Export comparison report", "report.html", "HTML (*.html)");
    QString why;
    if (!f.isEmpty()) emit message(export_html(f, &why) ? "Report written to " + f : why);
}

void ResultsView::ask_export_csv() {
    const QString f = QFileDialog::getSaveFileName(this, "Export CSV", "results.csv", "CSV (*.csv)");
    QString why;
    if (!f.isEmpty()) emit message(export_csv(f, &why) ? "CSV written to " + f : why);
}

void ResultsView::ask_export_chrome_trace() {
    const QString x = selected_experiment();
    if (x.isEmpty()) {
        emit message("Select an experiment first");
        return;
    }
    const QString f = QFileDialog::getSaveFileName(this, "Export Chrome trace", x + ".trace.json", "Chrome trace (*.json)");
    QString why;
    if (!f.isEmpty()) emit message(export_chrome_trace(f, x, &why) ? "Trace written to " + f + " (open it in Perfetto)" : why);
}

bool ResultsView::export_html(const QString& file, QString* why) const { return write_file(file, results_html(table_, baseline_), why); }
bool ResultsView::export_csv(const QString& file, QString* why) const { return write_file(file, results_csv(table_), why); }

bool ResultsView::export_chrome_trace(const QString& file, const QString& experiment, QString* why) const {
    try {
        const StoreReader reader(store_.toStdString());
        const int64_t run = reader.find_run(experiment.toStdString(), table_.run.run_id);
        const std::vector<TimelineRow> rows = reader.timeline(run, experiment.toStdString());
        if (rows.empty()) {
            *why = experiment + " has no timeline (only LLM experiments have one)";
            return false;
        }
        TraceWindow window;
        window.title = table_.run.scenario + " " + experiment.toStdString();
        return write_file(file, chrome_trace(rows, reader.busiest_ports(run, experiment.toStdString(), 8), window,
                                               reader.skipped_spans(run, experiment.toStdString())).dump(), why);
    } catch (const InputError& e) {
        *why = e.what();
        return false;
    }
}

}  // namespace orrery::views
