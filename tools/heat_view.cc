// SPDX-License-Identifier: Apache-2.0
#include "heat_view.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "heatmap_text.h"
#include "sys/page_size.h"

namespace mtier::tools {
namespace {

using record::ProcessSnap;
using record::Snapshot;
using record::TableSnap;

// The key help, longest first: the header takes the longest that fits.
constexpr const char* kKeyHelp[] = {"q quit  +/- zoom  </> pan  n/p table  t tables/ranges",
                                    "q quit +/- zoom </> pan n/p table t view",
                                    "keys: q +- <> np t"};
constexpr char kUnits[] = "heat = sampled accesses, halved every cooling period";
constexpr char kPlaceKey[] = "place: D DRAM  m slow tier  s store  ~ mixed  blank untouched";
constexpr unsigned kMinNameWidth = 5, kMaxNameWidth = 16;
constexpr unsigned kMibWidth = 6;                     // fmt_mib's widest
constexpr unsigned kTierWidth = 3 * (2 + kMibWidth);  // " D" value " m" value " s" value
constexpr unsigned kMinBarWidth = 16;                 // below it the side columns go first
constexpr unsigned kOffsetWidth = 7;                  // one offset of a range label
constexpr unsigned kNaturalRanges = 16;
constexpr double kMiB = 1048576.0;

// One line of the frame under construction: it counts visible characters
// and drops whatever would go past `cols`, so no caller can overflow it,
// and it writes escapes only in colour.
class Line {
 public:
  Line(unsigned cols, bool color) : cols_(cols), color_(color) {}

  unsigned width() const { return width_; }
  // One visible character; bytes outside printable ASCII become '?' so that
  // every byte is one column and no name can smuggle in a control sequence.
  void put(char c) {
    if (width_ >= cols_) return;
    out_ += (c >= 0x20 && c < 0x7f) ? c : '?';
    width_++;
  }
  void text(std::string_view s) {
    for (char c : s) put(c);
  }
  void pad_to(unsigned col) {
    while (width_ < col && width_ < cols_) put(' ');
  }
  // `s` in exactly `width` columns: cut (the last kept character replaced
  // by '~' to show the cut) or padded with blanks.
  void field(std::string_view s, unsigned width) {
    unsigned start = width_;
    if (s.size() > width && width > 0) {
      text(s.substr(0, width - 1));
      put('~');
    } else {
      text(s.substr(0, width));
    }
    pad_to(start + width);
  }
  // An SGR attribute ("1" bold, "7" reverse) until reset(); colour only.
  void attr(const char* params) {
    if (!color_ || width_ >= cols_) return;
    out_ += "\033[";
    out_ += params;
    out_ += 'm';
    bg_ = -1;
    open_ = true;
  }
  void reset() {
    if (open_) out_ += "\033[0m";
    open_ = false;
    bg_ = -1;
  }
  // A heat cell of level l: the ramp's glyph, on the ramp's colour in colour
  // mode (one escape per run of a colour, not per cell).
  void heat_cell(int l) {
    if (width_ >= cols_) return;
    if (color_ && heat_color(l) != bg_) {
      bg_ = heat_color(l);
      out_ += "\033[48;5;" + std::to_string(bg_) + "m";
      open_ = true;
    }
    put(kHeatRamp[l]);
  }
  std::string finish() {
    reset();
    return std::move(out_);
  }

 private:
  unsigned cols_;
  bool color_;
  unsigned width_ = 0;
  std::string out_;
  bool open_ = false;
  int bg_ = -1;
};

// A cell of a heat bar: the heat of the part of the table it covers, that
// heat per MiB, and where that part lives (a kPlace char).
struct Cell {
  double heat = 0;
  double per_mib = 0;
  char place = record::kPlaceUntouched;
};

// The place of a cell covering slices at places a and b: untouched slices
// do not count (a place char says where the touched pages are), two
// different places make it mixed.
char merge_place(char a, char b) {
  if (b == record::kPlaceUntouched || a == b) return a;
  if (a == record::kPlaceUntouched) return b;
  return record::kPlaceMixed;
}

size_t slice_count(const TableSnap& t) { return t.heat_map.size(); }

// The part [a, b) of table t's slices (in slice units, 0 <= a < b <= n)
// cut into w equal cells; each takes the share of every slice it overlaps.
std::vector<Cell> resample(const TableSnap& t, double a, double b, unsigned w) {
  std::vector<Cell> cells(w);
  size_t n = slice_count(t);
  if (n == 0 || w == 0 || !(b > a)) return cells;
  double cell_mib = (b - a) / w * (double(t.bytes) / double(n)) / kMiB;
  for (unsigned j = 0; j < w; j++) {
    double c0 = a + (b - a) * j / w, c1 = a + (b - a) * (j + 1) / w;
    size_t first = static_cast<size_t>(std::max(0.0, std::floor(c0)));
    size_t last = std::min(n, static_cast<size_t>(std::max(0.0, std::ceil(c1))));
    Cell& c = cells[j];
    for (size_t i = first; i < last; i++) {
      double overlap = std::min(c1, double(i + 1)) - std::max(c0, double(i));
      if (overlap <= 1e-9) continue;  // rounding at a shared edge
      double h = t.heat_map[i];
      if (std::isfinite(h) && h > 0) c.heat += h * overlap;
      c.place = merge_place(c.place, i < t.place.size() ? t.place[i] : record::kPlaceUntouched);
    }
    c.per_mib = cell_mib > 0 ? c.heat / cell_mib : 0;
  }
  return cells;
}

// A size in MiB in at most kMibWidth characters.
std::string fmt_mib(double mib) {
  char buf[32];
  if (!(mib > 0)) return "0";
  if (mib < 9.995)
    snprintf(buf, sizeof buf, "%.2f", mib);
  else if (mib < 999.95)
    snprintf(buf, sizeof buf, "%.1f", mib);
  else if (mib < 999999.5)
    snprintf(buf, sizeof buf, "%.0f", mib);
  else if (mib / 1024 < 99999.5)
    snprintf(buf, sizeof buf, "%.0fG", mib / 1024);
  else
    snprintf(buf, sizeof buf, "%.0fT", std::min(mib / kMiB, 99999.0));
  return buf;
}

// A heat in a few characters: 3 significant digits below 1000, whole up
// to 9999, then 3 significant digits and k, M, G or T.
std::string fmt_num(double v) {
  char buf[32];
  if (!std::isfinite(v) || v < 1e3) {
    snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
  }
  if (v < 1e4) {
    snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  const char* units = "kMGT";
  int u = 0;
  for (v /= 1e3; v >= 999.5 && u < 3; u++) v /= 1e3;
  snprintf(buf, sizeof buf, "%.3g%c", v, units[u]);
  return buf;
}

double page_mib(const TableSnap& t, uint64_t pages) {
  double page_bytes = t.pages ? double(t.bytes) / double(t.pages) : double(kPageSize);
  return double(pages) * page_bytes / kMiB;
}

// The view's zoom as render_frame reads it: a power of two in 1..kMaxHeatZoom.
unsigned effective_zoom(unsigned zoom) {
  unsigned z = 1;
  while (z * 2 <= zoom && z * 2 <= kMaxHeatZoom) z *= 2;
  return z;
}

// The most apply_key zooms to for the selected table: its slices, rounded
// down to a power of two (zooming further only repeats a slice).
unsigned zoom_limit(const ProcessSnap* p, int table) {
  if (!p || table < 0) return 1;
  return effective_zoom(
      static_cast<unsigned>(std::min<size_t>(slice_count(p->tables[table]), kMaxHeatZoom)));
}

std::string fmt_time(uint64_t unix_ms) {
  if (unix_ms == 0) return "--:--:--";
  time_t s = static_cast<time_t>(unix_ms / 1000);
  struct tm tm {};
  char buf[16];
  if (!localtime_r(&s, &tm) || !strftime(buf, sizeof buf, "%H:%M:%S", &tm)) return "--:--:--";
  return buf;
}

// The shown part of each table at a zoom and pan, in percent of the table.
std::string fmt_part(unsigned zoom, unsigned pan) {
  char buf[64];
  snprintf(buf, sizeof buf, "zoom %ux: %.4g-%.4g%%", zoom, 100.0 * pan / zoom,
           100.0 * (pan + 1) / zoom);
  return buf;
}

// How many of the optional lines (legend, column header, place key, in
// that order of importance) a frame of `rows` rows has room for: each only
// when the body keeps two lines.
unsigned optional_lines(unsigned rows) {
  unsigned avail = rows - 1;  // the header always
  unsigned extras = 0;
  while (extras < 3 && avail >= extras + 1 + 2) extras++;
  return extras;
}

struct Frame {
  unsigned cols;
  bool color;
  std::vector<std::string> lines;
  Line line() const { return Line(cols, color); }
  void add(Line l) { lines.push_back(l.finish()); }
  void add_text(std::string_view s) {
    Line l = line();
    l.text(s);
    add(std::move(l));
  }
  std::string join() const {
    std::string out;
    for (size_t i = 0; i < lines.size(); i++) {
      if (i) out += '\n';
      out += lines[i];
    }
    return out;
  }
};

void add_header(Frame* f, const Snapshot& snap, const ProcessSnap* p, const HeatView& v, int table,
                unsigned zoom, unsigned pan) {
  std::string s;
  if (p) s += "pid " + std::to_string(p->pid) + " (" + p->name + ")  ";
  s += fmt_time(snap.unix_ms);
  if (p && table >= 0) {
    if (v.mode == HeatMode::kTables)
      s += "  tables";
    else
      s += "  ranges of " + p->tables[table].name;
    if (zoom > 1) s += "  " + fmt_part(zoom, pan);
  }
  std::string tab = snap.procs.size() > 1 ? " Tab process" : "";
  for (const char* help : kKeyHelp) {
    if (s.size() + 3 + strlen(help) + tab.size() <= f->cols || help == kKeyHelp[2]) {
      s += "   " + std::string(help) + tab;
      break;
    }
  }
  Line l = f->line();
  l.attr("7");
  l.text(s);
  f->add(std::move(l));
}

void add_legend(Frame* f, double max) {
  Line l = f->line();
  l.text("0 ");
  for (int i = 0; i < kHeatSteps; i++) l.heat_cell(i);
  l.reset();
  l.text(" " + fmt_num(max) + "/MiB  " + kUnits);
  f->add(std::move(l));
}

// Cells of one bar, each at its level against `max`.
void add_cells(Line* l, const std::vector<Cell>& cells, double max) {
  for (const Cell& c : cells) l->heat_cell(heat_level(c.per_mib, max));
  l->reset();
}

void add_places(Line* l, const std::vector<Cell>& cells) {
  for (const Cell& c : cells) l->put(c.place);
}

void render_tables(Frame* f, const ProcessSnap& p, int sel, unsigned zoom, unsigned pan,
                   unsigned body_rows, unsigned extras) {
  const unsigned cols = f->cols;
  size_t longest = 0;
  for (const TableSnap& t : p.tables) longest = std::max(longest, t.name.size());
  unsigned name_w =
      static_cast<unsigned>(std::clamp<size_t>(longest, kMinNameWidth, kMaxNameWidth));
  unsigned tier_w = kTierWidth;
  if (cols < 2 + name_w + kMinBarWidth + tier_w) tier_w = 0;
  if (cols < 2 + name_w + kMinBarWidth / 2) name_w = cols >= 4 ? (cols - 2) / 3 : 0;
  unsigned bar_w = cols > 2 + name_w + tier_w ? cols - 2 - name_w - tier_w : 0;

  // Which tables fit: the selected one and its neighbours.
  unsigned per_table = body_rows >= 2 ? 2 : 1;
  size_t count = p.tables.size();
  size_t shown = std::min<size_t>(count, std::max(1u, body_rows / per_table));
  size_t half = (shown - 1) / 2, at = static_cast<size_t>(sel);
  size_t first = std::min(at > half ? at - half : 0, count - shown);

  std::vector<std::vector<Cell>> bars;
  double max = 0;
  for (size_t i = first; i < first + shown; i++) {
    const TableSnap& t = p.tables[i];
    double n = double(slice_count(t));
    bars.push_back(resample(t, n * pan / zoom, n * (pan + 1) / zoom, bar_w));
    for (const Cell& c : bars.back()) max = std::max(max, c.per_mib);
  }

  if (extras >= 2) {  // the column header
    Line l = f->line();
    l.put(' ');
    std::string what = count > shown
                           ? "table " + std::to_string(first + 1) + "-" +
                                 std::to_string(first + shown) + "/" + std::to_string(count)
                           : "table";
    l.field(what, name_w);
    l.put(' ');
    // Over the bars: which part of each table they cover.
    unsigned start = l.width();
    std::string left = zoom > 1 ? fmt_part(zoom, pan) + " of each table" : "0%";
    std::string right = zoom > 1 ? "" : "100%";
    if (left.size() + 1 + right.size() <= bar_w) {
      l.text(left);
      l.pad_to(start + bar_w - static_cast<unsigned>(right.size()));
      l.text(right);
    }
    l.pad_to(start + bar_w);
    if (tier_w) {
      std::string mib = "MiB in place";
      l.pad_to(start + bar_w + tier_w - static_cast<unsigned>(mib.size()));
      l.text(mib);
    }
    f->add(std::move(l));
  }
  for (size_t k = 0; k < shown; k++) {
    const TableSnap& t = p.tables[first + k];
    bool selected = static_cast<int>(first + k) == sel;
    Line l = f->line();
    l.put(selected ? '>' : ' ');
    if (selected) l.attr("1");
    l.field(t.name, name_w);
    l.reset();
    l.put(' ');
    add_cells(&l, bars[k], max);
    if (tier_w) {
      char buf[64];
      snprintf(buf, sizeof buf, " D%*s m%*s s%*s", kMibWidth,
               fmt_mib(page_mib(t, t.dram_pages)).c_str(), kMibWidth,
               fmt_mib(page_mib(t, t.slow_pages)).c_str(), kMibWidth,
               fmt_mib(page_mib(t, t.store_pages)).c_str());
      l.text(buf);
    }
    f->add(std::move(l));
    if (per_table == 2) {
      Line m = f->line();
      m.pad_to(2 + name_w);
      add_places(&m, bars[k]);
      f->add(std::move(m));
    }
  }
  if (extras >= 1) add_legend(f, max);
}

// How many rows to cut `span` slices into, given room for `room`: never
// more than the slices (a row would only repeat part of one); a whole
// number of slices a row when some divisor of the span fills at least half
// the room, so the offsets are slice edges; else all the room, in equal
// fractional parts.
unsigned range_rows(double span, unsigned room) {
  if (span < 1) return 1;
  if (span < room) room = static_cast<unsigned>(span);
  if (span == std::floor(span) && span <= 1e9) {
    unsigned long long whole = static_cast<unsigned long long>(span);
    for (unsigned r = room; r >= 1 && 2 * r >= room; r--)
      if (whole % r == 0) return r;
  }
  return room;
}

void render_ranges(Frame* f, const TableSnap& t, unsigned zoom, unsigned pan, unsigned body_rows,
                   unsigned extras) {
  const unsigned cols = f->cols;
  unsigned label_w = 2 * kOffsetWidth + 1;
  if (cols < label_w + 1 + kMinBarWidth) label_w = cols >= kOffsetWidth + 5 ? kOffsetWidth : 0;
  unsigned sum_w = cols >= label_w + 1 + 2 * kMinBarWidth + 9 ? 9 : 0;  // " %8s" heat
  unsigned bar_w = cols > label_w + 1 + sum_w ? cols - label_w - 1 - sum_w : 0;

  size_t n = slice_count(t);
  double span = double(n) / zoom, a = double(n) * pan / zoom;
  unsigned per_range = body_rows >= 2 ? 2 : 1;
  unsigned ranges = range_rows(span, std::max(1u, body_rows / per_range));
  std::vector<std::vector<Cell>> bars;
  std::vector<double> sums;
  double max = 0;
  for (unsigned r = 0; r < ranges; r++) {
    double r0 = a + span * r / ranges, r1 = a + span * (r + 1) / ranges;
    bars.push_back(resample(t, r0, r1, bar_w));
    for (const Cell& c : bars.back()) max = std::max(max, c.per_mib);
    sums.push_back(resample(t, r0, r1, 1)[0].heat);
  }
  double slice_mib = n ? double(t.bytes) / double(n) / kMiB : 0;

  if (extras >= 2) {  // the column header: what the table is and holds
    Line l = f->line();
    char buf[160];
    snprintf(buf, sizeof buf, " (id %u) %s MiB: D %s m %s s %s; rows: offsets in MiB", t.id,
             fmt_mib(double(t.bytes) / kMiB).c_str(), fmt_mib(page_mib(t, t.dram_pages)).c_str(),
             fmt_mib(page_mib(t, t.slow_pages)).c_str(),
             fmt_mib(page_mib(t, t.store_pages)).c_str());
    l.text(t.name + buf + (sum_w ? ", heat at right" : ""));
    f->add(std::move(l));
  }
  for (unsigned r = 0; r < ranges; r++) {
    double r0 = a + span * r / ranges, r1 = a + span * (r + 1) / ranges;
    Line l = f->line();
    char buf[64];
    if (label_w == 2 * kOffsetWidth + 1)
      snprintf(buf, sizeof buf, "%*s-%-*s", kOffsetWidth, fmt_mib(r0 * slice_mib).c_str(),
               kOffsetWidth, fmt_mib(r1 * slice_mib).c_str());
    else
      snprintf(buf, sizeof buf, "%*s", kOffsetWidth, fmt_mib(r0 * slice_mib).c_str());
    l.field(label_w ? buf : "", label_w);
    l.put(' ');
    add_cells(&l, bars[r], max);
    if (sum_w) {
      snprintf(buf, sizeof buf, " %8s", fmt_num(sums[r]).c_str());
      l.text(buf);
    }
    f->add(std::move(l));
    if (per_range == 2) {
      Line m = f->line();
      m.pad_to(label_w + 1);
      add_places(&m, bars[r]);
      f->add(std::move(m));
    }
  }
  if (extras >= 1) add_legend(f, max);
}

}  // namespace

const ProcessSnap* shown_process(const Snapshot& snap, const HeatView& view) {
  for (const ProcessSnap& p : snap.procs)
    if (p.pid == view.pid) return &p;
  return snap.procs.empty() ? nullptr : &snap.procs[0];
}

int shown_table(const ProcessSnap& proc, const HeatView& view) {
  for (size_t i = 0; i < proc.tables.size(); i++)
    if (proc.tables[i].id == view.table_id) return static_cast<int>(i);
  return proc.tables.empty() ? -1 : 0;
}

bool find_table(const ProcessSnap& proc, const std::string& name_or_id, uint32_t* id) {
  for (const TableSnap& t : proc.tables)
    if (t.name == name_or_id) return *id = t.id, true;
  if (name_or_id.empty() || name_or_id.size() > 10 ||
      name_or_id.find_first_not_of("0123456789") != std::string::npos)
    return false;
  unsigned long long want = std::stoull(name_or_id);  // digits only, at most 10: no throw
  for (const TableSnap& t : proc.tables)
    if (t.id == want) return *id = t.id, true;
  return false;
}

unsigned natural_rows(const Snapshot& snap, const HeatView& view) {
  constexpr unsigned kFixed = 4;  // header, column header, legend, place key
  const ProcessSnap* p = shown_process(snap, view);
  int sel = p ? shown_table(*p, view) : -1;
  if (sel < 0) return 2;  // header and a line saying why there is nothing
  if (view.mode == HeatMode::kTables)
    return kFixed + 2 * static_cast<unsigned>(std::min<size_t>(p->tables.size(), 100000));
  double span = double(slice_count(p->tables[sel])) / effective_zoom(view.zoom);
  return kFixed + 2 * range_rows(span, kNaturalRanges);
}

std::string render_frame(const Snapshot& snap, const HeatView& view, unsigned cols, unsigned rows,
                         bool color) {
  if (cols == 0 || rows == 0) return "";
  Frame f{cols, color, {}};
  const ProcessSnap* p = shown_process(snap, view);
  int sel = p ? shown_table(*p, view) : -1;
  unsigned zoom = effective_zoom(view.zoom);
  unsigned pan = std::min(view.pan, zoom - 1);
  add_header(&f, snap, p, view, sel, zoom, pan);
  if (rows >= 2 && !p) f.add_text("mtierd has no registered process this user may see");
  if (rows >= 2 && p && sel < 0) f.add_text("pid " + std::to_string(p->pid) + " has no tables yet");
  if (sel < 0) return f.join();

  unsigned extras = optional_lines(rows);
  unsigned body_rows = rows - 1 - extras;
  if (body_rows == 0) return f.join();
  if (view.mode == HeatMode::kTables)
    render_tables(&f, *p, sel, zoom, pan, body_rows, extras);
  else
    render_ranges(&f, p->tables[sel], zoom, pan, body_rows, extras);
  if (extras >= 3) f.add_text(kPlaceKey);
  return f.join();
}

bool apply_key(int key, const Snapshot& snap, HeatView* view) {
  if (key == 'q' || key == 'Q' || key == 3 || key == 27) return false;
  const ProcessSnap* p = shown_process(snap, *view);
  int sel = p ? shown_table(*p, *view) : -1;
  size_t count = p ? p->tables.size() : 0;
  unsigned zoom = effective_zoom(view->zoom);
  unsigned pan = std::min(view->pan, zoom - 1);
  switch (key) {
    case '+':
    case '=':
      if (zoom * 2 <= zoom_limit(p, sel)) zoom *= 2, pan *= 2;
      break;
    case '-':
    case '_':
      if (zoom > 1) zoom /= 2, pan /= 2;
      break;
    case '<':
    case ',':
    case kKeyLeft:
      if (pan > 0) pan--;
      break;
    case '>':
    case '.':
    case kKeyRight:
      if (pan + 1 < zoom) pan++;
      break;
    case kKeyHome:
      pan = 0;
      break;
    case kKeyEnd:
      pan = zoom - 1;
      break;
    case 'n':
    case kKeyDown:
      if (count) view->table_id = p->tables[(sel + 1) % count].id;
      break;
    case 'p':
    case kKeyUp:
      if (count) view->table_id = p->tables[(sel + count - 1) % count].id;
      break;
    case 't':
      view->mode = view->mode == HeatMode::kTables ? HeatMode::kRanges : HeatMode::kTables;
      break;
    case '\t':
      if (p) {
        size_t i = static_cast<size_t>(p - snap.procs.data());
        view->pid = snap.procs[(i + 1) % snap.procs.size()].pid;
      }
      break;
    default:
      break;
  }
  view->zoom = zoom;
  view->pan = pan;
  return true;
}

}  // namespace mtier::tools
