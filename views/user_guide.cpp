#include "views/user_guide.h"

#include <QCoreApplication>
#include <QDialog>
#include <QFile>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace orrery::views {

QString workbench_section(const QString& readme) {
    const qsizetype start = readme.indexOf("\n## The workbench");
    if (start < 0) return {};
    const qsizetype end = readme.indexOf("\n## ", start + 1);
    return readme.mid(start + 1, end < 0 ? -1 : end - start - 1).trimmed();
}

QString find_readme() {
    for (const QString& file : {QCoreApplication::applicationDirPath() + "/../share/doc/orrery/README.md", QString(ORRERY_SOURCE_DIR "/README.md")}) {
        QFile f(file);
        if (f.open(QIODevice::ReadOnly)) return QString::fromUtf8(f.readAll());
    }
    return {};
}

void show_user_guide(QWidget* parent) {
    auto* dialog = new QDialog(parent);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle("Orrery user guide");
    auto* text = new QTextBrowser(dialog);
    text->setOpenExternalLinks(true);
    const QString section = workbench_section(find_readme());
    text->setMarkdown(section.isEmpty() ? "The user guide is the README's workbench section, and no README was found beside the program." : section);
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(text);
    dialog->resize(760, 560);
    dialog->show();
}

}  // namespace orrery::views
