// SPDX-License-Identifier: Apache-2.0
// Unit tests for src/ipc: every message type round trips at its limits, the
// exact bytes of the header, each class of malformed input with its error
// code, a seeded random fuzz run (random bytes and mutations of valid
// encodings: no crash, and whatever decodes re-encodes to the same bytes),
// and send_message/recv_message over a socketpair with fd bookkeeping.
#include "ipc/channel.h"
#include "ipc/wire.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sys/unix_socket.h"

namespace mtier::ipc {
namespace {

using Bytes = std::vector<uint8_t>;

// Messages of every type: small values, then each field at its upper limit.
std::vector<Message> samples() {
  const std::string s64(kMaxNameBytes, 'n'), s256(kMaxSourcesBytes, 's');
  const std::string s512(kMaxErrorBytes, 'e'), s1024(kMaxParamsBytes, 'p');
  const std::string s60000(kMaxReplyBytes, '{');
  return {
      {Hello{Role::kRuntime, 1234, "trainer"}},
      {Hello{Role::kControl, 0xffffffffu, s64}},
      {Hello{Role::kRuntime, 0, ""}},
      {Register{1ull << 30, kMinWeight, "", -1}},
      {Register{~0ull, kMaxWeight, std::string(kMaxNameBytes, 'j'), 0x7fffffff}},
      {Register{0, 500, "torch:localhost:29500", 1}},
      {Register{0, 500, "torch:10.0.0.1:29500", 3, 4}},
      {Register{0, 1, "j", 0, 0x7fffffff}},
      {Welcome{7, 99, "clock", "pte-sampler minor-faults"}},
      {Welcome{0xffffffffu, 0xffffffffu, s64, s256}},
      {Welcome{0, 0, "", ""}},
      {Error{-EPROTONOSUPPORT, "version 2 not spoken here"}},
      {Error{-1, s512}},
      {Error{-kMaxErrno, ""}},
      {Orders{0}},
      {Orders{~0ull}},
      {Tables{1}},
      {Tables{~0ull}},
      {PolicySet{"hot-cold", "promote_ms=100 demote_ms=1000"}},
      {PolicySet{s64, s1024}},
      {PolicySet{"", ""}},
      {Reply{0, "{\"processes\":[]}"}},
      {Reply{-kMaxErrno, s60000}},
      {Reply{-EINVAL, ""}},
      {StatusRequest{0, ""}},
      {StatusRequest{0xffffffffu, ""}},
      {Bye{}},
      {HeatRequest{0, 1, 0, ""}},
      {HeatRequest{0xffffffffu, kMaxHeatBuckets, 0xffffffffu, ""}},
      {BudgetSet{0, 0}},
      {BudgetSet{1, ~0ull}},
      {PinSet{1, 2, 0, 1, kPinDram}},
      {PinSet{0xffffffffu, 0xffffffffu, ~0ull, ~0ull, kUnpin}},
      {PinSet{7, 1, 5, 10, kPinStore}},
  };
}

Bytes enc(const Message& m) {
  Bytes b;
  EXPECT_EQ(encode(m, &b), 0) << msg_type_name(m.type());
  return b;
}

int dec(const Bytes& b, std::string* why = nullptr) {
  Message m;
  std::string w;
  int rc = decode(b.data(), b.size(), &m, why ? why : &w);
  return rc;
}

void put32(Bytes* b, size_t off, uint32_t v) {
  for (int i = 0; i < 4; i++) (*b)[off + i] = static_cast<uint8_t>(v >> (8 * i));
}
void put16(Bytes* b, size_t off, uint16_t v) {
  (*b)[off] = static_cast<uint8_t>(v);
  (*b)[off + 1] = static_cast<uint8_t>(v >> 8);
}
// Makes the header's payload_len match the buffer again after an edit.
void fix_len(Bytes* b) { put32(b, 8, static_cast<uint32_t>(b->size() - kHeaderBytes)); }

TEST(Wire, EveryTypeRoundTripsAtItsLimits) {
  std::vector<bool> seen(14, false);
  for (const Message& m : samples()) {
    Bytes b = enc(m);
    Message back;
    std::string why = "stale";
    ASSERT_EQ(decode(b.data(), b.size(), &back, &why), 0) << why;
    EXPECT_EQ(back, m) << msg_type_name(m.type());
    EXPECT_EQ(back.type(), m.type());
    EXPECT_TRUE(why.empty());
    seen[static_cast<size_t>(m.type())] = true;
  }
  for (int t = 1; t <= 13; t++) EXPECT_TRUE(seen[t]) << t;
}

TEST(Wire, HeaderBytesAreLittleEndianAsDocumented) {
  Bytes b = enc({Register{0x0102030405060708ull, 1000, "j", 2}});
  const Bytes want = {'M', 'T', 'R', 'P', 3, 0, 2, 0, 23, 0, 0, 0, 0, 0, 0, 0,
                      8, 7, 6, 5, 4, 3, 2, 1, 0xe8, 0x03, 0, 0, 1, 0, 'j', 2, 0, 0, 0,
                      0xff, 0xff, 0xff, 0xff};
  EXPECT_EQ(b, want);
  Bytes h = enc({Hello{Role::kControl, 5, "ab"}});
  const Bytes want_h = {'M', 'T', 'R', 'P', 3, 0, 1, 0, 12, 0, 0, 0, 0, 0, 0, 0,
                        2, 0, 0, 0, 5, 0, 0, 0, 2, 0, 'a', 'b'};
  EXPECT_EQ(h, want_h);
  Bytes e = enc({Error{-2, ""}});
  EXPECT_EQ(e[16], 0xfe);  // i32 -2, two's complement
  EXPECT_EQ(e[19], 0xff);
  EXPECT_EQ(enc({Bye{}}).size(), kHeaderBytes);
}

TEST(Wire, NamesAndDirections) {
  EXPECT_STREQ(msg_type_name(MsgType::kHello), "HELLO");
  EXPECT_STREQ(msg_type_name(MsgType::kPolicySet), "POLICY_SET");
  EXPECT_STREQ(msg_type_name(MsgType::kStatusRequest), "STATUS_REQUEST");
  EXPECT_STREQ(msg_type_name(MsgType::kHeatRequest), "HEAT_REQUEST");
  EXPECT_STREQ(msg_type_name(MsgType::kPinSet), "PIN_SET");
  EXPECT_STREQ(msg_type_name(static_cast<MsgType>(99)), "UNKNOWN");
  for (MsgType t : {MsgType::kHello, MsgType::kRegister, MsgType::kTables, MsgType::kPolicySet,
                    MsgType::kStatusRequest, MsgType::kHeatRequest, MsgType::kBudgetSet,
                    MsgType::kPinSet})
    EXPECT_TRUE(sent_by_client(t) && !sent_by_daemon(t)) << msg_type_name(t);
  for (MsgType t : {MsgType::kWelcome, MsgType::kError, MsgType::kOrders, MsgType::kReply})
    EXPECT_TRUE(sent_by_daemon(t) && !sent_by_client(t)) << msg_type_name(t);
  EXPECT_TRUE(sent_by_client(MsgType::kBye) && sent_by_daemon(MsgType::kBye));
  EXPECT_FALSE(sent_by_client(static_cast<MsgType>(0)));
  EXPECT_EQ(expected_fds(MsgType::kRegister), 1u);
  EXPECT_EQ(expected_fds(MsgType::kHello), 0u);
}

TEST(Wire, EncodeRefusesFieldsOutsideTheirLimits) {
  const std::string nul("a\0b", 3);
  const std::vector<Message> bad = {
      {Hello{static_cast<Role>(0), 1, "x"}},
      {Hello{static_cast<Role>(3), 1, "x"}},
      {Hello{Role::kRuntime, 1, std::string(kMaxNameBytes + 1, 'n')}},
      {Hello{Role::kRuntime, 1, nul}},
      {Register{4096, 0, "", -1}},
      {Register{4096, kMaxWeight + 1, "", -1}},
      {Register{4096, 1, "", -1, 0}},
      {Register{4096, 1, "", -1, -2}},
      {Welcome{1, 1, std::string(kMaxNameBytes + 1, 'p'), ""}},
      {Welcome{1, 1, "", std::string(kMaxSourcesBytes + 1, 's')}},
      {Error{0, "zero is not an error"}},
      {Error{5, ""}},
      {Error{-kMaxErrno - 1, ""}},
      {Error{-1, std::string(kMaxErrorBytes + 1, 'e')}},
      {PolicySet{std::string(kMaxNameBytes + 1, 'n'), ""}},
      {PolicySet{"x", std::string(kMaxParamsBytes + 1, 'p')}},
      {PolicySet{"x", nul}},
      {Reply{1, ""}},
      {Reply{-kMaxErrno - 1, ""}},
      {Reply{0, std::string(kMaxReplyBytes + 1, 'r')}},
      {HeatRequest{0, 0, 100, ""}},
      {HeatRequest{0, kMaxHeatBuckets + 1, 100, ""}},
      {BudgetSet{2, 4096}},
      {PinSet{1, 1, 0, 0, kPinDram}},
      {PinSet{1, 1, 0, 1, 3}},
  };
  for (const Message& m : bad) {
    Bytes b = {1, 2, 3};
    EXPECT_EQ(encode(m, &b), -EINVAL) << msg_type_name(m.type());
    EXPECT_TRUE(b.empty());
  }
}

TEST(Wire, HeaderRejections) {
  const Bytes good = enc({Hello{Role::kRuntime, 42, "t"}});
  std::string why;
  Bytes b = good;
  b[0] = 'X';
  EXPECT_EQ(dec(b, &why), -EBADMSG);
  EXPECT_NE(why.find("magic"), std::string::npos) << why;

  for (uint16_t v : {0, 1, 2, 4, 0xffff}) {
    b = good;
    put16(&b, 4, v);
    EXPECT_EQ(dec(b, &why), -EPROTONOSUPPORT) << v;
    EXPECT_NE(why.find("version"), std::string::npos) << why;
  }
  // A version-4 message may lay out the rest differently: still only
  // -EPROTONOSUPPORT, whatever follows.
  b = good;
  put16(&b, 4, 4);
  put32(&b, 12, 7);
  b.push_back(0);
  EXPECT_EQ(dec(b), -EPROTONOSUPPORT);

  for (uint32_t f : {1u, 0x80000000u}) {
    b = good;
    put32(&b, 12, f);
    EXPECT_EQ(dec(b, &why), -EBADMSG);
    EXPECT_NE(why.find("flags"), std::string::npos) << why;
  }
  for (uint32_t len : {0u, 10u, 12u, 0xffffffffu}) {  // the payload is 11
    b = good;
    put32(&b, 8, len);
    EXPECT_EQ(dec(b, &why), -EBADMSG) << len;
    EXPECT_NE(why.find("payload_len"), std::string::npos) << why;
  }
  for (uint16_t t : {0, 14, 99, 0xffff}) {
    b = good;
    put16(&b, 6, t);
    EXPECT_EQ(dec(b, &why), -ENOMSG) << t;
    EXPECT_NE(why.find("type"), std::string::npos) << why;
  }
  // An unknown type whose framing is also broken is a framing error.
  b = good;
  put16(&b, 6, 99);
  b.push_back(0);
  EXPECT_EQ(dec(b), -EBADMSG);
}

TEST(Wire, OversizedBuffers) {
  Bytes big = enc({Reply{0, "x"}});
  big.resize(kMaxMessageBytes + 1);
  fix_len(&big);
  std::string why;
  EXPECT_EQ(dec(big, &why), -EMSGSIZE);
  EXPECT_FALSE(why.empty());
  // Exactly kMaxMessageBytes is not oversized: here it is a trailing-bytes error.
  big.resize(kMaxMessageBytes);
  fix_len(&big);
  EXPECT_EQ(dec(big), -EBADMSG);
  // Oversize is judged before anything else, even on garbage.
  Bytes junk(kMaxMessageBytes + 100, 0xAA);
  EXPECT_EQ(dec(junk), -EMSGSIZE);
}

TEST(Wire, EveryTruncationPointOfEveryTypeIsRejected) {
  for (const Message& m : samples()) {
    const Bytes full = enc(m);
    for (size_t cut = 0; cut < full.size(); cut++) {
      // As received: the header still claims the full length.
      Bytes b(full.begin(), full.begin() + cut);
      EXPECT_EQ(dec(b), -EBADMSG) << msg_type_name(m.type()) << " cut " << cut;
      // Consistent framing, so a field itself is what runs short.
      if (cut >= kHeaderBytes) {
        fix_len(&b);
        std::string why;
        EXPECT_EQ(dec(b, &why), -EBADMSG) << msg_type_name(m.type()) << " cut " << cut;
        EXPECT_NE(why.find(msg_type_name(m.type())), std::string::npos) << why;
      }
    }
  }
  // Nothing at all, and a null buffer of length 0.
  Message out;
  EXPECT_EQ(decode(nullptr, 0, &out, nullptr), -EBADMSG);
}

TEST(Wire, TrailingBytesAreRejected) {
  for (const Message& m : samples()) {
    Bytes b = enc(m);
    if (b.size() + 1 > kMaxMessageBytes) continue;
    b.push_back(0);
    fix_len(&b);
    std::string why;
    EXPECT_EQ(dec(b, &why), -EBADMSG) << msg_type_name(m.type());
    EXPECT_NE(why.find("after the last field"), std::string::npos) << why;
  }
}

TEST(Wire, BadStringsAndRangesAreRejected) {
  std::string why;
  // A NUL inside a string.
  Bytes b = enc({Hello{Role::kRuntime, 1, "abc"}});
  b[kHeaderBytes + 8 + 2 + 1] = 0;
  EXPECT_EQ(dec(b, &why), -EBADMSG);
  EXPECT_NE(why.find("HELLO.name"), std::string::npos) << why;
  EXPECT_NE(why.find("NUL"), std::string::npos) << why;

  // A string one byte over its limit, framing consistent.
  struct Over {
    Message base;    // with the string field at its limit
    size_t str_off;  // payload offset of the u16 length
  };
  const std::vector<Over> overs = {
      {{Hello{Role::kRuntime, 1, std::string(kMaxNameBytes, 'n')}}, 8},
      {{Welcome{1, 2, "", std::string(kMaxSourcesBytes, 's')}}, 10},
      {{Error{-1, std::string(kMaxErrorBytes, 'e')}}, 4},
      {{PolicySet{"", std::string(kMaxParamsBytes, 'p')}}, 2},
      {{Reply{0, std::string(kMaxReplyBytes, 'r')}}, 4},
  };
  for (const Over& o : overs) {
    b = enc(o.base);
    size_t at = kHeaderBytes + o.str_off;
    uint16_t n = static_cast<uint16_t>(b[at] | b[at + 1] << 8);
    put16(&b, at, static_cast<uint16_t>(n + 1));
    b.push_back('x');
    fix_len(&b);
    EXPECT_EQ(dec(b, &why), -EBADMSG) << msg_type_name(o.base.type());
    EXPECT_NE(why.find("limit"), std::string::npos) << why;
  }
  // A string length larger than what is left.
  b = enc({PolicySet{"ab", ""}});
  put16(&b, kHeaderBytes, 60);
  EXPECT_EQ(dec(b, &why), -EBADMSG);
  EXPECT_NE(why.find("truncated"), std::string::npos) << why;

  // Numeric ranges.
  auto field32 = [](Message m, size_t off, uint32_t v) {
    Bytes e = enc(m);
    put32(&e, kHeaderBytes + off, v);
    return e;
  };
  for (uint32_t role : {0u, 3u, 0xffffffffu}) {
    EXPECT_EQ(dec(field32({Hello{Role::kRuntime, 1, ""}}, 0, role), &why), -EBADMSG);
    EXPECT_NE(why.find("HELLO.role"), std::string::npos) << why;
  }
  for (uint32_t w : {0u, 1001u, 0xffffffffu}) {
    EXPECT_EQ(dec(field32({Register{1, 1, "", -1}}, 8, w), &why), -EBADMSG);
    EXPECT_NE(why.find("REGISTER.weight"), std::string::npos) << why;
  }
  // rank: -1 (not said) .. INT32_MAX; after an empty job name (2 bytes).
  for (uint32_t r : {0xfffffffeu, 0x80000000u}) {
    EXPECT_EQ(dec(field32({Register{1, 1, "", -1}}, 14, r), &why), -EBADMSG);
    EXPECT_NE(why.find("REGISTER.rank"), std::string::npos) << why;
  }
  EXPECT_EQ(dec(field32({Register{1, 1, "", -1}}, 14, 0xffffffffu)), 0);
  // world: -1 (not said) or 1 .. INT32_MAX; after the rank.
  for (uint32_t w : {0u, 0xfffffffeu, 0x80000000u}) {
    EXPECT_EQ(dec(field32({Register{1, 1, "", -1}}, 18, w), &why), -EBADMSG);
    EXPECT_NE(why.find("REGISTER.world"), std::string::npos) << why;
  }
  EXPECT_EQ(dec(field32({Register{1, 1, "", -1}}, 18, 4)), 0);
  for (uint32_t c : {0u, 1u, static_cast<uint32_t>(-kMaxErrno - 1), 0x80000000u})
    EXPECT_EQ(dec(field32({Error{-1, ""}}, 0, c)), -EBADMSG) << c;
  for (uint32_t s : {1u, static_cast<uint32_t>(-kMaxErrno - 1)})
    EXPECT_EQ(dec(field32({Reply{0, ""}}, 0, s)), -EBADMSG) << s;
  EXPECT_EQ(dec(field32({Reply{0, ""}}, 0, static_cast<uint32_t>(-kMaxErrno))), 0);
}

// Seeded random inputs, as `make check` runs them: random bytes (half behind
// a valid header so they reach the field parsers), and bit flips,
// truncations, extensions and splices of valid encodings, some with
// payload_len fixed up. Each input sits in a heap block of exactly its size,
// so under ASan a read past the end fails the run. Whatever decodes must
// re-encode to exactly the input.
TEST(Wire, SeededFuzz) {
  std::mt19937_64 rng(0x6d74696572);
  const std::vector<Message> base = samples();
  std::vector<Bytes> valid;
  for (const Message& m : base) valid.push_back(enc(m));
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };

  const size_t kInputs = 200000;
  size_t ok = 0, by_code[5] = {};
  std::vector<bool> ok_type(11, false);
  for (size_t i = 0; i < kInputs; i++) {
    Bytes in;
    const Bytes& v = valid[pick(valid.size())];
    switch (i % 6) {
      case 0: {  // random bytes, sometimes after a valid header
        size_t n = pick(i % 12 == 0 ? 80 : 300);
        if (pick(2)) in.assign(v.begin(), v.begin() + kHeaderBytes);
        for (size_t k = 0; k < n; k++) in.push_back(static_cast<uint8_t>(rng()));
        if (in.size() >= kHeaderBytes && pick(2)) fix_len(&in);
        break;
      }
      case 1: {  // bit flips
        in = v;
        for (size_t k = 1 + pick(3); k > 0; k--) in[pick(in.size())] ^= 1u << pick(8);
        if (pick(2)) fix_len(&in);
        break;
      }
      case 2: {  // truncation
        in.assign(v.begin(), v.begin() + pick(v.size() + 1));
        if (in.size() >= kHeaderBytes && pick(2)) fix_len(&in);
        break;
      }
      case 3: {  // extension
        in = v;
        for (size_t k = 1 + pick(8); k > 0; k--) in.push_back(static_cast<uint8_t>(rng()));
        if (pick(2)) fix_len(&in);
        break;
      }
      case 4: {  // splice: a prefix of one, the suffix of another
        const Bytes& w = valid[pick(valid.size())];
        size_t a = pick(v.size() + 1), c = pick(w.size() + 1);
        in.assign(v.begin(), v.begin() + a);
        in.insert(in.end(), w.begin() + c, w.end());
        if (in.size() >= kHeaderBytes && pick(4)) fix_len(&in);
        break;
      }
      default: {  // byte edits in the payload with valid framing: mostly decodes
        in = v;
        if (in.size() > kHeaderBytes && pick(2))
          in[kHeaderBytes + pick(in.size() - kHeaderBytes)] = static_cast<uint8_t>(rng());
        break;
      }
    }
    std::unique_ptr<uint8_t[]> exact(new uint8_t[in.size() ? in.size() : 1]);
    if (!in.empty()) memcpy(exact.get(), in.data(), in.size());
    Message m;
    std::string why;
    int rc = decode(in.empty() ? nullptr : exact.get(), in.size(), &m, &why);
    switch (rc) {
      case 0: {
        ok++;
        ok_type[static_cast<size_t>(m.type())] = true;
        Bytes again;
        ASSERT_EQ(encode(m, &again), 0) << "input " << i;
        ASSERT_EQ(again, in) << "input " << i << " does not re-encode to itself";
        break;
      }
      case -EBADMSG: by_code[0]++; break;
      case -EPROTONOSUPPORT: by_code[1]++; break;
      case -EMSGSIZE: by_code[2]++; break;
      case -ENOMSG: by_code[3]++; break;
      default: FAIL() << "input " << i << ": unexpected rc " << rc;
    }
    if (rc != 0) {
      ASSERT_FALSE(why.empty()) << "input " << i;
    }
  }
  // The run reached the success path of every type and each header error
  // (oversize is not generated here: OversizedBuffers covers it).
  EXPECT_GT(ok, kInputs / 20);
  for (int t = 1; t <= 10; t++) EXPECT_TRUE(ok_type[t]) << t;
  EXPECT_GT(by_code[0], kInputs / 4);
  EXPECT_GT(by_code[1], 100u);
  EXPECT_GT(by_code[3], 100u);
}

// --- send_message / recv_message -------------------------------------------

size_t open_fds() {
  size_t n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return 0;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n - 1;  // the directory's own fd
}

class Channel : public ::testing::Test {
 protected:
  void SetUp() override {
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    a_ = sv[0];
    b_ = sv[1];
    memfd_ = memfd_create("mtier-test", MFD_CLOEXEC);
    ASSERT_GE(memfd_, 0);
    ASSERT_EQ(write(memfd_, "heat", 4), 4);
  }
  void TearDown() override {
    if (a_ >= 0) close(a_);
    close(b_);
    close(memfd_);
  }
  int a_ = -1, b_ = -1, memfd_ = -1;
};

TEST_F(Channel, RegisterCarriesTheSegmentFd) {
  const Message reg{Register{1 << 20, 10, "", -1}};
  ASSERT_EQ(send_message(a_, reg, &memfd_, 1), 0);
  Message got;
  std::vector<int> fds;
  std::string why;
  int n = recv_message(b_, &got, &fds, &why);
  ASSERT_GT(n, 0) << why;
  EXPECT_EQ(static_cast<size_t>(n), enc(reg).size());
  EXPECT_EQ(got, reg);
  ASSERT_EQ(fds.size(), 1u);
  EXPECT_NE(fds[0], memfd_);
  char buf[4];
  EXPECT_EQ(pread(fds[0], buf, 4, 0), 4);
  EXPECT_EQ(memcmp(buf, "heat", 4), 0);
  EXPECT_EQ(fcntl(fds[0], F_GETFD), FD_CLOEXEC);
  close(fds[0]);

  ASSERT_EQ(send_message(a_, {Bye{}}, nullptr, 0), 0);
  ASSERT_GT(recv_message(b_, &got, &fds, &why), 0);
  EXPECT_EQ(got.type(), MsgType::kBye);
  EXPECT_TRUE(fds.empty());
}

TEST_F(Channel, SendChecksFdCountAndFields) {
  EXPECT_EQ(send_message(a_, {Register{1, 1, "", -1}}, nullptr, 0), -EINVAL);
  EXPECT_EQ(send_message(a_, {Hello{Role::kRuntime, 1, "x"}}, &memfd_, 1), -EINVAL);
  EXPECT_EQ(send_message(a_, {Register{1, 0, "", -1}}, &memfd_, 1), -EINVAL);
  // Nothing was sent.
  Message got;
  std::vector<int> fds;
  ASSERT_EQ(fcntl(b_, F_SETFL, O_NONBLOCK), 0);
  EXPECT_EQ(recv_message(b_, &got, &fds, nullptr), -EAGAIN);
}

TEST_F(Channel, WrongFdCountIsRejectedAndFdsClosed) {
  const size_t before = open_fds();
  Message got;
  std::vector<int> fds;
  std::string why;
  // REGISTER without its fd.
  Bytes reg = enc({Register{4096, 1, "", -1}});
  ASSERT_EQ(sys::unix_send(a_, reg.data(), reg.size(), nullptr, 0), (ssize_t)reg.size());
  EXPECT_EQ(recv_message(b_, &got, &fds, &why), -EBADMSG);
  EXPECT_NE(why.find("fds"), std::string::npos) << why;
  // REGISTER with two, HELLO with one: both closed on this side.
  int two[2] = {memfd_, memfd_};
  ASSERT_GT(sys::unix_send(a_, reg.data(), reg.size(), two, 2), 0);
  EXPECT_EQ(recv_message(b_, &got, &fds, &why), -EBADMSG);
  EXPECT_TRUE(fds.empty());
  Bytes hello = enc({Hello{Role::kRuntime, 1, "x"}});
  ASSERT_GT(sys::unix_send(a_, hello.data(), hello.size(), &memfd_, 1), 0);
  EXPECT_EQ(recv_message(b_, &got, &fds, &why), -EBADMSG);
  EXPECT_EQ(open_fds(), before);
}

TEST_F(Channel, DecodeErrorsPassThroughWithFdsClosed) {
  const size_t before = open_fds();
  Message got;
  std::vector<int> fds;
  std::string why;
  Bytes reg = enc({Register{4096, 1, "", -1}});
  reg[0] = 'X';
  ASSERT_GT(sys::unix_send(a_, reg.data(), reg.size(), &memfd_, 1), 0);
  EXPECT_EQ(recv_message(b_, &got, &fds, &why), -EBADMSG);
  EXPECT_NE(why.find("magic"), std::string::npos) << why;
  reg = enc({Register{4096, 1, "", -1}});
  put16(&reg, 4, 1);
  ASSERT_GT(sys::unix_send(a_, reg.data(), reg.size(), &memfd_, 1), 0);
  EXPECT_EQ(recv_message(b_, &got, &fds, &why), -EPROTONOSUPPORT);
  put16(&reg, 4, kWireVersion);
  put16(&reg, 6, 99);
  ASSERT_GT(sys::unix_send(a_, reg.data(), reg.size(), &memfd_, 1), 0);
  EXPECT_EQ(recv_message(b_, &got, &fds, &why), -ENOMSG);
  EXPECT_TRUE(fds.empty());
  EXPECT_EQ(open_fds(), before);
}

TEST_F(Channel, OversizedMessageOrTooManyFdsIsEmsgsize) {
  const size_t before = open_fds();
  Message got;
  std::vector<int> fds;
  std::string why;
  int sz = 1 << 20;
  ASSERT_EQ(setsockopt(a_, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz), 0);
  Bytes big = enc({Reply{0, "x"}});
  big.resize(kMaxMessageBytes + 1);
  ASSERT_GT(sys::unix_send(a_, big.data(), big.size(), &memfd_, 1), 0);
  EXPECT_EQ(recv_message(b_, &got, &fds, &why), -EMSGSIZE);
  EXPECT_FALSE(why.empty());
  EXPECT_TRUE(fds.empty());
  EXPECT_EQ(open_fds(), before);
  // More fds than any message may carry (raw sendmsg: unix_send caps at 4).
  Bytes bye = enc({Bye{}});
  int many[kMaxFds + 1];
  for (int& f : many) f = memfd_;
  iovec iov = {bye.data(), bye.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof many)] = {};
  msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof many);
  memcpy(CMSG_DATA(c), many, sizeof many);
  ASSERT_GT(sendmsg(a_, &msg, 0), 0);
  EXPECT_EQ(recv_message(b_, &got, &fds, &why), -EMSGSIZE);
  EXPECT_EQ(open_fds(), before);
}

TEST_F(Channel, PeerClosedIsZero) {
  close(a_);
  a_ = -1;
  Message got;
  std::vector<int> fds;
  EXPECT_EQ(recv_message(b_, &got, &fds, nullptr), 0);
  EXPECT_EQ(send_message(b_, {Bye{}}, nullptr, 0), -EPIPE);
}

}  // namespace
}  // namespace mtier::ipc
