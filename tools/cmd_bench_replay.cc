// SPDX-License-Identifier: Apache-2.0
// mtier bench replay: replays a trace file once on one kind of table memory
// and prints the result as one "result key=value ..." line (or, with --json,
// one JSON object). The suite runs
// each configuration through it in a child process (so that a cgroup limit,
// an OOM kill or mtier's engine stay with that configuration); it is also
// useful alone.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli.h"
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
          "  result batches=N lookups=N seconds=S p50_seconds=... loss=... checksum=... ...\n"
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
  const cli::Command cmd("bench replay");
  std::string trace_path;
  bench::ReplayOptions o;
  bool as_json = false, quiet = false;
  cli::Parser p(cmd, usage);
  p.text("--trace", &trace_path)
      .value("--backing",
             [&o](const std::string& flag, const std::string& v) {
               if (bench::parse_backing(v.c_str(), &o.backing)) return std::string();
               return cli::bad_value(flag, v, "is not a backing (malloc, mtier, file, anon)");
             })
      .count("--threads", &o.threads, 1, 256)
      .text("--file", &o.file_path)
      .flag("--madv-random", &o.madv_random)
      .text("--mtier", &o.mtier_options, true)
      .count("--lookahead", &o.lookahead, 0, bench::kMaxLookahead)
      .flag("--lookahead-async", &o.lookahead_async)
      .flag("--json", &as_json)
      .flag("-q, --quiet", &quiet);
  if (int rc = p.parse(argc, argv, nullptr); rc >= 0) return rc;
  if (trace_path.empty()) return cmd.usage_error("--trace FILE is required");
  if (o.backing == bench::Backing::kFile && o.file_path.empty())
    return cmd.usage_error("--backing file needs --file PATH");
  bench::Trace t;
  std::string err;
  if (bench::read_trace(trace_path, &t, &err) < 0) return cmd.fail(err);
  bench::ReplayResult r;
  int rc;
  {
    // The suite's children have a pipe for stderr: no progress there.
    progress::Progress pr(progress::stderr_io(), quiet);
    pr.start("mtier bench replay:", t.batches.size(), "batches");
    if (pr.live()) o.on_batch = [&pr](uint64_t done, uint64_t total) { pr.update(done, total); };
    rc = bench::replay(t, o, &r, &err);
  }
  if (rc < 0) return cmd.fail(err);
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
