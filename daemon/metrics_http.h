// SPDX-License-Identifier: Apache-2.0
// mtierd's metrics for Prometheus to scrape: GET /metrics over HTTP on the
// configured address (metrics_address, 127.0.0.1:9477 by default), served
// by libmicrohttpd's own thread. That thread never touches the daemon's
// state: it serves the text the event loop last published, and the loop
// renders a new one at most once a second while scrapes come (a scrape of
// a text older than kStaleNs waits up to kWaitNs for a fresh one).
#pragma once
#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

struct MHD_Daemon;

namespace mtier::daemon {

// "HOST:PORT" or "[IPV6]:PORT" (HOST a name or an address literal, PORT
// 1..65535) into *addr; "none" and "" are no address (returns 1). 0, or
// -EINVAL with *why naming what is wrong.
int parse_listen_address(const std::string& text, sockaddr_storage* addr, socklen_t* len,
                         std::string* why);

class MetricsHttp {
 public:
  static constexpr uint64_t kRenderNs = 1'000'000'000;   // at most one render a second
  static constexpr uint64_t kIdleNs = 60'000'000'000;    // no scrape for this long: no renders
  static constexpr uint64_t kStaleNs = 2'000'000'000;    // a scrape waits for a fresher text
  static constexpr uint64_t kWaitNs = 1'000'000'000;     // ... this long at most

  MetricsHttp() = default;
  ~MetricsHttp();
  MetricsHttp(const MetricsHttp&) = delete;
  MetricsHttp& operator=(const MetricsHttp&) = delete;

  // Listens on `address` (parse_listen_address); "none": nothing, 0.
  // 0, or -errno with *why (a bad address: -EINVAL; a port in use, ...).
  [[nodiscard]] int start(const std::string& address, std::string* why);
  void stop();
  bool serving() const { return daemon_ != nullptr; }
  const std::string& address() const { return address_; }

  // Event loop side: whether to render now (someone scraped lately and
  // the text is a second old), and the new text.
  bool wants_render(uint64_t now_ns) const;
  void publish(std::string text, uint64_t now_ns);

  // The text a scrape at `now_ns` gets (waits for a fresher one when the
  // last is stale and scrapes had stopped). Public for the unit test.
  std::string scrape(uint64_t now_ns);

 private:
  MHD_Daemon* daemon_ = nullptr;
  std::string address_;
  std::mutex mu_;
  std::condition_variable fresh_;
  std::string text_;                        // guarded by mu_
  std::atomic<uint64_t> rendered_ns_{0};    // when text_ was published (0: never)
  std::atomic<uint64_t> scraped_ns_{0};     // the last scrape's time (0: none yet)
};

}  // namespace mtier::daemon
