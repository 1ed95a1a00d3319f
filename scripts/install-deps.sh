#!/usr/bin/env bash
# Installs what gpusched needs on Debian 12 (bookworm: Halide 14, Catch2 v2),
# Debian 13 (trixie: Halide 19, Catch2 v3) or Debian's next release (forky
# and sid: Halide 21), picking the packages by the release this machine runs.
# Idempotent: packages already present are left alone and the package index
# is only refreshed when something is missing. Needs root (uses sudo when run
# as another user). `--tests` also installs what only the test suite needs
# (run-tests.sh).
set -euo pipefail

. /etc/os-release
case "${VERSION_CODENAME:-}" in
  bookworm) HALIDE=libhalide14-0-dev ;;  # Halide 14 + its Li2018/Adams2019/Mullapudi2016 plugins
  trixie) HALIDE=libhalide19-dev ;;      # Halide 19 + Anderson2021 and the others, GenGen as a library
  forky | sid | "") HALIDE=libhalide21-dev ;;
  *)
    echo "install-deps: Debian ${VERSION_CODENAME} is not one gpusched knows (bookworm, trixie, forky or sid)" >&2
    exit 1
    ;;
esac

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  "$HALIDE"
  libpng-dev libjpeg-dev       # HalideConfig.cmake requires PNG and JPEG (Halide::ImageIO)
  libcli11-dev libspdlog-dev nlohmann-json3-dev libsqlite3-dev sqlite3 catch2
  pocl-opencl-icd ocl-icd-opencl-dev  # run GPU schedules on the CPU to validate them
  debootstrap                  # the bundle tests make bare Debian 12 and 13 roots (scripts/in-bare-root.sh)
  slurm-wlm munge              # tests: a single-node Slurm for the slurm executor (test/slurm)
)
# Only the tests need these; the demo and the driver do not.
TEST_PACKAGES=(
  chromium                     # test/report: the HTML report loaded headless, checked and screenshotted
)
if [ "${1:-}" = "--tests" ]; then PACKAGES+=("${TEST_PACKAGES[@]}"); fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "install-deps: run as root (or install sudo) to install: ${PACKAGES[*]}" >&2; exit 1
  fi
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# ptxas comes with the CUDA toolkit, not with Debian main. gpusched works
# without it (ptxas checks are then reported as "not checked"), but the test
# suite checks real PTX with it.
if ! command -v ptxas >/dev/null && [ ! -x /usr/local/cuda/bin/ptxas ]; then
  echo "install-deps: warning: ptxas not found (install the CUDA toolkit; /usr/local/cuda/bin is searched)" >&2
fi
