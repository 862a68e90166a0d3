// SPDX-License-Identifier: Apache-2.0
// Engine construction: sizes, stores, region, userfaultfd, threads.
#include <unistd.h>
#include "sys/runtime_fds.h"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "engine/engine.h"

#include <algorithm>

#include "engine/default_budget.h"
#include "engine/job_identity.h"
#include "log/log.h"
#include "sys/numa.h"
#include "sys/page_size.h"
#include "sys/uffd.h"
#include "sys/vm.h"

namespace mtier {
namespace {

constexpr uint64_t kFeatures = UFFD_FEATURE_MISSING_SHMEM | UFFD_FEATURE_MINOR_SHMEM |
                               UFFD_FEATURE_WP_HUGETLBFS_SHMEM | UFFD_FEATURE_THREAD_ID |
                               UFFD_FEATURE_PAGEFAULT_FLAG_WP | UFFD_FEATURE_POISON;
constexpr uint64_t kRequired = UFFD_FEATURE_MISSING_SHMEM | UFFD_FEATURE_MINOR_SHMEM |
                               UFFD_FEATURE_WP_HUGETLBFS_SHMEM | UFFD_FEATURE_THREAD_ID;

uint64_t round_pages(uint64_t b) { return b & kPageMask; }

// The region is mapped twice (the trainer's view and the alias) and its
// page words take 8 bytes a page in the segment: a default region takes at
// most this share of what RLIMIT_AS leaves (ulimit -v), the rest staying
// the program's.
constexpr uint64_t kRegionShareOfAddressSpace = 4;

// Fills in the "auto" (0) sizes from the machine; *budget_from says where
// the DRAM budget came from (default_budget.h), *region_from the region's
// size, for the start line.
Options resolve_sizes(Options o, std::string* budget_from, std::string* region_from) {
  uint64_t ram = sys::physical_memory();
  *budget_from = "given";
  if (!o.dram_bytes) o.dram_bytes = default_dram_budget(own_budget_basis(), budget_from);
  if (o.store_path.empty()) o.store_path = "/var/tmp";
  // The region is planned with a store of twice RAM when none is sized.
  uint64_t store = o.store_bytes ? o.store_bytes : 2 * ram;
  *region_from = "given";
  if (!o.region_bytes) {
    o.region_bytes = std::max<uint64_t>(64ull << 30, ram + store + o.pmem_bytes);
    *region_from = "default";
    uint64_t left = sys::address_space_left();
    if (left != UINT64_MAX && o.region_bytes > left / kRegionShareOfAddressSpace) {
      o.region_bytes = left / kRegionShareOfAddressSpace;
      *region_from = "a quarter of the address space RLIMIT_AS leaves";
      MTIER_LOG_INFO("region: %.1f GiB, %s (ulimit -v); tables beyond it are plain memory",
                     static_cast<double>(o.region_bytes) / (1ull << 30), region_from->c_str());
    }
  }
  o.region_bytes = round_pages(o.region_bytes);
  o.dram_bytes = round_pages(o.dram_bytes);
  // What the tables can need in the store: every page the budget cannot hold.
  if (!o.store_bytes)
    o.store_bytes = std::max<uint64_t>(o.region_bytes - std::min(o.region_bytes, o.dram_bytes),
                                       kPageSize);
  if (!o.queue_depth) o.queue_depth = 1;
  return o;
}

// `given`: the options as set, before the auto sizes (a store_bytes the
// user asked for is refused if its filesystem lacks the room).
int open_stores(const Options& o, const Options& given, std::vector<std::unique_ptr<Store>>* out) {
  int err = 0;
  StoreOptions so;
  so.force = o.store_force;
  if (!o.pmem_path.empty()) {
    so.path = o.pmem_path;
    so.bytes = o.pmem_bytes;
    auto s = open_pmem_store(so, &err);
    if (!s) return err;
    out->push_back(std::move(s));
  }
  if (o.store_path != "none") {
    so.path = o.store_path;
    so.bytes = o.store_bytes;
    so.bytes_given = given.store_bytes != 0;
    auto s = open_file_store(so, &err);
    if (!s) return err;
    out->push_back(std::move(s));
  }
  return 0;
}

// Places the region's pages on `node` (the memfd's shared policy follows the
// mapping's), preferred rather than bound so that a full node falls back
// instead of failing the fault. -1: the kernel's default policy.
int place_on_node(const Options& o, Region& r) {
  if (o.dram_node < 0) return 0;
  int rc = sys::prefer_node(r.base(), r.bytes(), o.dram_node);
  if (rc < 0)
    MTIER_LOG_ERROR("dram_node=%d: mbind of the region: %s", o.dram_node, strerror(-rc));
  return rc;
}

// A DRAM budget must hold one fault batch's demand (FaultHandler::kBatch
// distinct pages): below that a batch waits for room eviction cannot make.
int check_budget(const Options& o) {
  uint64_t min = FaultHandler::kBatch * kPageSize;
  if (o.dram_bytes >= min) return 0;
  MTIER_LOG_ERROR("dram_bytes=%llu: the DRAM budget must be at least %llu bytes (%lluK: one "
                  "fault batch of %zu pages)",
                  static_cast<unsigned long long>(o.dram_bytes),
                  static_cast<unsigned long long>(min),
                  static_cast<unsigned long long>(min >> 10), FaultHandler::kBatch);
  return -EINVAL;
}

// The slow memory tier needs both a node the process may use and a budget.
int check_slow_tier(const Options& o) {
  if (o.slow_bytes == 0 && o.slow_node < 0) return 0;
  if (o.slow_bytes == 0 || o.slow_node < 0) {
    MTIER_LOG_ERROR("slow memory tier: slow_node (%d) and slow_bytes (%llu) go together",
                    o.slow_node, static_cast<unsigned long long>(o.slow_bytes));
    return -EINVAL;
  }
  sys::NodeMask allowed;
  if (sys::mems_allowed(&allowed) == 0 && !allowed.test(o.slow_node)) {
    MTIER_LOG_ERROR("slow_node=%d: this process may not use that node", o.slow_node);
    return -EINVAL;
  }
  return 0;
}

int open_uffd(Core& core) {
  uint64_t got = 0;
  int fd = sys::uffd_open(kFeatures, &got);
  if (fd < 0) {
    MTIER_LOG_ERROR("userfaultfd unavailable: %s (needs root, CAP_SYS_PTRACE, or "
                    "vm.unprivileged_userfaultfd=1)", strerror(-fd));
    return fd;
  }
  if ((got & kRequired) != kRequired) {
    MTIER_LOG_ERROR("userfaultfd lacks shmem MISSING/MINOR/WP support (features %#llx)",
                    static_cast<unsigned long long>(got));
    (void)sys::close_fd(fd);
    return -ENOTSUP;
  }
  core.uffd = std::make_unique<sys::Uffd>(fd);
  core.uffd_features = got;
  int probe = sys::uffd_probe_continue_wp(fd);
  // MTIER_TEST_NO_CONTINUE_WP: the tests' way to run the fallback of a
  // kernel without CONTINUE_MODE_WP (Debian 12's 6.1) on a newer one.
  core.continue_wp = probe == 1 && !getenv("MTIER_TEST_NO_CONTINUE_WP");
  if (probe < 0) MTIER_LOG_WARN("userfaultfd: probing UFFDIO_CONTINUE_MODE_WP: %s", strerror(-probe));
  int rc = sys::uffd_register(fd, core.region->base(), core.region->bytes(),
                              UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_MINOR |
                                  UFFDIO_REGISTER_MODE_WP);
  if (rc < 0) MTIER_LOG_ERROR("userfaultfd: registering the region: %s", strerror(-rc));
  return rc;
}

// Forked children read the tables through the fault handler; without the
// socket they announce themselves on, a child cannot (it says so when it
// tries).
void open_children(Core& core) {
  auto children = std::make_unique<ForkedChildren>();
  if (int rc = children->open(); rc < 0) {
    MTIER_LOG_WARN("forked children: socketpair: %s; a forked child cannot read the tables",
                   strerror(-rc));
    return;
  }
  core.children = std::move(children);
}

}  // namespace

Engine::Engine(std::unique_ptr<Core> core) : core_(std::move(core)) {}

std::unique_ptr<Engine> Engine::create(const Options& given, int* err) {
  std::string budget_from, region_from;
  Options o = resolve_sizes(given, &budget_from, &region_from);
  if ((*err = check_budget(o)) < 0) return nullptr;
  auto region = Region::create(o.region_bytes, err);
  if (!region) return nullptr;
  if ((*err = check_slow_tier(o)) < 0 || (*err = place_on_node(o, *region)) < 0) return nullptr;
  auto core = std::make_unique<Core>(o, std::move(region));
  core->budget_from = budget_from;
  core->region_from = region_from;
  if ((*err = open_stores(o, given, &core->stores)) < 0) return nullptr;
  if ((*err = open_uffd(*core)) < 0) return nullptr;
  open_children(*core);
  std::unique_ptr<Engine> e(new Engine(std::move(core)));
  e->open_segment();
  e->handler_ = std::make_unique<FaultHandler>(*e->core_);
  Engine* raw = e.get();
  e->handler_->on_child_exit([raw] { raw->drop_retired(); });
  e->evictor_ = std::make_unique<Evictor>(*e->core_);
  if ((*err = e->handler_->start()) < 0 || (*err = e->evictor_->start()) < 0) {
    MTIER_LOG_ERROR("starting the engine threads: %s", strerror(-*err));
    return nullptr;
  }
  if (e->segment_ && o.daemon_socket != "none") {
    e->link_ = std::make_unique<DaemonLink>(*e, *e->core_, *e->segment_, own_job_identity());
    if (int rc = e->link_->start(); rc < 0) {
      MTIER_LOG_WARN("daemon link: %s; local policy only", strerror(-rc));
      e->link_.reset();
    }
  }
  // After the link's first try (DaemonLink::start), so that the line is true.
  if (o.verbose) MTIER_LOG_INFO("%s", e->describe().c_str());
  else if (o.stats) MTIER_LOG_NOTICE("%s", e->start_line().c_str());
  return e;
}

// The segment shared with mtierd holds the page words; without one (memfd
// refused) the engine runs with private words and no daemon, and says so.
void Engine::open_segment() {
  Region& r = *core_->region;
  int rc = ipc::Segment::create(r.bytes() / kPageSize, kDirectoryTables, kRingSlots,
                                reinterpret_cast<uintptr_t>(r.base()), &segment_);
  if (rc < 0) {
    MTIER_LOG_WARN("shared segment for mtierd: %s; no daemon policy", strerror(-rc));
    return;
  }
  core_->tables.use_shared_words(segment_->words());
  core_->hints = segment_->hints();
}

Engine::~Engine() {
  if (link_) link_->stop();
  if (lookahead_) lookahead_->stop();
  if (evictor_) evictor_->stop();
  if (handler_) handler_->stop();
  if (core_ && core_->uffd) {
    (void)sys::uffd_unregister(core_->uffd->fd(), core_->region->base(), core_->region->bytes());
    (void)sys::close_fd(core_->uffd->fd());
  }
}

}  // namespace mtier
