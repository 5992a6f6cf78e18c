#!/usr/bin/env bash
# The .deb: built by cpack from this build, unpacked into a scratch root (dpkg-deb -x, as dpkg would lay it
# out, without installing), then its programs run from there: --version, the bundled demo found in the
# package's own data (not the source tree), run headless to the end, and its comparison report written as a PDF.
# Usage: test_package.sh BUILD_DIR WITH_WORKBENCH(ON|OFF)
set -euo pipefail
build="$1"
workbench="$2"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

(cd "$build" && cpack -G DEB -B "$scratch/out" >/dev/null) || fail "cpack could not build the package"
deb="$(ls "$scratch"/out/*.deb)"
root="$scratch/root"
dpkg-deb -x "$deb" "$root"
depends="$(dpkg-deb -f "$deb" Depends)"
for lib in libsqlite3-0 libyaml-cpp libc6; do
  [[ "$depends" == *"$lib"* ]] || fail "Depends lacks $lib: $depends"
done

cli="$root/usr/bin/orrery-cli"
[ -x "$cli" ] || fail "no usr/bin/orrery-cli in the package"
version="$("$cli" --version)"
[[ "$version" == "orrery-cli "* ]] || fail "--version printed: $version"

# The bundled demo is the package's: its path is under the scratch root.
validated="$("$cli" validate workbench-demo 2>&1)"
[[ "$validated" == "$root/usr/share/orrery/presets/scenarios/workbench-demo.json: valid"* ]] || fail "validate: $validated"
summaries="$(cd "$scratch" && "$cli" run workbench-demo --out demo.orrery --json 2>/dev/null)"
[ "$(printf '%s\n' "$summaries" | grep -c '"status":"ok"')" -eq 4 ] || fail "the headless demo did not end with 4 experiments ok: $summaries"

# The demo's comparison report, as a PDF, from the packaged program (Qt's PDF writer and SVG renderer are its
# runtime dependencies).
(cd "$scratch" && "$cli" report demo.orrery -o demo.pdf >/dev/null 2>&1) || fail "orrery-cli report could not write the demo's PDF"
[ "$(head -c 5 "$scratch/demo.pdf")" = "%PDF-" ] || fail "demo.pdf is not a PDF"
[[ "$depends" == *"libqt6svg6"* ]] || fail "Depends lacks libqt6svg6 (the report's charts): $depends"

grep -q '^## The workbench' "$root/usr/share/doc/orrery/README.md" || fail "no README (the workbench's user guide) in usr/share/doc/orrery"

if [ "$workbench" = "ON" ]; then
  [ -x "$root/usr/bin/orrery" ] || fail "no usr/bin/orrery (the workbench) in the package"
  desktop="$root/usr/share/applications/orrery.desktop"
  [ -f "$desktop" ] || fail "no desktop entry"
  grep -q '^Exec=orrery %f$' "$desktop" || fail "desktop entry does not start the workbench on a file"
  grep -q '^MimeType=application/x-orrery-project;$' "$desktop" || fail "desktop entry does not take .orrery projects"
  if command -v desktop-file-validate >/dev/null; then desktop-file-validate "$desktop" || fail "desktop-file-validate"; fi
  grep -q '<glob pattern="\*.orrery"/>' "$root/usr/share/mime/packages/orrery.xml" || fail "no MIME type for .orrery"
  grep -q '<svg' "$root/usr/share/icons/hicolor/scalable/apps/orrery.svg" || fail "no icon"
fi
echo "package ok: $(basename "$deb"), $(du -k "$deb" | cut -f1) KiB; $version; the demo ran from the unpacked package"
