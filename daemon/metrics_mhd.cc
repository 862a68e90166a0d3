// SPDX-License-Identifier: Apache-2.0
// mtierd's metrics endpoint served by libmicrohttpd's own thread
// (metrics_http.h): start, stop and the request handler.
#include <microhttpd.h>

#include <cerrno>
#include <cstring>

#include "ipc/segment.h"
#include "metrics_http.h"

namespace mtier::daemon {
namespace {

// libmicrohttpd's thread: GET /metrics only; no exception leaves it.
MHD_Result handle(void* self, MHD_Connection* c, const char* url, const char* method, const char*,
                  const char*, size_t* upload_size, void** request) noexcept {
  // The first call of a request only announces it.
  static int announced;
  if (*request != &announced) {
    *request = &announced;
    return MHD_YES;
  }
  if (*upload_size != 0) return MHD_NO;
  try {
    unsigned status = MHD_HTTP_OK;
    std::string body;
    const char* type = "text/plain; charset=utf-8";
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
      status = MHD_HTTP_METHOD_NOT_ALLOWED;
      body = "mtierd serves GET /metrics\n";
    } else if (strcmp(url, "/metrics") != 0) {
      status = MHD_HTTP_NOT_FOUND;
      body = "mtierd serves its metrics at /metrics\n";
    } else {
      body = static_cast<MetricsHttp*>(self)->scrape(ipc::monotonic_ns());
      type = "text/plain; version=0.0.4; charset=utf-8";
    }
    MHD_Response* r =
        MHD_create_response_from_buffer(body.size(), body.data(), MHD_RESPMEM_MUST_COPY);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_Result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
  } catch (...) {
    return MHD_NO;
  }
}

}  // namespace

int MetricsHttp::start(const std::string& address, std::string* why) {
  stop();
  sockaddr_storage addr{};
  socklen_t len = 0;
  int rc = parse_listen_address(address, &addr, &len, why);
  if (rc != 0) return rc < 0 ? rc : 0;
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD;
  if (addr.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
  // The port argument is ignored when an address is given.
  errno = 0;
  daemon_ = MHD_start_daemon(flags, 0, nullptr, nullptr, &handle, this,
                             MHD_OPTION_SOCK_ADDR, reinterpret_cast<sockaddr*>(&addr),
                             MHD_OPTION_CONNECTION_LIMIT, 16u, MHD_OPTION_CONNECTION_TIMEOUT, 10u,
                             MHD_OPTION_END);
  if (!daemon_) {
    int err = errno ? errno : EADDRINUSE;
    *why = address + ": cannot listen (" + strerror(err) + ")";
    return -err;
  }
  address_ = address;
  return 0;
}

void MetricsHttp::stop() {
  if (daemon_) MHD_stop_daemon(daemon_);
  daemon_ = nullptr;
  address_.clear();
}

}  // namespace mtier::daemon
