// SPDX-License-Identifier: Apache-2.0
// The JSON helpers over nlohmann::json (util/json.h): the formats the
// outputs rely on (figures to 6 significant digits, integers exact, members
// in the order written, invalid UTF-8 replaced), and clean errors, never a
// throw, on malformed input: a lone surrogate, a bad \u escape, bad UTF-8,
// a truncated document. The readers of mtierd's replies (the snapshot of
// `mtier heat` and `mtier record`) turn such an error into their own.
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <limits>
#include <string>

#include "record/daemon_snapshot.h"
#include "util/json.h"

namespace mtier {
namespace {

using json::Json;

TEST(JsonNumber, SixSignificantDigitsWholeWithoutFraction) {
  EXPECT_EQ(json::dump(json::number(0.123456789)), "0.123457");
  EXPECT_EQ(json::dump(json::number(2.5)), "2.5");
  EXPECT_EQ(json::dump(json::number(1.0)), "1");
  EXPECT_EQ(json::dump(json::number(0.0)), "0");
  EXPECT_EQ(json::dump(json::number(-3.0)), "-3");
  EXPECT_EQ(json::dump(json::number(12345.678)), "12345.7");
  EXPECT_EQ(json::dump(json::number(0.00012)), "0.00012");
}

TEST(JsonNumber, NotFiniteIsNull) {
  EXPECT_EQ(json::dump(json::number(NAN)), "null");
  EXPECT_EQ(json::dump(json::number(INFINITY)), "null");
  EXPECT_EQ(json::dump(json::number(-INFINITY)), "null");
}

TEST(JsonDump, IntegersExactMembersInOrder) {
  Json j = {{"zeta", std::numeric_limits<uint64_t>::max()}, {"alpha", int64_t{-5}}, {"mid", true}};
  j["last"] = nullptr;
  EXPECT_EQ(json::dump(j), R"({"zeta":18446744073709551615,"alpha":-5,"mid":true,"last":null})");
}

TEST(JsonDump, StringsEscapedAndMadeValidUtf8) {
  EXPECT_EQ(json::dump(Json("a\"b\\c\n")), R"("a\"b\\c\n")");
  EXPECT_EQ(json::dump(Json(std::string("\x01", 1))), R"("\u0001")");
  EXPECT_EQ(json::dump(Json("caf\xc3\xa9")), "\"caf\xc3\xa9\"");  // valid UTF-8 kept
  // A stray continuation byte and a truncated sequence: U+FFFD each.
  EXPECT_EQ(json::dump(Json("a\x80" "b")), "\"a\xef\xbf\xbd" "b\"");
  EXPECT_EQ(json::dump(Json("x\xe2\x82")), "\"x\xef\xbf\xbd\"");
}

TEST(JsonParse, ReadsADocument) {
  Json v;
  std::string why;
  ASSERT_EQ(json::parse(R"({"a": 1, "b": [2.5, "x\u00e9"], "c": {"d": 18446744073709551615}})", &v, &why), 0)
      << why;
  EXPECT_EQ(json::num(v, "a"), 1);
  ASSERT_EQ(json::items(json::at(v, "b")).size(), 2u);
  EXPECT_EQ(json::items(json::at(v, "b"))[1], "x\xc3\xa9");
  EXPECT_EQ(json::at(json::at(v, "c"), "d").get<uint64_t>(), std::numeric_limits<uint64_t>::max());
}

TEST(JsonParse, LenientReadsOfMissingMembers) {
  Json v;
  std::string why;
  ASSERT_EQ(json::parse(R"({"n": "text", "s": 3, "arr": {}})", &v, &why), 0) << why;
  EXPECT_TRUE(json::at(v, "missing").is_null());
  EXPECT_TRUE(json::at(json::at(v, "missing"), "deeper").is_null());
  EXPECT_EQ(json::num(v, "n"), 0);       // not a number
  EXPECT_EQ(json::str(v, "s"), "");      // not a string
  EXPECT_TRUE(json::items(json::at(v, "arr")).empty());  // not an array
  EXPECT_TRUE(json::items(Json(nullptr)).empty());
  EXPECT_TRUE(json::at(Json::array({1, 2}), "x").is_null());  // not an object
}

// Each malformed text: -EINVAL, a reason, and no throw.
TEST(JsonParse, MalformedInputIsAnErrorNotACrash) {
  const char* bad[] = {
      R"({"name": "\ud800"})",         // a lone high surrogate
      R"({"name": "\udc00x"})",        // a lone low surrogate
      R"({"name": "\ud800\u0041"})",   // a high surrogate, then no low one
      R"({"name": "\u12g4"})",         // not 4 hex digits
      R"({"name": "\u12)",             // truncated in the escape
      "{\"name\": \"a\xff" "b\"}",     // not UTF-8
      "{\"name\": \"\xc0\xaf\"}",      // an overlong encoding
      R"({"processes": [{"pid": 1, )", // truncated
      R"({"a": 1} trailing)",          // text after the value
      "",                              // nothing
      R"({"a": 01})",                  // a leading zero
      R"({"a": "line
break"})",                             // a raw control character in a string
  };
  for (const char* text : bad) {
    Json v = 7;
    std::string why;
    int rc = 0;
    EXPECT_NO_THROW(rc = json::parse(text, &v, &why)) << text;
    EXPECT_EQ(rc, -EINVAL) << text;
    EXPECT_FALSE(why.empty()) << text;
    EXPECT_EQ(why.find("[json.exception"), std::string::npos) << why;
    EXPECT_TRUE(v.is_null()) << text;
  }
}

TEST(JsonParse, DeepNestingDoesNotOverflowTheStack) {
  std::string text(200000, '[');
  Json v;
  std::string why;
  EXPECT_EQ(json::parse(text, &v, &why), -EINVAL);  // truncated
  text += std::string(200000, ']');
  EXPECT_EQ(json::parse(text, &v, &why), 0) << why;
}

TEST(JsonTableHead, MembersInOrder) {
  EXPECT_EQ(json::dump(json::table_head({.pid = 42, .id = 3, .name = "emb", .bytes = 4096})),
            R"({"pid":42,"id":3,"name":"emb","bytes":4096})");
  EXPECT_EQ(json::dump(json::table_head({.pid = -1, .id = 3, .name = "emb", .bytes = 4096})),
            R"({"id":3,"name":"emb","bytes":4096})");
}

// mtierd's status reply as `mtier heat` and `mtier record` read it: a
// malformed reply is -EBADMSG with what did not parse.
TEST(DaemonSnapshot, MalformedReplyIsACleanError) {
  for (const char* text : {R"({"processes": [{"pid": 1, "name": "\ud800", "tables": []}]})",
                           R"({"processes": [{"pid": 1, "name": "tr)", "\xff"}) {
    record::Snapshot s;
    std::string why;
    int rc = 0;
    EXPECT_NO_THROW(rc = record::snapshot_from_status(text, &s, &why));
    EXPECT_EQ(rc, -EBADMSG);
    EXPECT_NE(why.find("does not parse"), std::string::npos) << why;
  }
}

TEST(DaemonSnapshot, ReadsCountsExactly) {
  const char* text = R"({"processes": [{"pid": 7, "name": "p", "job": "", "missing_faults": 9007199254740993,
    "tables": [{"id": 1, "name": "t", "bytes": 8192, "pages": 2, "heat_map": [1.5, null],
                "place": "Ds", "moves": {"new>dram": 3}}]}]})";
  record::Snapshot s;
  std::string why;
  ASSERT_EQ(record::snapshot_from_status(text, &s, &why), 0) << why;
  ASSERT_EQ(s.procs.size(), 1u);
  EXPECT_EQ(s.procs[0].missing_faults, 9007199254740993ull);  // above 2^53, exact
  EXPECT_EQ(s.procs[0].rank, -1);
  ASSERT_EQ(s.procs[0].tables.size(), 1u);
  EXPECT_EQ(s.procs[0].tables[0].heat_map, (std::vector<float>{1.5f, 0.0f}));
}

}  // namespace
}  // namespace mtier
