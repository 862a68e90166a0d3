// SPDX-License-Identifier: Apache-2.0
// Tick values and labels for every chart kind (axis.h).
#include "plot/axis.h"

#include <cerrno>
#include <cstdio>

#include "plot/draw.h"

namespace mtier::plot {
namespace {

// printf's exponents made shorter: "2.5e-07" -> "2.5e-7", "1e+300" -> "1e300".
std::string tidy_exponent(std::string s) {
  const size_t e = s.find('e');
  if (e == std::string::npos) return s;
  size_t digits = e + 1;
  if (digits < s.size() && s[digits] == '+') s.erase(digits, 1);
  if (digits < s.size() && s[digits] == '-') ++digits;
  while (digits + 1 < s.size() && s[digits] == '0') s.erase(digits, 1);
  return s;
}

// Labels for evenly spaced linear ticks: one suffix for the whole axis (from
// 10000 up) and as many decimals as the step needs, so they read alike.
// Outside 1e-4..1e15 fixed point gets long, so those axes use %g with the
// significant digits that tell neighbouring ticks apart.
void label_linear(std::vector<Tick>* ticks, double step) {
  double max_abs = 0;
  for (const Tick& t : *ticks) max_abs = std::max(max_abs, std::fabs(t.v));
  const bool exponent = max_abs >= 1e15 || step < 1e-4;
  double div = 1;
  const char* suffix = "";
  if (!exponent) {
    if (max_abs >= 1e12) {
      div = 1e12, suffix = "T";
    } else if (max_abs >= 1e9) {
      div = 1e9, suffix = "G";
    } else if (max_abs >= 1e6) {
      div = 1e6, suffix = "M";
    } else if (max_abs >= 1e4) {
      div = 1e3, suffix = "k";
    }
  }
  const int decimals =
      std::clamp(static_cast<int>(-std::floor(std::log10(step / div) + 1e-9)), 0, 12);
  const int digits =
      std::clamp(static_cast<int>(std::ceil(std::log10(max_abs / step) + 1e-9)) + 1, 1, 15);
  for (Tick& t : *ticks) {
    char buf[64];
    if (t.v == 0)
      std::snprintf(buf, sizeof buf, "0");
    else if (exponent)
      std::snprintf(buf, sizeof buf, "%.*g", digits, t.v);
    else
      std::snprintf(buf, sizeof buf, "%.*f%s", decimals, t.v / div, suffix);
    t.label = tidy_exponent(buf);
  }
}

}  // namespace

int fail(std::string* err, const std::string& why) {
  if (err) *err = why;
  return -EINVAL;
}

std::string format_value(double v) {
  static const struct {
    double div;
    const char* suffix;
  } kSi[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  char buf[48];
  const double a = std::fabs(v);
  if (a >= 1e3 && a < 1e15)
    for (const auto& s : kSi)
      if (a >= s.div) {
        std::snprintf(buf, sizeof buf, "%.4g%s", v / s.div, s.suffix);
        return buf;
      }
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return tidy_exponent(buf);
}

bool linear_ticks(double* lo, double* hi, int target, std::vector<Tick>* ticks) {
  if (*hi <= *lo) {  // one value: open a range around it
    const double s = *lo == 0 ? 1 : std::fabs(*lo) * 0.1;
    *lo -= s;
    *hi += s;
  }
  const double span = *hi - *lo;
  if (!std::isfinite(span) || span <= 0) return false;
  const double raw = span / target, mag = std::pow(10, std::floor(std::log10(raw)));
  const double f = raw / mag;
  const double step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
  const double a = std::floor(*lo / step + 1e-9), b = std::ceil(*hi / step - 1e-9);
  if (!std::isfinite(a * step) || !std::isfinite(b * step)) return false;
  for (double i = a; i <= b + 0.5; ++i) {
    double v = i * step;
    if (std::fabs(v) < step * 1e-9) v = 0;  // no "-0"
    ticks->push_back(Tick{v, "", true});
  }
  *lo = a * step;
  *hi = b * step;
  label_linear(ticks, step);
  return true;
}

void log_ticks(double* lo, double* hi, std::vector<Tick>* ticks) {
  int e0 = static_cast<int>(std::floor(std::log10(*lo) + 1e-12));
  int e1 = static_cast<int>(std::ceil(std::log10(*hi) - 1e-12));
  e0 = std::clamp(e0, -307, 307);
  e1 = std::clamp(e1, -307, 308);
  if (e1 <= e0) e1 = e0 + 1;
  *lo = std::pow(10, e0);
  *hi = std::pow(10, e1);
  const int decades = e1 - e0, every = (decades + 7) / 8;
  for (int e = e0; e <= e1; ++e) {
    const double d = std::pow(10, e);
    if ((e - e0) % every == 0) ticks->push_back(Tick{d, format_value(d), true});
    if (e == e1 || decades > 6) continue;
    for (int m = 2; m <= 9; ++m) {
      const bool label = decades <= 2 && (m == 2 || m == 5);
      ticks->push_back(Tick{m * d, label ? format_value(m * d) : "", false});
    }
  }
}

int max_label_width(const std::vector<Tick>& ticks) {
  int w = 0;
  for (const Tick& t : ticks) w = std::max(w, text_width(t.label));
  return w;
}

}  // namespace mtier::plot
