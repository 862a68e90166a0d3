#!/usr/bin/env bash
# The README's test command: install what is needed, build with -Werror and
# run every test (make check), check the packaging (make install into a
# scratch DESTDIR, make distcheck with a few fast tests), run the test
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
run_suite() {
  local dir=$1
  shift
  mkdir -p "$dir"
  (cd "$dir" && "$top/configure" --enable-werror "$@" && make -j2) || { note_failure "build in $dir"; return 2; }
  local rc=0
  (cd "$dir" && make -j2 check) || rc=1
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

# The packaging, in the plain build: `make install` (scripts/check-install.sh)
# and `make distcheck`: the tarball builds out of tree with -Werror,
# installs, uninstalls and cleans. Its `make check` builds and runs only a
# few fast tests that read distributed data files (man pages, sample
# configs); the full suite has just run in build/. TESTS and check_PROGRAMS
# given to make reach distcheck's inner makes (command-line variables pass
# down through MAKEFLAGS); check_PROGRAMS must name every program of TESTS,
# or distclean leaves it behind. That every test's sources and data are in
# the tarball is checked below against git ls-files instead of by building
# them all (which costs about 10 more minutes here); it compiles at -O0,
# since what it checks is the packaging, not the code. Each of the three
# checks counts as one test. This distcheck took 6.3 and 10.5 minutes on 2
# cores shared with other builds (17 minutes when it built every check program).
DISTCHECK_PROGRAMS="tests/unit/config_test tests/unit/sample_config_test"
DISTCHECK_TESTS="$DISTCHECK_PROGRAMS tests/preload/no_pmem2_link.test"
run_packaging() {
  local rc=0
  if bash scripts/check-install.sh build >build/check-install.log 2>&1; then
    passed=$((passed + 1)); tail -3 build/check-install.log
  else
    failed=$((failed + 1)); rc=1; tail -40 build/check-install.log
    note_failure "make install (scripts/check-install.sh)" build/check-install.log
  fi
  local missing
  if (cd build && make -j2 distcheck check_PROGRAMS="$DISTCHECK_PROGRAMS" TESTS="$DISTCHECK_TESTS" \
      DISTCHECK_CONFIGURE_FLAGS="--enable-werror CXXFLAGS=-O0" >distcheck.log 2>&1); then
    grep -A3 'archives ready for distribution' build/distcheck.log || true
    # Every tracked file but the repository's own is in the tarball (tar
    # leaves out what it cannot store with only a warning, and a test that
    # did not run here would not miss its data).
    missing=$(comm -13 <(tar tzf build/mtier-"$(sed -n 's/^PACKAGE_VERSION = //p' build/Makefile)".tar.gz |
        sed 's|^[^/]*/||' | sort) <(git ls-files | grep -vE '^(\.ci/|\.gitignore$|m4/\.keep$)' | sort))
    if [ -z "$missing" ]; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1)); rc=1
      echo "=== the tarball lacks these tracked files (add them to EXTRA_DIST):"; echo "$missing"
      echo "the tarball lacks: $missing" >>"$failures"
    fi
  else
    failed=$((failed + 1)); rc=1
    echo "=== make distcheck failed (build/distcheck.log):"; tail -40 build/distcheck.log
    note_failure "make distcheck" build/distcheck.log
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
echo "--- packaging: make install (scripts/check-install.sh) and make distcheck (log: build/distcheck.log)"
run_packaging || status=1
echo "--- the multi-tier tests in a QEMU machine (tests/vm/run-vm.sh; log: build/check-vm.log)"
run_vm_suite || status=1
echo "--- the same tests under AddressSanitizer and UndefinedBehaviorSanitizer"
run_suite build-san --enable-sanitizers || status=1
if [ -s "$failures" ]; then
  echo "--- what failed"
  cat "$failures"
fi
echo "$passed passed, $failed failed, $skipped skipped"
exit $status
