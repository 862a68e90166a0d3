// SPDX-License-Identifier: Apache-2.0
// Which allocations become tables (run by select.test and stats.test):
//
//   preload_select expect SIZE=m|u ...
//       one malloc per argument, in order: "m" must be managed, "u" must not
//       (SIZE: 4096, 520K, 3M; "+N" / "-N" adds / subtracts bytes: 5M+1);
//       each is written, verified across eviction and freed at the end
//   preload_select names NAME|- ...
//       one malloc(2M) per argument, in order: NAME: a table of that name
//       (mtier_table_stats), "-": not managed, "*": managed, any default name
//       (not one of the names given)
#include <string>
#include <vector>

#include "common.h"

namespace {

using pt::MiB;

bool parse_spec(const char* s, size_t* bytes) {
  std::string t(s);
  long long delta = 0;
  size_t pm = t.find_first_of("+-", 1);
  if (pm != std::string::npos) {
    delta = atoll(t.c_str() + pm + 1) * (t[pm] == '-' ? -1 : 1);
    t.resize(pm);
  }
  uint64_t v;
  if (!pt::parse_size(t.c_str(), &v)) return false;
  *bytes = static_cast<size_t>(static_cast<long long>(v) + delta);
  return true;
}

struct Alloc {
  std::string what;
  char* p;
  size_t n;
  int id;
  uint64_t seed;
};

int test_expect(int argc, char** argv) {
  std::vector<Alloc> allocs;
  for (int i = 2; i < argc; i++) {
    std::string arg = argv[i];
    size_t eq = arg.rfind('=');
    size_t n = 0;
    CHECK(eq != std::string::npos && parse_spec(arg.substr(0, eq).c_str(), &n) &&
              (arg.substr(eq + 1) == "m" || arg.substr(eq + 1) == "u"),
          "bad argument \"%s\" (SIZE=m or SIZE=u)", argv[i]);
    bool want = arg.substr(eq + 1) == "m";
    char* p = static_cast<char*>(malloc(n));
    std::string what = "malloc(" + arg.substr(0, eq) + " = " + std::to_string(n) + ")";
    CHECK(p, "%s: NULL", what.c_str());
    int id = 0;
    if (want)
      id = EXPECT_MANAGED(p, n, what.c_str());
    else
      EXPECT_UNMANAGED(p, what.c_str());
    pt::fill(p, n, i);
    allocs.push_back({what, p, n, id, uint64_t(i)});
  }
  pt::churn("after the allocations");
  for (auto& a : allocs) EXPECT_DATA(a.p, a.n, a.seed, (a.what + " after eviction").c_str());
  for (auto& a : allocs) free(a.p);
  return 0;
}

int test_names(int argc, char** argv) {
  std::vector<std::string> given;
  for (int i = 2; i < argc; i++)
    if (strcmp(argv[i], "-") && strcmp(argv[i], "*")) given.push_back(argv[i]);
  std::vector<char*> ps;
  for (int i = 2; i < argc; i++) {
    std::string want = argv[i];
    char* p = static_cast<char*>(malloc(2 * MiB));
    std::string what = "allocation " + std::to_string(i - 1) + " (malloc 2M)";
    CHECK(p, "%s: NULL", what.c_str());
    ps.push_back(p);
    pt::fill(p, 2 * MiB, i);
    if (!pt::have_api()) continue;
    if (want == "-") {
      EXPECT_UNMANAGED(p, (what + ", named \"-\"").c_str());
      continue;
    }
    int id = EXPECT_MANAGED(p, 2 * MiB, what.c_str());
    struct mtier_table_stats st;
    CHECK(pt::table_stats(id, &st), "%s: mtier_table_stats(%d) failed", what.c_str(), id);
    if (want == "*") {
      CHECK(st.name[0] != '\0', "%s: expected a default name, found an empty one", what.c_str());
      for (auto& g : given)
        CHECK(g != st.name, "%s: expected a default name, found \"%s\" (a name given to another)",
              what.c_str(), st.name);
      pt::ok("%s: table %d has a default name \"%s\"", what.c_str(), id, st.name);
    } else {
      CHECK(want == st.name, "%s: expected the table named \"%s\", found \"%s\"", what.c_str(), want.c_str(),
            st.name);
      pt::ok("%s: table %d is named \"%s\"", what.c_str(), id, st.name);
    }
  }
  for (size_t i = 0; i < ps.size(); i++) {
    EXPECT_DATA(ps[i], 2 * MiB, i + 2, "named allocation data");
    free(ps[i]);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  pt::watchdog(120);
  pt::start("preload_select");
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "expect")
    test_expect(argc, argv);
  else if (mode == "names")
    test_names(argc, argv);
  else {
    fprintf(stderr, "usage: preload_select expect SIZE=m|u ... | names NAME|-|* ...\n");
    return 2;
  }
  printf("PASS: preload_select %s\n", mode.c_str());
  return 0;
}
