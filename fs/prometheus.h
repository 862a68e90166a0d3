// SPDX-License-Identifier: Apache-2.0
// mtierd's status document as Prometheus text exposition (format 0.0.4):
// what mtierd serves for scraping (daemon/metrics_http.h; mtierd is built
// with this file and fs_tree.cc) and mtierfs' `stats` file holds. One
// "# HELP" and one "# TYPE" line before each metric family's samples, metric names prefixed mtier_, label values
// escaped. Counters (names ending in _total) are the daemon's counters,
// gauges everything else. Pure: the unit test parses what it writes.
#pragma once
#include <string>
#include <string_view>

#include "util/json.h"

namespace mtier::fs {

// The exposition of `status`; with no status (the daemon did not answer)
// only mtier_daemon_up 0, so that a scraper sees the daemon down rather
// than an error.
std::string prometheus_text(const json::Json* status);

// A label value as the format writes it between its double quotes:
// backslash, double quote and line feed escaped as \\, \" and \n.
std::string escape_label_value(std::string_view v);
// A HELP text: backslash and line feed escaped.
std::string escape_help(std::string_view v);
// A sample value: the number, "NaN", "+Inf" or "-Inf".
std::string sample_value(double v);

}  // namespace mtier::fs
