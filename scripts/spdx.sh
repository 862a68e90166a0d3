#!/usr/bin/env bash
# Puts "SPDX-License-Identifier: Apache-2.0" at the top of every source file
# of the checkout that lacks it, in the file's own comment syntax (after a
# #! line), and leaves every other file as it is: running it again changes
# nothing. With --check it changes nothing and lists the files that lack
# the line. A tracked file of a kind it does not know is an error in both
# modes: say here how such a file is commented, or that it is data.
#   scripts/spdx.sh [--check] [FILE...]    (default: every file git tracks)
# Exit 0: every source file has the line (or now has it); 1: --check found
# files without it, or a file of an unknown kind; 2: usage, or not a git
# checkout and no FILE given.
set -euo pipefail
cd "$(dirname "$0")/.."
readonly TAG="SPDX-License-Identifier: Apache-2.0"
check=no
if [ "${1:-}" = --check ]; then check=yes; shift; fi
case "${1:-}" in -*) echo "usage: $0 [--check] [FILE...]" >&2; exit 2 ;; esac

# Sets `line` to the line for FILE in its comment syntax, "-" for data that
# carries none (formats without comments, binaries, test data, license
# texts); returns 1 for a kind of file it does not know.
line_for() {
  case "$1" in
    LICENSE | NEWS | .gitignore | m4/.keep | python/mtier/py.typed) line=- ;;
    tests/unit/testdata/* | *.png | *.mtrec | *.ring) line=- ;;
    debian/changelog | debian/control | debian/copyright | debian/source/format) line=- ;;
    debian/*.install | debian/*.docs | debian/*.lintian-overrides | debian/*.README.Debian) line=- ;;
    lib/mtier.h | lib/libmtier.map) line="/* $TAG */" ;;  # C and a linker script
    *.cc | *.h | *.h.in) line="// $TAG" ;;
    configure.ac) line="dnl $TAG" ;;
    *.[1-8]) line=".\\\" $TAG" ;;
    *.md) line="<!-- $TAG -->" ;;
    *.py | *.sh | *.test | *.inc | *.am | *.conf | *.toml | *.yml | *.supp | *.pc.in | *.service.in) line="# $TAG" ;;
    .ci/run | debian/rules | debian/*.postrm | debian/*.postinst | debian/*.prerm | debian/*.preinst) line="# $TAG" ;;
    *) return 1 ;;
  esac
}

# Inserts LINE at the top of FILE, after a #! line; keeps its mode.
add_tag() {
  local f=$1 line=$2 tmp
  tmp=$(mktemp "$f.spdx.XXXXXX")
  if head -n 1 -- "$f" | grep -q '^#!'; then
    { head -n 1 -- "$f"; printf '%s\n' "$line"; tail -n +2 -- "$f"; } >"$tmp"
  else
    { printf '%s\n' "$line"; cat -- "$f"; } >"$tmp"
  fi
  chmod --reference="$f" "$tmp"
  mv -- "$tmp" "$f"
}

if [ $# -gt 0 ]; then
  files=("$@")
elif git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files)
else
  echo "spdx: not a git checkout: name the files" >&2
  exit 2
fi

# The files that have the tag in their first three lines, in one pass.
declare -A tagged=()
while IFS= read -r f; do tagged[$f]=1; done < <(
  for f in "${files[@]}"; do [ -f "$f" ] && printf '%s\0' "$f"; done |
    xargs -0 -r awk -v tag="$TAG" 'FNR <= 3 && index($0, tag) { print FILENAME; nextfile } FNR > 3 { nextfile }')

missing=0 unknown=0 added=0 line=
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  if ! line_for "$f"; then
    echo "spdx: $f: no comment syntax known for this kind of file (add it to scripts/spdx.sh)" >&2
    unknown=$((unknown + 1))
    continue
  fi
  [ "$line" = - ] && continue
  [ -n "${tagged[$f]:-}" ] && continue
  if [ $check = yes ]; then
    echo "spdx: $f: no '$TAG' line at the top (scripts/spdx.sh adds it)"
    missing=$((missing + 1))
  else
    add_tag "$f" "$line"
    added=$((added + 1))
  fi
done
if [ $check = yes ]; then
  [ $missing -eq 0 ] && [ $unknown -eq 0 ] && echo "spdx: every source file of ${#files[@]} carries '$TAG'"
else
  echo "spdx: added the line to $added files"
fi
[ $missing -eq 0 ] && [ $unknown -eq 0 ]
