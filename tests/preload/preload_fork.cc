// SPDX-License-Identifier: Apache-2.0
// fork() under LD_PRELOAD=libmtier.so (run by fork.test). Documented
// behaviour (mtier(7), "Fork"): a forked child reads every table it
// inherited, from DRAM or the store, and its writes stay its own; it sees
// the parent's later writes to pages it has not written itself; it
// allocates plainly; exec after fork works; the parent's data is intact and
// the parent keeps working. The same program runs without the preload
// (fork.test's baseline): every check but the engine's counters holds there.
//
//   preload_fork           all of it, in order
#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "common.h"

extern char** environ;

namespace {

using pt::KiB;
using pt::MiB;
using pt::kPage;

std::string tmpdir() {
  const char* t = getenv("MTIER_TEST_TMP");
  return t ? t : "/tmp";
}

std::string describe(int status) {
  char buf[64];
  if (WIFEXITED(status))
    snprintf(buf, sizeof buf, "exit %d", WEXITSTATUS(status));
  else if (WIFSIGNALED(status))
    snprintf(buf, sizeof buf, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
  else
    snprintf(buf, sizeof buf, "status 0x%x", status);
  return buf;
}

int wait_child(pid_t pid) {
  int status = 0;
  pid_t r;
  while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  CHECK(r == pid, "waitpid(%d): errno %d", pid, errno);
  return status;
}

std::string slurp(const std::string& path) {
  std::string out;
  FILE* f = fopen(path.c_str(), "r");
  if (!f) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  fclose(f);
  return out;
}

// Runs fn in a forked child whose stderr goes to a file; returns the wait
// status and the child's stderr. The child has a watchdog (a hang, such as
// a deadlock on a lock held at fork, shows as SIGALRM) and no core dump.
template <class F>
int in_child(const char* name, F fn, std::string* err) {
  std::string path = tmpdir() + "/fork-" + name + ".err";
  fflush(stdout);
  pid_t pid = fork();
  CHECK(pid >= 0, "fork: errno %d", errno);
  if (pid == 0) {
    alarm(30);
    signal(SIGALRM, SIG_DFL);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || dup2(fd, 2) < 0) _exit(90);
    close(fd);
    fn();
    _exit(0);
  }
  int status = wait_child(pid);
  *err = slurp(path);
  unlink(path.c_str());
  return status;
}

// This process's open descriptors.
int open_fds() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (readdir(d)) n++;
    closedir(d);
  }
  return n - 3;  // ".", ".." and the directory's own descriptor
}

// open_fds() once it has not changed for 100 ms (at most 3 s): the handler
// closes an exited child's descriptors when it sees the exit, a moment
// after wait() returned, so a count taken at once may still hold them.
int settled_fds() {
  int last = open_fds();
  for (int same = 0, i = 0; same < 10 && i < 300; i++) {
    usleep(10000);
    int now = open_fds();
    same = now == last ? same + 1 : 0;
    last = now;
  }
  return last;
}

void expect_clean_exit(const char* what, int st, const std::string& err) {
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
        "%s: expected exit 0, found %s (exit 1: the FAIL line above); its stderr: %s", what,
        describe(st).c_str(), err.c_str());
  CHECK(err.empty(), "%s: expected an empty stderr, found: %s", what, err.c_str());
}

// Every byte of both inherited tables, pushed to the store before the fork.
void inherited_reads(char* big, char* map, std::string* err) {
  int st = in_child("read", [&] {
    EXPECT_DATA(big, 6 * MiB, 1, "child: inherited malloc(6M), from the store");
    EXPECT_DATA(map, 2 * MiB, 2, "child: inherited mmap(2M), from the store");
    fflush(stdout);
    _exit(0);
  }, err);
  expect_clean_exit("a child reading inherited tables", st, *err);
  pt::ok("a forked child read every byte of the inherited tables");
}

// The child's writes are its own: it reads them back, the parent never sees them.
void inherited_writes(char* big, char* map, std::string* err) {
  int st = in_child("write", [&] {
    pt::fill(big, 6 * MiB, 9);
    pt::fill(map + MiB, MiB, 8);
    pt::churn("child: its own tables");
    EXPECT_DATA(big, 6 * MiB, 9, "child: its writes to the inherited malloc(6M)");
    EXPECT_DATA(map, MiB, 2, "child: the inherited mmap(2M)'s half it did not write");
    EXPECT_DATA(map + MiB, MiB, 8, "child: the inherited mmap(2M)'s half it wrote");
    fflush(stdout);
    _exit(0);
  }, err);
  expect_clean_exit("a child writing inherited tables", st, *err);
  EXPECT_DATA(big, 6 * MiB, 1, "parent: malloc(6M) after a child wrote its copy");
  EXPECT_DATA(map, 2 * MiB, 2, "parent: mmap(2M) after a child wrote its copy");
}

// What a child sees of the parent's writes after the fork: under mtier the
// parent's current data (pages the child has not written itself); without
// it, fork's copy as of the fork.
void inherited_live_view(char* map, std::string* err) {
  int go[2];
  CHECK(pipe(go) == 0, "pipe: errno %d", errno);
  uint64_t want = pt::managing() ? 3 : 2;
  int st = 0;
  fflush(stdout);
  pid_t pid = fork();
  CHECK(pid >= 0, "fork: errno %d", errno);
  if (pid == 0) {
    alarm(30);
    close(go[1]);
    char c;
    if (read(go[0], &c, 1) != 1) _exit(91);
    EXPECT_DATA(map, 2 * MiB, want, "child: the inherited mmap(2M) after the parent rewrote it");
    fflush(stdout);
    _exit(0);
  }
  close(go[0]);
  pt::fill(map, 2 * MiB, 3);
  pt::churn("parent: rewrote the mmap(2M) after the fork");
  CHECK(write(go[1], "x", 1) == 1, "pipe write: errno %d", errno);
  close(go[1]);
  st = wait_child(pid);
  expect_clean_exit("a child reading a table its parent rewrote after the fork", st, *err);
  pt::ok("a child sees the parent's writes made after the fork: %s",
         pt::managing() ? "yes (mtier: the live view)" : "no (fork's copy)");
  pt::fill(map, 2 * MiB, 2);
}

// A child's child reads the tables too (through its parent's copy).
void inherited_grandchild(char* big, std::string* err) {
  int st = in_child("grandparent", [&] {
    std::string inner;
    int s2 = in_child("grandchild", [&] {
      EXPECT_DATA(big, 6 * MiB, 1, "grandchild: inherited malloc(6M)");
      fflush(stdout);
      _exit(0);
    }, &inner);
    expect_clean_exit("a grandchild reading inherited tables", s2, inner);
    fflush(stdout);
    _exit(0);
  }, err);
  expect_clean_exit("a child whose child reads inherited tables", st, *err);
  pt::ok("a grandchild read the inherited malloc(6M)");
}

// A child SIGKILLed while its reads fault: the parent keeps its data and
// gets back the descriptors it held for the child.
void killed_mid_read(char* big) {
  int before = settled_fds();  // the earlier children's descriptors gone
  fflush(stdout);
  pid_t pid = fork();
  CHECK(pid >= 0, "fork: errno %d", errno);
  if (pid == 0) {
    uint64_t sum = 0;
    for (;;) {
      for (size_t o = 0; o < 6 * MiB; o += kPage) sum += static_cast<unsigned char>(big[o]);
      asm volatile("" : : "r"(sum));  // keeps the reads
    }
  }
  for (int i = 0; i < 3; i++) pt::churn("parent, while a child reads");
  CHECK(kill(pid, SIGKILL) == 0, "kill: errno %d", errno);
  int st = wait_child(pid);
  CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the reading child: expected SIGKILL, found %s",
        describe(st).c_str());
  int now = open_fds();
  for (int i = 0; i < 300 && now != before; i++) {
    usleep(10000);
    now = open_fds();
  }
  CHECK(now == before, "after a child was killed mid-read: expected %d open descriptors as "
        "before its fork, found %d", before, now);
  EXPECT_DATA(big, 6 * MiB, 1, "parent: malloc(6M) after a reading child was killed");
  pt::ok("a child killed mid-read: the parent's descriptors back to %d, its data intact", now);
}

// A table the parent frees after the fork: the child still reads it as it
// was (mtier keeps it for the child, as fork's copy would be kept), and
// its range goes to no other table while the child lives.
void freed_while_inherited(std::string* err) {
  char* t = static_cast<char*>(malloc(4 * MiB));
  CHECK(t, "malloc(4M): NULL");
  EXPECT_MANAGED(t, 4 * MiB, "parent malloc(4M) to free after the fork");
  pt::fill(t, 4 * MiB, 7);
  int go[2];
  CHECK(pipe(go) == 0, "pipe: errno %d", errno);
  fflush(stdout);
  pid_t pid = fork();
  CHECK(pid >= 0, "fork: errno %d", errno);
  if (pid == 0) {
    alarm(30);
    close(go[1]);
    char c;
    if (read(go[0], &c, 1) != 1) _exit(91);
    EXPECT_DATA(t, 4 * MiB, 7, "child: a table its parent freed after the fork");
    fflush(stdout);
    _exit(0);
  }
  close(go[0]);
  auto old = reinterpret_cast<uintptr_t>(t);  // compared after the free, never touched
  free(t);
  char* u = static_cast<char*>(malloc(4 * MiB));
  CHECK(u, "malloc(4M): NULL");
  EXPECT_MANAGED(u, 4 * MiB, "parent malloc(4M) after freeing one a child inherited");
  pt::fill(u, 4 * MiB, 6);
  CHECK(reinterpret_cast<uintptr_t>(u) != old, "a table made while a child may still read a "
        "freed one took the freed range %#lx: the child would read the new table's data",
        static_cast<unsigned long>(old));
  pt::churn("parent: the freed table's pages pushed out");
  CHECK(write(go[1], "x", 1) == 1, "pipe write: errno %d", errno);
  close(go[1]);
  int st = wait_child(pid);
  expect_clean_exit("a child reading a table its parent freed after the fork", st, *err);
  EXPECT_DATA(u, 4 * MiB, 6, "parent: the table made after the free");
  free(u);
  pt::ok("a table freed after the fork stays readable to the child, and its range goes to no "
         "other table while the child lives");
}

// free, realloc and munmap of inherited tables in the child: its copy goes
// (a later touch is SIGSEGV), a realloc keeps the bytes in plain memory.
void inherited_free_realloc_unmap(char* big, char* map, std::string* err) {
  int st = in_child("free-realloc-unmap", [&] {
    pt::install_probe();
    char* old = big;  // probed after the realloc moved it
    asm volatile("" : "+r"(old));
    char* q = static_cast<char*>(realloc(big, 12 * MiB));
    CHECK(q, "child: realloc(inherited malloc(6M), 12M): NULL (errno %d)", errno);
    EXPECT_DATA(q, 6 * MiB, 1, "child: realloc(inherited 6M, 12M) kept the bytes");
    CHECK(pt::find(q) < 0, "child: realloc(inherited, 12M) expected plain memory, found managed");
    if (pt::managing()) CHECK(pt::probe(old, false) == SIGSEGV, "child: a read of the inherited "
                              "malloc(6M) after realloc moved it: expected SIGSEGV");
    free(q);
    CHECK(munmap(map, 2 * MiB) == 0, "child: munmap(inherited mmap(2M)): errno %d", errno);
    CHECK(pt::probe(map, false) == SIGSEGV, "child: a read of the inherited mmap(2M) after munmap: "
          "expected SIGSEGV");
    fflush(stdout);
    _exit(0);
  }, err);
  expect_clean_exit("a child freeing, reallocating and unmapping inherited tables", st, *err);
  pt::ok("a child's realloc, free and munmap of inherited tables act on its copy only");
}

}  // namespace

int main() {
  pt::watchdog(120);
  pt::start("preload_fork");
  // The parent's managed data: a malloc'd table and a mapped one, evicted.
  char* big = static_cast<char*>(malloc(6 * MiB));
  CHECK(big, "malloc(6M): NULL");
  int big_id = EXPECT_MANAGED(big, 6 * MiB, "parent malloc(6M)");
  pt::fill(big, 6 * MiB, 1);
  void* mp = mmap(nullptr, 2 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(mp != MAP_FAILED, "mmap(2M): errno %d", errno);
  char* map = static_cast<char*>(mp);
  EXPECT_MANAGED(map, 2 * MiB, "parent mmap(2M)");
  pt::fill(map, 2 * MiB, 2);
  pt::churn("parent, before fork");
  pt::expect_evicted(big_id, "parent malloc(6M)");
  std::string err;

  // 1. A child that does not touch inherited tables: plain allocation works.
  int st = in_child("plain", [&] {
    // The lookahead has no thread in the child: naming the parent's
    // (inherited, unmanaged here) pages is a no-op, never a hang (alarm).
    if (pt::have_api()) {
      struct mtier_range r = {big, 6 * MiB};
      long pf = pt::api().prefetch_ranges(&r, 1, 1, 0);
      CHECK(pf == 0, "child: mtier_prefetch_ranges(inherited table): expected 0, found %ld", pf);
    }
    // Small and big allocations, all plain, all working; then exit() (not
    // _exit: the library's exit path runs in the child too). A failed CHECK
    // prints its FAIL line on stdout and exits 1.
    for (size_t n : {size_t(100), 512 * KiB, 4 * MiB, 8 * MiB}) {
      char* p = static_cast<char*>(malloc(n));
      CHECK(p, "child: malloc(%zu): expected memory, found NULL", n);
      if (pt::have_api()) CHECK(pt::find(p) < 0, "child: malloc(%zu) expected plain, found managed", n);
      pt::fill(p, n, n);
      CHECK(pt::mismatch(p, n, n) == SIZE_MAX, "child: malloc(%zu): data wrong", n);
      CHECK(malloc_usable_size(p) >= n, "child: malloc_usable_size(malloc(%zu) = %p): expected >= %zu, found %zu",
            n, p, n, malloc_usable_size(p));
      free(p);
    }
    void* c = calloc(1, 4 * MiB);
    CHECK(c, "child: calloc(1, 4M): NULL");
    CHECK(pt::first_nonzero(c, 4 * MiB) == SIZE_MAX, "child: calloc(1, 4M): not zero");
    if (pt::have_api()) CHECK(pt::find(c) < 0, "child: calloc(1, 4M) expected plain, found managed");
    pt::fill(c, 4 * MiB, 5);
    errno = 0;
    char* r = static_cast<char*>(realloc(c, 9 * MiB));
    CHECK(r, "child: realloc(calloc'd 4M at %p, 9M): expected memory, found NULL (errno %d)", c, errno);
    CHECK(pt::mismatch(r, 4 * MiB, 5) == SIZE_MAX, "child: realloc(4M, 9M): the 4M lost");
    free(r);
    void* a = nullptr;
    CHECK(posix_memalign(&a, 4096, 4 * MiB) == 0 && a, "child: posix_memalign(4096, 4M) failed");
    if (pt::have_api()) CHECK(pt::find(a) < 0, "child: posix_memalign(4096, 4M) expected plain, found managed");
    memset(a, 7, 4 * MiB);
    free(a);
    // An anonymous map in the child: plain, and munmap / madvise / mremap
    // act on it as the kernel does.
    char* m = static_cast<char*>(
        mmap(nullptr, 4 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    CHECK(m != MAP_FAILED, "child: mmap(4M): errno %d", errno);
    if (pt::have_api()) CHECK(pt::find(m) < 0, "child: mmap(4M) expected plain, found managed");
    pt::fill(m, 4 * MiB, 3);
    CHECK(pt::mismatch(m, 4 * MiB, 3) == SIZE_MAX, "child: mmap(4M): data wrong");
    int rc = madvise(m, MiB, MADV_DONTNEED);
    CHECK(rc == 0, "child: madvise(plain mmap %p, 1M, DONTNEED): expected 0, found %d errno %d", m, rc, errno);
    CHECK(pt::first_nonzero(m, MiB) == SIZE_MAX, "child: after MADV_DONTNEED the 1M is not zero");
    void* g = mremap(m, 4 * MiB, 8 * MiB, MREMAP_MAYMOVE);
    CHECK(g != MAP_FAILED, "child: mremap(plain mmap %p, 4M -> 8M, MAYMOVE): errno %d", m, errno);
    m = static_cast<char*>(g);
    CHECK(pt::mismatch_range(m, MiB, 3 * MiB, 3) == SIZE_MAX, "child: mremap lost data");
    rc = munmap(m, 8 * MiB);
    CHECK(rc == 0, "child: munmap(plain mmap, 8M): errno %d", errno);
    pt::install_probe();
    int sig = pt::probe(m, false);
    CHECK(sig == SIGSEGV, "child: a read of %p after munmap: expected SIGSEGV, found %s (munmap did not unmap)",
          m, pt::signame(sig));
    signal(SIGSEGV, SIG_DFL);
    fflush(stdout);
    exit(0);
  }, &err);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
        "child allocating without touching inherited tables: expected exit 0, found %s (exit 1: the "
        "FAIL line above); its stderr: %s",
        describe(st).c_str(), err.c_str());
  CHECK(err.empty(), "child allocating without touching inherited tables: expected empty stderr, found: %s",
        err.c_str());
  pt::ok("child: small and big malloc/calloc/realloc/posix_memalign/mmap/madvise/mremap/munmap are plain and work; exit 0");

  // 2. Children read what the parent allocated, as without mtier (the
  //    tables were pushed to the store above): every byte, their writes
  //    their own, the parent's later writes seen (the documented "live"
  //    view), a grandchild too; the parent's descriptors come back when a
  //    child is killed mid-read; a table the parent frees while a child
  //    lives stays readable to the child as it was.
  if (!pt::managing()) pt::note("not managing: the inherited-table checks run without mtier");
  inherited_reads(big, map, &err);
  inherited_writes(big, map, &err);
  inherited_live_view(map, &err);
  inherited_grandchild(big, &err);
  if (pt::managing()) killed_mid_read(big);
  if (pt::managing()) freed_while_inherited(&err);

  // 3. exec after fork; posix_spawn and system (extra: vfork-style children).
  struct Exec {
    const char* path;
    std::vector<const char*> argv;
    int want;
  };
  for (const Exec& e : {Exec{"/bin/true", {"true", nullptr}, 0},
                        Exec{"/bin/sh", {"sh", "-c", "exit 3", nullptr}, 3}}) {
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0, "fork: errno %d", errno);
    if (pid == 0) {
      execv(e.path, const_cast<char* const*>(e.argv.data()));
      _exit(127);
    }
    st = wait_child(pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == e.want, "fork + exec %s: expected exit %d, found %s",
          e.path, e.want, describe(st).c_str());
    pt::ok("fork + exec %s%s%s: exit %d", e.path, e.argv.size() > 2 ? " -c " : "",
           e.argv.size() > 2 ? e.argv[2] : "", e.want);
  }
  {
    pid_t pid;
    const char* argv[] = {"sh", "-c", "exit 5", nullptr};
    int rc = posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char* const*>(argv), environ);
    CHECK(rc == 0, "posix_spawn /bin/sh: %d", rc);
    st = wait_child(pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 5, "posix_spawn sh -c 'exit 5': expected exit 5, found %s",
          describe(st).c_str());
    pt::ok("posix_spawn sh -c 'exit 5': exit 5");
    rc = system("exit 4");
    CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 4, "system(\"exit 4\"): expected exit 4, found %s",
          describe(rc).c_str());
    pt::ok("system(\"exit 4\"): exit 4");
  }

  // 4. Forks while another thread allocates and frees tables (extra): the
  //    child must not inherit a held lock (it allocates at once).
  {
    std::atomic<bool> stop{false};
    std::thread churner([&] {
      uint64_t i = 0;
      while (!stop.load()) {
        char* p = static_cast<char*>(malloc(2 * MiB + (i % 4) * kPage));
        if (!p) continue;
        for (size_t o = 0; o < 2 * MiB; o += kPage) p[o] = 1;
        free(p);
        void* s = malloc(64);
        free(s);
        i++;
      }
    });
    for (int i = 0; i < 20; i++) {
      st = in_child("during-alloc", [] {
        for (int k = 0; k < 4; k++) {
          char* p = static_cast<char*>(malloc(k % 2 ? 3 * MiB : 200));
          if (!p) _exit(10);
          memset(p, 1, k % 2 ? 3 * MiB : 200);
          free(p);
        }
        _exit(0);
      }, &err);
      CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
            "fork %d while a thread allocates tables: the child (which allocates at once) expected "
            "exit 0, found %s (SIGALRM: it hung); stderr: %s",
            i, describe(st).c_str(), err.c_str());
      CHECK(err.empty(), "fork %d while a thread allocates tables: expected the child's stderr empty, found: %s", i,
            err.c_str());
    }
    stop.store(true);
    churner.join();
    pt::ok("20 forks while another thread allocates and frees tables: every child allocated and exited 0");
  }

  // 5. The child frees, reallocates and unmaps inherited tables: plain
  //    semantics in the child, the parent's data untouched.
  inherited_free_realloc_unmap(big, map, &err);

  // 6. The parent: data intact, still managing.
  EXPECT_DATA(big, 6 * MiB, 1, "parent malloc(6M) after the children");
  EXPECT_DATA(map, 2 * MiB, 2, "parent mmap(2M) after the children");
  pt::expect_fetched(big_id, "parent malloc(6M)");
  for (int i = 0; i < 3; i++) {
    char* p = static_cast<char*>(malloc(5 * MiB));
    CHECK(p, "parent malloc(5M) after fork: NULL");
    EXPECT_MANAGED(p, 5 * MiB, "parent malloc(5M) after fork");
    pt::fill(p, 5 * MiB, 40 + i);
    pt::churn("parent after fork");
    EXPECT_DATA(p, 5 * MiB, 40 + i, "parent malloc(5M) after fork, after eviction");
    free(p);
  }
  EXPECT_DATA(big, 6 * MiB, 1, "parent malloc(6M) at the end");
  free(big);
  CHECK(munmap(map, 2 * MiB) == 0, "parent munmap(2M): errno %d", errno);
  printf("PASS: preload_fork\n");
  return 0;
}
