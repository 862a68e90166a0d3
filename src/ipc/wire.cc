// SPDX-License-Identifier: Apache-2.0
#include "ipc/wire.h"

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <type_traits>

namespace mtier::ipc {
namespace {

static_assert(std::variant_size_v<decltype(Message::body)> == 13);
static_assert(std::is_same_v<std::variant_alternative_t<12, decltype(Message::body)>, PinSet>);
// The largest payload (REPLY) fits: encode's -EMSGSIZE is a guard only.
static_assert(kHeaderBytes + 4 + 2 + kMaxReplyBytes <= kMaxMessageBytes);

constexpr uint16_t kMaxType = static_cast<uint16_t>(MsgType::kPinSet);

void set_why(std::string* why, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void set_why(std::string* why, const char* fmt, ...) {
  if (!why) return;
  char line[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  why->assign(line);
}

uint32_t load_u32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}
uint16_t load_u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

// The two visitors below walk the same field list (fields() further down),
// so encoder and decoder cannot disagree on order, width or limits. Each
// method returns false on the first failure, having recorded why.

// Appends fields; a value outside its limits makes encode() fail (-EINVAL).
class Writer {
 public:
  explicit Writer(std::vector<uint8_t>* out) : out_(out) {}

  template <class T>
  bool u32(const T& v, const char*) {
    static_assert(sizeof(T) == 4);
    put(static_cast<uint32_t>(v), 4);
    return true;
  }
  bool u64(const uint64_t& v, const char*) {
    put(v, 8);
    return true;
  }
  bool str(const std::string& s, size_t max, const char*) {
    if (s.size() > max || memchr(s.data(), 0, s.size())) return false;
    put(s.size(), 2);
    out_->insert(out_->end(), s.begin(), s.end());
    return true;
  }
  bool check(bool ok, const char*) { return ok; }
  bool end() { return true; }

 private:
  void put(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) out_->push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t>* out_;
};

// Reads fields from a payload whose length the header already checked; any
// failure is -EBADMSG. Every read checks the bytes left first.
class Reader {
 public:
  Reader(const uint8_t* p, size_t n, const char* type, std::string* why)
      : p_(p), left_(n), type_(type), why_(why) {}

  template <class T>
  bool u32(T& v, const char* field) {
    static_assert(sizeof(T) == 4);
    uint64_t x;
    if (!take(&x, 4, field)) return false;
    v = static_cast<T>(static_cast<uint32_t>(x));
    return true;
  }
  bool u64(uint64_t& v, const char* field) { return take(&v, 8, field); }
  bool str(std::string& s, size_t max, const char* field) {
    uint64_t n;
    if (!take(&n, 2, field)) return false;
    if (n > max) {
      set_why(why_, "%s.%s: length %llu, limit %zu", type_, field,
              static_cast<unsigned long long>(n), max);
      return false;
    }
    if (n > left_) return truncated(field);
    if (memchr(p_, 0, n)) {
      set_why(why_, "%s.%s: holds a NUL byte", type_, field);
      return false;
    }
    s.assign(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    left_ -= n;
    return true;
  }
  bool check(bool ok, const char* field) {
    if (!ok) set_why(why_, "%s.%s: out of range", type_, field);
    return ok;
  }
  bool end() {
    if (left_ == 0) return true;
    set_why(why_, "%s: %zu bytes after the last field", type_, left_);
    return false;
  }

 private:
  bool take(uint64_t* v, size_t bytes, const char* field) {
    if (left_ < bytes) return truncated(field);
    uint64_t x = 0;
    for (size_t i = 0; i < bytes; i++) x |= uint64_t{p_[i]} << (8 * i);
    *v = x;
    p_ += bytes;
    left_ -= bytes;
    return true;
  }
  bool truncated(const char* field) {
    set_why(why_, "%s.%s: truncated", type_, field);
    return false;
  }
  const uint8_t* p_;
  size_t left_;
  const char* type_;
  std::string* why_;
};

bool i32_in(int32_t v, int32_t lo, int32_t hi) { return v >= lo && v <= hi; }

// The field list of every type, in wire order, with its limits. M is the
// struct, const for the Writer; i32 fields travel as their u32 bit pattern.
template <class V, class M>
bool fields(V& v, M& m) {
  using T = std::remove_const_t<M>;
  if constexpr (std::is_same_v<T, Hello>) {
    return v.u32(m.role, "role") &&
           v.check(m.role == Role::kRuntime || m.role == Role::kControl, "role") &&
           v.u32(m.pid, "pid") && v.str(m.name, kMaxNameBytes, "name") && v.end();
  } else if constexpr (std::is_same_v<T, Register>) {
    return v.u64(m.segment_bytes, "segment_bytes") && v.u32(m.weight, "weight") &&
           v.check(m.weight >= kMinWeight && m.weight <= kMaxWeight, "weight") &&
           v.str(m.job, kMaxNameBytes, "job") && v.u32(m.rank, "rank") &&
           v.check(m.rank >= -1, "rank") && v.u32(m.world, "world") &&
           v.check(m.world == -1 || m.world >= 1, "world") && v.end();
  } else if constexpr (std::is_same_v<T, Welcome>) {
    return v.u32(m.client_id, "client_id") && v.u32(m.daemon_pid, "daemon_pid") &&
           v.str(m.policy, kMaxNameBytes, "policy") &&
           v.str(m.sources, kMaxSourcesBytes, "sources") && v.end();
  } else if constexpr (std::is_same_v<T, Error>) {
    return v.u32(m.code, "code") && v.check(i32_in(m.code, -kMaxErrno, -1), "code") &&
           v.str(m.message, kMaxErrorBytes, "message") && v.end();
  } else if constexpr (std::is_same_v<T, Orders>) {
    return v.u64(m.ring_head, "ring_head") && v.end();
  } else if constexpr (std::is_same_v<T, Tables>) {
    return v.u64(m.generation, "generation") && v.end();
  } else if constexpr (std::is_same_v<T, PolicySet>) {
    return v.str(m.name, kMaxNameBytes, "name") &&
           v.str(m.params, kMaxParamsBytes, "params") && v.end();
  } else if constexpr (std::is_same_v<T, Reply>) {
    return v.u32(m.status, "status") && v.check(i32_in(m.status, -kMaxErrno, 0), "status") &&
           v.str(m.message, kMaxReplyBytes, "message") && v.end();
  } else if constexpr (std::is_same_v<T, StatusRequest>) {
    return v.u32(m.pid, "pid") && v.str(m.job, kMaxNameBytes, "job") && v.end();
  } else if constexpr (std::is_same_v<T, HeatRequest>) {
    return v.u32(m.pid, "pid") && v.u32(m.buckets, "buckets") &&
           v.check(m.buckets >= 1 && m.buckets <= kMaxHeatBuckets, "buckets") &&
           v.u32(m.window_ms, "window_ms") && v.str(m.job, kMaxNameBytes, "job") && v.end();
  } else if constexpr (std::is_same_v<T, BudgetSet>) {
    return v.u32(m.tier, "tier") && v.check(m.tier <= 1, "tier") && v.u64(m.bytes, "bytes") &&
           v.end();
  } else if constexpr (std::is_same_v<T, PinSet>) {
    return v.u32(m.pid, "pid") && v.u32(m.table_id, "table_id") &&
           v.u64(m.first_page, "first_page") && v.u64(m.pages, "pages") &&
           v.check(m.pages >= 1, "pages") && v.u32(m.tier, "tier") &&
           v.check(m.tier <= kPinStore || m.tier == kUnpin, "tier") && v.end();
  } else {
    static_assert(std::is_same_v<T, Bye>);
    return v.end();
  }
}

// Sets *m to the alternative for type t (1..kMaxType) and reads its fields.
template <size_t I = 0>
bool read_body(uint16_t t, Reader& r, Message* m) {
  if constexpr (I < std::variant_size_v<decltype(Message::body)>) {
    if (t != I + 1) return read_body<I + 1>(t, r, m);
    return fields(r, m->body.template emplace<I>());
  } else {
    return false;  // unreachable: the caller checked t
  }
}

}  // namespace

const char* msg_type_name(MsgType t) {
  switch (t) {
    case MsgType::kHello: return "HELLO";
    case MsgType::kRegister: return "REGISTER";
    case MsgType::kWelcome: return "WELCOME";
    case MsgType::kError: return "ERROR";
    case MsgType::kOrders: return "ORDERS";
    case MsgType::kTables: return "TABLES";
    case MsgType::kPolicySet: return "POLICY_SET";
    case MsgType::kReply: return "REPLY";
    case MsgType::kStatusRequest: return "STATUS_REQUEST";
    case MsgType::kBye: return "BYE";
    case MsgType::kHeatRequest: return "HEAT_REQUEST";
    case MsgType::kBudgetSet: return "BUDGET_SET";
    case MsgType::kPinSet: return "PIN_SET";
  }
  return "UNKNOWN";
}

bool sent_by_client(MsgType t) {
  switch (t) {
    case MsgType::kHello:
    case MsgType::kRegister:
    case MsgType::kTables:
    case MsgType::kPolicySet:
    case MsgType::kStatusRequest:
    case MsgType::kHeatRequest:
    case MsgType::kBudgetSet:
    case MsgType::kPinSet:
    case MsgType::kBye:
      return true;
    default:
      return false;
  }
}

bool sent_by_daemon(MsgType t) {
  switch (t) {
    case MsgType::kWelcome:
    case MsgType::kError:
    case MsgType::kOrders:
    case MsgType::kReply:
    case MsgType::kBye:
      return true;
    default:
      return false;
  }
}

size_t expected_fds(MsgType t) { return t == MsgType::kRegister ? 1 : 0; }

int encode(const Message& m, std::vector<uint8_t>* out) {
  out->clear();
  out->resize(kHeaderBytes);
  Writer w(out);
  bool ok = std::visit([&w](const auto& body) { return fields(w, body); }, m.body);
  if (!ok) {
    out->clear();
    return -EINVAL;
  }
  if (out->size() > kMaxMessageBytes) {
    out->clear();
    return -EMSGSIZE;
  }
  const uint32_t payload = static_cast<uint32_t>(out->size() - kHeaderBytes);
  const uint16_t type = static_cast<uint16_t>(m.type());
  uint8_t* h = out->data();
  const uint32_t words[] = {kWireMagic, uint32_t{kWireVersion} | uint32_t{type} << 16, payload, 0};
  for (size_t i = 0; i < 4; i++)
    for (size_t b = 0; b < 4; b++) h[4 * i + b] = static_cast<uint8_t>(words[i] >> (8 * b));
  return 0;
}

int decode(const uint8_t* buf, size_t len, Message* out, std::string* why) {
  if (len > kMaxMessageBytes) {
    set_why(why, "message of %zu bytes, limit %zu", len, kMaxMessageBytes);
    return -EMSGSIZE;
  }
  if (len < kHeaderBytes) {
    set_why(why, "header: truncated (%zu bytes)", len);
    return -EBADMSG;
  }
  const uint32_t magic = load_u32(buf);
  const uint16_t version = load_u16(buf + 4);
  const uint16_t type = load_u16(buf + 6);
  const uint32_t payload_len = load_u32(buf + 8);
  const uint32_t flags = load_u32(buf + 12);
  if (magic != kWireMagic) {
    set_why(why, "header.magic: 0x%08x, expected 0x%08x", magic, kWireMagic);
    return -EBADMSG;
  }
  // magic and version are the frozen part of the header: past them a
  // different version may mean anything, so nothing else is looked at.
  if (version != kWireVersion) {
    set_why(why, "header.version: %u, this side speaks %u", version, kWireVersion);
    return -EPROTONOSUPPORT;
  }
  if (flags != 0) {
    set_why(why, "header.flags: 0x%x, must be 0", flags);
    return -EBADMSG;
  }
  if (payload_len != len - kHeaderBytes) {
    set_why(why, "header.payload_len: %u, received %zu", payload_len, len - kHeaderBytes);
    return -EBADMSG;
  }
  if (type == 0 || type > kMaxType) {
    set_why(why, "header.type: unknown type %u", type);
    return -ENOMSG;
  }
  Reader r(buf + kHeaderBytes, payload_len, msg_type_name(static_cast<MsgType>(type)), why);
  if (!read_body(type, r, out)) return -EBADMSG;
  if (why) why->clear();
  return 0;
}

}  // namespace mtier::ipc
