// SPDX-License-Identifier: Apache-2.0
// The PMem store: slots in a DAX device or file mapped with libpmem2. Reads
// are plain copies from the mapping (or none: direct() hands the fault path
// the slot's address); writes use pmem2's memcpy and one drain a batch.
// libpmem2 is loaded on the first set-up (sys/pmem2_api.h), not linked.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "log/log.h"
#include "store/file_backed_store.h"
#include "store/staging.h"
#include "store/store.h"
#include "sys/pmem2_api.h"

namespace mtier {
namespace {

constexpr unsigned kMaxDepth = 4096;

// libpmem2 codes to -errno (plain negative errnos pass through).
int pmem2_errno(int rc) {
  if (rc > PMEM2_E_UNKNOWN) return rc;
  switch (rc) {
    case PMEM2_E_NOSUPP:
    case PMEM2_E_GRANULARITY_NOT_SUPPORTED:
    case PMEM2_E_SOURCE_TYPE_NOT_SUPPORTED: return -ENOTSUP;
    case PMEM2_E_NO_ACCESS: return -EACCES;
    case PMEM2_E_IO_FAIL: return -EIO;
    default: return -EINVAL;
  }
}

// Maps fd with cache-line store granularity (DAX), else page granularity
// (a regular file: persisting is msync). Returns 0 or a libpmem2 code.
int map_fd(const sys::Pmem2Api& p, int fd, pmem2_map** map, bool* page) {
  pmem2_source* src = nullptr;
  pmem2_config* cfg = nullptr;
  int rc = p.source_from_fd(&src, fd);
  if (rc == 0) rc = p.config_new(&cfg);
  if (rc == 0) rc = p.config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_CACHE_LINE);
  if (rc == 0) rc = p.map_new(map, cfg, src);
  *page = rc == PMEM2_E_GRANULARITY_NOT_SUPPORTED;
  if (*page) rc = p.config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE);
  if (*page && rc == 0) rc = p.map_new(map, cfg, src);
  if (cfg) p.config_delete(&cfg);
  if (src) p.source_delete(&src);
  return rc;
}

class PmemStore final : public FileBackedStore {
 public:
  PmemStore(const sys::Pmem2Api& p, BackingFile file, pmem2_map* map, uint64_t bytes,
            std::string mode, bool remove)
      : FileBackedStore(file, bytes / kStorePage, std::move(mode), remove),
        pmem2_(p),
        map_(map),
        base_(static_cast<unsigned char*>(p.map_get_address(map))),
        page_granularity_(p.map_get_store_granularity(map) == PMEM2_GRANULARITY_PAGE),
        memcpy_(p.get_memcpy_fn(map)),
        persist_(p.get_persist_fn(map)),
        drain_(p.get_drain_fn(map)) {}
  // Channels must be closed before their store; the file closes after the map.
  ~PmemStore() override { pmem2_.map_delete(&map_); }

  const char* kind() const override { return "pmem"; }
  [[nodiscard]] std::unique_ptr<StoreChannel> open_channel(unsigned depth) override;

  unsigned char* slot_addr(uint64_t slot) const { return base_ + slot * kStorePage; }
  // Slots still backed by the file: a file truncated underneath would turn a
  // copy from the mapping into SIGBUS, so I/O past its end fails with -EIO.
  uint64_t readable_slots() const;
  // 0, -EINVAL (beyond the capacity) or -EIO (beyond the file's end).
  int check(uint64_t slot, uint64_t readable) const {
    return slot >= capacity_slots() ? -EINVAL : (slot >= readable ? -EIO : 0);
  }
  // Copies a page in, made durable by the next persist_batch(): on DAX the
  // copy flushes and one drain ends the batch; on a page-granularity file one
  // msync of the span the batch touched replaces an msync per page.
  void copy_in(void* dst, const void* src) const {
    memcpy_(dst, src, kStorePage, page_granularity_ ? PMEM2_F_MEM_NOFLUSH : PMEM2_F_MEM_NODRAIN);
  }
  void persist_batch(uint64_t lo_slot, uint64_t hi_slot) const {
    if (!page_granularity_) return drain_();
    if (lo_slot <= hi_slot) persist_(slot_addr(lo_slot), (hi_slot - lo_slot + 1) * kStorePage);
  }

 private:
  const sys::Pmem2Api& pmem2_;  // the process's table (sys::pmem2_api()), never unloaded
  pmem2_map* map_;
  unsigned char* base_;
  bool page_granularity_;
  pmem2_memcpy_fn memcpy_;
  pmem2_persist_fn persist_;
  pmem2_drain_fn drain_;
};

uint64_t PmemStore::readable_slots() const {
  if (file_.device) return capacity_slots();
  struct stat st;
  if (fstat(file_.fd, &st) != 0) return 0;
  return std::min(capacity_slots(), static_cast<uint64_t>(st.st_size) / kStorePage);
}

class PmemChannel final : public StoreChannel {
 public:
  explicit PmemChannel(const PmemStore* store) : store_(store) {}
  [[nodiscard]] int init(unsigned depth) { return bufs_.init(depth); }

  unsigned depth() const override { return bufs_.count(); }
  void* buffer(unsigned i) override { return i < bufs_.count() ? bufs_.at(i) : nullptr; }
  [[nodiscard]] int read_pages(StoreIo* ios, size_t n) override;
  [[nodiscard]] int write_pages(StoreIo* ios, size_t n) override;
  const void* direct(uint64_t slot) override {
    return slot < store_->capacity_slots() ? store_->slot_addr(slot) : nullptr;
  }

 private:
  const PmemStore* store_;
  StagingBuffers bufs_;
};

int PmemChannel::read_pages(StoreIo* ios, size_t n) {
  uint64_t readable = store_->readable_slots();
  int first = 0;
  for (size_t i = 0; i < n; ++i) {
    ios[i].result = store_->check(ios[i].slot, readable);
    if (ios[i].result == 0) std::memcpy(ios[i].buf, store_->slot_addr(ios[i].slot), kStorePage);
    if (first == 0) first = ios[i].result;
  }
  return first;
}

int PmemChannel::write_pages(StoreIo* ios, size_t n) {
  uint64_t readable = store_->readable_slots();
  uint64_t lo = UINT64_MAX, hi = 0;
  int first = 0;
  for (size_t i = 0; i < n; ++i) {
    uint64_t slot = ios[i].slot;
    ios[i].result = store_->check(slot, readable);
    if (ios[i].result == 0) {
      store_->copy_in(store_->slot_addr(slot), ios[i].buf);
      lo = std::min(lo, slot);
      hi = std::max(hi, slot);
    }
    if (first == 0) first = ios[i].result;
  }
  store_->persist_batch(lo, hi);
  return first;
}

std::unique_ptr<StoreChannel> PmemStore::open_channel(unsigned depth) {
  depth = std::clamp(depth, 1u, kMaxDepth);
  auto ch = std::make_unique<PmemChannel>(this);
  int rc = ch->init(depth);
  if (rc == 0) return ch;
  MTIER_LOG_ERROR("pmem store %s: cannot allocate %u staging buffers: %s", file_.path.c_str(),
                  depth, strerror(-rc));
  return nullptr;
}

int log_fail(const std::string& path, const char* what, int err) {
  MTIER_LOG_ERROR("pmem store %s: %s", path.c_str(), what);
  return err;
}

// Maps an opened backing file. On success *bytes is the usable size.
int map_backing(const sys::Pmem2Api& p, const BackingFile& f, pmem2_map** map, bool* page,
                uint64_t* bytes) {
  if (f.device && !f.chardev)
    return log_fail(f.path,
                    "libpmem2 cannot map a block device: use devdax (/dev/daxX.Y) "
                    "or a file on a filesystem mounted with -o dax",
                    -EINVAL);
  int rc = map_fd(p, f.fd, map, page);
  if (rc != 0) {
    // libpmem2 leaves its message empty for some failures: then the errno's text.
    const char* msg = p.errormsg();
    MTIER_LOG_ERROR("pmem store %s: cannot map: %s", f.path.c_str(),
                    msg && *msg ? msg : strerror(-pmem2_errno(rc)));
    return pmem2_errno(rc);
  }
  uint64_t size = p.map_get_size(*map) / kStorePage * kStorePage;
  *bytes = f.bytes ? f.bytes : size;
  if (*bytes <= size && *bytes > 0) return 0;
  p.map_delete(map);
  return log_fail(f.path, "requested size is larger than the device", -EINVAL);
}

std::string pmem_mode(const BackingFile& f, bool page) {
  if (f.chardev) return "devdax";
  if (!page) return "fsdax";
  MTIER_LOG_WARN(
      "pmem store %s: not DAX: a regular file mapped with page granularity, its "
      "pages are cached in DRAM and writes are persisted with msync",
      f.path.c_str());
  return "page granularity file (not DAX)";
}

}  // namespace

std::unique_ptr<Store> open_pmem_store(const StoreOptions& opts, int* err) {
  const char* why = "";
  const sys::Pmem2Api* p = sys::pmem2_api(&why);
  if (!p) {
    MTIER_LOG_ERROR("pmem store %s: %s", opts.path.c_str(), why);
    *err = -ELIBACC;
    return nullptr;
  }
  BackingFile f;
  pmem2_map* map = nullptr;
  bool page = false;
  uint64_t bytes = 0;
  int rc = open_backing_file(opts, "pmem store", &f);
  if (rc == 0) rc = map_backing(*p, f, &map, &page, &bytes);
  if (rc < 0) {
    close_backing_file(&f, true);
    *err = rc;
    return nullptr;
  }
  std::string mode = pmem_mode(f, page);
  *err = 0;
  return std::make_unique<PmemStore>(*p, std::move(f), map, bytes, std::move(mode),
                                     opts.remove_on_close);
}

}  // namespace mtier
