#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Run a command and sample its resident memory until it exits.

    rss_monitor.py [--interval 0.05] [--timeout S] --out FILE -- COMMAND [ARG...]

COMMAND inherits stdin, stdout and stderr. Every --interval seconds the
monitor reads /proc/PID/status and keeps the peaks of VmRSS, RssAnon,
RssFile and RssShmem (and the last VmHWM seen: the kernel's own exact peak,
which a sampler can miss between samples). It writes them to FILE as
'name value' lines (bytes) and exits with COMMAND's status (128 + N when a
signal N ended it), or 124 when it ran past --timeout seconds (it is sent
SIGTERM, then SIGKILL 10 s later, and FILE says 'timed_out 1'). Give environment for COMMAND through env(1), e.g.
'-- env LD_PRELOAD=... python3 ...': env execs in place, so the PID sampled
is the program's.
"""

import argparse
import signal
import subprocess
import sys
import time

FIELDS = ("VmRSS", "RssAnon", "RssFile", "RssShmem", "VmHWM")


def read_status(pid):
    vals = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in FIELDS:
                    vals[key] = int(rest.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return vals


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--interval", type=float, default=0.05)
    p.add_argument("--timeout", type=float, default=0,
                   help="seconds before COMMAND is killed (0: never)")
    p.add_argument("--out", required=True)
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        p.error("no command")
    child = subprocess.Popen(cmd)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda s, f: child.send_signal(s))
    peak = {k: 0 for k in FIELDS}
    samples = 0
    deadline = time.monotonic() + args.timeout if args.timeout > 0 else None
    timed_out = False
    while child.poll() is None:
        if deadline is not None and time.monotonic() > deadline and not timed_out:
            timed_out = True
            child.terminate()
            try:
                child.wait(10)
            except subprocess.TimeoutExpired:
                child.kill()
            child.wait()
            break
        vals = read_status(child.pid)
        if "VmRSS" in vals:
            samples += 1
            for k, v in vals.items():
                if k == "VmHWM":
                    peak[k] = v
                else:
                    peak[k] = max(peak[k], v)
        time.sleep(args.interval)
    rc = child.returncode
    with open(args.out, "w") as f:
        f.write(f"peak_rss_bytes {peak['VmRSS']}\n")
        f.write(f"peak_rss_anon_bytes {peak['RssAnon']}\n")
        f.write(f"peak_rss_file_bytes {peak['RssFile']}\n")
        f.write(f"peak_rss_shmem_bytes {peak['RssShmem']}\n")
        f.write(f"last_vmhwm_bytes {peak['VmHWM']}\n")
        f.write(f"samples {samples}\n")
        f.write(f"interval_s {args.interval}\n")
        f.write(f"timed_out {int(timed_out)}\n")
    if timed_out:
        print(f"rss_monitor: {cmd[0]} killed after {args.timeout:g} s", file=sys.stderr)
        sys.exit(124)
    sys.exit(128 - rc if rc < 0 else rc)


if __name__ == "__main__":
    main()
