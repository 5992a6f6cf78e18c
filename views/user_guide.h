#pragma once
// Help ▸ User guide: the README's workbench section, rendered. The README is installed with the programs
// (share/doc/orrery) and read from the source tree in a build, so the guide and the README never differ.
#include <QString>
#include <QWidget>

namespace orrery::views {

// The "## The workbench" section of README markdown, heading included; empty when there is none.
QString workbench_section(const QString& readme_markdown);
// The README beside an installed workbench, else the source tree's; empty when neither is there.
QString find_readme();
void show_user_guide(QWidget* parent);

}  // namespace orrery::views
