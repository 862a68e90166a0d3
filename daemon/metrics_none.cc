// SPDX-License-Identifier: Apache-2.0
// mtierd built without libmicrohttpd (configure found none): the address is
// still checked, then start says in one line that nothing is served and
// which package serves it; mtierd runs on without the endpoint.
#include <cerrno>

#include "metrics_http.h"

namespace mtier::daemon {

int MetricsHttp::start(const std::string& address, std::string* why) {
  stop();
  sockaddr_storage addr{};
  socklen_t len = 0;
  int rc = parse_listen_address(address, &addr, &len, why);
  if (rc != 0) return rc < 0 ? rc : 0;
  *why = address + ": this mtierd was built without libmicrohttpd (install libmicrohttpd-dev, "
                   "then configure and build again)";
  return -ENOTSUP;
}

void MetricsHttp::stop() { address_.clear(); }

}  // namespace mtier::daemon
