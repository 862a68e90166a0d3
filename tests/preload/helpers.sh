# SPDX-License-Identifier: Apache-2.0
# Helpers of the preload tests' scripts; sourced after env.sh:
#   . "$abs_top_srcdir/tests/preload/env.sh"
#   . "$abs_top_srcdir/tests/preload/helpers.sh"
#
# A script runs steps; each step runs one command with its stdout and stderr
# kept apart and shown, and checks its exit status and stderr. A failed step
# is reported and the script goes on with the next one; `finish` exits 1 if
# any step failed. The programs themselves stop at their first failed check
# and say what was expected and what was found.

# Options that env.sh does not clear: the tests set what they need.
unset MTIER_STATS MTIER_EXCLUDE_SIZES MTIER_INCLUDE_SIZES MTIER_INTERPOSE PRELOAD_EXPECT \
  MTIER_TEST_CTOR 2>/dev/null || true
export MTIER_TEST_TMP

# The small sizes every test runs with (a script may change them per step).
export MTIER_MIN_BYTES=1M MTIER_DRAM_BYTES=4M

# A library line: "mtier: ...", "mtier: error: ..." or "mtier: warning: ..."
# (into the journal the log puts an sd-daemon priority "<N>" in front
# instead, see src/log/log.h; that is accepted and reported).
MTIER_LINE='^(<[0-7]>)?mtier: ((error|warning): )?'

FAILED_STEPS=
STEP_OUT=
STEP_ERR=
STEP_RC=0

need_programs() {
  for p in "$@"; do
    [ -x "$PRELOAD_BIN/$p" ] || fail "$PRELOAD_BIN/$p is not built (make check builds it)"
  done
}

# Skips the test when this process cannot get a userfaultfd (the library
# would then manage nothing, by design).
need_uffd() {
  need_programs no_uffd
  why=$("$PRELOAD_BIN/no_uffd" --probe) || skip "$why"
}

step_fail() {
  echo "STEP FAILED: $*"
  FAILED_STEPS="$FAILED_STEPS
  - $*"
}

# run NAME CMD...: runs CMD, keeps its output in $STEP_OUT / $STEP_ERR (files)
# and its exit status in $STEP_RC, and shows both outputs.
run() {
  name=$1
  shift
  STEP_OUT="$MTIER_TEST_TMP/$name.out"
  STEP_ERR="$MTIER_TEST_TMP/$name.err"
  echo "=== $name: $*"
  set +e
  "$@" >"$STEP_OUT" 2>"$STEP_ERR"
  STEP_RC=$?
  set -e
  sed 's/^/    /' "$STEP_OUT"
  if [ -s "$STEP_ERR" ]; then
    echo "  stderr:"
    sed 's/^/  | /' "$STEP_ERR"
  fi
  echo "  exit status $STEP_RC"
}

# ok_step NAME CMD...: must exit 0 and print nothing on stderr (by default
# the library prints nothing at all).
ok_step() {
  run "$@"
  if [ "$STEP_RC" -ne 0 ]; then
    step_fail "$1: exit status $STEP_RC, expected 0 ($(grep -m1 '^FAIL' "$STEP_OUT" || tail -n1 "$STEP_OUT"))"
  elif [ -s "$STEP_ERR" ]; then
    step_fail "$1: expected nothing on stderr (the library prints nothing by default), found: $(head -n3 "$STEP_ERR")"
  fi
}

# With the library preloaded.
preloaded() { env LD_PRELOAD="$LIBMTIER" "$@"; }

# stderr_lines: how many lines $STEP_ERR has.
stderr_lines() { wc -l <"$STEP_ERR" | tr -d ' '; }

# expect_one_lib_line NAME PATTERN: $STEP_ERR is exactly one line, a library
# line, matching the (extended, case-insensitive) PATTERN.
expect_one_lib_line() {
  n=$(stderr_lines)
  if [ "$n" -ne 1 ]; then
    step_fail "$1: expected exactly one line on stderr, found $n: $(head -n4 "$STEP_ERR" | tr '\n' '|')"
    return 0
  fi
  if ! grep -Eq "$MTIER_LINE" "$STEP_ERR"; then
    step_fail "$1: expected a line starting \"mtier:\", found: $(cat "$STEP_ERR")"
  elif ! grep -Eiq "$2" "$STEP_ERR"; then
    step_fail "$1: expected the line to match /$2/, found: $(cat "$STEP_ERR")"
  else
    echo "  ok: one library line on stderr, matching /$2/"
    if grep -Eq '^<[0-7]>' "$STEP_ERR"; then
      echo "  note: the line starts with an sd-daemon priority prefix (<N>mtier:)"
    fi
  fi
}

finish() {
  if [ -n "$FAILED_STEPS" ]; then
    echo "FAIL: these steps failed:$FAILED_STEPS"
    exit 1
  fi
  echo "PASS"
  exit 0
}
