// SPDX-License-Identifier: Apache-2.0
// mtierd's metrics endpoint (see metrics_http.h): the listen address and the
// text a scrape gets. The server proper is metrics_mhd.cc (libmicrohttpd), or
// metrics_none.cc where configure found no libmicrohttpd.
#include "metrics_http.h"

#include <netdb.h>
#include <netinet/in.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "ipc/segment.h"

namespace mtier::daemon {



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
