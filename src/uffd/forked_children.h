// SPDX-License-Identifier: Apache-2.0
// The forked children that read this process's tables (DataLoader workers,
// multiprocessing pools): each maps the region's memfd privately at the
// same address and registers it for MISSING faults on a userfaultfd of its
// own, which it hands to this process (uffd/child_attach.h). The fault
// handler thread serves those faults: it brings the page into the memfd
// (within the same DRAM budget, as for a fault of its own) and wakes the
// child, whose retried access then maps the memfd's page; a child's write
// copies the page into the child's own memory (MAP_PRIVATE).
//
// This class keeps the children's descriptors (userfaultfd, pidfd) and
// what each inherited, and the tables the parent freed while a child may
// still read them (retired: Engine::free_table keeps such a table, pages
// and address range, for the children; nothing else is made there).
//
// Threads: accept(), reap(), child() and the children's count are the
// fault handler thread's alone. fork_begins() is called by the thread that
// forks (the fork's prepare handler: lock-free). may_be_inherited(),
// retire() and take_unreachable() are called with the registry held
// exclusively. retired_mu_ is a leaf (LOCKING in page/core.h).
// Allocation: none after open() except retire()'s list.
#pragma once
#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace mtier {

class ForkedChildren {
 public:
  static constexpr size_t kMaxChildren = 256;
  // How long a fork may go unannounced before its child is taken for dead
  // (the child waits for the reply for less: uffd/child_attach.h).
  static constexpr uint64_t kAnnounceTimeoutNs = 60'000'000'000ull;

  struct Child {
    pid_t pid = 0;
    int uffd = -1;   // the child's userfaultfd (this process's descriptor)
    int pidfd = -1;  // readable once the child has exited
    int32_t inherited_below = 0;
    uint64_t faults = 0;  // faults served
  };

  ForkedChildren() = default;
  ~ForkedChildren();
  ForkedChildren(const ForkedChildren&) = delete;
  ForkedChildren& operator=(const ForkedChildren&) = delete;

  // Makes the socket pair children announce themselves on. 0 or -errno.
  [[nodiscard]] int open();
  // The end the handler polls (non-blocking) and the end children send on.
  int listen_fd() const { return listen_end_; }
  int child_socket() const { return child_end_; }

  // A fork is about to happen: its child may read tables with ids below
  // next_table_id, from now until it has announced itself (or is taken for
  // dead). Lock-free; from the fork's prepare handler.
  void fork_begins(int32_t next_table_id);

  // Takes one announcement from listen_fd(): replies to the child and, when
  // it is taken, adds it. Returns 1 (a child added), 0 (a message that
  // added nothing), -EAGAIN (none waiting) or -errno.
  [[nodiscard]] int accept();
  size_t count() const { return count_.load(std::memory_order_relaxed); }
  Child& child(size_t i) { return children_[i]; }
  // Forgets child i (its process has exited): closes its descriptors. The
  // last child moves into slot i.
  void reap(size_t i);

  // Whether a child alive or still announcing itself may read the table
  // with this id (it existed at that child's fork).
  bool may_be_inherited(int32_t table_id) const;
  // Notes a retired table (freed by the program, kept for the children).
  // Registry held exclusively. False when out of memory (then the table
  // cannot be retired).
  [[nodiscard]] bool retire(int32_t table_id);
  // Calls drop(table_id) for each retired table no child can read any
  // more, and forgets it. Registry held exclusively.
  template <class F>
  void take_unreachable(F drop);
  // Retired tables now.
  size_t retired() const;

 private:
  void refresh_live_below();
  int32_t below() const;

  int listen_end_ = -1, child_end_ = -1;
  std::array<Child, kMaxChildren> children_{};
  std::atomic<size_t> count_{0};  // written by the handler thread only
  // The largest inherited_below of the children alive.
  std::atomic<int32_t> live_below_{0};
  // Forks not yet announced, the largest inherited_below among them, and
  // when the last one began (CLOCK_MONOTONIC ns).
  std::atomic<int32_t> pending_forks_{0};
  std::atomic<int32_t> pending_below_{0};
  std::atomic<uint64_t> pending_since_{0};
  mutable std::mutex retired_mu_;
  std::vector<int32_t> retired_;
};

template <class F>
void ForkedChildren::take_unreachable(F drop) {
  int32_t limit = below();
  std::lock_guard<std::mutex> lk(retired_mu_);
  for (size_t i = 0; i < retired_.size();) {
    if (retired_[i] < limit) {
      i++;
      continue;
    }
    drop(retired_[i]);
    retired_[i] = retired_.back();
    retired_.pop_back();
  }
}

}  // namespace mtier
