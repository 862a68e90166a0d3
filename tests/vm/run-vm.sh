#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/vm/run-vm.sh - run mtier's test binaries inside an emulated multi-tier
# machine (QEMU TCG): two DRAM NUMA nodes, a CPU-less node backed by an
# emulated NVDIMM turned into system RAM (devdax + kmem), a second NVDIMM as
# device DAX, a third as fsdax with ext4 mounted -o dax, and NVMe disks.
#
#   tests/vm/run-vm.sh BUILD_DIR [TEST...]
#
# TEST: test programs (paths; default: BUILD_DIR/tests/unit/*_test but the
# benchmark suite's, and BUILD_DIR/tests/integration/torture). Exit status: 0 all passed (skips
# count as passed), 1 a test failed or the VM did not finish, 77 the VM could
# not be set up (Automake's "skipped"), with the reason on stderr.
#
# Environment:
#   VM_TIMEOUT   seconds before the VM is killed (default 900)
#   VM_CACHE     cache dir (default BUILD_DIR/tests/vm/cache): the unpacked
#                kernel, the disk images, the initramfs and console.log
#   VM_KERNEL    Debian kernel package to use (default: what linux-image-amd64
#                depends on, else the newest linux-image-6.1.0-N-amd64)
#   VM_TEST_TIMEOUT  seconds per test inside the VM (default 600)
#   VM_NO_INSTALL=1  never run apt-get (skip if something is missing)
# See tests/vm/README.md.
set -euo pipefail

say() { echo "run-vm.sh: $*" >&2; }
skip() { say "SKIP: $*"; exit 77; }

BUILD_DIR=$(realpath "${1:-.}")
[ $# -gt 0 ] && shift
[ -f "$BUILD_DIR/Makefile" ] || skip "$BUILD_DIR is not a configured build dir (no Makefile)"
CACHE=${VM_CACHE:-$BUILD_DIR/tests/vm/cache}
VM_TIMEOUT=${VM_TIMEOUT:-900}
VM_TEST_TIMEOUT=${VM_TEST_TIMEOUT:-600}
mkdir -p "$CACHE"
CACHE=$(realpath "$CACHE")
START=$(date +%s)

# ---------------------------------------------------------------------------
# 1. Host tools. qemu-system-x86_64, a *static* busybox (it runs inside the VM
# with no libraries), cpio to pack the initramfs, modinfo (kmod) to read each
# module's dependencies.
need_pkgs=()
command -v qemu-system-x86_64 >/dev/null || need_pkgs+=(qemu-system-x86)
dpkg -s busybox-static >/dev/null 2>&1 || need_pkgs+=(busybox-static)
command -v cpio >/dev/null || need_pkgs+=(cpio)
command -v modinfo >/dev/null || [ -x /usr/sbin/modinfo ] || need_pkgs+=(kmod)
# mke2fs: the scratch disk's ext4 here, the fsdax filesystem's inside.
PATH=$PATH:/usr/sbin:/sbin command -v mke2fs >/dev/null || need_pkgs+=(e2fsprogs)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  [ "${VM_NO_INSTALL:-0}" = 1 ] && skip "missing ${need_pkgs[*]} and VM_NO_INSTALL=1"
  [ "$(id -u)" = 0 ] || skip "missing ${need_pkgs[*]}; run as root to install them with apt-get"
  say "installing: ${need_pkgs[*]} (apt-get install -y)"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y "${need_pkgs[@]}" >"$CACHE/apt.log" 2>&1; then
    tail -5 "$CACHE/apt.log" >&2
    skip "apt-get install ${need_pkgs[*]} failed (see $CACHE/apt.log)"
  fi
fi
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installable"
MODINFO=$(command -v modinfo || echo /usr/sbin/modinfo)
BUSYBOX=/bin/busybox   # busybox-static's; the plain busybox package is dynamic
case $(ldd "$BUSYBOX" 2>&1 || true) in *"not a dynamic"*) ;; *) skip "$BUSYBOX is not static (install busybox-static)" ;; esac

# ---------------------------------------------------------------------------
# 2. Kernel: Debian's own 6.1 package, downloaded and unpacked, not installed
# (the host's kernel is untouched). Reused from the cache between runs; if
# apt cannot answer (offline), any kernel already in the cache is used.
KPKG=${VM_KERNEL:-}
if [ -z "$KPKG" ]; then
  KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null |
         sed -n 's/^ *Depends: \(linux-image-6\.1\.0-[0-9]*-amd64\)$/\1/p' | head -1) || true
fi
if [ -z "$KPKG" ]; then
  KPKG=$(apt-cache search --names-only '^linux-image-6.1.0-[0-9]+-amd64$' 2>/dev/null |
         cut -d' ' -f1 | sort -V | tail -1) || true
fi
if [ -z "$KPKG" ]; then
  KPKG=$(ls -d "$CACHE"/kernel/linux-image-*/.unpacked 2>/dev/null | sort -V | tail -1 |
         xargs -r dirname | xargs -r basename) || true
fi
[ -n "$KPKG" ] || skip "no linux-image-6.1.0-N-amd64 package known to apt and none in $CACHE/kernel"
KDIR=$CACHE/kernel/$KPKG
if [ ! -f "$KDIR/.unpacked" ]; then
  say "fetching kernel package $KPKG (apt-get download, not installed)"
  rm -rf "$KDIR" && mkdir -p "$KDIR/deb"
  (cd "$KDIR/deb" && apt-get download "$KPKG" >"$KDIR/download.log" 2>&1) ||
    { tail -3 "$KDIR/download.log" >&2; rm -rf "$KDIR"; skip "apt-get download $KPKG failed"; }
  dpkg -x "$KDIR"/deb/*.deb "$KDIR/root"
  rm -rf "$KDIR/deb"
  touch "$KDIR/.unpacked"
fi
VMLINUZ=$(ls "$KDIR"/root/boot/vmlinuz-* 2>/dev/null | head -1)
[ -n "$VMLINUZ" ] || skip "no vmlinuz in $KDIR"
KVER=${VMLINUZ##*/vmlinuz-}
MODDIR=$KDIR/root/lib/modules/$KVER
[ -d "$MODDIR" ] || skip "no modules dir $MODDIR"
say "kernel $KVER ($KPKG)"

# ---------------------------------------------------------------------------
# 3. Initramfs, rebuilt every run (a few seconds) from a staging dir.
ROOT=$CACHE/initramfs-root
rm -rf "$ROOT"
mkdir -p "$ROOT"/{bin,sbin,proc,sys,dev,tmp,var/tmp,etc,lib/modules,mnt}
cp "$BUSYBOX" "$ROOT/bin/busybox"
for a in $("$BUSYBOX" --list); do
  [ "$a" = busybox ] || ln -sf busybox "$ROOT/bin/$a"
done

# 3a. Kernel modules, with their dependencies resolved recursively from each
# .ko's depends= field (there is no depmod/modprobe inside), in load order.
# Names use '-' or '_' interchangeably; compressed modules are decompressed
# because busybox insmod may not read them.
declare -A MOD_FILE=() MOD_DONE=()
MOD_ORDER=()
while IFS= read -r f; do
  n=${f##*/}; n=${n%%.ko*}; MOD_FILE[${n//-/_}]=$f
done < <(find "$MODDIR/kernel" -name '*.ko' -o -name '*.ko.xz' -o -name '*.ko.zst' -o -name '*.ko.gz')
add_mod() {
  local key=${1//-/_} f dep
  [ -n "${MOD_DONE[$key]:-}" ] && return 0
  MOD_DONE[$key]=1
  f=${MOD_FILE[$key]:-}
  [ -n "$f" ] || { say "module $1 not found in $KPKG (built in?); not loaded"; return 0; }
  case $f in
    *.xz)  xz -dc "$f" >"$ROOT/lib/modules/$key.ko" ;;
    *.zst) zstd -qdc "$f" >"$ROOT/lib/modules/$key.ko" ;;
    *.gz)  gzip -dc "$f" >"$ROOT/lib/modules/$key.ko" ;;
    *)     cp "$f" "$ROOT/lib/modules/$key.ko" ;;
  esac
  for dep in $("$MODINFO" -F depends "$ROOT/lib/modules/$key.ko" | tr ',' ' '); do
    add_mod "$dep"
  done
  MOD_ORDER+=("$key")   # after its dependencies
}
# nvme: the NVMe disk; libnvdimm..nd_btt: the NVDIMMs (ACPI NFIT) as pmem;
# dax_pmem, device_dax, kmem: a pmem namespace as devdax, then as system RAM;
# crc32c_generic, ext4: the scratch filesystem on the second NVMe disk (/var/tmp).
# crc32c_generic: ext4 needs a crc32c driver but names it only as a soft
# dependency, which modinfo's depends= does not list.
for m in nvme-core nvme libnvdimm nfit nd_pmem nd_btt dax_pmem device_dax kmem crc32c_generic ext4; do
  add_mod "$m"
done
printf '%s\n' "${MOD_ORDER[@]}" >"$ROOT/lib/modules/order"
say "modules: ${MOD_ORDER[*]}"

# 3b. Test programs. A libtool wrapper script stands for the real ELF in
# .libs/ (or .libs/lt-NAME); the ELF, every shared library ldd finds for it
# and the dynamic loader are copied to the same absolute paths inside, so the
# program runs unchanged. Libraries found only through the build's .libs dirs
# (libmtier.so.0) get their dirs into LD_LIBRARY_PATH inside.
# The benchmark suite's unit tests (workload, oracle, plot, kernel_env: pure
# computation, or the host's cgroup and swap set-up) and the daemon's pure
# ones (wire protocol and its fuzz test, perf record parsing, rate control,
# attribution, policies, config, pins) and the tool's (recordings, reports,
# charts, the heat view, mtierfs' tree) have nothing to gain from the
# emulated hardware and would only slow the run under TCG.
if [ $# -eq 0 ]; then
  set --
  for t in "$BUILD_DIR"/tests/unit/*_test "$BUILD_DIR"/tests/integration/torture; do
    case ${t##*/} in
      workload_test | oracle_test | plot_test | kernel_env_test | ipc_wire_test | perf_test | \
        rate_control_test | address_map_test | policy_test | daemon_config_test | \
        daemon_pins_test | recording_test | report_test | heatmap_chart_test | heat_view_test | \
        fs_tree_test | clock_test | sample_config_test) continue ;;
    esac
    set -- "$@" "$t"
  done
fi
BUILD_LIBDIRS=$(find "$BUILD_DIR" -type d -name .libs -not -path "$CACHE/*" | paste -sd: -)
declare -A COPIED=() LIBDIRS=()
copy_path() {   # copy a file (following links) to the same path inside
  local p=$1
  [ -n "${COPIED[$p]:-}" ] && return 0
  COPIED[$p]=1
  mkdir -p "$ROOT$(dirname "$p")"
  cp -L "$p" "$ROOT$p"
}
# copy_program PATH: the program (the real ELF behind a libtool wrapper) and
# its libraries into the initramfs; sets REAL to the ELF's path.
copy_program() {
  local t name libs lib
  [ -e "$1" ] || { say "$1 does not exist (build it: make check TESTS=)"; exit 1; }
  t=$(realpath "$1"); name=${t##*/}; REAL=$t
  if head -c 4096 "$t" | grep -q 'libtool wrapper'; then
    d=$(dirname "$t")
    for c in "$d/.libs/$name" "$d/.libs/lt-$name"; do [ -x "$c" ] && { REAL=$c; break; }; done
    [ "$REAL" != "$t" ] || { say "$t is a libtool wrapper without .libs/$name"; exit 1; }
  fi
  [ "$(head -c 4 "$REAL" | tail -c 3)" = ELF ] || { say "$REAL is not an ELF program"; exit 1; }
  copy_path "$REAL"
  libs=$(LD_LIBRARY_PATH=$BUILD_LIBDIRS ldd "$REAL" | awk '
      /not found/ { print "MISSING:" $1; next }
      $2 == "=>" && $3 ~ /^\// { print $3; next }
      $1 ~ /^\// { print $1 }')
  if grep -q '^MISSING:' <<<"$libs"; then
    say "ldd $REAL: not found: $(grep '^MISSING:' <<<"$libs" | cut -d: -f2 | paste -sd' ' -)"; exit 1
  fi
  for lib in $libs; do
    copy_path "$lib"
    case $lib in "$BUILD_DIR"/*) LIBDIRS[$(dirname "$lib")]=1 ;; esac
  done
}
: >"$ROOT/etc/tests"
for t in "$@"; do
  copy_program "$t"
  echo "$(basename "$t") $REAL" >>"$ROOT/etc/tests"
done
# The daemon, for the tests that start one (MTIER_TEST_MTIERD inside).
MTIERD_REAL=
if [ -e "$BUILD_DIR/daemon/mtierd" ]; then
  copy_program "$BUILD_DIR/daemon/mtierd"
  MTIERD_REAL=$REAL
fi
# mke2fs, to make the ext4 on the fsdax namespace inside (MKE2FS there): the
# pfn info block the guest writes first sets where the filesystem starts.
MKE2FS_REAL=
if MKE2FS=$(PATH=$PATH:/usr/sbin:/sbin command -v mke2fs); then
  copy_program "$MKE2FS"
  MKE2FS_REAL=$REAL
  [ -f /etc/mke2fs.conf ] && cp /etc/mke2fs.conf "$ROOT/etc/"
else
  say "no mke2fs here: no fsdax filesystem inside"
fi
# libpmem2: the PMem store dlopens it (src/sys/pmem2_api.h), so no program's
# ldd lists it; the library and what it links, to the same paths inside
# (awk reads all of ldconfig -p: quitting early would SIGPIPE it under pipefail).
PMEM2_LIB=$(PATH=$PATH:/usr/sbin:/sbin ldconfig -p 2>/dev/null | awk '$1 == "libpmem2.so.1" && $NF ~ /^\// && !n++ { print $NF }')
if [ -n "$PMEM2_LIB" ]; then
  copy_path "$PMEM2_LIB"
  for lib in $(ldd "$PMEM2_LIB" | awk '$2 == "=>" && $3 ~ /^\// { print $3; next } $1 ~ /^\// { print $1 }'); do
    copy_path "$lib"
  done
else
  say "no libpmem2.so.1 here: the PMem store tests inside fail to set up the store"
fi
# Not every library shows in ldd output as the dynamic loader's canonical path.
[ -e "$ROOT/lib64/ld-linux-x86-64.so.2" ] || copy_path /lib64/ld-linux-x86-64.so.2
LDPATH=$(printf '%s\n' "${!LIBDIRS[@]}" | paste -sd: -)
# Tests read files from the source tree through MTIER_SRCDIR (tier_test: the
# sysfs fixtures in tests/unit/testdata; config_test: man/mtier.conf.5):
# copy those dirs to the same path.
SRCDIR=$(sed -n 's/^abs_top_srcdir = //p' "$BUILD_DIR/Makefile")
for d in tests/unit/testdata man; do
  if [ -n "$SRCDIR" ] && [ -d "$SRCDIR/$d" ]; then
    mkdir -p "$ROOT$SRCDIR/$(dirname "$d")"
    cp -a "$SRCDIR/$d" "$ROOT$SRCDIR/$(dirname "$d")/"
  fi
done
cat >"$ROOT/etc/vm.conf" <<EOF
LDPATH=$LDPATH
TEST_TIMEOUT=$VM_TEST_TIMEOUT
MTIERD=$MTIERD_REAL
MKE2FS=$MKE2FS_REAL
EOF
cp "$(dirname "$0")/init.sh" "$ROOT/init"
chmod +x "$ROOT/init"
(cd "$ROOT" && find . -print0 | cpio --null -o -H newc --quiet | gzip -1) >"$CACHE/initramfs.cpio.gz"
say "initramfs: $(du -h "$CACHE/initramfs.cpio.gz" | cut -f1), $(wc -l <"$ROOT/etc/tests") tests"

# ---------------------------------------------------------------------------
# 4. Disks, sparse, and fresh on every run: a run must not see what the last
# one left (a devdax info block left on nvdimm0.img makes the kernel claim the
# namespace at boot, and the kmem setup below then finds it busy).
# nvdimm0.img becomes node 2's RAM (kmem); nvdimm1.img a device DAX for the
# PMem store (MTIER_TEST_PMEM); nvme.img is the raw NVMe
# namespace (MTIER_TEST_NVME); scratch.img, ext4 made here, is mounted on
# /var/tmp so file stores get a real block device with O_DIRECT (tmpfs
# refuses O_DIRECT on 6.1); nvdimm2.img becomes an fsdax namespace with ext4
# mounted -o dax (MTIER_TEST_FSDAX), made inside.
for img in nvdimm0:512M nvdimm1:256M nvdimm2:256M nvme:1G scratch:2G; do
  rm -f "$CACHE/${img%%:*}.img"
  truncate -s "${img#*:}" "$CACHE/${img%%:*}.img"
done
if ! mkfs.ext4 -q -F -L mtier-scratch "$CACHE/scratch.img" >/dev/null 2>&1; then
  say "mkfs.ext4 failed: /var/tmp inside will be tmpfs"
fi

# ---------------------------------------------------------------------------
# 5. Boot. The machine docs/architecture.md describes: node 0 and 1 with a
# CPU and 1 GiB each, node 2 CPU-less with the NVDIMMs. TCG because KVM here cannot boot a
# stock kernel. The console goes to stdout and to console.log. init.sh finds
# each NVDIMM's region by its slot (NFIT handle = slot + 1): the region
# numbers follow the NFIT's order, not the slots'.
LOG=$CACHE/console.log
QEMU=(qemu-system-x86_64 -accel tcg -cpu max -machine q35,nvdimm=on
  -m 2G,slots=3,maxmem=4G -smp 2
  -object memory-backend-ram,id=m0,size=1G -object memory-backend-ram,id=m1,size=1G
  -numa node,nodeid=0,cpus=0,memdev=m0 -numa node,nodeid=1,cpus=1,memdev=m1 -numa node,nodeid=2
  -object memory-backend-file,id=nv0,share=on,mem-path="$CACHE/nvdimm0.img",size=512M
  -device nvdimm,id=nvdimm0,memdev=nv0,node=2,slot=0
  -object memory-backend-file,id=nv1,share=on,mem-path="$CACHE/nvdimm1.img",size=256M
  -device nvdimm,id=nvdimm1,memdev=nv1,node=2,slot=1
  -object memory-backend-file,id=nv2,share=on,mem-path="$CACHE/nvdimm2.img",size=256M
  -device nvdimm,id=nvdimm2,memdev=nv2,node=2,slot=2
  -drive file="$CACHE/nvme.img",if=none,id=nvm,format=raw -device nvme,serial=mtier0,drive=nvm
  -drive file="$CACHE/scratch.img",if=none,id=scr,format=raw -device nvme,serial=mtier-scratch,drive=scr
  -nographic -no-reboot -kernel "$VMLINUZ" -initrd "$CACHE/initramfs.cpio.gz"
  -append "console=ttyS0 panic=-1 quiet rdinit=/init")
say "booting (timeout ${VM_TIMEOUT}s; console also in $LOG)"
set +e
timeout --kill-after=10 "$VM_TIMEOUT" "${QEMU[@]}" </dev/null 2>&1 | tee "$LOG"
QRC=${PIPESTATUS[0]}
set -e
tr -d '\r' <"$LOG" >"$LOG.tmp" && mv "$LOG.tmp" "$LOG"
ELAPSED=$(( $(date +%s) - START ))

# ---------------------------------------------------------------------------
# 6. Results, from the markers /init printed.
echo
echo "==== VM test results ($KVER, ${ELAPSED}s; console log $LOG)"
# Not anchored: the firmware leaves escape sequences before the first line.
if ! grep -q '=== VM UP' "$LOG"; then
  [ "$QRC" = 124 ] && skip "the VM did not reach /init within ${VM_TIMEOUT}s"
  skip "the VM did not reach /init (qemu exit $QRC); see $LOG"
fi
pass=0 fail=0 skipped=0
while read -r name real; do
  rc=$(sed -n "s/^=== END $name rc=\([0-9]*\)$/\1/p" "$LOG" | tail -1)
  if [ -z "$rc" ]; then
    if grep -q "^=== BEGIN $name\$" "$LOG"; then
      echo "FAIL $name (did not finish: VM timeout or crash)"
    else
      echo "FAIL $name (did not run)"
    fi
    fail=$((fail + 1))
  elif [ "$rc" = 0 ]; then echo "PASS $name"; pass=$((pass + 1))
  elif [ "$rc" = 77 ]; then echo "SKIP $name"; skipped=$((skipped + 1))
  else echo "FAIL $name (exit $rc)"; fail=$((fail + 1)); fi
done <"$ROOT/etc/tests"
# The machine is the point: a device /init could not set up fails the run
# (the tests that need it skip when they do not see it).
while read -r what; do
  echo "FAIL setup: $what"; fail=$((fail + 1))
done < <(sed -n 's/^=== SETUP FAILED //p' "$LOG")
grep '^=== SUMMARY' "$LOG" || echo "(no summary from the VM: it did not finish; qemu exit $QRC)"
echo "host: passed=$pass failed=$fail skipped=$skipped"
[ "$fail" = 0 ] || exit 1
exit 0
