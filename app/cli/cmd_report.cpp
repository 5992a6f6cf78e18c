// `orrery-cli report RESULTS [--run N] [--baseline ID] -o report.html|report.pdf|report.csv`: one run's
// comparison report, the very page the workbench's Results view exports (engine/report). The summary sentences
// are printed too, so a terminal user gets the answer without opening the file.
#include <algorithm>
#include <iostream>

#include "cli/commands.h"
#include "cli/inputs.h"
#include "common/diagnostics.h"
#include "report/report.h"

#ifdef ORRERY_HAVE_REPORT_PDF
#include <QGuiApplication>

#include "views/results/report_pdf.h"
#endif

namespace orrery::cli {
namespace {

struct ReportOptions {
    std::string store, out, baseline;
    int64_t run = 0;
    bool force = false;
};

#ifdef ORRERY_HAVE_REPORT_PDF
void write_pdf(const report::Report& r, const std::string& file) {
    // Qt lays out text with a GUI application's fonts; a terminal has no display, so the offscreen platform.
    if (!QGuiApplication::instance()) {
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
        // Without a desktop session Qt warns that XDG_RUNTIME_DIR is unset: true, and nothing the user must act on.
        qInstallMessageHandler([](QtMsgType type, const QMessageLogContext&, const QString& text) {
            if (type == QtDebugMsg || text.startsWith("QStandardPaths:")) return;
            std::cerr << "orrery-cli: Qt: " << text.toStdString() << "\n";
        });
        static int argc = 1;
        static char name[] = "orrery-cli";
        static char* argv[] = {name, nullptr};
        static QGuiApplication app(argc, argv);
    }
    std::string why;
    if (!views::write_report_pdf(r, file, &why)) throw InputError(file, why);
}
#endif

int write_report(const ReportOptions& o) {
    const std::filesystem::path out = o.out;
    refuse_inputs_as_outputs({out}, {o.store});
    std::string ext = out.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (ext != ".html" && ext != ".htm" && ext != ".pdf" && ext != ".csv")
        throw InputError(o.out, "a report is written as .html (one self-contained page), .pdf (A4) or .csv (the metrics table): name the output so");
#ifndef ORRERY_HAVE_REPORT_PDF
    if (ext == ".pdf")
        throw InputError(o.out, "this orrery-cli was built without Qt's PDF writer (Qt 6 Gui and Svg were missing when it was configured): "
                                "write .html and print it from a browser, or rebuild after installers/setup.sh");
#endif
    refuse_outputs({out}, o.force, {o.store});
    const report::Report r = report::read_report(o.store, o.run, o.baseline);
    if (ext == ".pdf") {
#ifdef ORRERY_HAVE_REPORT_PDF
        write_pdf(r, o.out);
#endif
    } else {
        write_output(out, ext == ".csv" ? report::report_csv(r) : report::report_html(r), o.force);
    }
    for (const std::string& s : r.summary) std::cout << s << "\n";
    std::cerr << "wrote " << o.out << " (run " << r.table.run.run_id << ", " << r.table.rows.size() << " experiments"
              << (r.baseline >= 0 ? ", baseline " + r.table.rows[size_t(r.baseline)].experiment : std::string()) << ")\n";
    return 0;
}

}  // namespace

Runner add_report(CLI::App& app, const PresetLibrary&) {
    auto o = std::make_shared<ReportOptions>();
    app.add_option("RESULTS", o->store, "Results store written by `orrery-cli run --out` (or a workbench project, .orrery)")->required();
    app.add_option("-o,--output", o->out, "Output: .html (self-contained page), .pdf (A4) or .csv (metrics table)")->required();
    app.add_option("--run", o->run, "Run id in the store (default: the newest)")->check(CLI::PositiveNumber);
    app.add_option("--baseline", o->baseline, "Experiment id the others are compared with (e0000, …)");
    app.add_flag("--force", o->force, "Replace the output file if it exists");
    return [o]() { return write_report(*o); };
}

}  // namespace orrery::cli
