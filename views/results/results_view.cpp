#include "views/results/results_view.h"

#include <cmath>
#include <fstream>

#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QScrollArea>
#include <QSortFilterProxyModel>
#include <QStandardItemModel>
#include <QSvgWidget>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include "common/diagnostics.h"
#include "telemetry/chrome_trace.h"
#include "telemetry/store_reader.h"
#include "views/results/report_pdf.h"
#include "report/report_text.h"

using namespace orrery::report;  // the report model this file draws (engine/report)

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
    summary_ = new QLabel(this);
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    charts_ = new QWidget;
    charts_layout_ = new QVBoxLayout(charts_);
    auto* chart_scroll = new QScrollArea(this);
    chart_scroll->setWidget(charts_);
    chart_scroll->setWidgetResizable(true);
    auto* table_page = new QWidget(this);
    auto* table_layout = new QVBoxLayout(table_page);
    table_layout->setContentsMargins(0, 0, 0, 0);
    table_layout->addWidget(view_, 1);
    table_layout->addWidget(notes_);
    tabs_ = new QTabWidget(this);
    tabs_->addTab(table_page, "Table");
    tabs_->addTab(chart_scroll, "Charts");
    connect(filter_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);
    connect(runs_, &QComboBox::activated, this, [this] { show_run(runs_->currentData().toLongLong()); });

    auto* pin = new QPushButton("Pin as baseline", this);
    auto* unpin = new QPushButton("Unpin", this);
    auto* timeline = new QPushButton("Open timeline", this);
    // The exports share one button: seven buttons in a row would hold the window wider than a laptop screen.
    auto* exports = new QPushButton("Export", this);
    auto* menu = new QMenu(exports);
    QAction* html = menu->addAction("Report (HTML)…");
    QAction* pdf = menu->addAction("Report (PDF)…");
    QAction* csv = menu->addAction("Metrics (CSV)…");
    QAction* trace = menu->addAction("Chrome trace of the selected experiment…");
    exports->setMenu(menu);
    connect(pin, &QPushButton::clicked, this, [this] {
        const QModelIndex i = view_->currentIndex();
        if (i.isValid()) pin_baseline(proxy_->mapToSource(i).row());
    });
    connect(unpin, &QPushButton::clicked, this, [this] { pin_baseline(-1); });
    connect(timeline, &QPushButton::clicked, this, [this] {
        if (!selected_experiment().isEmpty()) emit openTimeline(report_.table.run.run_id, selected_experiment());
    });
    connect(view_, &QTableView::doubleClicked, this, [this] {
        if (!selected_experiment().isEmpty()) emit openTimeline(report_.table.run.run_id, selected_experiment());
    });
    connect(html, &QAction::triggered, this, &ResultsView::ask_export_html);
    connect(pdf, &QAction::triggered, this, &ResultsView::ask_export_pdf);
    connect(csv, &QAction::triggered, this, &ResultsView::ask_export_csv);
    connect(trace, &QAction::triggered, this, &ResultsView::ask_export_chrome_trace);

    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel("Run", this));
    top->addWidget(runs_, 1);
    top->addWidget(filter_, 1);
    auto* buttons = new QHBoxLayout;
    for (QPushButton* b : {pin, unpin, timeline, exports}) buttons->addWidget(b);
    buttons->addStretch();
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(summary_);
    layout->addWidget(tabs_, 1);
    layout->addLayout(buttons);
}

void ResultsView::set_store(const QString& store) {
    store_ = store;
    runs_->clear();
    if (store.isEmpty()) {  // a new project, not saved yet: no store, nothing to list (and nothing wrong)
        report_ = {};
        fill();
        return;
    }
    try {
        for (const RunInfo& r : list_runs(store.toStdString()))
            runs_->addItem(QString("run %1: %2 (%3 experiment%4, %5, %6 UTC)")
                               .arg(r.run_id)
                               .arg(QString::fromStdString(r.scenario))
                               .arg(r.experiments)
                               .arg(r.experiments == 1 ? "" : "s")
                               .arg(QString::fromStdString(r.status), QString::fromStdString(r.started_utc)),
                           qlonglong(r.run_id));
    } catch (const InputError& e) {
        emit message(e.what());
    }
    if (runs_->count() > 0) show_run(runs_->itemData(0).toLongLong());
    else {
        report_ = {};
        fill();
    }
}

void ResultsView::show_run(int64_t run_id) {
    try {
        report_ = read_report(store_.toStdString(), run_id);
    } catch (const InputError& e) {
        emit message(e.what());
        report_ = {};
    }
    runs_->setCurrentIndex(runs_->findData(qlonglong(run_id)));
    fill();
    fill_charts();
}

void ResultsView::pin_baseline(int row) {
    compose_report(report_, row);
    fill();
}

int ResultsView::chart_count() const { return int(charts_->findChildren<QSvgWidget*>().size()); }

void ResultsView::fill_charts() {
    while (QLayoutItem* item = charts_layout_->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    const std::vector<RenderedChart> charts = report_charts(report_);
    if (charts.empty()) charts_layout_->addWidget(new QLabel(report_.table.rows.empty() ? "No run selected." : "This run recorded nothing to chart.", charts_));
    for (const RenderedChart& c : charts) {
        auto* svg = new QSvgWidget(charts_);
        svg->load(QByteArray::fromStdString(c.svg));
        svg->setFixedSize(c.width, c.height);
        svg->setToolTip(QString::fromStdString(c.title));
        charts_layout_->addWidget(svg);
    }
    charts_layout_->addStretch();
}

QString ResultsView::selected_experiment() const {
    const QModelIndex i = view_->currentIndex();
    if (!i.isValid()) return {};
    const int row = proxy_->mapToSource(i).row();
    return row < int(report_.table.rows.size()) ? QString::fromStdString(report_.table.rows[size_t(row)].experiment) : QString();
}

void ResultsView::fill() {
    const ResultsTable& table_ = report_.table;
    const int baseline_ = report_.baseline;
    model_->clear();
    QStringList headers = {"experiment", "status"};
    for (size_t p = 0; p < table_.parameter_paths.size(); ++p) headers << QString::fromStdString(table_.parameter_paths[p]);
    for (const MetricColumn& m : table_.metrics) headers << QString::fromStdString(metric_label(m.name));
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
            // Rounded as the report rounds it, in a unit that suits its size; the stored value on hover and in the CSV.
            QString text = v ? QString::fromStdString(format_value(*v, table_.metrics[m].unit, table_.metrics[m].name)) : QString("–");
            if (baseline_ >= 0 && int(i) != baseline_)
                if (auto d = relative_to(v, table_.rows[size_t(baseline_)].metrics[m]))
                    text += std::fabs(*d) < report_.tie ? QString(" (=)") : " (" + QString::fromStdString(format_percent(*d, true)) + ")";
            auto* item = new QStandardItem(text);
            item->setData(v ? *v : -1e300, kSortRole);
            if (v) item->setToolTip(QString("%1 %2 (as stored)").arg(*v, 0, 'g', 12).arg(QString::fromStdString(table_.metrics[m].unit)));
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            items << item;
        }
        if (int(i) == baseline_)
            for (QStandardItem* item : items) item->setBackground(base);
        model_->appendRow(items);
    }
    QStringList notes;
    for (const std::string& n : table_.notes) notes << QString::fromStdString(n);
    if (const std::string disk = disk_cost_sentence(report_); !disk.empty()) notes << QString::fromStdString(disk);
    notes_->setText(notes.join("\n"));
    notes_->setVisible(!notes.isEmpty());
    // The report's answer first, in bold; the rest of the summary on hover and in the exported report.
    QStringList sentences;
    for (const std::string& s : report_.summary) sentences << QString::fromStdString(s).toHtmlEscaped();
    summary_->setText(sentences.isEmpty() ? QString() : "<b>" + sentences.front() + "</b>" + (sentences.size() > 1 ? "<br>" + sentences[1] : QString()));
    summary_->setToolTip(sentences.join("<br>"));
    summary_->setVisible(!sentences.isEmpty());
}

void ResultsView::ask_export_html() {
    const QString f = QFileDialog::getSaveFileName(this, "Export comparison report", "report.html", "HTML (*.html)");
    QString why;
    if (!f.isEmpty()) emit message(export_html(f, &why) ? "Report written to " + f : why);
}

void ResultsView::ask_export_pdf() {
    const QString f = QFileDialog::getSaveFileName(this, "Export comparison report", "report.pdf", "PDF (*.pdf)");
    QString why;
    if (!f.isEmpty()) emit message(export_pdf(f, &why) ? "Report written to " + f : why);
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

bool ResultsView::export_html(const QString& file, QString* why) const { return write_file(file, report_html(report_), why); }
bool ResultsView::export_csv(const QString& file, QString* why) const { return write_file(file, report_csv(report_), why); }

bool ResultsView::export_pdf(const QString& file, QString* why) const {
    std::string reason;
    if (write_report_pdf(report_, file.toStdString(), &reason)) return true;
    *why = QString::fromStdString(reason);
    return false;
}

bool ResultsView::export_chrome_trace(const QString& file, const QString& experiment, QString* why) const {
    try {
        const StoreReader reader(store_.toStdString());
        const int64_t run = reader.find_run(experiment.toStdString(), report_.table.run.run_id);
        const std::vector<TimelineRow> rows = reader.timeline(run, experiment.toStdString());
        if (rows.empty()) {
            *why = experiment + " has no timeline (only LLM experiments have one)";
            return false;
        }
        TraceWindow window;
        window.title = report_.table.run.scenario + " " + experiment.toStdString();
        return write_file(file, chrome_trace(rows, reader.busiest_ports(run, experiment.toStdString(), 8), window,
                                               reader.skipped_spans(run, experiment.toStdString()), reader.jobs(run, experiment.toStdString()))
                                      .dump(),
                          why);
    } catch (const InputError& e) {
        *why = e.what();
        return false;
    }
}

}  // namespace orrery::views
