// SPDX-License-Identifier: Apache-2.0
#include "demo_heat.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "heatmap_text.h"

namespace mtier::tools::demo {

HeatSnapshot snapshot_heat(const std::vector<int>& ids, unsigned columns) {
  HeatSnapshot out;
  for (int id : ids) {
    TableHeat t;
    if (mtier_table_stats(id, &t.stats) < 0) continue;
    t.extents.resize(columns);
    int n = mtier_table_map(id, t.extents.data(), columns);
    t.extents.resize(n > 0 ? static_cast<size_t>(n) : 0);
    out.push_back(std::move(t));
  }
  return out;
}

std::string draw_heat(const HeatSnapshot& heat, const std::string& label, bool color) {
  double max = 0;
  size_t columns = 0;
  for (auto& t : heat) {
    columns = std::max(columns, t.extents.size());
    for (auto& e : t.extents)
      if (e.bytes) max = std::max(max, e.heat / double(e.bytes));
  }
  std::string out;
  char line[512];
  snprintf(line, sizeof line,
           "\nheat map at the end of training, %s (%zu extents per table, table start on the left):\n",
           label.c_str(), columns);
  out += line;
  for (auto& t : heat) {
    const struct mtier_table_stats& st = t.stats;
    size_t name_len = strnlen(st.name, sizeof st.name);
    out += "  " + std::string(st.name, name_len) + std::string(name_len < 9 ? 9 - name_len : 1, ' ');
    snprintf(line, sizeof line, "%7.1f MiB |", st.bytes / 1048576.0);
    out += line + heat_row(t.extents, max, color);
    snprintf(line, sizeof line, "| %5.1f%% in DRAM, %llu fetches, %llu prefetches\n",
             st.bytes ? 100.0 * st.resident_bytes / st.bytes : 0.0,
             static_cast<unsigned long long>(st.fetches),
             static_cast<unsigned long long>(st.prefetches));
    out += line;
    out += std::string(22, ' ') + "|" + residency_row(t.extents) + "|\n";
  }
  return out + "  " + heat_legend(max, color) + "\n";
}

}  // namespace mtier::tools::demo
