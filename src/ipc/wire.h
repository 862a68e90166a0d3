// SPDX-License-Identifier: Apache-2.0
// The control-socket wire protocol between mtierd and its clients (the
// runtime in each trainer process, and control tools): the versioned message
// set and its encoding. docs/protocol.md is the reference; this file and it
// must agree. No I/O here: src/ipc/channel.h moves messages over a socket.
//
// A message is a 16-byte little-endian header (magic, version, type,
// payload_len, flags) and a payload of fixed-order fields. Decoding checks
// everything a peer could get wrong, so the daemon may decode bytes from any
// local process: it never reads outside [buf, buf+len), allocates at most the
// strings it copies out (together never more than len bytes), and never
// aborts. Encoding is canonical: whatever decodes re-encodes to the same bytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace mtier::ipc {

inline constexpr uint32_t kWireMagic = 0x5052544d;  // bytes 'M','T','R','P'
inline constexpr uint16_t kWireVersion = 3;  // 2: REGISTER names the job and rank; STATUS_REQUEST, HEAT_REQUEST filter by job; 3: REGISTER says the world size
inline constexpr size_t kHeaderBytes = 16;
// Largest whole message (header included) either side sends or accepts.
inline constexpr size_t kMaxMessageBytes = 65536;
// Most file descriptors one message may carry (the transport's limit).
inline constexpr size_t kMaxFds = 4;

// Per-field limits, in bytes (strings) or values; decode and encode apply
// the same ones.
inline constexpr size_t kMaxNameBytes = 64;      // HELLO.name, REGISTER.job, WELCOME.policy, POLICY_SET.name, *_REQUEST.job
inline constexpr size_t kMaxSourcesBytes = 256;  // WELCOME.sources
inline constexpr size_t kMaxErrorBytes = 512;    // ERROR.message
inline constexpr size_t kMaxParamsBytes = 1024;  // POLICY_SET.params
inline constexpr size_t kMaxReplyBytes = 60000;  // REPLY.message
inline constexpr uint32_t kMinWeight = 1, kMaxWeight = 1000;
inline constexpr uint32_t kMaxHeatBuckets = 4096;  // HEAT_REQUEST.buckets
// ERROR.code is in [-kMaxErrno, -1], REPLY.status in [-kMaxErrno, 0]
// (the kernel's errno range, MAX_ERRNO).
inline constexpr int32_t kMaxErrno = 4095;

enum class MsgType : uint16_t {
  kHello = 1,
  kRegister = 2,
  kWelcome = 3,
  kError = 4,
  kOrders = 5,
  kTables = 6,
  kPolicySet = 7,
  kReply = 8,
  kStatusRequest = 9,
  kBye = 10,
  kHeatRequest = 11,
  kBudgetSet = 12,
  kPinSet = 13,
};

enum class Role : uint32_t { kRuntime = 1, kControl = 2 };

// client -> daemon, first message of every connection.
struct Hello {
  Role role = Role::kRuntime;
  uint32_t pid = 0;  // informational: the daemon trusts SO_PEERCRED
  std::string name;  // <= kMaxNameBytes
  bool operator==(const Hello&) const = default;
};
// runtime -> daemon, carries exactly one fd: the shared heat segment memfd.
struct Register {
  uint64_t segment_bytes = 0;  // the daemon checks it against the fd's size
  uint32_t weight = kMinWeight;  // kMinWeight..kMaxWeight
  std::string job;  // <= kMaxNameBytes; empty: no job (engine/job_identity.h)
  int32_t rank = -1;  // -1..INT32_MAX; -1: not said
  int32_t world = -1;  // the job's ranks on every node (WORLD_SIZE): -1 not said, else 1..INT32_MAX
  bool operator==(const Register&) const = default;
};
// daemon -> client, the answer to HELLO.
struct Welcome {
  uint32_t client_id = 0;
  uint32_t daemon_pid = 0;
  std::string policy;   // <= kMaxNameBytes
  std::string sources;  // <= kMaxSourcesBytes
  bool operator==(const Welcome&) const = default;
};
// daemon -> client: the request failed; the daemon may close afterwards.
struct Error {
  int32_t code = -1;     // a negative errno
  std::string message;   // <= kMaxErrorBytes
  bool operator==(const Error&) const = default;
};
// daemon -> runtime, wake-up: new orders are in the shared ring up to ring_head.
struct Orders {
  uint64_t ring_head = 0;
  bool operator==(const Orders&) const = default;
};
// runtime -> daemon: the segment's table directory changed.
struct Tables {
  uint64_t generation = 0;
  bool operator==(const Tables&) const = default;
};
// control -> daemon.
struct PolicySet {
  std::string name;    // <= kMaxNameBytes
  std::string params;  // <= kMaxParamsBytes, "key=value key=value"
  bool operator==(const PolicySet&) const = default;
};
// daemon -> control, the answer to POLICY_SET and STATUS_REQUEST.
struct Reply {
  int32_t status = 0;   // 0 or a negative errno
  std::string message;  // <= kMaxReplyBytes; JSON for STATUS_REQUEST
  bool operator==(const Reply&) const = default;
};
// control -> daemon.
struct StatusRequest {
  uint32_t pid = 0;  // 0 = all processes
  std::string job;   // <= kMaxNameBytes; "" = any, else only this job's ranks
  bool operator==(const StatusRequest&) const = default;
};
// either way: the sender is closing the connection.
struct Bye {
  bool operator==(const Bye&) const = default;
};
// control -> daemon: the status document with each table's heat map at a
// finer grain (`mtier heat`, `mtier record`).
struct HeatRequest {
  uint32_t pid = 0;        // 0 = all processes
  uint32_t buckets = 0;    // heat-map slices per table, 1..kMaxHeatBuckets
  uint32_t window_ms = 0;  // an extent sampled this recently counts as active
  std::string job;         // <= kMaxNameBytes; "" = any, else only this job's ranks
  bool operator==(const HeatRequest&) const = default;
};
// control -> daemon: the node budget of a memory tier (mtierfs'
// tiers/<name>/budget). Root or the daemon's user only.
struct BudgetSet {
  uint32_t tier = 0;   // 0 DRAM, 1 the slow memory tier
  uint64_t bytes = 0;  // 0 = no node budget (each process keeps its own)
  bool operator==(const BudgetSet&) const = default;
};
// Tiers a pin may name.
inline constexpr uint32_t kPinDram = 0, kPinSlow = 1, kPinStore = 2;
inline constexpr uint32_t kUnpin = 0xffffffffu;
// control -> daemon: keep pages [first_page, first_page + pages) of a
// process's table in a tier (mtierfs' .../pin), or drop the pins of that
// range (kUnpin). Root, or the process's own user.
struct PinSet {
  uint32_t pid = 0;
  uint32_t table_id = 0;
  uint64_t first_page = 0;  // within the table
  uint64_t pages = 0;       // >= 1
  uint32_t tier = 0;        // kPinDram, kPinSlow, kPinStore or kUnpin
  bool operator==(const PinSet&) const = default;
};

// The alternatives are in MsgType order: index i holds type i + 1.
struct Message {
  std::variant<Hello, Register, Welcome, Error, Orders, Tables, PolicySet, Reply,
               StatusRequest, Bye, HeatRequest, BudgetSet, PinSet>
      body;
  MsgType type() const { return static_cast<MsgType>(body.index() + 1); }
  bool operator==(const Message&) const = default;
};

// "HELLO", "REGISTER", ...; "UNKNOWN" for a value outside the set.
const char* msg_type_name(MsgType t);
// Which side may send a type (BYE: both). The daemon enforces direction and
// role; the decoder accepts every known type.
bool sent_by_client(MsgType t);
bool sent_by_daemon(MsgType t);
// How many fds a message of this type carries: 1 for REGISTER, else 0.
size_t expected_fds(MsgType t);

// Replaces *out with the encoding of m. Returns 0, -EINVAL if a field is
// outside its limits (string too long or holding a NUL, unknown role, weight,
// code or status out of range), or -EMSGSIZE if the whole exceeds
// kMaxMessageBytes. On error *out is empty.
[[nodiscard]] int encode(const Message& m, std::vector<uint8_t>* out);

// Decodes exactly one message from [buf, buf+len). Returns 0 and fills *out,
// or (checked in this order):
//   -EMSGSIZE        len > kMaxMessageBytes
//   -EBADMSG         shorter than the header, or bad magic
//   -EPROTONOSUPPORT version != kWireVersion
//   -EBADMSG         flags != 0, or payload_len != len - kHeaderBytes
//   -ENOMSG          unknown type
//   -EBADMSG         a field truncated or out of range, a string too long or
//                    holding a NUL, or bytes after the last field
// On error *why (if not null) gets one short reason naming the field, for
// the daemon's log, and *out is unspecified; on success *why is cleared.
[[nodiscard]] int decode(const uint8_t* buf, size_t len, Message* out, std::string* why);

}  // namespace mtier::ipc
