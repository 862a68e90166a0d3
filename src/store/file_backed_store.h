// SPDX-License-Identifier: Apache-2.0
// What the file store and the PMem store share: the backing file (closed,
// and removed if the store created it, when the store goes), the slot
// allocator over its capacity, and the mode line. Subclasses add the I/O.
#pragma once
#include <string>
#include <utility>

#include "store/backing_file.h"
#include "store/slot_allocator.h"
#include "store/store.h"

namespace mtier {

class FileBackedStore : public Store {
 public:
  FileBackedStore(BackingFile file, uint64_t capacity_slots, std::string mode, bool remove_on_close)
      : file_(std::move(file)),
        slots_(capacity_slots),
        mode_(std::move(mode)),
        remove_on_close_(remove_on_close) {}
  // Runs after the subclass's destructor: channels and mappings are gone.
  ~FileBackedStore() override { close_backing_file(&file_, remove_on_close_); }

  const std::string& path() const override { return file_.path; }
  std::string mode() const override { return mode_; }
  uint64_t capacity_slots() const override { return slots_.capacity(); }
  uint64_t used_slots() const override { return slots_.used(); }
  [[nodiscard]] int64_t alloc_slot() override { return slots_.alloc(); }
  [[nodiscard]] int64_t alloc_run(uint64_t n, uint64_t* got) override {
    return slots_.alloc_run(n, got);
  }
  void free_slot(uint64_t slot) override { slots_.free(slot); }

 protected:
  BackingFile file_;

 private:
  SlotAllocator slots_;
  std::string mode_;
  bool remove_on_close_;
};

}  // namespace mtier
