#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks `make install` of a configured, built tree: installs into a scratch
# DESTDIR and checks that every file lands where configure said (libraries,
# mtier.h, mtier.pc, programs, man pages, the systemd unit, the Python side,
# the sample configs), that the installed `mtier run` preloads libmtier.so.0
# beside it, that a program builds against the installed library
# through pkg-config, that a second install leaves an edited config alone,
# and that `make uninstall` leaves only that edited config.
#   scripts/check-install.sh BUILD_DIR
# Exit 0 when all hold, 1 naming each file that does not, 2 on usage.
set -euo pipefail
[ $# -eq 1 ] && [ -f "$1/Makefile" ] || { echo "usage: $0 BUILD_DIR (configured and built)" >&2; exit 2; }
build=$(cd "$1" && pwd)
dest=$(mktemp -d /var/tmp/mtier-install.XXXXXX)
trap 'rm -rf "$dest"' EXIT
fails=0
bad() { echo "check-install: FAIL: $*"; fails=$((fails + 1)); }
# A configured directory as make expands it (prefix and all).
dir() { make -s -C "$build" --no-print-directory -f Makefile -f - "print-$1" <<<"print-%: ; @echo \$(\$*)"; }
has() { [ -e "$dest$1" ] || bad "not installed: $1"; }

make -s -C "$build" install DESTDIR="$dest" >"$dest.log" 2>&1 || { tail -30 "$dest.log"; rm -f "$dest.log"; bad "make install failed"; exit 1; }
libdir=$(dir libdir) includedir=$(dir includedir) bindir=$(dir bindir) sbindir=$(dir sbindir)
mandir=$(dir mandir) sysconfdir=$(dir sysconfdir) pkgdatadir=$(dir pkgdatadir) exec_prefix=$(dir exec_prefix)
docdir=$(dir docdir) unitdir=$(dir systemdunitdir) pythondir=$(dir pythondir)

has "$libdir/libmtier.so.0"
has "$libdir/libmtier.so"
has "$includedir/mtier.h"
has "$libdir/pkgconfig/mtier.pc"
has "$bindir/mtier"
has "$sbindir/mtierd"
[ -x "$build/fs/mtierfs" ] && has "$sbindir/mtierfs"
for m in man1/mtier.1 man1/mtier-run.1 man1/mtier-demo.1 man1/mtier-bench.1 man1/mtier-status.1 \
    man1/mtier-heat.1 man1/mtier-record.1 man1/mtier-report.1 man1/mtier-policy.1 man3/libmtier.3 \
    man5/mtier.conf.5 man7/mtier.7 man8/mtierd.8 man8/mtierfs.8; do
  has "$mandir/$m"
done
has "$sysconfdir/mtier.conf"
has "$sysconfdir/mtier/mtierd.conf"
has "$docdir/examples/mtier.conf"
has "$docdir/examples/mtierd.conf"
if [ -n "$unitdir" ]; then
  has "$unitdir/mtierd.service"
  grep -qx "ExecStart=$sbindir/mtierd" "$dest$unitdir/mtierd.service" 2>/dev/null ||
    bad "$unitdir/mtierd.service: ExecStart is not $sbindir/mtierd"
fi
if grep -q '^PYTHON = :' "$build/Makefile"; then
  echo "check-install: no Python configured: the Python side is not checked"
else
  for f in __init__.py _api.py _boot.py _lib.py _torch.py _version.py py.typed; do has "$pythondir/mtier/$f"; done
  has "$pkgdatadir/python/sitecustomize.py"
fi

# A C program against the installed header and library, through mtier.pc.
if command -v pkg-config >/dev/null && command -v cc >/dev/null; then
  flags=$(PKG_CONFIG_PATH="$dest$libdir/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest" pkg-config --cflags --libs mtier) ||
    bad "pkg-config --cflags --libs mtier failed"
  case " $flags " in *" -lmtier "*) ;; *) bad "pkg-config --libs mtier lacks -lmtier: $flags" ;; esac
  printf '#include <mtier.h>\nint main(void) { return mtier_init(0) == 0 ? 0 : 1; }\n' >"$dest/use.c"
  # shellcheck disable=SC2086
  cc -o "$dest/use" "$dest/use.c" $flags 2>"$dest/cc.err" || bad "a program does not build with mtier.pc: $(head -3 "$dest/cc.err")"
fi

# `mtier run` of this copy (not the configured bindir's: a relocated
# install) preloads the runtime by its soname from ../lib beside it, and
# needs no libmtier.so (the -dev package's link): it is removed first.
if [ "$libdir" = "$exec_prefix/lib" ] && [ "$bindir" = "$exec_prefix/bin" ]; then
  mv "$dest$libdir/libmtier.so" "$dest/libmtier.so.dev"
  pre=$(LD_LIBRARY_PATH="$dest$libdir" "$dest$bindir/mtier" run --dry-run true 2>&1 | sed -n 's/^LD_PRELOAD=//p')
  [ "$pre" -ef "$dest$libdir/libmtier.so.0" ] && [ "${pre##*/}" = libmtier.so.0 ] ||
    bad "mtier run of the installed copy preloads '$pre', not $libdir/libmtier.so.0 beside it"
  mv "$dest/libmtier.so.dev" "$dest$libdir/libmtier.so"
fi

# A second install keeps a config the administrator edited.
echo "dram_bytes = 1G" >>"$dest$sysconfdir/mtier.conf"
make -s -C "$build" install DESTDIR="$dest" >"$dest.log" 2>&1 || bad "second make install failed"
grep -qx "dram_bytes = 1G" "$dest$sysconfdir/mtier.conf" || bad "a second install overwrote $sysconfdir/mtier.conf"
# Uninstall: everything but that edited file goes.
make -s -C "$build" uninstall DESTDIR="$dest" >"$dest.log" 2>&1 || bad "make uninstall failed"
left=$(cd "$dest" && find . -type f ! -path ./use ! -path ./use.c ! -path ./cc.err | sed 's|^\.||')
[ "$left" = "$sysconfdir/mtier.conf" ] || bad "after make uninstall, expected only the edited $sysconfdir/mtier.conf, found: $(echo $left)"
rm -f "$dest.log"
[ $fails -eq 0 ] && echo "check-install: every file installed where configured; an edited config kept; uninstall clean"
[ $fails -eq 0 ]
