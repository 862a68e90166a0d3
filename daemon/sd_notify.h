// SPDX-License-Identifier: Apache-2.0
// Readiness and status notification to systemd (sd_notify(3)) without
// libsystemd: one datagram to the socket named by NOTIFY_SOCKET. mtierd
// sends "READY=1" once its socket is listening, "STATUS=..." lines, and
// "STOPPING=1" when it begins to shut down (mtierd.service is Type=notify).
#pragma once

namespace mtier::daemon {

// Sends `state` (e.g. "READY=1", or several "KEY=value" lines joined with
// '\n') as one SOCK_DGRAM datagram to $NOTIFY_SOCKET: an absolute path, or
// '@' followed by a name in the abstract namespace. The variable is left
// set (a child does not inherit it from us unless we exec one). Returns 0
// when NOTIFY_SOCKET is unset or empty (not started by systemd: nothing to
// do), 1 when the datagram was sent, or -errno: -EINVAL for an empty state
// or a NOTIFY_SOCKET that is neither form or is too long for sockaddr_un,
// else the errno of socket(2) or sendto(2).
[[nodiscard]] int sd_notify_state(const char* state);

}  // namespace mtier::daemon
