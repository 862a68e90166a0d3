// SPDX-License-Identifier: Apache-2.0
// `mtier report wss|tables|migrations` (the heat map is report_heatmap.cc):
// the numbers, then the same numbers as text, JSON or CSV, and the charts.
#include "record/report.h"

#include <algorithm>
#include <cerrno>
#include <cmath>

#include "record/report_internal.h"
#include "sys/page_size.h"
#include "util/json.h"

namespace mtier::record {
namespace {

using namespace report_internal;

constexpr unsigned kPercentiles[] = {0, 25, 50, 75, 90, 99, 100};
// The wss text lists at most this many snapshots, evenly spaced.
constexpr size_t kMaxWssLines = 40;

std::string mib_text(double bytes) { return strf("%.1f", bytes / kMiB); }

// ------------------------------------------------------------------ wss

struct Wss {
  std::vector<uint64_t> total;                 // per snapshot
  std::vector<std::vector<int64_t>> per_proc;  // [proc][snapshot]; -1: no table of it there
  std::vector<uint64_t> pct;                   // at kPercentiles
};

Wss compute_wss(const Selection& s) {
  Wss w;
  const size_t snaps = s.t.size();
  w.total.assign(snaps, 0);
  w.per_proc.assign(s.procs.size(), std::vector<int64_t>(snaps, -1));
  for (const TableSeries& ts : s.tables) {
    size_t p = 0;
    while (s.procs[p].pid != ts.pid) p++;
    for (size_t i = 0; i < snaps; i++) {
      if (!ts.at[i]) continue;
      w.total[i] += ts.at[i]->active_bytes;
      w.per_proc[p][i] =
          std::max<int64_t>(w.per_proc[p][i], 0) + static_cast<int64_t>(ts.at[i]->active_bytes);
    }
  }
  // Nearest rank: the smallest value with at least p% of the values at or
  // below it; p0 is the least value.
  std::vector<uint64_t> sorted = w.total;
  std::sort(sorted.begin(), sorted.end());
  for (unsigned p : kPercentiles) {
    size_t rank = (static_cast<size_t>(p) * sorted.size() + 99) / 100;
    w.pct.push_back(sorted[rank ? rank - 1 : 0]);
  }
  return w;
}

std::string wss_text(const Selection& s, const Wss& w) {
  const size_t snaps = s.t.size();
  std::vector<std::vector<std::string>> rows = {{"time_s", "wss_MiB"}};
  const size_t lines = std::min(snaps, kMaxWssLines);
  for (size_t l = 0; l < lines; l++) {
    // Spread over the whole recording, the first and the last included.
    size_t i = lines > 1 ? l * (snaps - 1) / (lines - 1) : 0;
    rows.push_back({strf("%.1f", s.t[i]), mib_text(static_cast<double>(w.total[i]))});
  }
  std::string out = text_table(rows, "");
  if (lines < snaps) out += strf("(%zu of %zu snapshots shown)\n", lines, snaps);
  out += "wss percentiles (MiB):";
  for (size_t k = 0; k < w.pct.size(); k++)
    out += strf(" p%u %s", kPercentiles[k], mib_text(static_cast<double>(w.pct[k])).c_str());
  return out + "\n";
}

std::string wss_json(const Selection& s, const Wss& w) {
  json::Json time_s = json::Json::array(), percentiles = json::Json::object();
  for (double t : s.t) time_s.push_back(json::number(t));
  for (size_t k = 0; k < w.pct.size(); k++) percentiles[strf("p%u", kPercentiles[k])] = w.pct[k];
  return json::dump({{"report", "wss"},
                     {"time_seconds", std::move(time_s)},
                     {"wss_bytes", w.total},
                     {"percentiles", std::move(percentiles)}}) +
         "\n";
}

std::string wss_csv(const Selection& s, const Wss& w) {
  std::string out = "time_seconds,wss_bytes\n";
  for (size_t i = 0; i < s.t.size(); i++)
    out += csv_time(s.t[i]) + strf(",%llu\n", static_cast<unsigned long long>(w.total[i]));
  return out;
}

// --------------------------------------------------------------- tables

// Page moves that bring a page into memory or up a tier, and those that
// send it down a tier or out to the store: every kind is one or the other.
bool moves_in(unsigned k) {
  return k == kNewToDram || k == kNewToSlow || k == kStoreToDram || k == kStoreToSlow ||
         k == kSlowToDram;
}

struct TableStats {
  const TableSeries* ts = nullptr;
  double heat_mean = 0, heat_peak = 0, heat_share_pct = 0;
  double mean[3] = {0, 0, 0}, peak[3] = {0, 0, 0};  // bytes in DRAM, slow, store
  uint64_t pages_in = 0, pages_out = 0;
};

double heat_sum(const TableSeries& ts) {
  double sum = 0;
  for (const TableSnap* t : ts.at)
    if (t) sum += t->heat;
  return sum;
}

std::vector<TableStats> compute_tables(const Selection& s) {
  // The share is of the chosen processes' heat, every table of them, so
  // that --table still says how much of the heat that table takes.
  double all_heat = 0;
  for (const TableSeries& ts : s.all) all_heat += heat_sum(ts);
  std::vector<TableStats> out;
  for (const TableSeries& ts : s.tables) {
    TableStats st;
    st.ts = &ts;
    size_t present = 0;
    for (const TableSnap* t : ts.at) {
      if (!t) continue;
      present++;
      st.heat_mean += t->heat;
      st.heat_peak = std::max(st.heat_peak, t->heat);
      const uint64_t pages[3] = {t->dram_pages, t->slow_pages, t->store_pages};
      for (int k = 0; k < 3; k++) {
        const double b = pages_bytes(*t, pages[k]);
        st.mean[k] += b;
        st.peak[k] = std::max(st.peak[k], b);
      }
    }
    st.heat_mean /= static_cast<double>(present);  // present >= 1: the table was seen
    for (double& m : st.mean) m /= static_cast<double>(present);
    st.heat_share_pct = all_heat > 0 ? 100.0 * heat_sum(ts) / all_heat : 0;
    for (const Moves& m : move_deltas(ts))
      for (unsigned k = 0; k < kMoveKinds; k++) (moves_in(k) ? st.pages_in : st.pages_out) += m[k];
    out.push_back(st);
  }
  return out;
}

uint64_t rounded(double v) { return static_cast<uint64_t>(std::llround(v)); }

std::string tables_text(const std::vector<TableStats>& stats) {
  std::vector<std::vector<std::string>> rows = {
      {"pid", "id", "name", "size_MiB", "heat_mean", "heat_peak", "heat_%", "dram_mean",
       "dram_peak", "slow_mean", "slow_peak", "store_mean", "store_peak", "pages_in", "pages_out"}};
  for (const TableStats& st : stats) {
    const TableSeries& ts = *st.ts;
    std::vector<std::string> row = {strf("%d", ts.pid),
                                    strf("%u", ts.id),
                                    printable(ts.name),
                                    mib_text(static_cast<double>(ts.bytes)),
                                    strf("%.1f", st.heat_mean),
                                    strf("%.1f", st.heat_peak),
                                    strf("%.1f", st.heat_share_pct)};
    for (int k = 0; k < 3; k++) {
      row.push_back(mib_text(st.mean[k]));
      row.push_back(mib_text(st.peak[k]));
    }
    row.push_back(strf("%llu", static_cast<unsigned long long>(st.pages_in)));
    row.push_back(strf("%llu", static_cast<unsigned long long>(st.pages_out)));
    rows.push_back(std::move(row));
  }
  return text_table(rows, "rrl") +
         "dram, slow, store: MiB held, mean and peak over the snapshots; heat_%: share of all "
         "tables' heat\npages_in: new or store to dram or slow, and slow>dram; pages_out: "
         "dram>slow, dram>store, slow>store\n";
}

constexpr const char* kPlaceKeys[3] = {"dram", "slow", "store"};

std::string tables_json(const std::vector<TableStats>& stats) {
  json::Json tables = json::Json::array();
  for (const TableStats& st : stats) {
    const TableSeries& ts = *st.ts;
    json::Json t = json::table_head({.pid = ts.pid, .id = ts.id, .name = ts.name, .bytes = ts.bytes});
    t["heat_mean"] = json::number(st.heat_mean);
    t["heat_peak"] = json::number(st.heat_peak);
    t["heat_share_percent"] = json::number(st.heat_share_pct);
    for (int k = 0; k < 3; k++) {
      t[strf("%s_bytes_mean", kPlaceKeys[k])] = rounded(st.mean[k]);
      t[strf("%s_bytes_peak", kPlaceKeys[k])] = rounded(st.peak[k]);
    }
    t["pages_in"] = st.pages_in;
    t["pages_out"] = st.pages_out;
    tables.push_back(std::move(t));
  }
  return json::dump({{"report", "tables"}, {"tables", std::move(tables)}}) + "\n";
}

std::string tables_csv(const std::vector<TableStats>& stats) {
  std::string out =
      "pid,id,name,bytes,heat_mean,heat_peak,heat_share_percent,dram_bytes_mean,dram_bytes_peak,"
      "slow_bytes_mean,slow_bytes_peak,store_bytes_mean,store_bytes_peak,pages_in,pages_out\n";
  for (const TableStats& st : stats) {
    const TableSeries& ts = *st.ts;
    out += strf("%d,%u,", ts.pid, ts.id) + csv_field(ts.name) +
           strf(",%llu,%.6g,%.6g,%.6g", static_cast<unsigned long long>(ts.bytes), st.heat_mean,
                st.heat_peak, st.heat_share_pct);
    for (int k = 0; k < 3; k++)
      out += strf(",%llu,%llu", static_cast<unsigned long long>(rounded(st.mean[k])),
                  static_cast<unsigned long long>(rounded(st.peak[k])));
    out += strf(",%llu,%llu\n", static_cast<unsigned long long>(st.pages_in),
                static_cast<unsigned long long>(st.pages_out));
  }
  return out;
}

// ----------------------------------------------------------- migrations

// Per kind and in all (index kMoveKinds): pages and bytes per snapshot
// (moved since the one before), totals and rates.
constexpr unsigned kAll = kMoveKinds;

struct Migrations {
  std::vector<std::array<uint64_t, kMoveKinds + 1>> pages, bytes;  // per snapshot
  std::array<uint64_t, kMoveKinds + 1> total_pages{}, total_bytes{};
  std::array<double, kMoveKinds + 1> mean_mib_s{}, peak_mib_s{};
};

Migrations compute_migrations(const Selection& s) {
  Migrations m;
  const size_t snaps = s.t.size();
  m.pages.assign(snaps, {});
  m.bytes.assign(snaps, {});
  for (const TableSeries& ts : s.tables) {
    std::vector<Moves> d = move_deltas(ts);
    for (size_t i = 0; i < snaps; i++) {
      if (!ts.at[i]) continue;
      for (unsigned k = 0; k < kMoveKinds; k++) {
        const uint64_t b =
            ts.at[i]->pages ? scale(ts.at[i]->bytes, d[i][k], ts.at[i]->pages) : d[i][k] * kPageSize;
        for (unsigned x : {k, kAll}) {
          m.pages[i][x] += d[i][k];
          m.bytes[i][x] += b;
        }
      }
    }
  }
  const double span = s.t.back() - s.t.front();
  for (unsigned k = 0; k <= kAll; k++) {
    for (size_t i = 1; i < snaps; i++) {
      m.total_pages[k] += m.pages[i][k];
      m.total_bytes[k] += m.bytes[i][k];
      const double dt = s.t[i] - s.t[i - 1];
      // Two snapshots in the same millisecond (or a clock stepped back)
      // have no rate; their moves still count in the totals.
      if (dt > 0) m.peak_mib_s[k] = std::max(m.peak_mib_s[k], m.bytes[i][k] / kMiB / dt);
    }
    m.mean_mib_s[k] = span > 0 ? static_cast<double>(m.total_bytes[k]) / kMiB / span : 0;
  }
  return m;
}

const char* kind_name(unsigned k) { return k == kAll ? "total" : move_name(k); }

std::string migrations_text(const Migrations& m) {
  std::vector<std::vector<std::string>> rows = {
      {"from_to", "pages", "MiB", "mean_MiB/s", "peak_MiB/s"}};
  for (unsigned k = 0; k <= kAll; k++)
    rows.push_back({kind_name(k), strf("%llu", static_cast<unsigned long long>(m.total_pages[k])),
                    mib_text(static_cast<double>(m.total_bytes[k])), strf("%.3f", m.mean_mib_s[k]),
                    strf("%.3f", m.peak_mib_s[k])});
  return text_table(rows, "l");
}

// The members of a pair's (or the total's) object, after `j`'s own.
json::Json pair_json(json::Json j, const Migrations& m, unsigned k) {
  j["pages"] = m.total_pages[k];
  j["bytes"] = m.total_bytes[k];
  j["mean_bytes_per_second"] = json::number(std::round(m.mean_mib_s[k] * kMiB));
  j["peak_bytes_per_second"] = json::number(std::round(m.peak_mib_s[k] * kMiB));
  return j;
}

std::string migrations_json(const Selection& s, const Migrations& m) {
  json::Json pairs = json::Json::array();
  for (unsigned k = 0; k < kMoveKinds; k++) pairs.push_back(pair_json({{"from_to", move_name(k)}}, m, k));
  // Per interval: time_seconds[i] is the end of the interval, pages moved within.
  json::Json time_s = json::Json::array(), pages = json::Json::object();
  for (size_t i = 1; i < s.t.size(); i++) time_s.push_back(json::number(s.t[i]));
  for (unsigned k = 0; k < kMoveKinds; k++) {
    json::Json& series = pages[move_name(k)] = json::Json::array();
    for (size_t i = 1; i < s.t.size(); i++) series.push_back(m.pages[i][k]);
  }
  return json::dump({{"report", "migrations"},
                     {"pairs", std::move(pairs)},
                     {"total", pair_json(json::Json::object(), m, kAll)},
                     {"series", {{"time_seconds", std::move(time_s)}, {"pages", std::move(pages)}}}}) +
         "\n";
}

std::string migrations_csv(const Selection& s, const Migrations& m) {
  std::string out = "time_seconds,from_to,pages\n";
  for (size_t i = 1; i < s.t.size(); i++)
    for (unsigned k = 0; k < kMoveKinds; k++)
      out += csv_time(s.t[i]) + "," + move_name(k) +
             strf(",%llu\n", static_cast<unsigned long long>(m.pages[i][k]));
  return out;
}

// -------------------------------------------------------------- charts

void chart_frame(plot::LineChart* c, const std::string& title, const char* y_label) {
  *c = plot::LineChart();
  c->title = title;
  c->x_label = "time (s)";
  c->y_label = y_label;
}

}  // namespace

int report_wss(const Recording& r, const ReportOptions& o, Format f, std::string* out,
               std::string* why) {
  Selection s;
  if (int rc = select_tables(r, o, &s, why); rc < 0) return rc;
  const Wss w = compute_wss(s);
  *out = f == Format::kJson ? wss_json(s, w) : f == Format::kCsv ? wss_csv(s, w) : wss_text(s, w);
  return 0;
}

int report_tables(const Recording& r, const ReportOptions& o, Format f, std::string* out,
                  std::string* why) {
  Selection s;
  if (int rc = select_tables(r, o, &s, why); rc < 0) return rc;
  const std::vector<TableStats> st = compute_tables(s);
  *out = f == Format::kJson  ? tables_json(st)
         : f == Format::kCsv ? tables_csv(st)
                             : tables_text(st);
  return 0;
}

int report_migrations(const Recording& r, const ReportOptions& o, Format f, std::string* out,
                      std::string* why) {
  Selection s;
  if (int rc = select_tables(r, o, &s, why); rc < 0) return rc;
  const Migrations m = compute_migrations(s);
  *out = f == Format::kJson  ? migrations_json(s, m)
         : f == Format::kCsv ? migrations_csv(s, m)
                             : migrations_text(m);
  return 0;
}

int wss_chart(const Recording& r, const ReportOptions& o, plot::LineChart* c, std::string* why) {
  Selection s;
  if (int rc = select_tables(r, o, &s, why); rc < 0) return rc;
  const Wss w = compute_wss(s);
  chart_frame(c, "mtier working set: " + s.what, "working set (MiB)");
  for (size_t p = 0; p < s.procs.size(); p++) {
    plot::Series series{s.procs[p].label, {}};
    for (size_t i = 0; i < s.t.size(); i++)
      if (w.per_proc[p][i] >= 0)
        series.points.push_back({s.t[i], static_cast<double>(w.per_proc[p][i]) / kMiB});
    c->series.push_back(std::move(series));
  }
  if (s.procs.size() > 1) {
    plot::Series total{"total", {}};
    for (size_t i = 0; i < s.t.size(); i++)
      total.points.push_back({s.t[i], static_cast<double>(w.total[i]) / kMiB});
    c->series.push_back(std::move(total));
  }
  return 0;
}

int tables_chart(const Recording& r, const ReportOptions& o, plot::LineChart* c, std::string* why) {
  Selection s;
  if (int rc = select_tables(r, o, &s, why); rc < 0) return rc;
  chart_frame(c, "mtier table heat: " + s.what, "heat (samples)");
  for (const TableSeries& ts : s.tables) {
    plot::Series series{ts.label, {}};
    for (size_t i = 0; i < s.t.size(); i++)
      if (ts.at[i]) series.points.push_back({s.t[i], ts.at[i]->heat});
    c->series.push_back(std::move(series));
  }
  return 0;
}

int migrations_chart(const Recording& r, const ReportOptions& o, plot::LineChart* c,
                     std::string* why) {
  Selection s;
  if (int rc = select_tables(r, o, &s, why); rc < 0) return rc;
  const Migrations m = compute_migrations(s);
  chart_frame(c, "mtier page moves: " + s.what, "moved (MiB/s)");
  for (unsigned k = 0; k < kMoveKinds; k++) {
    if (m.total_pages[k] == 0) continue;
    plot::Series series{move_name(k), {}};
    for (size_t i = 1; i < s.t.size(); i++) {
      const double dt = s.t[i] - s.t[i - 1];
      if (dt > 0) series.points.push_back({s.t[i], m.bytes[i][k] / kMiB / dt});
    }
    c->series.push_back(std::move(series));
  }
  // Nothing moved: a flat line says so, rather than a chart that cannot be
  // drawn for want of a series.
  if (c->series.empty()) {
    plot::Series none{"no page moves", {}};
    for (size_t i = 0; i < s.t.size(); i++) none.points.push_back({s.t[i], 0.0});
    c->series.push_back(std::move(none));
  }
  return 0;
}

}  // namespace mtier::record
