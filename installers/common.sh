# Sourced by setup.sh and test.sh. orrery_install_deps installs the Debian packages Orrery builds with,
# and only those, when any is missing (as root, through sudo, or as a user who may sudo);
# orrery_build does that, then configures and builds the Release preset.
orrery_packages=(
  g++ cmake ninja-build git            # toolchain
  nlohmann-json3-dev                   # scenario JSON
  libyaml-cpp-dev                      # ASTRA-sim network YAML
  libcli11-dev                         # orrery-cli
  libboost-graph-dev                   # DOT and GraphML
  libssl-dev                           # SHA-256 of experiments
  libsqlite3-dev                       # the results store
  libprotobuf-dev protobuf-compiler    # Chakra execution traces
  libtinyxml2-dev pkg-config           # MSCCL XML algorithms
  zlib1g-dev                           # gzipped traces (Chakra .et.gz in, Chrome trace .json.gz out)
  qt6-base-dev                         # Qt Widgets and Qt Test
  libqt6opengl6-dev                    # QOpenGLWidget: the live inspector's canvas
  qt6-svg-dev                          # the report's charts in PDF reports and in the Results view
  poppler-utils                        # test_report reads the PDF report back (pdfinfo, pdftotext)
  libimgui-dev                         # Dear ImGui: the live inspector
  libgl-dev                            # OpenGL headers for Dear ImGui's renderer
  xvfb xauth libgl1-mesa-dri           # GUI screenshots in tests (software OpenGL under Xvfb); headless demo
  libopenmpi-dev openmpi-bin           # sweeps over MPI ranks (orrery-cli run under mpirun or srun); test_mpi
  dpkg-dev desktop-file-utils          # the .deb (cpack reads shared-library dependencies); test_package checks it
)

# Thrust for the device backend's OpenMP build: the CUDA Toolkit's CCCL where it is installed, else Debian's.
if [ ! -e /usr/local/cuda/include/cccl/thrust/version.h ]; then
  orrery_packages+=(libthrust-dev libcub-dev)
fi

orrery_install_deps() {
  local missing=()
  for p in "${orrery_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "orrery: all build dependencies are installed"
    return 0
  fi
  echo "orrery: installing ${missing[*]}"
  local as_root=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then as_root=(sudo); else
      echo "orrery: need root to install ${missing[*]}: run this as root or with sudo" >&2
      return 1
    fi
  fi
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
}

# Arguments go to the configure step (test.sh: -DORRERY_WERROR=ON, so that a new warning fails CI).
orrery_build() {
  orrery_install_deps
  cmake --preset release "$@"
  cmake --build --preset release
}
