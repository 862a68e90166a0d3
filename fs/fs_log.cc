// SPDX-License-Identifier: Apache-2.0
#include "fs_log.h"

#include <syslog.h>

#include <atomic>
#include <cstdarg>

namespace mtier::fs {
namespace {

std::atomic<bool> to_syslog{false};

}  // namespace

void log_init() { log::set_ident("mtierfs"); }

void log_to_syslog() {
  openlog("mtierfs", LOG_PID, LOG_DAEMON);
  to_syslog = true;
}

void log_line(log::Level level, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (to_syslog)
    vsyslog(static_cast<int>(level), fmt, ap);  // log::Level values are syslog priorities
  else
    log::vwrite(level, fmt, ap);
  va_end(ap);
}

}  // namespace mtier::fs
