// SPDX-License-Identifier: Apache-2.0
// mtierfs' log: one line per event, "mtierfs: ...". In the foreground
// (-f) lines go to standard error (src/log/log.h, ident "mtierfs"), with
// sd-daemon(3) level prefixes when that is the journal (mtierd --fuse under
// systemd); once mtierfs has daemonized, standard error is /dev/null, so
// they go to syslog(3) instead.
#pragma once
#include "log/log.h"

namespace mtier::fs {

// Sets the ident; call once at start.
void log_init();
// From now on, lines go to syslog (facility daemon).
void log_to_syslog();
void log_line(log::Level level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace mtier::fs
