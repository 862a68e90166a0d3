// SPDX-License-Identifier: Apache-2.0
#include "page/table_registry.h"

#include <algorithm>
#include <cerrno>
#include <new>

#include "sys/page_size.h"

namespace mtier {

TableRegistry::TableRegistry(char* base, uint64_t capacity_pages)
    : base_(base), extents_(capacity_pages) {}

// Everything that allocates happens first, in a try block: running out of
// memory returns -ENOMEM with the registry unchanged (no extent lost, the
// id and address lists in agreement). Then nothing below allocates: the
// extent allocator moves nodes, ordered_ has room reserved, and the table
// enters by_id_ as a node made beforehand.
Table* TableRegistry::add(const std::string& name, uint64_t bytes, int* err) noexcept {
  uint64_t pages = (bytes + kPageSize - 1) / kPageSize;
  if (pages == 0) {
    *err = -EINVAL;
    return nullptr;
  }
  decltype(by_id_)::node_type node;
  Table* t = nullptr;
  int id = next_id_.load(std::memory_order_relaxed);
  try {
    decltype(by_id_) one;
    t = one.emplace(id, std::make_unique<Table>()).first->second.get();
    t->name = name.empty() ? "table" + std::to_string(id) : name;
    if (!shared_words_) {
      t->own_words.reset(new PageWordAtomic[pages]);
      t->words = t->own_words.get();
      for (uint64_t i = 0; i < pages; i++) t->words[i].store(0, std::memory_order_relaxed);
    }
    t->sums.reset(new uint32_t[pages]);  // set before a slot is ever read
    // Grown geometrically: reserving size()+1 reallocated and copied the
    // whole list on every table, quadratic in the number of tables.
    if (ordered_.size() == ordered_.capacity())
      ordered_.reserve(std::max<size_t>(16, 2 * ordered_.capacity()));
    node = one.extract(id);
  } catch (const std::bad_alloc&) {
    *err = -ENOMEM;
    return nullptr;
  }
  int64_t first = extents_.alloc(pages);
  if (first < 0) {
    *err = static_cast<int>(first);
    return nullptr;
  }
  next_id_.fetch_add(1, std::memory_order_relaxed);
  t->id = id;
  t->first_page = static_cast<uint64_t>(first);
  t->pages = pages;
  t->bytes = bytes;
  t->base = base_ + t->first_page * kPageSize;
  table_pages_.fetch_add(pages, std::memory_order_relaxed);
  if (shared_words_) t->words = shared_words_ + t->first_page;
  by_id_.insert(std::move(node));
  auto pos = std::lower_bound(ordered_.begin(), ordered_.end(), t,
                              [](Table* a, Table* b) { return a->first_page < b->first_page; });
  ordered_.insert(pos, t);
  *err = 0;
  return t;
}

void TableRegistry::remove(Table* t) noexcept {
  ordered_.erase(std::find(ordered_.begin(), ordered_.end(), t));
  (void)extents_.free(t->first_page, t->pages);
  table_pages_.fetch_sub(t->pages, std::memory_order_relaxed);
  by_id_.erase(t->id);
}

int TableRegistry::grow(Table* t, uint64_t bytes) noexcept {
  uint64_t pages = (bytes + kPageSize - 1) / kPageSize;
  if (pages < t->pages) return -EINVAL;
  if (pages == t->pages) {
    t->bytes = bytes;
    return 0;
  }
  std::unique_ptr<uint32_t[]> sums;
  std::unique_ptr<PageWordAtomic[]> words;
  std::unique_ptr<std::atomic<uint16_t>[]> held;
  try {
    sums.reset(new uint32_t[pages]);
    if (!shared_words_) words.reset(new PageWordAtomic[pages]);
    if (t->holds.load()) held.reset(new std::atomic<uint16_t>[pages]);
  } catch (const std::bad_alloc&) {
    return -ENOMEM;
  }
  if (!extents_.extend(t->first_page, t->pages, pages - t->pages)) return -ENOSPC;
  std::copy_n(t->sums.get(), t->pages, sums.get());
  t->sums = std::move(sums);
  if (words) {
    for (uint64_t i = 0; i < pages; i++)
      words[i].store(i < t->pages ? t->words[i].load(std::memory_order_relaxed) : 0,
                     std::memory_order_relaxed);
    t->own_words = std::move(words);
    t->words = t->own_words.get();
  }
  if (held) {
    for (uint64_t i = 0; i < pages; i++)
      held[i].store(i < t->pages ? t->hold_storage[i].load(std::memory_order_relaxed) : 0,
                    std::memory_order_relaxed);
    t->holds.store(held.get(), std::memory_order_release);
    t->hold_storage = std::move(held);
  }
  table_pages_.fetch_add(pages - t->pages, std::memory_order_relaxed);
  t->pages = pages;
  t->bytes = bytes;
  return 0;
}

Table* TableRegistry::find(const void* addr) const {
  auto c = static_cast<const char*>(addr);
  auto it = std::upper_bound(ordered_.begin(), ordered_.end(), c,
                             [](const char* a, Table* t) { return a < t->base; });
  if (it == ordered_.begin()) return nullptr;
  Table* t = *std::prev(it);
  return t->contains(addr) ? t : nullptr;
}

Table* TableRegistry::by_id(int id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second.get();
}

size_t TableRegistry::index_at_or_after(uint64_t region_page) const {
  auto it = std::lower_bound(ordered_.begin(), ordered_.end(), region_page,
                             [](Table* t, uint64_t p) { return t->first_page + t->pages <= p; });
  return it == ordered_.end() ? 0 : static_cast<size_t>(it - ordered_.begin());
}

}  // namespace mtier
