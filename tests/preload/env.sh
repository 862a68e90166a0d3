# SPDX-License-Identifier: Apache-2.0
# Sourced by every preload test (*.test). Sets:
#   LIBMTIER   the built libmtier.so (absolute path)
#   PRELOAD_BIN  the directory of the preload test programs
#   MTIER_TEST_TMP  a scratch directory removed at exit (store files go here)
#   PYTHON     Debian's python3 (python3-torch is installed for it)
# and the functions skip REASON (exit 77) and fail REASON (exit 1).
set -eu
: "${abs_top_builddir:?run from make check}"
: "${abs_top_srcdir:?run from make check}"
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
# built_with Cairo|Microhttpd: whether configure found it (src/build_config.h).
built_with() { grep -q "kHave$1 = true" "$abs_top_builddir/src/build_config.h"; }
LIBMTIER="$abs_top_builddir/lib/.libs/libmtier.so"
PRELOAD_BIN="$abs_top_builddir/tests/preload"
PYTHON=/usr/bin/python3
[ -f "$LIBMTIER" ] || fail "libmtier.so not built at $LIBMTIER"
if [ "${MTIER_TEST_SANITIZERS:-no}" = yes ]; then
  skip "sanitizer build: ASan replaces malloc itself, so a malloc interposer cannot be preloaded under it (the plain build runs this test)"
fi
MTIER_TEST_TMP=$(mktemp -d /var/tmp/mtier-test.XXXXXX)
trap 'rm -rf "$MTIER_TEST_TMP"' EXIT
# Options come from the test, not from the machine.
unset MTIER_CONF MTIER_VERBOSE MTIER_DRAM_BYTES MTIER_MIN_BYTES MTIER_NAMES MTIER_STORE_PATH 2>/dev/null || true
# No daemon a machine may run takes part (the daemon tests start their own).
export MTIER_DAEMON_SOCKET=none
export MTIER_STORE_PATH="$MTIER_TEST_TMP"
export PYTHONDONTWRITEBYTECODE=1
