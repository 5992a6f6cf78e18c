#include "views/report/report_pdf.h"

#include <QImage>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgRenderer>
#include <QTextDocument>
#include <QUrl>

namespace orrery::views {
namespace {

// Charts are drawn at this multiple of their CSS size, so that they stay sharp when printed (about 290 dpi on
// A4 for a 580-px chart across the text width).
constexpr int kChartScale = 3;

QImage render_chart(const RenderedChart& c) {
    QSvgRenderer svg(QByteArray::fromStdString(c.svg));
    QImage image(c.width * kChartScale, c.height * kChartScale, QImage::Format_RGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    svg.render(&painter);
    return image;
}

}  // namespace

bool write_report_pdf(const Report& r, const std::string& file, std::string* why) {
    QSaveFile out(QString::fromStdString(file));
    if (!out.open(QIODevice::WriteOnly)) {
        *why = "cannot write " + file + ": " + out.errorString().toStdString();
        return false;
    }
    QPdfWriter pdf(&out);
    pdf.setPageSize(QPageSize(QPageSize::A4));
    pdf.setPageMargins(QMarginsF(14, 14, 14, 14), QPageLayout::Millimeter);
    pdf.setResolution(96);  // the page's CSS sizes are in px at 96 per inch, as in a browser
    pdf.setTitle(QString::fromStdString("Orrery comparison: " + r.table.run.scenario));
    pdf.setCreator("Orrery");
    QTextDocument doc;
    QFont font = doc.defaultFont();
    font.setPointSizeF(9);
    doc.setDefaultFont(font);
    const std::vector<RenderedChart> charts = report_charts(r);
    for (size_t i = 0; i < charts.size(); ++i)
        doc.addResource(QTextDocument::ImageResource, QUrl(QString("chart-%1.svg").arg(i)), render_chart(charts[i]));
    doc.setHtml(QString::fromStdString(report_html(r, false)));
    doc.print(&pdf);
    if (!out.commit()) {
        *why = "writing " + file + " failed: " + out.errorString().toStdString();
        return false;
    }
    return true;
}

}  // namespace orrery::views
