// SPDX-License-Identifier: Apache-2.0
// Internal to src/plot (not part of its API): what every chart kind shares
// so that they look alike and label numbers alike: the text and axis
// colours, margins and tick sizes, "nice" tick values with their labels, and
// the -EINVAL error return.
#pragma once
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "plot/chart.h"

namespace mtier::plot {

constexpr Rgb kText{34, 34, 34};
constexpr Rgb kAxis{68, 68, 68};
constexpr Rgb kGrid{224, 224, 224};
constexpr Rgb kGridMinor{241, 241, 241};
constexpr Rgb kLegendBorder{170, 170, 170};

constexpr int kPad = 12;          // image edge to anything drawn
constexpr int kTickLen = 5;       // major tick mark length, outside the frame
constexpr int kMinorTickLen = 3;  // log axis 2..9 marks
constexpr int kTickGap = 4;       // tick mark end to its label
constexpr unsigned kMinSide = 120, kMaxSide = 16384;

struct Tick {
  double v;
  std::string label;  // empty: a mark without a label
  bool major;
};

// Sets *err (when not null) to why and returns -EINVAL.
int fail(std::string* err, const std::string& why);

// A label for a value on its own (log axes, given ticks, a colour scale's
// decades): %g, with k/M/G/T from 1000 up so decades read 1, 10, 100, 1k, 10k.
std::string format_value(double v);

// Nice linear ticks: a 1, 2 or 5 x 10^k step giving about `target` intervals,
// the range widened to whole steps, labelled alike (one k/M/G/T suffix for the
// whole axis, as many decimals as the step needs). An empty range is opened
// around its one value. False when the range is not finite.
bool linear_ticks(double* lo, double* hi, int target, std::vector<Tick>* ticks);

// Log ticks: the range (lo > 0) widened to whole decades; a labelled major
// tick on each decade (every n-th when there are many), minor 2..9 marks when
// there are few, labelled at 2 and 5 when there are at most two decades.
void log_ticks(double* lo, double* hi, std::vector<Tick>* ticks);

// The widest tick label in pixels (draw.h's label font).
int max_label_width(const std::vector<Tick>& ticks);

// Labels under a horizontal axis go under every n-th tick when neighbours
// would collide; this is n (>= 1). px maps a tick value to its image column.
template <typename Px>
size_t label_every(const std::vector<Tick>& ticks, Px px) {
  double min_gap = INFINITY;
  for (size_t i = 1; i < ticks.size(); ++i)
    min_gap = std::min(min_gap, std::fabs(px(ticks[i].v) - px(ticks[i - 1].v)));
  const int need = max_label_width(ticks) + 8;
  return min_gap >= need ? 1 : static_cast<size_t>(std::ceil(need / std::max(min_gap, 1.0)));
}

}  // namespace mtier::plot
