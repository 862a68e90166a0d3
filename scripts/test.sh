#!/usr/bin/env bash
# The README's test command: install what is needed, build with -Werror,
# run every test (make check), and print each test log that failed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
autoreconf -fi
./configure --enable-werror
make -j2
summary() {
  local f=test-suite.log
  [ -f $f ] || return 0
  pass=$(sed -n 's/^# PASS: *//p' $f); fail=$(sed -n 's/^# FAIL: *//p' $f)
  err=$(sed -n 's/^# ERROR: *//p' $f); skip=$(sed -n 's/^# SKIP: *//p' $f)
  echo "$pass passed, $((fail + err)) failed, $skip skipped"
}
if ! make -j2 check; then
  for log in $(find tests -name '*.log' ! -name test-suite.log); do
    grep -q -E '^(FAIL|ERROR)' "${log%.log}.trs" 2>/dev/null && { echo "=== $log"; tail -50 "$log"; }
  done
  summary
  exit 1
fi
summary
