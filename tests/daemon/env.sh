# SPDX-License-Identifier: Apache-2.0
# Sourced by the daemon tests (*.test): a private mtierd on a socket in a
# scratch directory, the tools, and helpers. Sets:
#   MTIERD MTIER HOT_RANGE  the built programs
#   T            the scratch directory (removed at exit, with every daemon
#                and program started through start_daemon / bg)
#   SOCK         the daemon's socket; MTIER_DAEMON_SOCKET points at it
#   PYTHON       Debian's python3
set -eu
: "${abs_top_builddir:?run from make check}"
: "${abs_top_srcdir:?run from make check}"
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
# built_with Cairo|Microhttpd: whether configure found it (src/build_config.h).
built_with() { grep -q "kHave$1 = true" "$abs_top_builddir/src/build_config.h"; }
MTIERD="$abs_top_builddir/daemon/mtierd"
MTIER="$abs_top_builddir/tools/mtier"
HOT_RANGE="$abs_top_builddir/tests/daemon/hot_range"
PYTHON=/usr/bin/python3
[ "$(id -u)" = 0 ] || skip "needs root: userfaultfd for the test programs and perf_event_open on them"
T=$(mktemp -d /var/tmp/mtierd-test.XXXXXX)
PIDS=
cleanup() {
  for p in $PIDS; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$T"
}
trap cleanup EXIT
SOCK="$T/mtierd.sock"
export MTIER_DAEMON_SOCKET="$SOCK"
unset MTIER_CONF MTIER_VERBOSE MTIER_DRAM_BYTES MTIER_MIN_BYTES MTIER_NAMES 2>/dev/null || true
export MTIER_STORE_PATH="$T"

# start_daemon LOG [ARGS...]: mtierd in the background, waits for its socket.
start_daemon() {
  log=$1; shift
  "$MTIERD" --config "$T/none.conf" --socket "$SOCK" "$@" >"$log" 2>&1 &
  DAEMON_PID=$!
  PIDS="$PIDS $DAEMON_PID"
  for _ in $(seq 100); do
    [ -S "$SOCK" ] && grep -q serving "$log" && return 0
    kill -0 "$DAEMON_PID" 2>/dev/null || { cat "$log"; fail "mtierd exited at start"; }
    sleep 0.1
  done
  cat "$log"; fail "mtierd did not start serving within 10 s"
}
# No metrics endpoint: the tests run side by side (tests/daemon/metrics.test
# gives one a port of its own).
echo "metrics_address = none" >"$T/none.conf"

# bg OUT CMD...: a program in the background; BG_PID is its pid.
bg() {
  out=$1; shift
  "$@" >"$out" 2>&1 &
  BG_PID=$!
  PIDS="$PIDS $BG_PID"
}

# wait_for SECONDS CMD...: retries CMD every 0.2 s until it succeeds.
wait_for() {
  n=$(( $1 * 5 )); shift
  for _ in $(seq "$n"); do "$@" && return 0; sleep 0.2; done
  return 1
}

# The daemon's JSON status, one value by a Python expression over `s`.
status_value() {
  "$MTIER" status --json | "$PYTHON" -c "import json,sys; s=json.load(sys.stdin); print($1)"
}

# other_user_tool: sets OTHER_MTIER to a copy of the tool that user nobody
# can run, wherever the checkout lives (a build tree under /root or a 0700
# directory is out of its reach): the tool itself when nobody can run it,
# else the program and the libraries it was linked with, copied into $T.
# Returns 1, with OTHER_WHY saying why, when neither runs as nobody.
asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
other_user_tool() {
  OTHER_MTIER="$MTIER"
  asnobody "$OTHER_MTIER" --version >/dev/null 2>&1 && return 0
  d="$T/nobody-bin"
  mkdir -p "$d"
  real="$abs_top_builddir/tools/.libs/mtier"
  [ -x "$real" ] || real="$MTIER"  # linked statically: the program itself
  cp "$real" "$d/mtier.bin"
  cp -P "$abs_top_builddir"/lib/.libs/libmtier.so* "$d/" 2>/dev/null || true
  printf '#!/bin/sh\nLD_LIBRARY_PATH="%s" exec "%s/mtier.bin" "$@"\n' "$d" "$d" >"$d/mtier"
  chmod -R a+rX "$d"
  chmod 755 "$d/mtier"
  OTHER_MTIER="$d/mtier"
  out=$(asnobody "$OTHER_MTIER" --version 2>&1) && return 0
  OTHER_WHY="user nobody can run neither $MTIER nor a copy of it in $d: $out"
  return 1
}

# region_rss PID: KiB of the process's region memfd in memory, as the kernel
# counts it: fincore(1) on /proc/PID/fd/N (the trainer's PTEs are zapped by
# the access sampler, so the mapping's Rss undercounts; the memfd's pages
# are the budget).
region_rss() {
  for fd in /proc/"$1"/fd/*; do
    case $(readlink "$fd") in
      */memfd:mtier-region*) fincore -b -n --output RES "$fd" | awk '{print int($1 / 1024)}'; return ;;
    esac
  done
  echo 0
}
