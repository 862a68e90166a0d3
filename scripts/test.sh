#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's test command: install what is needed, build with -Werror and
# run every test (make check), check the packaging (make install into a
# scratch DESTDIR, the tarball's contents, the Debian packages built from it,
# linted, installed, used and purged: scripts/check-deb.sh), run the test
# programs again inside a QEMU multi-tier machine (tests/vm), then the unit
# tests built with ASan and UBSan.
# Builds are out of tree, in build/ and build-san/; a failing test's log is
# printed. The last line counts the test programs: "N passed, N failed, N skipped".
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
bash scripts/install-deps.sh
if [ -f config.status ]; then
  echo "test: this tree was configured in place; run 'make distclean' first" >&2
  exit 2
fi
autoreconf -fi

passed=0 failed=0 skipped=0
# What failed, repeated at the very end: a CI that keeps only the output's
# tail still shows which test failed and why.
failures=$(mktemp)
trap 'rm -f "$failures"' EXIT
# note_failure NAME LOG: names a failed check and keeps its log's tail.
note_failure() {
  { echo "=== FAILED: $1"; if [ -n "${2:-}" ] && [ -f "$2" ]; then tail -30 "$2"; fi; } >>"$failures"
  return 0
}
# Runs `make check` in build dir $1 configured with the rest of the arguments.
# SUITE_LEAVE_OUT, if set, is an extended regular expression: the tests whose
# names match it are not run in this build (said in one line).
run_suite() {
  local dir=$1
  shift
  mkdir -p "$dir"
  (cd "$dir" && "$top/configure" --enable-werror "$@" && make -j2) || { note_failure "build in $dir"; return 2; }
  local rc=0 tests=()
  if [ -n "${SUITE_LEAVE_OUT:-}" ]; then
    read -r -a tests <<<"$(cd "$dir" && make -s print-tests)"
    local kept=() t
    for t in "${tests[@]}"; do [[ $t =~ $SUITE_LEAVE_OUT ]] || kept+=("$t"); done
    echo "$dir: $((${#tests[@]} - ${#kept[@]})) of ${#tests[@]} tests not run in this build (those matching $SUITE_LEAVE_OUT; scripts/test.sh says why)"
    tests=("TESTS=${kept[*]}")
  fi
  (cd "$dir" && make -j2 check "${tests[@]}") || rc=1
  local f="$dir/test-suite.log"
  if [ -f "$f" ]; then
    passed=$((passed + $(sed -n 's/^# PASS: *//p' "$f")))
    failed=$((failed + $(sed -n 's/^# FAIL: *//p' "$f") + $(sed -n 's/^# ERROR: *//p' "$f")))
    skipped=$((skipped + $(sed -n 's/^# SKIP: *//p' "$f")))
  fi
  if [ $rc -ne 0 ]; then
    for trs in $(find "$dir/tests" -name '*.trs'); do
      grep -q -E '^:test-result: (FAIL|ERROR)' "$trs" && {
        echo "=== ${trs%.trs}.log"; tail -60 "${trs%.trs}.log"
        note_failure "$dir: ${trs%.trs}" "${trs%.trs}.log"
      }
    done
  fi
  return $rc
}

# The multi-tier tests (tests/vm): the plain build's test programs inside a
# QEMU machine with two DRAM nodes, a PMem node, PMem and NVMe devices. A VM
# that cannot be set up (no qemu, no kernel package) is one skip, with why.
run_vm_suite() {
  local log="$top/build/check-vm.log" rc=0
  "$top/tests/vm/run-vm.sh" "$top/build" >"$log" 2>&1 || rc=$?
  grep -E '^(PASS|FAIL|SKIP) |^host:|SKIP:' "$log" || true
  if [ $rc -eq 77 ]; then
    skipped=$((skipped + 1))
    return 0
  fi
  local line
  line=$(grep '^host: passed=' "$log" | tail -1)
  if [ -z "$line" ]; then
    tail -40 "$log"
    note_failure "the QEMU machine gave no result" "$log"
    failed=$((failed + 1))
    return 1
  fi
  passed=$((passed + $(sed 's/.*passed=\([0-9]*\).*/\1/' <<<"$line")))
  failed=$((failed + $(sed 's/.*failed=\([0-9]*\).*/\1/' <<<"$line")))
  skipped=$((skipped + $(sed 's/.*skipped=\([0-9]*\).*/\1/' <<<"$line")))
  if [ $rc -ne 0 ]; then
    grep -B2 -A40 '^=== BEGIN' "$log" | tail -80
    grep '^FAIL ' "$log" | while read -r _ name _; do note_failure "QEMU machine: $name"; done
    note_failure "QEMU machine (log: build/check-vm.log)" "$log"
    return 1
  fi
}

# The packaging, in the plain build: `make install` (scripts/check-install.sh),
# the release tarball (`make dist`) against git ls-files, and the Debian
# packages built from that tarball (scripts/check-deb.sh): dpkg-buildpackage
# builds it out of tree (a VPATH build in _build/) and runs a few fast tests
# that read distributed data files, lintian, then the packages installed,
# used (mtierd, the sample trainer from installed paths only) and purged.
# That replaced `make distcheck`, whose second build of the tree (at -O0)
# the package build now is (also at -O0, without -g). Measured here on
# 2026-12-06, 2 cores shared with two other builds: distcheck 7.3 min
# (8.1 CPU-min; 6.3 to 10.5 min before), check-deb.sh 15.3 min at a heavier
# load (9.7 CPU-min: the package build about distcheck's, then lintian,
# install, two trainer runs and the purge, about 1.5 min). Each of the three
# checks counts as one test (the Debian one is a skip, with why, where it
# cannot run: not root, no dpkg-buildpackage or lintian, no torch).
run_packaging() {
  local rc=0
  if bash scripts/check-install.sh build >build/check-install.log 2>&1; then
    passed=$((passed + 1)); tail -3 build/check-install.log
  else
    failed=$((failed + 1)); rc=1; tail -40 build/check-install.log
    note_failure "make install (scripts/check-install.sh)" build/check-install.log
  fi
  local missing tarball
  if ! (cd build && make dist >dist.log 2>&1); then
    failed=$((failed + 1)); tail -20 build/dist.log
    note_failure "make dist" build/dist.log
    return 1
  fi
  tarball=build/mtier-$(sed -n 's/^PACKAGE_VERSION = //p' build/Makefile).tar.gz
  # Every tracked file but the repository's own is in the tarball (tar
  # leaves out what it cannot store with only a warning, and a test that
  # did not run here would not miss its data).
  missing=$(comm -13 <(tar tzf "$tarball" | sed 's|^[^/]*/||' | sort) \
      <(git ls-files | grep -vE '^(\.ci/|\.gitignore$|m4/\.keep$)' | sort))
  if [ -z "$missing" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); rc=1
    echo "=== the tarball lacks these tracked files (add them to EXTRA_DIST):"; echo "$missing"
    echo "the tarball lacks: $missing" >>"$failures"
  fi
  local deb=0
  bash scripts/check-deb.sh "$tarball" >build/check-deb.log 2>&1 || deb=$?
  grep -E '^(--- check-deb|check-deb:|lintian:|mtierd --check-config|identical)' build/check-deb.log || true
  if [ $deb -eq 0 ]; then
    passed=$((passed + 1))
  elif [ $deb -eq 77 ]; then
    skipped=$((skipped + 1))
  else
    failed=$((failed + 1)); rc=1; tail -40 build/check-deb.log
    note_failure "the Debian packages (scripts/check-deb.sh)" build/check-deb.log
  fi
  return $rc
}

status=0
# The plain build without -g (configure's default is -g -O2): the same
# code, 21-31% less compile time a file here (bench_suite.cc 10.0 s to
# 7.9 s, engine_test.cc 17.3 s to 12.0 s), and a test's failure still
# names its file and line. The sanitizer build below keeps -g for its
# reports' stacks.
run_suite build CXXFLAGS=-O2 || status=1
echo "--- packaging: make install (scripts/check-install.sh), make dist, the Debian packages (scripts/check-deb.sh; log: build/check-deb.log)"
run_packaging || status=1
echo "--- the multi-tier tests in a QEMU machine (tests/vm/run-vm.sh; log: build/check-vm.log)"
run_vm_suite || status=1
# The sanitizer build runs the unit, integration, daemon and file-system
# tests; not the benchmarks' smoke tests, the CLI's text checks or the
# Python packaging (tests/bench, tests/tools, tests/python: about 3 of the
# run's 45 minutes here; they mostly time and print, and the engine they
# drive runs under ASan in the unit tests), nor the preload and trainer
# tests, which skip under ASan anyway (a preloaded ASan runtime must come
# first in LD_PRELOAD).
echo "--- the unit, integration, daemon and file-system tests under AddressSanitizer and UndefinedBehaviorSanitizer"
SUITE_LEAVE_OUT='^tests/(bench|tools|python|preload|trainer)/' run_suite build-san --enable-sanitizers || status=1
if [ -s "$failures" ]; then
  echo "--- what failed"
  cat "$failures"
fi
echo "$passed passed, $failed failed, $skipped skipped"
exit $status
