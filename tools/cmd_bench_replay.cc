// mtier bench replay: replays a trace file once on one kind of table memory
// and prints the result as one "result key=value ..." line (or, with --json,
// one JSON object). The suite runs
// each configuration through it in a child process (so that a cgroup limit,
// an OOM kill or mtier's engine stay with that configuration); it is also
// useful alone.
#include <getopt.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "replayer.h"
#include "trace.h"
#include "util/json.h"
#include "util/progress.h"

namespace mtier::tools {

namespace {

void usage(FILE* out) {
  fprintf(out,
          "usage: mtier bench replay --trace FILE [--backing KIND] [OPTIONS]\n\n"
          "Replays an embedding trace (written by `mtier bench trace -o`) as embedding-bag\n"
          "forward and SGD backward passes, and prints one line:\n"
          "  result batches=N lookups=N seconds=S p50_ms=... loss=... checksum=... ...\n"
          "On a terminal, stderr shows the batches replayed of all and the time left.\n\n"
          "  --trace FILE       the trace to replay (required)\n"
          "  --backing KIND     malloc (all in DRAM, default), mtier (one mtier table per\n"
          "                     embedding table), file (a file mapped MAP_SHARED: the\n"
          "                     kernel page cache), anon (anonymous memory: kernel swap)\n"
          "  --threads N        worker threads (default 1); results are bit-identical for any N\n"
          "  --file PATH        the backing file of --backing file (created and removed)\n"
          "  --madv-random      madvise(MADV_RANDOM) on file or anon tables\n"
          "  --mtier OPTIONS    for --backing mtier: options for mtier_init, \"name=value,...\"\n"
          "                     (see mtier.conf(5)); MTIER_* variables apply as well\n"
          "  --lookahead K      before batch i, hint the pages of batches i+1..i+K (0: off,\n"
          "                     default; at most 64): mtier_prefetch_rows for mtier,\n"
          "                     madvise(MADV_WILLNEED) for file and anon, nothing for malloc\n"
          "  --lookahead-async  mtier: the asynchronous form (each batch waits for its own\n"
          "                     hints just before it runs) instead of the synchronous one\n"
          "  --json             print one JSON object instead: \"trace\", \"backing\",\n"
          "                     \"threads\", \"lookahead\", \"lookahead_async\" and \"result\"\n"
          "                     (the result line's keys and lookups_per_second; loss as a\n"
          "                     string in %%a notation, checksum as 16 hex digits)\n"
          "  -q, --quiet        no progress on stderr\n"
          "  -h, --help         this text\n\n"
          "Exit status: 0, 1 when the trace cannot be read or the tables cannot be set up\n"
          "(the reason is printed), 2 for a usage error.\n");
}

}  // namespace

int bench_replay(int argc, char** argv) {
  static const option longopts[] = {
      {"trace", required_argument, nullptr, 't'},  {"backing", required_argument, nullptr, 'b'},
      {"threads", required_argument, nullptr, 'j'}, {"file", required_argument, nullptr, 'f'},
      {"madv-random", no_argument, nullptr, 'r'},   {"mtier", required_argument, nullptr, 'm'},
      {"lookahead", required_argument, nullptr, 'k'}, {"lookahead-async", no_argument, nullptr, 'a'},
      {"json", no_argument, nullptr, 'J'},          {"quiet", no_argument, nullptr, 'q'},
      {"help", no_argument, nullptr, 'h'},          {nullptr, 0, nullptr, 0}};
  std::string trace_path;
  bench::ReplayOptions o;
  bool as_json = false, quiet = false;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "qh", longopts, nullptr)) != -1) {
    switch (c) {
      case 't': trace_path = optarg; break;
      case 'b':
        if (!bench::parse_backing(optarg, &o.backing)) {
          fprintf(stderr, "mtier bench replay: unknown backing '%s' (malloc, mtier, file, anon)\n",
                  optarg);
          return 2;
        }
        break;
      case 'j': {
        char* end;
        unsigned long n = strtoul(optarg, &end, 10);
        if (*end || n < 1 || n > 256) {
          fprintf(stderr, "mtier bench replay: --threads '%s': want 1 to 256\n", optarg);
          return 2;
        }
        o.threads = static_cast<unsigned>(n);
        break;
      }
      case 'f': o.file_path = optarg; break;
      case 'r': o.madv_random = true; break;
      case 'm': o.mtier_options = optarg; break;
      case 'k':
        if (!bench::parse_lookahead(optarg, &o.lookahead)) {
          fprintf(stderr, "mtier bench replay: --lookahead '%s': %s\n", optarg, bench::kLookaheadWant);
          return 2;
        }
        break;
      case 'a': o.lookahead_async = true; break;
      case 'J': as_json = true; break;
      case 'q': quiet = true; break;
      case 'h': usage(stdout); return 0;
      default: usage(stderr); return 2;
    }
  }
  if (optind < argc || trace_path.empty()) {
    fprintf(stderr, "mtier bench replay: %s\n",
            trace_path.empty() ? "--trace FILE is required" : "unexpected argument");
    return 2;
  }
  if (o.backing == bench::Backing::kFile && o.file_path.empty()) {
    fprintf(stderr, "mtier bench replay: --backing file needs --file PATH\n");
    return 2;
  }
  bench::Trace t;
  std::string err;
  if (bench::read_trace(trace_path, &t, &err) < 0) {
    fprintf(stderr, "mtier bench replay: %s\n", err.c_str());
    return 1;
  }
  bench::ReplayResult r;
  int rc;
  {
    // The suite's children have a pipe for stderr: no progress there.
    progress::Progress pr(progress::stderr_io(), quiet);
    pr.start("bench replay:", t.batches.size(), "batches");
    if (pr.live()) o.on_batch = [&pr](uint64_t done, uint64_t total) { pr.update(done, total); };
    rc = bench::replay(t, o, &r, &err);
  }
  if (rc < 0) {
    fprintf(stderr, "mtier bench replay: %s\n", err.c_str());
    return 1;
  }
  if (!as_json) return printf("result %s\n", bench::format_result(r).c_str()) < 0;
  json::Json result = json::Json::object();
  bench::write_result_json(result, r);
  json::Json j = {{"trace", trace_path},
                  {"backing", bench::backing_name(o.backing)},
                  {"threads", o.threads},
                  {"lookahead", o.lookahead},
                  {"lookahead_async", o.lookahead_async},
                  {"result", std::move(result)}};
  return printf("%s\n", json::dump(j).c_str()) < 0;
}

}  // namespace mtier::tools
