#!/usr/bin/env bash
# Checks (or, with --fix, applies) .clang-format on every C++ source of the
# tree. One clang-format version formats the tree, Debian 12's clang-format
# 14, because versions disagree on details (19 breaks some lambdas and
# initializer lists differently): a check with another version would fail
# on code nobody changed. CI runs this in its Debian 12 root (.ci/run).
#
#   scripts/check-format.sh          # lists the files that differ; exit 1 if any
#   scripts/check-format.sh --fix    # formats them in place
#
# Installs clang-format-14 with apt-get when it is missing and this is root
# on a Debian that has it (idempotent, like the README's commands).
set -euo pipefail
cd "$(dirname "$0")/.."
fix=0
case "${1:-}" in
  --fix) fix=1 ;;
  "") ;;
  *) echo "usage: $0 [--fix]" >&2; exit 2 ;;
esac
cf=${CLANG_FORMAT:-clang-format-14}
if ! command -v "$cf" >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    # A fresh root may have no package lists yet.
    apt-cache show clang-format-14 >/dev/null 2>&1 || apt-get update -qq
    if apt-cache show clang-format-14 >/dev/null 2>&1; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends clang-format-14 >/dev/null
    fi
  fi
  if ! command -v "$cf" >/dev/null 2>&1; then
    echo "check-format: $cf not found; the tree is formatted with Debian 12's clang-format 14" \
         "(apt-get install clang-format-14, or set CLANG_FORMAT)" >&2
    exit 2
  fi
fi
# Every C++ source of the tree, but test inputs (test/data) kept byte for
# byte: the files git knows or would add, or, where git is not installed (CI's fresh
# roots get a clone but no git), those of the source folders.
if command -v git >/dev/null 2>&1 && git rev-parse --git-dir >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.h' | grep -v '^test/data/')
else
  mapfile -t files < <(find cli common core costmodel db tuner benchmarks test -path test/data -prune -o \
                         -type f \( -name '*.cpp' -o -name '*.h' \) -print | sort)
fi
if [ "$fix" -eq 1 ]; then
  printf '%s\0' "${files[@]}" | xargs -0 -n 50 "$cf" -i
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$cf" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ "${#bad[@]}" -gt 0 ]; then
  echo "check-format: ${#bad[@]} of ${#files[@]} files differ from .clang-format ($cf); run scripts/check-format.sh --fix:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
