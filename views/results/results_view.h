#pragma once
// The results view: pick a run of the project, see its experiments with the parameters that differ
// (highlighted) and their metrics with units; sort by any column, filter by text, pin a baseline the others
// are compared against (difference in %), open an experiment's timeline in the inspector, read the report's
// summary and its charts overlaid per experiment (the very SVGs the report holds), and export the comparison
// report (HTML or PDF), the CSV, or an experiment's Chrome trace.
#include <QWidget>

#include "report/report.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QStandardItemModel;
class QTableView;
class QTabWidget;
class QVBoxLayout;

namespace orrery::views {

using report::Report;
using report::ResultsTable;

class ResultsView : public QWidget {
    Q_OBJECT
public:
    explicit ResultsView(QWidget* parent = nullptr);
    void set_store(const QString& store);  // re-reads the runs; shows the newest
    void show_run(int64_t run_id);
    const ResultsTable& table() const { return report_.table; }
    const Report& report() const { return report_; }
    int baseline() const { return report_.baseline; }
    void pin_baseline(int row);            // index into table().rows; -1 unpins
    QTableView* view() const { return view_; }
    QSortFilterProxyModel* proxy() const { return proxy_; }
    QLineEdit* filter() const { return filter_; }
    QString selected_experiment() const;
    QLabel* summary() const { return summary_; }
    QTabWidget* tabs() const { return tabs_; }
    int chart_count() const;  // charts shown in the Charts tab

    // The buttons and the Results menu: ask for a file, export, report the outcome through message().
    void ask_export_html();
    void ask_export_pdf();
    void ask_export_csv();
    void ask_export_chrome_trace();

    bool export_html(const QString& file, QString* why) const;
    bool export_pdf(const QString& file, QString* why) const;
    bool export_csv(const QString& file, QString* why) const;
    bool export_chrome_trace(const QString& file, const QString& experiment, QString* why) const;

signals:
    void openTimeline(qint64 run_id, QString experiment);
    void message(QString text);

private:
    void fill();
    void fill_charts();
    QString store_;
    Report report_;
    QComboBox* runs_;
    QLineEdit* filter_;
    QTableView* view_;
    QStandardItemModel* model_;
    QSortFilterProxyModel* proxy_;
    QLabel* notes_;
    QLabel* summary_;
    QTabWidget* tabs_;
    QWidget* charts_;
    QVBoxLayout* charts_layout_;
};

}  // namespace orrery::views
