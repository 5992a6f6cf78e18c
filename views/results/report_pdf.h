#pragma once
// The comparison report as an A4 PDF, with Qt's own PDF writer: the same page as the HTML report, laid out by
// QTextDocument, with each chart's SVG rendered by Qt SVG. Needs a QGuiApplication (the CLI makes an offscreen
// one). The file is written whole or not at all.
#include <string>

#include "report/report.h"

namespace orrery::views {

using report::Report;

// False with `why` set when the file cannot be written; the file is then left as it was.
bool write_report_pdf(const Report& r, const std::string& file, std::string* why);

}  // namespace orrery::views
