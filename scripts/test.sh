#!/usr/bin/env bash
# The README's test command: install what is needed, build with -Werror and
# run every test (make check), then the same tests built with ASan and UBSan.
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

status=0
run_suite build || status=1
echo "--- the same tests under AddressSanitizer and UndefinedBehaviorSanitizer"
run_suite build-san --enable-sanitizers || status=1
echo "$passed passed, $failed failed, $skipped skipped"
exit $status
