// SPDX-License-Identifier: Apache-2.0
// The reports' common ground (report_internal.h): choosing the tables,
// bringing heat maps to one length, counter deltas and number formats.
#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "record/report_internal.h"
#include "sys/page_size.h"

namespace mtier::record::report_internal {
namespace {

// "12" -> 12: only plain decimal digits that fit a table id.
bool parse_id(const std::string& s, uint32_t* id) {
  if (s.empty() || s.size() > 10) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > UINT32_MAX) return false;
  *id = static_cast<uint32_t>(v);
  return true;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "none" : out;
}

}  // namespace

int select_tables(const Recording& r, const ReportOptions& o, Selection* s, std::string* why) {
  *s = Selection();
  if (r.snapshots.empty()) {
    *why = "the recording holds no snapshots";
    return -EINVAL;
  }
  const size_t n = r.snapshots.size();
  // Signed, so a clock stepped back between sessions gives negative times
  // rather than huge ones.
  const int64_t t0 = static_cast<int64_t>(r.snapshots[0].unix_ms);
  for (const Snapshot& snap : r.snapshots)
    s->t.push_back(static_cast<double>(static_cast<int64_t>(snap.unix_ms) - t0) / 1000.0);

  std::set<int32_t> pids_seen;
  std::map<int32_t, std::string> proc_names;
  std::map<std::pair<int32_t, uint32_t>, TableSeries> by_key;  // ordered: (pid, id)
  for (size_t i = 0; i < n; i++) {
    for (const ProcessSnap& p : r.snapshots[i].procs) {
      pids_seen.insert(p.pid);
      if (o.pid != 0 && p.pid != o.pid) continue;
      proc_names[p.pid] = p.name;
      for (const TableSnap& t : p.tables) {
        TableSeries& ts = by_key[{p.pid, t.id}];
        if (ts.at.empty()) {
          ts.pid = p.pid;
          ts.id = t.id;
          ts.at.assign(n, nullptr);
        }
        ts.name = t.name;
        ts.bytes = t.bytes;
        ts.pages = t.pages;
        ts.slices = std::max(ts.slices, t.heat_map.size());
        ts.at[i] = &t;
      }
    }
  }
  if (o.pid != 0 && !pids_seen.count(o.pid)) {
    std::vector<std::string> pids;
    for (int32_t p : pids_seen) pids.push_back(std::to_string(p));
    *why = strf("no process %d in the recording (processes: %s)", o.pid, join(pids).c_str());
    return -ENOENT;
  }
  for (auto& [key, ts] : by_key) s->all.push_back(std::move(ts));
  if (s->all.empty()) {
    *why = o.pid ? strf("process %d has no tables in the recording", o.pid)
                 : "the recording holds no tables";
    return -ENOENT;
  }

  // By exact name first, then by id, as `mtier heat --table` does: a table
  // may well be named "3".
  if (o.table.empty()) {
    s->tables = s->all;
  } else {
    for (const TableSeries& ts : s->all)
      if (ts.name == o.table) s->tables.push_back(ts);
    uint32_t id;
    if (s->tables.empty() && parse_id(o.table, &id))
      for (const TableSeries& ts : s->all)
        if (ts.id == id) s->tables.push_back(ts);
    if (s->tables.empty()) {
      std::vector<std::string> names;
      std::set<std::string> seen;
      for (const TableSeries& ts : s->all)
        if (seen.insert(ts.name).second) names.push_back(ts.name);
      *why = "no table '" + o.table + "' in the recording (tables: " + join(names) + ")";
      return -ENOENT;
    }
  }

  std::set<int32_t> chosen;
  for (const TableSeries& ts : s->tables) chosen.insert(ts.pid);
  for (int32_t pid : chosen) {
    ProcessSeries p;
    p.pid = pid;
    p.name = proc_names[pid];
    p.label = p.name.empty() ? strf("pid %d", pid) : strf("%s (pid %d)", p.name.c_str(), pid);
    s->procs.push_back(p);
  }
  const bool several = chosen.size() > 1;
  for (auto* v : {&s->all, &s->tables})
    for (TableSeries& ts : *v)
      ts.label = several ? strf("%s (pid %d)", ts.name.c_str(), ts.pid) : ts.name;

  s->what = o.table.empty() ? "all tables" : s->tables[0].name;
  if (o.pid) s->what += strf(" (pid %d)", o.pid);
  return 0;
}

std::vector<double> rebin(const std::vector<double>& src, size_t n) {
  std::vector<double> out(n, 0.0);
  const size_t m = src.size();
  if (m == 0 || n == 0) return out;
  if (m == n) return src;
  // In units of 1 / (m * n) of the table: source i covers [i * n, (i + 1) * n),
  // target j covers [j * m, (j + 1) * m); both sweeps move forward only.
  size_t i = 0;
  for (size_t j = 0; j < n; j++) {
    const uint64_t lo = uint64_t{j} * m, hi = lo + m;
    while (i < m && (uint64_t{i} + 1) * n <= lo) i++;
    for (size_t k = i; k < m && uint64_t{k} * n < hi; k++) {
      const uint64_t a = std::max<uint64_t>(lo, uint64_t{k} * n);
      const uint64_t b = std::min<uint64_t>(hi, (uint64_t{k} + 1) * n);
      out[j] += src[k] * static_cast<double>(b - a) / static_cast<double>(n);
    }
  }
  return out;
}

std::vector<double> rebin(const std::vector<float>& src, size_t n) {
  return rebin(std::vector<double>(src.begin(), src.end()), n);
}

std::vector<std::vector<double>> heat_rows(const TableSeries& ts, size_t n) {
  std::vector<std::vector<double>> rows(ts.at.size());
  for (size_t i = 0; i < ts.at.size(); i++)
    if (ts.at[i]) rows[i] = rebin(ts.at[i]->heat_map, n);
  return rows;
}

std::vector<Moves> move_deltas(const TableSeries& ts) {
  std::vector<Moves> out(ts.at.size(), Moves{});
  const TableSnap* prev = nullptr;
  for (size_t i = 0; i < ts.at.size(); i++) {
    const TableSnap* cur = ts.at[i];
    if (!cur) continue;
    if (prev)
      for (unsigned k = 0; k < kMoveKinds; k++)
        out[i][k] = cur->moves[k] > prev->moves[k] ? cur->moves[k] - prev->moves[k] : 0;
    prev = cur;
  }
  return out;
}

double pages_bytes(const TableSnap& t, uint64_t pages) {
  return t.pages ? static_cast<double>(pages) * static_cast<double>(t.bytes) /
                       static_cast<double>(t.pages)
                 : static_cast<double>(pages) * kPageSize;
}

uint64_t scale(uint64_t bytes, uint64_t num, uint64_t den) {
  if (den == 0) return 0;
  return static_cast<uint64_t>(static_cast<unsigned __int128>(bytes) * num / den);
}

std::string strf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char buf[256];
  int len = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (len < 0) return "";
  if (static_cast<size_t>(len) < sizeof buf) return std::string(buf, static_cast<size_t>(len));
  std::string out(static_cast<size_t>(len) + 1, '\0');
  va_start(ap, fmt);
  vsnprintf(out.data(), out.size(), fmt, ap);
  va_end(ap);
  out.resize(static_cast<size_t>(len));
  return out;
}

std::string csv_time(double t) { return strf("%.3f", t); }

std::string printable(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string text_table(const std::vector<std::vector<std::string>>& rows, const char* align) {
  const size_t aligned = strlen(align);
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); c++) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); c++) {
      if (c) line += "  ";
      const std::string pad(width[c] - row[c].size(), ' ');
      line += c < aligned && align[c] == 'l' ? row[c] + pad : pad + row[c];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + '\n';
  }
  return out;
}

}  // namespace mtier::record::report_internal
