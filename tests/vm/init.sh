#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/vm/init.sh - /init of the test VM's initramfs (busybox sh), put there
# by run-vm.sh. Loads the modules, makes the first NVDIMM system RAM on the
# CPU-less node 2 (devdax + kmem), prints the topology, runs every program in
# /etc/tests between "=== BEGIN name" / "=== END name rc=N" markers, prints
# "=== SUMMARY ..." and powers off; a device it could not set up is an
# "=== SETUP FAILED what: why" line (the tests that need it would only
# skip). run-vm.sh parses the markers from the console log, so keep their
# format.
export PATH=/bin
. /etc/vm.conf

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/shm && mount -t tmpfs tmpfs /dev/shm
# A mount on /tmp or /var/tmp would hide the test programs when the build dir
# is below them (they sit in the initramfs at their host paths): then the
# initramfs's own dir is used (the rootfs is in RAM, and writable, anyway).
empty() { [ -z "$(ls -A "$1")" ]; }
if empty /tmp; then mount -t tmpfs tmpfs /tmp; else echo "vm: /tmp holds the tests: not mounting tmpfs on it"; fi
echo "=== VM UP kernel $(uname -r), $(nproc) cpus"

# Modules in dependency order (run-vm.sh resolved it: there is no modprobe).
for m in $(cat /lib/modules/order); do
  insmod /lib/modules/$m.ko 2>/dev/null || echo "vm: insmod $m failed"
done

# Drivers probe asynchronously: wait (up to 20 s) for both NVMe namespaces and
# for the three pmem disks the NFIT describes.
i=0
while [ $i -lt 40 ]; do
  n=$(ls -d /sys/block/nvme*n1 2>/dev/null | wc -l)
  p=$(ls -d /sys/block/pmem* 2>/dev/null | wc -l)
  [ "$n" -ge 2 ] && [ "$p" -ge 3 ] && break
  sleep 0.5; i=$((i + 1))
done

# NVMe disks, told apart by serial number (the names depend on probe order).
nvme_by_serial() {
  for c in /sys/class/nvme/nvme*; do
    [ "$(cat $c/serial 2>/dev/null | tr -d ' ')" = "$1" ] || continue
    for b in $c/nvme*n1; do [ -e "$b" ] && { echo /dev/${b##*/}; return; }; done
  done
}
NVME=$(nvme_by_serial mtier0)
SCRATCH=$(nvme_by_serial mtier-scratch)

# /var/tmp on ext4 on the scratch NVMe, so file stores get O_DIRECT on a block
# device; tmpfs (no O_DIRECT on 6.1) if that is not there.
if ! empty /var/tmp; then
  echo "vm: /var/tmp holds the tests: it stays in the rootfs (no O_DIRECT)"
elif [ -n "$SCRATCH" ] && mount -t ext4 "$SCRATCH" /var/tmp 2>/dev/null; then
  echo "vm: /var/tmp is ext4 on $SCRATCH"
else
  mount -t tmpfs tmpfs /var/tmp
  echo "vm: /var/tmp is tmpfs (scratch disk not mounted)"
fi
chmod 1777 /tmp /var/tmp

topology() {
  echo "--- topology ($1)"
  for n in /sys/devices/system/node/node[0-9]*; do
    echo "${n##*/}: cpus=[$(cat $n/cpulist)] $(grep MemTotal $n/meminfo | sed 's/.*MemTotal: *//') distance=[$(cat $n/distance)]"
  done
  for t in /sys/devices/virtual/memory_tiering/memory_tier*; do
    [ -e "$t/nodelist" ] && echo "${t##*/}: nodes $(cat $t/nodelist)"
  done
  ls /sys/devices/virtual/memory_tiering >/dev/null 2>&1 || echo "(no memory_tiering in sysfs)"
  echo "block: $(cd /sys/block && ls -d pmem* nvme* 2>/dev/null | tr '\n' ' ')"
  echo "dax: $(ls /sys/bus/dax/devices 2>/dev/null | tr '\n' ' ')"
  for r in /sys/bus/nd/devices/region*; do  # which NVDIMM (NFIT handle = slot + 1) each region is
    m=$(cut -d, -f1 $r/mapping0 2>/dev/null)
    echo "${r##*/}: $(cat $r/size 2>/dev/null) bytes, $m handle $(cat /sys/bus/nd/devices/$m/nfit/handle 2>/dev/null)"
  done
}
topology "before kmem"

# nd_region SLOT: the nd region of run-vm.sh's nvdimm SLOT (its NFIT handle is
# SLOT + 1). The region numbers follow the NFIT's order, which is not the
# slots' (with three NVDIMMs nvdimm2 came up as region1); without NFIT
# handles, the SLOT+1-th region in sorted order.
nd_region() {
  for r in /sys/bus/nd/devices/region*; do
    h=$(cat /sys/bus/nd/devices/$(cut -d, -f1 $r/mapping0 2>/dev/null)/nfit/handle 2>/dev/null)
    [ -n "$h" ] && [ $((h)) = $(($1 + 1)) ] && { echo $r; return; }
  done
  ls -d /sys/bus/nd/devices/region* 2>/dev/null | sort | sed -n "$(($1 + 1))p"
}

# The first NVDIMM region becomes system RAM on node 2 (docs/architecture.md,
# "Platform facts"):
# namespace off nd_pmem -> the region's dax seed configured and bound to
# dax_pmem (a devdax device) -> off device_dax, onto kmem -> memory blocks
# onlined as movable. Each step says what failed; the tests run regardless.
# The other region stays a raw pmem namespace for the PMem store tests.
STEP_OF=kmem  # what the steps below are for, in their messages
step() { # step DESCRIPTION VALUE FILE: write VALUE to FILE or say why not
  if echo "$2" >"$3" 2>/tmp/step.err; then return 0; fi
  echo "vm: $STEP_OF: $1 failed: echo $2 > $3: $(cat /tmp/step.err)"; return 1
}
# claim_namespace SEED DRIVER: region$rn's namespace (r, rn set) off nd_pmem,
# claimed by the region's SEED device (dax_seed: device DAX; pfn_seed:
# fsdax), its page map in the pmem itself, 2 MiB aligned, bound to DRIVER.
# Sets ns and seed.
claim_namespace() {
  ns=$(cd /sys/bus/nd/devices && ls -d namespace$rn.* 2>/dev/null | head -1)
  [ -n "$ns" ] || { echo "vm: $STEP_OF: no namespace in region$rn"; return 1; }
  [ -e /sys/bus/nd/drivers/nd_pmem/$ns ] && { step "unbind $ns" $ns /sys/bus/nd/drivers/nd_pmem/unbind || return 1; }
  seed=$(cat $r/$1 2>/dev/null)
  [ -n "$seed" ] || { echo "vm: $STEP_OF: region$rn has no $1"; return 1; }
  d=/sys/bus/nd/devices/$seed
  step "uuid" "$(cat /proc/sys/kernel/random/uuid)" $d/uuid || return 1
  step "mode" pmem $d/mode || return 1
  step "align" 2097152 $d/align || return 1
  step "namespace" $ns $d/namespace || return 1
  step "bind $seed to $2" $seed /sys/bus/nd/drivers/$2/bind
}
kmem_devdax() { # sets dax: region$rn's namespace as a devdax device
  before=$(ls /sys/bus/dax/devices 2>/dev/null)
  claim_namespace dax_seed dax_pmem || return 1
  dax=""
  for x in $(ls /sys/bus/dax/devices 2>/dev/null); do
    echo "$before" | grep -qx "$x" || dax=$x
  done
  [ -n "$dax" ] || { echo "vm: kmem: no dax device appeared"; return 1; }
  echo "vm: $STEP_OF: $ns -> $seed -> /dev/$dax"
}
kmem_setup() {
  r=$(nd_region 0)
  [ -n "$r" ] || { echo "vm: kmem: no nd region"; return 1; }
  rn=${r##*/region}
  # A devdax info block already on the NVDIMM (an image reused from an earlier
  # boot) makes the kernel create the dax device itself: use that one.
  dax=$(cd /sys/bus/dax/devices 2>/dev/null && ls -d dax$rn.* 2>/dev/null | head -1)
  if [ -n "$dax" ]; then
    echo "vm: kmem: /dev/$dax was set up at boot"
  else
    kmem_devdax || return 1
  fi
  echo "vm: kmem: /dev/$dax: $(cat /sys/bus/dax/devices/$dax/size) bytes, target node $(cat /sys/bus/dax/devices/$dax/target_node 2>/dev/null)"
  [ -e /sys/bus/dax/drivers/device_dax/$dax ] && { step "unbind $dax from device_dax" $dax /sys/bus/dax/drivers/device_dax/unbind || return 1; }
  # Hot-added blocks come up offline (no MEMORY_HOTPLUG_DEFAULT_ONLINE).
  echo offline >/sys/devices/system/memory/auto_online_blocks 2>/dev/null
  step "kmem new_id" $dax /sys/bus/dax/drivers/kmem/new_id || return 1
  nb=0
  for b in /sys/devices/system/memory/memory*; do
    [ "$(cat $b/state)" = offline ] || continue
    step "online $b" online_movable $b/state && nb=$((nb + 1))
  done
  echo "vm: kmem: onlined $nb memory blocks as movable"
  [ $nb -gt 0 ]
}
if kmem_setup; then
  echo "vm: kmem: OK"
  export MTIER_TEST_TOPOLOGY="0,1:dram;2:slow"  # what tier_test must discover
else
  echo "vm: kmem: FAILED (tests run without a memory-only node)"
  echo "=== SETUP FAILED kmem: no memory-only node 2"
fi
topology "after kmem"

# The second NVDIMM region becomes a devdax device for the PMem store (the
# path libpmem2 maps with cache-line granularity); a raw /dev/pmem* is the
# fallback, which the PMem tests then report as not DAX.
pmem_devdax() {
  STEP_OF=pmem
  r=$(nd_region 1)
  [ -n "$r" ] || { echo "vm: pmem: no second nd region"; return 1; }
  rn=${r##*/region}
  dax=$(cd /sys/bus/dax/devices 2>/dev/null && ls -d dax$rn.* 2>/dev/null | head -1)
  [ -n "$dax" ] || kmem_devdax || return 1
  [ -c /dev/$dax ] || { echo "vm: pmem: /dev/$dax is not a character device"; return 1; }
}
if pmem_devdax; then
  PMEM=/dev/$dax
  echo "vm: pmem: $PMEM ($(cat /sys/bus/dax/devices/$dax/size) bytes)"
else
  PMEM=$(ls /dev/pmem* 2>/dev/null | head -1)
  echo "=== SETUP FAILED pmem: no device DAX (the PMem tests get ${PMEM:-nothing})"
fi
[ -n "$PMEM" ] && export MTIER_TEST_PMEM=$PMEM

# The third NVDIMM region becomes an fsdax namespace (ndctl create-namespace
# -m fsdax, through sysfs): off nd_pmem -> the region's pfn seed configured
# (page map in the pmem itself, 2 MiB align) and bound to nd_pmem -> a
# /dev/pmemN with DAX -> ext4 made here (on the host it would land under the
# pfn info block) -> mounted -o dax on /mnt/fsdax: a file there maps the pmem
# itself, MAP_SYNC works (libpmem2: cache-line granularity).
fsdax_setup() {
  STEP_OF=fsdax
  r=$(nd_region 2)
  [ -n "$r" ] || { echo "vm: fsdax: no third nd region"; return 1; }
  rn=${r##*/region}
  [ -n "$MKE2FS" ] && [ -x "$MKE2FS" ] || { echo "vm: fsdax: no mke2fs in the initramfs"; return 1; }
  claim_namespace pfn_seed nd_pmem || return 1
  blk=$(ls /sys/bus/nd/devices/$seed/block 2>/dev/null | head -1)
  [ -n "$blk" ] && [ -b /dev/$blk ] || { echo "vm: fsdax: no block device under $seed"; return 1; }
  [ "$(cat /sys/block/$blk/queue/dax 2>/dev/null)" = 1 ] || { echo "vm: fsdax: /dev/$blk has no DAX (queue/dax not 1)"; return 1; }
  echo "vm: fsdax: $ns -> $seed -> /dev/$blk ($(( $(cat /sys/block/$blk/size) / 2048 )) MiB, dax)"
  # 4 KiB blocks: ext4 does DAX only with the page size as block size.
  out=$("$MKE2FS" -q -F -t ext4 -b 4096 -L mtier-fsdax /dev/$blk 2>&1) ||
    { echo "vm: fsdax: mke2fs /dev/$blk failed (exit $?): $(echo $out)"; return 1; }
  mkdir -p $FSDAX
  empty $FSDAX || { echo "vm: fsdax: $FSDAX holds files (the tests?): not mounting on it"; return 1; }
  out=$(mount -t ext4 -o dax /dev/$blk $FSDAX 2>&1) ||
    { echo "vm: fsdax: mount -o dax /dev/$blk $FSDAX failed (exit $?): $(echo $out) $(dmesg | grep -i dax | tail -1)"; return 1; }
  grep " $FSDAX " /proc/mounts | grep -q dax ||
    { echo "vm: fsdax: $FSDAX mounted without dax: $(grep " $FSDAX " /proc/mounts)"; umount $FSDAX; return 1; }
  chmod 1777 $FSDAX
}
FSDAX=/mnt/fsdax
if fsdax_setup; then
  export MTIER_TEST_FSDAX=$FSDAX
  echo "vm: fsdax: OK: $(grep " $FSDAX " /proc/mounts)"
else
  echo "vm: fsdax: FAILED (no MTIER_TEST_FSDAX)"
  echo "=== SETUP FAILED fsdax: no filesystem mounted -o dax"
fi
echo "vm: MTIER_TEST_FSDAX=${MTIER_TEST_FSDAX:-}"
[ -n "$NVME" ] && export MTIER_TEST_NVME=$NVME
[ -n "$NVME" ] || echo "=== SETUP FAILED nvme: no NVMe disk with serial mtier0"
echo "vm: MTIER_TEST_PMEM=${MTIER_TEST_PMEM:-} MTIER_TEST_NVME=${MTIER_TEST_NVME:-}"
[ -n "$LDPATH" ] && export LD_LIBRARY_PATH=$LDPATH
[ -n "$MTIERD" ] && export MTIER_TEST_MTIERD=$MTIERD  # for the tests that start a daemon
export GTEST_COLOR=no   # a readable console log

passed=0 failed=0 skipped=0
while read -r name real; do
  echo "=== BEGIN $name"
  start=$(date +%s)
  (cd /tmp && timeout "$TEST_TIMEOUT" "$real" </dev/null 2>&1)
  rc=$?
  echo "vm: $name took $(( $(date +%s) - start ))s"
  echo "=== END $name rc=$rc"
  case $rc in
    0) passed=$((passed + 1)) ;;
    77) skipped=$((skipped + 1)) ;;
    *) failed=$((failed + 1)) ;;
  esac
done </etc/tests
echo "=== SUMMARY passed=$passed failed=$failed skipped=$skipped"
sync
umount /var/tmp 2>/dev/null
umount $FSDAX 2>/dev/null
poweroff -f
