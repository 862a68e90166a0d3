// mtierd's metrics endpoint (see metrics_http.h).
#include "metrics_http.h"

#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "ipc/segment.h"

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


int parse_listen_address(const std::string& text, sockaddr_storage* addr, socklen_t* len,
                         std::string* why) {
  if (text.empty() || text == "none") return 1;
  std::string host, port;
  if (text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      *why = "'" + text + "': an IPv6 address is written [ADDRESS]:PORT";
      return -EINVAL;
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string::npos || text.find(':') != colon) {
      *why = "'" + text + "': want HOST:PORT, [IPV6]:PORT or none";
      return -EINVAL;
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  char* end = nullptr;
  unsigned long p = strtoul(port.c_str(), &end, 10);
  if (host.empty() || port.empty() || *end || p < 1 || p > 65535) {
    *why = "'" + text + "': want HOST:PORT with a port from 1 to 65535";
    return -EINVAL;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0 || !res) {
    *why = "'" + text + "': " + (rc ? gai_strerror(rc) : "no address");
    return -EINVAL;
  }
  memcpy(addr, res->ai_addr, res->ai_addrlen);
  *len = res->ai_addrlen;
  freeaddrinfo(res);
  return 0;
}

MetricsHttp::~MetricsHttp() { stop(); }

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

bool MetricsHttp::wants_render(uint64_t now_ns) const {
  uint64_t scraped = scraped_ns_.load(std::memory_order_acquire);
  uint64_t rendered = rendered_ns_.load(std::memory_order_acquire);
  return daemon_ && scraped != 0 && now_ns - scraped < kIdleNs && now_ns - rendered >= kRenderNs;
}

void MetricsHttp::publish(std::string text, uint64_t now_ns) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    text_ = std::move(text);
    rendered_ns_.store(now_ns, std::memory_order_release);
  }
  fresh_.notify_all();
}

std::string MetricsHttp::scrape(uint64_t now_ns) {
  scraped_ns_.store(now_ns, std::memory_order_release);
  std::unique_lock<std::mutex> lk(mu_);
  if (now_ns - rendered_ns_.load(std::memory_order_relaxed) > kStaleNs)
    fresh_.wait_for(lk, std::chrono::nanoseconds(kWaitNs),
                    [&] { return rendered_ns_.load(std::memory_order_relaxed) >= now_ns; });
  return text_;
}

}  // namespace mtier::daemon
