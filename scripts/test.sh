#!/usr/bin/env bash
# The README's test command: install what is needed, build with -Werror and
# run every test (make check), run the test programs again inside a QEMU
# multi-tier machine (tests/vm), then the unit tests built with ASan and UBSan.
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
# Runs `make check` in build dir $1 configured with the rest of the arguments.
run_suite() {
  local dir=$1
  shift
  mkdir -p "$dir"
  (cd "$dir" && "$top/configure" --enable-werror "$@" && make -j2) || return 2
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
      grep -q -E '^:test-result: (FAIL|ERROR)' "$trs" && { echo "=== ${trs%.trs}.log"; tail -60 "${trs%.trs}.log"; }
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
    failed=$((failed + 1))
    return 1
  fi
  passed=$((passed + $(sed 's/.*passed=\([0-9]*\).*/\1/' <<<"$line")))
  failed=$((failed + $(sed 's/.*failed=\([0-9]*\).*/\1/' <<<"$line")))
  skipped=$((skipped + $(sed 's/.*skipped=\([0-9]*\).*/\1/' <<<"$line")))
  [ $rc -eq 0 ] || { grep -B2 -A40 '^=== BEGIN' "$log" | tail -80; return 1; }
}

status=0
run_suite build || status=1
echo "--- the multi-tier tests in a QEMU machine (tests/vm/run-vm.sh; log: build/check-vm.log)"
run_vm_suite || status=1
echo "--- the same tests under AddressSanitizer and UndefinedBehaviorSanitizer"
run_suite build-san --enable-sanitizers || status=1
echo "$passed passed, $failed failed, $skipped skipped"
exit $status
