// SPDX-License-Identifier: Apache-2.0
// The control requests that change what mtierd does, beyond the policy:
// BUDGET_SET (a tier's node budget) and PIN_SET (a table range kept in a
// tier), and how pins act on each tick (pins.h).
#include <unistd.h>

#include <cerrno>

#include "ipc/channel.h"
#include "log/log.h"
#include "server.h"
#include "sys/page_size.h"

namespace mtier::daemon {
namespace {

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

void Server::reply(Client& c, int status, const std::string& message) {
  ipc::Reply r{status, message.substr(0, ipc::kMaxReplyBytes)};
  (void)ipc::send_message(c.fd, ipc::Message{r}, nullptr, 0);
}

// Node-wide, like the policy: root or the daemon's own user only. A budget
// above what the tier's nodes hold cannot be met, so it is refused.
void Server::on_budget_set(Client& c, const ipc::BudgetSet& m) {
  const char* tier = m.tier == 0 ? "dram" : "slow";
  if (c.uid != 0 && c.uid != geteuid()) {
    MTIER_LOG_WARN("%s: budget of %s refused: not root or mtierd's user", c.label().c_str(), tier);
    return reply(c, -EPERM, "changing a budget takes root or mtierd's user");
  }
  uint64_t capacity = 0;
  for (const auto& t : topology_.tiers)
    if ((t.kind == TierKind::kDram) == (m.tier == 0)) {
      capacity = t.bytes;
      break;
    }
  if (m.bytes % kPageSize || (capacity && m.bytes > capacity)) {
    std::string why = m.bytes % kPageSize ? "a budget must be a multiple of " + std::to_string(kPageSize) + " bytes"
                                      : std::string("budget ") + mib(m.bytes) +
                                            " is larger than tier " + tier + " (" +
                                            mib(capacity) + ")";
    MTIER_LOG_WARN("%s: budget of %s refused: %s", c.label().c_str(), tier, why.c_str());
    return reply(c, -EINVAL, why);
  }
  (m.tier == 0 ? cfg_.dram_bytes : cfg_.slow_bytes) = m.bytes;
  MTIER_LOG_NOTICE("%s set the %s budget: %s", c.label().c_str(), tier,
                   m.bytes ? mib(m.bytes).c_str() : "none");
  reply(c, 0, std::string(tier) + " budget " + std::to_string(m.bytes));
}

void Server::on_pin_set(Client& c, const ipc::PinSet& m) {
  Client* target = nullptr;
  for (auto& [fd, other] : clients_)
    if (other->is_runtime() && other->pid == static_cast<pid_t>(m.pid)) target = other.get();
  std::string why;
  int status = 0;
  const ipc::TableEntry* table = nullptr;
  if (!target) {
    status = -ESRCH, why = "pid " + std::to_string(m.pid) + " is not registered with mtierd";
  } else if (c.uid != 0 && c.uid != target->uid) {
    status = -EPERM, why = "pid " + std::to_string(m.pid) + " belongs to another user";
  } else {
    for (const auto& t : target->tables)
      if (t.id == m.table_id) table = &t;
    if (!table) {
      status = -ENOENT, why = "pid " + std::to_string(m.pid) + " has no table " +
                              std::to_string(m.table_id);
    } else if (m.first_page >= table->pages || m.pages > table->pages - m.first_page) {
      status = -EINVAL, why = "pages " + std::to_string(m.first_page) + "+" +
                              std::to_string(m.pages) + " are outside table " + table->name +
                              " (" + std::to_string(table->pages) + " pages)";
    }
  }
  if (status == 0) {
    PinTier tier = static_cast<PinTier>(m.tier);
    status = set_pin(&target->pins, m.table_id, m.first_page, m.pages,
                     m.tier == ipc::kUnpin ? nullptr : &tier);
    if (status < 0) why = "too many pins in pid " + std::to_string(m.pid);
  }
  if (status < 0) {
    MTIER_LOG_WARN("%s: pin refused: %s", c.label().c_str(), why.c_str());
    return reply(c, status, why);
  }
  std::string what = m.tier == ipc::kUnpin ? std::string("unpinned")
                                           : std::string("pinned to ") +
                                                 pin_tier_name(static_cast<PinTier>(m.tier));
  MTIER_LOG_NOTICE("%s: %s pages %llu+%llu of table %s of %s", c.label().c_str(), what.c_str(),
                   static_cast<unsigned long long>(m.first_page),
                   static_cast<unsigned long long>(m.pages), table->name,
                   target->label().c_str());
  reply(c, 0, what);
}

}  // namespace mtier::daemon
