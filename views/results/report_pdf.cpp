#include "views/results/report_pdf.h"

#include <QImage>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgRenderer>
#include <QAbstractTextDocumentLayout>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QUrl>

using namespace orrery::report;  // the report model this file draws (engine/report)

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

// A heading whose next block starts on the following page moves there with it (Qt's rich text has no
// break-after: avoid). Blocks inside tables are placed in document coordinates by the layout.
void keep_headings_with_what_follows(QTextDocument& doc) {
    const double page = doc.pageSize().height();
    for (QTextBlock b = doc.begin(); b.isValid(); b = b.next()) {
        if (b.blockFormat().headingLevel() == 0 || !b.next().isValid()) continue;
        QAbstractTextDocumentLayout* layout = doc.documentLayout();
        const int heading_page = int(layout->blockBoundingRect(b).top() / page);
        const int next_page = int(layout->blockBoundingRect(b.next()).bottom() / page);
        if (next_page == heading_page) continue;
        QTextCursor cursor(b);
        QTextBlockFormat f = b.blockFormat();
        f.setPageBreakPolicy(QTextFormat::PageBreak_AlwaysBefore);
        cursor.setBlockFormat(f);  // the layout follows at once
    }
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
    // Laid out on the PDF's own page (not print()'s extra 2 cm margins, which cut wide tables), a footer line
    // below each page's text for its number.
    doc.documentLayout()->setPaintDevice(&pdf);
    const QRectF paint = pdf.pageLayout().paintRectPixels(pdf.resolution());
    const double footer = 22;
    doc.setPageSize(QSizeF(paint.width(), paint.height() - footer));
    keep_headings_with_what_follows(doc);
    QPainter painter(&pdf);
    const int pages = doc.pageCount();
    for (int i = 0; i < pages; ++i) {
        if (i > 0) pdf.newPage();
        const QRectF view(0, i * doc.pageSize().height(), doc.pageSize().width(), doc.pageSize().height());
        painter.save();
        painter.translate(0, -view.top());
        doc.drawContents(&painter, view);
        painter.restore();
        painter.setFont(font);
        painter.setPen(QColor(110, 110, 110));
        painter.drawText(QRectF(0, doc.pageSize().height(), doc.pageSize().width(), footer), Qt::AlignRight | Qt::AlignBottom,
                         QString("%1 / %2").arg(i + 1).arg(pages));
    }
    painter.end();
    if (!out.commit()) {
        *why = "writing " + file + " failed: " + out.errorString().toStdString();
        return false;
    }
    return true;
}

}  // namespace orrery::views
