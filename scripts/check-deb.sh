#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds mtier's Debian packages from a release tarball and uses them as an
# operator would:
#  1. dpkg-buildpackage -us -uc -b in the unpacked tarball (debian/ is in
#     it), with its few fast tests (debian/rules, override_dh_auto_test);
#  2. lintian: no error, and no warning that debian/*.lintian-overrides does
#     not explain;
#  3. apt-get install of the four packages; mtierd --check-config; mtierd
#     started (systemctl where systemd runs, else by hand);
#  4. the sample trainer (tests/trainer/dlrm_train.py, copied out) run from
#     a scratch directory with the installed `mtier run`, the checkout moved
#     out of reach and the tarball's build deleted: the runtime, the Python
#     package and sitecustomize are the installed ones, the trainer
#     registers with the installed mtierd, and every loss and the final
#     weights equal the run without mtier;
#  5. mtierd stopped; the packages purged while a second trainer runs with
#     a named store file in /run/mtier: the trainer ends identical, its
#     store file is still there, and of the packages nothing is left (files,
#     conffiles, the unit's enablement) but what debian/mtier.README.Debian
#     says a purge leaves (here: /run/mtier, holding that store).
#   scripts/check-deb.sh TARBALL
# Run as root (apt-get, dpkg, mtierd). Exit 0 when all hold, 1 naming what
# failed, 2 on usage, 77 when it cannot run here (not root, no
# dpkg-buildpackage or lintian, the packages already installed, no torch).
# Each step prints its time; the test command (scripts/test.sh) runs it.
set -euo pipefail
[ $# -eq 1 ] && [ -f "$1" ] || { echo "usage: $0 TARBALL (from make dist)" >&2; exit 2; }
tarball=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
top=$(cd "$(dirname "$0")/.." && pwd)
pkgs="libmtier0 libmtier-dev mtier python3-mtier"
skip() { echo "check-deb: SKIP: $*"; exit 77; }
fail() { echo "check-deb: FAIL: $*"; exit 1; }
[ "$(id -u)" -eq 0 ] || skip "not root (apt-get, dpkg and mtierd need it)"
for t in dpkg-buildpackage lintian apt-get; do
  command -v "$t" >/dev/null || skip "no $t (scripts/install-deps.sh installs it)"
done
/usr/bin/python3 -c 'import torch, numpy' 2>/dev/null ||
  skip "/usr/bin/python3 cannot import torch and numpy (apt-get install python3-torch python3-numpy)"
for p in $pkgs; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -qv 'not-installed'; then
    skip "$p is installed already (dpkg -P $pkgs first): this check installs and purges them"
  fi
done

work=$(mktemp -d /var/tmp/mtier-deb.XXXXXX)
away="$top.out-of-reach.$$"
DAEMON_PID= LONG_PID=
cleanup() {
  set +e
  [ -n "$LONG_PID" ] && kill "$LONG_PID" 2>/dev/null && wait "$LONG_PID" 2>/dev/null
  [ -n "$DAEMON_PID" ] && kill "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null
  [ -d "$away" ] && [ ! -e "$top" ] && mv "$away" "$top"
  if dpkg-query -W -f='${Status}\n' $pkgs 2>/dev/null | grep -qv 'not-installed'; then
    dpkg -P $pkgs >/dev/null 2>&1
  fi
  rm -f /run/mtier/check-deb.store
  rmdir /run/mtier 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
t0=$(date +%s)
step() { echo "--- check-deb: $* ($(($(date +%s) - t0)) s)"; }

# 1. Build.
step "dpkg-buildpackage -us -uc -b from $(basename "$tarball")"
tar -C "$work" -xzf "$tarball"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)
[ -f "$src/debian/control" ] || fail "the tarball has no debian/ directory"
# What is checked is the packaging, not the code (built with -O2 and tested
# in build/ before): unless MTIER_DEB_RELEASE_FLAGS=1, the packages are built
# at -O0 without -g and without debug symbol packages, as make distcheck
# built the tree. A plain
# dpkg-buildpackage uses Debian's flags.
opts="parallel=$(nproc 2>/dev/null || echo 2) noautodbgsym"
strip=
if [ "${MTIER_DEB_RELEASE_FLAGS:-0}" != 1 ]; then opts="$opts noopt"; strip=-g; fi
if ! (cd "$src" && DEB_BUILD_OPTIONS="$opts ${DEB_BUILD_OPTIONS:-}" DEB_CXXFLAGS_STRIP="$strip" \
      DEB_CFLAGS_STRIP="$strip" dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1; then
  tail -60 "$work/build.log"
  fail "dpkg-buildpackage failed (its log's tail above)"
fi
changes=$(ls "$work"/mtier_*.changes)
for p in $pkgs; do
  ls "$work/${p}_"*.deb >/dev/null 2>&1 || fail "no $p package was built"
done
grep -E '^(PASS|FAIL|ERROR|SKIP): ' "$work/build.log" || true

# 2. lintian.
step "lintian"
# Errors fail lintian itself; a warning shows as W: unless an override in
# debian/*.lintian-overrides keeps it, with its reason (O:, after N: lines).
if ! lintian --fail-on error --tag-display-limit 0 --show-overrides "$changes" >"$work/lintian.log" 2>&1 ||
    grep -q '^W: ' "$work/lintian.log"; then
  cat "$work/lintian.log"
  fail "lintian: an error, or a warning not explained in debian/*.lintian-overrides"
fi
echo "lintian: $(grep -c '^[EW]: ' "$work/lintian.log" || true) errors and warnings," \
  "$(grep -c '^O: ' "$work/lintian.log" || true) kept and explained (debian/*.lintian-overrides)"

# 3. Install, check mtierd's configuration, start it.
step "apt-get install"
# shellcheck disable=SC2046
apt-get install -y -qq --no-install-recommends $(for p in $pkgs; do ls "$work/${p}_"*.deb; done) \
  >"$work/install.log" 2>&1 || { tail -30 "$work/install.log"; fail "apt-get install of the packages"; }
for p in $pkgs; do dpkg -L "$p"; done | sort -u >"$work/files"
dpkg-query -W -f='${Conffiles}\n' mtier | awk 'NF { print $1 }' >"$work/conffiles"
[ "$(sort "$work/conffiles" | tr '\n' ' ')" = "/etc/mtier.conf /etc/mtier/mtierd.conf " ] ||
  fail "the conffiles are not /etc/mtier.conf and /etc/mtier/mtierd.conf: $(cat "$work/conffiles")"
out=$(mtierd --check-config 2>&1) || fail "mtierd --check-config: $out"
[ "$out" = "/etc/mtier/mtierd.conf: ok" ] || fail "mtierd --check-config said: $out"
echo "mtierd --check-config: $out"
if [ -d /run/systemd/system ]; then
  systemctl restart mtierd || fail "systemctl restart mtierd"
else  # no systemd here: the unit's ExecStart by hand
  /usr/sbin/mtierd >"$work/mtierd.log" 2>&1 &
  DAEMON_PID=$!
fi
for _ in $(seq 100); do [ -S /run/mtier/mtierd.sock ] && break; sleep 0.1; done
[ -S /run/mtier/mtierd.sock ] || { cat "$work/mtierd.log" 2>/dev/null; fail "mtierd made no socket"; }

# 4. Train with the installed paths only.
step "the sample trainer with the installed mtier run"
mkdir "$work/run" "$work/store"
cp "$top/tests/trainer/dlrm_train.py" "$top/tests/trainer/workload.py" \
  "$top/tests/trainer/table_counts.py" "$work/run/"
rm -rf "$src"  # the tarball's build tree
mv "$top" "$away" || fail "cannot move the checkout $top out of reach"
cd "$work/run"
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
mtier --version | grep -qx 'Configuration: /etc/mtier.conf (the runtime), /etc/mtier/mtierd.conf (mtierd)' ||
  fail "the installed mtier reads other files: $(mtier --version)"
mtier run --dry-run true >"$work/dry" || fail "mtier run --dry-run"
grep -qx "LD_PRELOAD=/usr/lib/$triplet/libmtier.so.0" "$work/dry" &&
  grep -qx "PYTHONPATH=/usr/share/mtier/python" "$work/dry" ||
  fail "the installed mtier run does not use the installed runtime and sitecustomize: $(cat "$work/dry")"
where=$(mtier run -- /usr/bin/python3 -c 'import mtier; print(mtier.__file__)') || fail "import mtier"
[ "$where" = /usr/lib/python3/dist-packages/mtier/__init__.py ] || fail "mtier run loads the mtier package from $where"
WL="--preset small --steps 30 --loader --workers 1"
# shellcheck disable=SC2086
/usr/bin/python3 dlrm_train.py $WL >ref.out 2>ref.err || { cat ref.err; fail "the trainer without mtier"; }
table_bytes=$(sed -n 's/^# table_bytes \([0-9]*\).*/\1/p' ref.err)
smallest=$(sed -n 's/^# tables //p' ref.err | tr ' ' '\n' | sort -n | head -n 1)
RUN="mtier run --dram $((table_bytes / 4 / 4096 * 4096)) --min-bytes $((smallest * 3 / 4)) --store-bytes 256M --stats"
# shellcheck disable=SC2086
$RUN --store "$work/store" -- /usr/bin/python3 dlrm_train.py $WL >run.out 2>run.err &
run_pid=$!
seen=no
while kill -0 "$run_pid" 2>/dev/null; do
  # The trainer is python3 under mtier run's exec: the same pid.
  if mtier status 2>/dev/null | grep -qw "$run_pid"; then seen=yes; break; fi
  sleep 0.2
done
wait "$run_pid" || { tail -20 run.err; fail "the trainer under the installed mtier run"; }
cmp -s ref.out run.out || fail "losses or weights differ under the installed mtier run: $(diff ref.out run.out | head -n 4)"
grep -q 'summary (pid [0-9]*): tables [1-9]' run.err || { grep summary run.err; fail "no table was managed"; }
grep -q '^mtier: torch (pid [0-9]*): lookahead' run.err || fail "the installed PyTorch integration did not run"
[ "$seen" = yes ] || fail "the trainer never showed in mtier status (the installed mtierd)"
echo "identical losses and weights; registered with mtierd; $(grep -o 'fetches [0-9]*' run.err | head -n 1)"

# 5. Stop mtierd, purge while a trainer holds a named store in /run/mtier.
step "mtierd stopped; purge while a trainer runs"
if [ -d /run/systemd/system ]; then
  systemctl stop mtierd
else
  kill -TERM "$DAEMON_PID"
  wait "$DAEMON_PID" || fail "mtierd did not exit 0 on SIGTERM: $(tail -3 "$work/mtierd.log")"
  DAEMON_PID=
fi
[ ! -e /run/mtier/mtierd.sock ] || fail "mtierd left its socket"
store=/run/mtier/check-deb.store
install -m 600 /dev/null "$store"
# shellcheck disable=SC2086
$RUN --store "$store" -- /usr/bin/python3 dlrm_train.py $WL >long.out 2>long.err &
LONG_PID=$!
for _ in $(seq 300); do grep -q '^step 2 ' long.out 2>/dev/null && break; sleep 0.1; done
grep -q '^step 2 ' long.out || { tail long.err; fail "the second trainer did not start"; }
# Stopped while the packages go (so that it is surely mid-run), then on.
kill -STOP "$LONG_PID"
dpkg -P $pkgs >"$work/purge.log" 2>&1 || { kill -CONT "$LONG_PID"; cat "$work/purge.log"; fail "dpkg -P $pkgs"; }
kill -CONT "$LONG_PID"
wait "$LONG_PID" || { tail -20 long.err; fail "the trainer died when the packages were purged under it"; }
LONG_PID=
cmp -s ref.out long.out || fail "the trainer purged under computed otherwise: $(diff ref.out long.out | head -n 4)"
grep -q 'fetches [1-9]' long.err || { grep summary long.err; fail "the second trainer read nothing from its store"; }
[ -s "$store" ] || fail "the purge removed or emptied the store file $store that a trainer held"
echo "the trainer ran on through the purge, identical; its store $store is still there ($(stat -c %s "$store") bytes)"

# What is left: nothing of the packages but /run/mtier with that store.
step "what the purge left"
left=
while read -r f; do
  [ -e "$f" ] || [ -L "$f" ] || continue
  if [ -d "$f" ]; then  # shared with other packages unless empty and nobody's
    [ -z "$(ls -A "$f")" ] && ! dpkg -S "$f" >/dev/null 2>&1 && left="$left $f"
  else
    left="$left $f"
  fi
done <"$work/files"
for f in /etc/mtier /etc/mtier.conf /usr/share/mtier /usr/share/doc/mtier /var/lib/mtier \
    /usr/lib/python3/dist-packages/mtier /usr/include/mtier.h \
    /etc/systemd/system/multi-user.target.wants/mtierd.service \
    /var/lib/systemd/deb-systemd-helper-enabled/mtierd.service.dsh-also \
    /var/lib/systemd/deb-systemd-helper-enabled/multi-user.target.wants/mtierd.service; do
  [ -e "$f" ] && left="$left $f"
done
[ -z "$left" ] || fail "the purge left:$left"
[ "$(ls -A /run/mtier)" = check-deb.store ] || fail "/run/mtier holds more than the store: $(ls -A /run/mtier)"
dpkg-query -W -f='${Package} ${Status}\n' $pkgs 2>/dev/null | grep -v 'not-installed' &&
  fail "dpkg still knows the packages"
mv "$away" "$top"
step "done"
echo "check-deb: built, lintian-clean, installed, trained identical with installed paths only," \
  "purged under a running trainer (its store kept), nothing else left"
