// SPDX-License-Identifier: Apache-2.0
// A control connection to mtierd for the command-line tool: connect to the
// socket (MTIER_DAEMON_SOCKET, else daemon_socket's default), say HELLO as a
// control client, send one request and read the REPLY.
#pragma once
#include <string>

#include "ipc/wire.h"

namespace mtier::tools {

// The socket the tool talks to: --socket PATH if given, else
// $MTIER_DAEMON_SOCKET, else /run/mtier/mtierd.sock.
std::string daemon_socket_path(const char* given);

// Sends `request` (POLICY_SET or STATUS_REQUEST) and waits for the REPLY.
// Returns 0 with *reply filled, or -errno with *why one line for the user
// ("no mtierd at PATH (is it running?)", "mtierd closed the connection").
[[nodiscard]] int daemon_request(const std::string& path, const ipc::Message& request,
                                 ipc::Reply* reply, std::string* why);

}  // namespace mtier::tools
