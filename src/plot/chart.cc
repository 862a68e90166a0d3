// SPDX-License-Identifier: Apache-2.0
// What every build has of src/plot, with cairo or without: the output
// formats and whether charts can be drawn at all (chart.h).
#include "plot/chart.h"

#include <cctype>
#include <cerrno>

#include "build_config.h"

namespace mtier::plot {

int chart_format(const std::string& path, ChartFormat* format, std::string* err) {
  const size_t dot = path.rfind('.');
  std::string ext = dot == std::string::npos ? "" : path.substr(dot + 1);
  for (char& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (ext == "png") {
    *format = ChartFormat::kPng;
  } else if (ext == "svg") {
    *format = ChartFormat::kSvg;
  } else if (ext == "pdf") {
    *format = ChartFormat::kPdf;
  } else {
    if (err) *err = "'" + path + "': a chart is written as .png, .svg or .pdf";
    return -EINVAL;
  }
  return 0;
}

int charts_available(std::string* err) {
  if (build::kHaveCairo) return 0;
  if (err)
    *err = "charts are drawn with cairo, and this mtier was built without it "
           "(install libcairo2-dev, then configure and build again)";
  return -ENOTSUP;
}

}  // namespace mtier::plot
