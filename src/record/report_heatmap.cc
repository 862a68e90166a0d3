// SPDX-License-Identifier: Apache-2.0
// `mtier report heatmap`: heat over time per table, as text (a glyph grid
// per table), JSON, CSV and a HeatmapChart.
#include <algorithm>
#include <cerrno>

#include "record/report.h"
#include "record/heat_ramp.h"
#include "record/report_internal.h"
#include "util/json.h"

namespace mtier::record {
namespace {

using namespace report_internal;

constexpr unsigned kDefaultCols = 60;
// A table's slices go up to 4096 (the daemon's most): text shows at most
// this many rows, summing neighbouring slices, so a block fits a terminal.
constexpr size_t kMaxTextRows = 32;
// Charts: more cells than pixels only blur, and cost memory per cell.
constexpr size_t kMaxChartCols = 600;
constexpr size_t kMaxChartRows = 512;

// The snapshots of column c of `cols`: [first, last).
std::pair<size_t, size_t> column(size_t snaps, size_t cols, size_t c) {
  return {c * snaps / cols, (c + 1) * snaps / cols};
}

// rows (per snapshot, each n values or empty where the table is absent) as
// an n x cols grid, grid[r * cols + c] the mean of row r over the
// snapshots of column c that hold the table, -1 where none does.
std::vector<double> grid(const std::vector<std::vector<double>>& rows, size_t n, size_t cols) {
  std::vector<double> g(n * cols, -1.0);
  for (size_t c = 0; c < cols; c++) {
    auto [first, last] = column(rows.size(), cols, c);
    size_t present = 0;
    std::vector<double> sum(n, 0.0);
    for (size_t i = first; i < last; i++) {
      if (rows[i].empty()) continue;
      present++;
      for (size_t r = 0; r < n; r++) sum[r] += rows[i][r];
    }
    if (present)
      for (size_t r = 0; r < n; r++) g[r * cols + c] = sum[r] / static_cast<double>(present);
  }
  return g;
}

// MiB of one of n equal rows of a table; 1 for a table of no bytes, so that
// densities stay finite.
double row_mib(const TableSeries& ts, size_t n) {
  return ts.bytes ? static_cast<double>(ts.bytes) / static_cast<double>(n) / kMiB : 1.0;
}

std::string time_label(double t, double span) { return strf(span >= 10 ? "%.0f" : "%.1f", t); }

// The text of the time axis under `cols` cells starting at column `indent`:
// the time of the first snapshot of every 10th column and of the last one,
// each where it does not run into the one before.
std::string time_axis(const Selection& s, size_t cols, size_t indent) {
  const double span = s.t.back() - s.t.front();
  std::string line(indent, ' ');
  size_t free_from = 0;
  for (size_t c = 0; c < cols; c++) {
    if (c % 10 != 0 && c + 1 != cols) continue;
    if (c < free_from) continue;
    std::string l = time_label(s.t[column(s.t.size(), cols, c).first], span);
    line.resize(indent + c, ' ');
    line += l;
    free_from = c + l.size() + 1;
  }
  return line + " s";
}

struct TextBlock {
  const TableSeries* ts;
  size_t rows;
  std::vector<double> density;  // rows x cols, heat per MiB; -1 no data
};

std::string heatmap_text(const Selection& s, const ReportOptions& o) {
  const size_t snaps = s.t.size();
  const size_t cols = std::min<size_t>(snaps, o.time_cols ? o.time_cols : kDefaultCols);
  std::vector<TextBlock> blocks;
  double max = 0;
  for (const TableSeries& ts : s.tables) {
    TextBlock b{&ts, std::min(ts.slices, kMaxTextRows), {}};
    b.density = grid(heat_rows(ts, b.rows), b.rows, cols);
    const double mib = row_mib(ts, b.rows);
    for (double& v : b.density) {
      if (v < 0) continue;  // no data
      v /= mib;
      max = std::max(max, v);
    }
    blocks.push_back(std::move(b));
  }

  std::string out;
  for (const TextBlock& b : blocks) {
    const TableSeries& ts = *b.ts;
    size_t first = 0, last = snaps - 1;
    while (!ts.at[first]) first++;
    while (!ts.at[last]) last--;
    out += strf("%s (pid %d, id %u): %.1f MiB in %zu slice%s", printable(ts.name).c_str(), ts.pid,
                ts.id, static_cast<double>(ts.bytes) / kMiB, ts.slices, ts.slices == 1 ? "" : "s");
    if (b.rows < ts.slices) out += strf(" (%zu rows)", b.rows);
    out += strf(", %.1f s to %.1f s\n", s.t[first], s.t[last]);

    std::vector<std::string> labels(b.rows);
    size_t w = 3;  // "MiB"
    for (size_t r = 0; r < b.rows; r++) {
      labels[r] = strf("%.1f", static_cast<double>(scale(ts.bytes, r, b.rows)) / kMiB);
      w = std::max(w, labels[r].size());
    }
    out += std::string(w - 3, ' ') + "MiB\n";
    for (size_t r = b.rows; r-- > 0;) {  // the highest offset on top
      out += std::string(w - labels[r].size(), ' ') + labels[r] + " |";
      for (size_t c = 0; c < cols; c++) {
        double v = b.density[r * cols + c];
        out += v < 0 ? std::string(" ") : heat_glyph(heat_level(v, max), o.color);
      }
      out += "|\n";
    }
    out += std::string(w, ' ') + " +" + std::string(cols, '-') + "+\n";
    out += time_axis(s, cols, w + 2) + "\n\n";
  }
  out += "heat (samples per MiB): 0 [";
  for (int l = 0; l < kHeatSteps; l++) out += heat_glyph(l, o.color);
  out += strf("] %.4g", max);
  if (cols < snaps)
    out += strf("; a column is the mean of up to %zu snapshots", (snaps + cols - 1) / cols);
  return out + "\n";
}

std::string heatmap_json(const Selection& s) {
  json::Json time_s = json::Json::array(), tables = json::Json::array();
  for (double t : s.t) time_s.push_back(json::number(t));
  for (const TableSeries& ts : s.tables) {
    json::Json t = json::table_head({.pid = ts.pid, .id = ts.id, .name = ts.name, .bytes = ts.bytes});
    t["slices"] = ts.slices;
    json::Json& heat = t["heat"] = json::Json::array();
    // A snapshot without the table (its process not yet or no longer
    // there) reads as no heat, so that every row has `slices` numbers.
    for (const auto& row : heat_rows(ts, ts.slices)) {
      json::Json& r = heat.emplace_back(json::Json::array());
      for (size_t i = 0; i < ts.slices; i++) r.push_back(json::number(row.empty() ? 0.0 : row[i]));
    }
    tables.push_back(std::move(t));
  }
  return json::dump({{"report", "heatmap"}, {"time_seconds", std::move(time_s)}, {"tables", std::move(tables)}}) + "\n";
}

std::string heatmap_csv(const Selection& s) {
  std::string out = "time_seconds,pid,table,slice,offset_bytes,heat\n";
  std::vector<std::vector<std::vector<double>>> rows;
  for (const TableSeries& ts : s.tables) rows.push_back(heat_rows(ts, ts.slices));
  for (size_t i = 0; i < s.t.size(); i++)
    for (size_t k = 0; k < s.tables.size(); k++) {
      const TableSeries& ts = s.tables[k];
      if (rows[k][i].empty()) continue;
      const std::string prefix = csv_time(s.t[i]) + strf(",%d,", ts.pid) + csv_field(ts.name) + ",";
      for (size_t j = 0; j < ts.slices; j++)
        out += prefix + strf("%zu,%llu,%.6g\n", j,
                             static_cast<unsigned long long>(scale(ts.bytes, j, ts.slices)),
                             rows[k][i][j]);
    }
  return out;
}

}  // namespace

int report_heatmap(const Recording& r, const ReportOptions& o, Format f, std::string* out,
                   std::string* why) {
  Selection s;
  if (int rc = select_tables(r, o, &s, why); rc < 0) return rc;
  switch (f) {
    case Format::kText:
      *out = heatmap_text(s, o);
      break;
    case Format::kJson:
      *out = heatmap_json(s);
      break;
    case Format::kCsv:
      *out = heatmap_csv(s);
      break;
  }
  return 0;
}

int heatmap_chart(const Recording& r, const ReportOptions& o, plot::HeatmapChart* c,
                  std::string* why) {
  Selection s;
  if (int rc = select_tables(r, o, &s, why); rc < 0) return rc;
  const size_t snaps = s.t.size(), n = s.tables.size();
  const size_t cols = std::min(snaps, kMaxChartCols);
  *c = plot::HeatmapChart();
  c->title = "mtier heat map: " + s.what;
  c->x_label = "time (s)";
  c->cols = static_cast<unsigned>(cols);
  // Columns are equal in width, so the axis spans one interval past the
  // last snapshot: a column's left edge is its first snapshot's time.
  c->x_lo = s.t.front();
  c->x_hi = snaps > 1 ? s.t.back() + (s.t.back() - s.t.front()) / static_cast<double>(snaps - 1)
                      : s.t.front() + 1;
  if (!(c->x_hi > c->x_lo)) c->x_hi = c->x_lo + 1;

  if (n == 1) {
    const TableSeries& ts = s.tables[0];
    const size_t rows = std::min(ts.slices, kMaxChartRows);
    c->rows = static_cast<unsigned>(rows);
    c->values = grid(heat_rows(ts, rows), rows, cols);
    c->y_label = "offset in table (MiB)";
    c->colour_label = "heat (samples)";
    c->y_lo = 0;
    c->y_hi = ts.bytes ? static_cast<double>(ts.bytes) / kMiB : 1;
    return 0;
  }
  // Bands of equal height whatever the tables' sizes, so the colour is heat
  // per MiB: per row it would favour the big tables.
  size_t most = 1;
  for (const TableSeries& ts : s.tables) most = std::max(most, ts.slices);
  const size_t rows = std::max<size_t>(1, std::min(most, kMaxChartRows / n));
  c->rows = static_cast<unsigned>(rows * n);
  c->values.assign(rows * n * cols, -1.0);
  for (size_t k = 0; k < n; k++) {
    const TableSeries& ts = s.tables[k];
    const size_t first_row = (n - 1 - k) * rows;  // the first table on top, as in text
    std::vector<double> g = grid(heat_rows(ts, rows), rows, cols);
    const double mib = row_mib(ts, rows);
    for (size_t i = 0; i < g.size(); i++)
      c->values[first_row * cols + i] = g[i] < 0 ? -1.0 : g[i] / mib;
    c->bands.push_back({static_cast<unsigned>(first_row), static_cast<unsigned>(rows), ts.label});
  }
  std::reverse(c->bands.begin(), c->bands.end());  // bottom band first
  c->y_label = "table";
  c->colour_label = "heat (samples per MiB)";
  c->y_lo = 0;
  c->y_hi = static_cast<double>(n);
  return 0;
}

}  // namespace mtier::record
