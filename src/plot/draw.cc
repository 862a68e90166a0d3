// SPDX-License-Identifier: Apache-2.0
// Drawing helpers and the one writer for every format (draw.h).
#include "plot/draw.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <stdio.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "plot/axis.h"

namespace mtier::plot {
namespace {

// s with every byte that is not part of a valid UTF-8 sequence (overlong
// forms and surrogates excluded), and every control character, made '?':
// cairo refuses invalid UTF-8, and would stop drawing altogether.
std::string clean_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
      ++i;
      continue;
    }
    // A multi-byte sequence: its length from the lead byte, and the range its
    // second byte may take.
    size_t n = 0;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) {
      n = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 3;
      if (c == 0xe0) lo = 0xa0;
      if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 4;
      if (c == 0xf0) lo = 0x90;
      if (c == 0xf4) hi = 0x8f;
    }
    bool ok = n > 0 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      ok = k == 1 ? (d >= lo && d <= hi) : (d >= 0x80 && d <= 0xbf);
    }
    if (ok) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += '?';
      ++i;
    }
  }
  return out;
}

void set_font(cairo_t* cr, Font f) {
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                         f.bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, f.size);
  cairo_font_options_t* o = cairo_font_options_create();
  cairo_font_options_set_hint_metrics(o, CAIRO_HINT_METRICS_OFF);
  cairo_font_options_set_hint_style(o, CAIRO_HINT_STYLE_NONE);
  cairo_set_font_options(cr, o);
  cairo_font_options_destroy(o);
}

// A context on a 1x1 image, for measuring text outside any drawing.
struct Measure {
  cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
  cairo_t* cr = cairo_create(s);
  explicit Measure(Font f) { set_font(cr, f); }
  ~Measure() {
    cairo_destroy(cr);
    cairo_surface_destroy(s);
  }
  Measure(const Measure&) = delete;
  Measure& operator=(const Measure&) = delete;
};

// The height of the digits and capitals above the baseline.
double cap_height(cairo_t* cr) {
  cairo_text_extents_t e;
  cairo_text_extents(cr, "0", &e);
  return -e.y_bearing;
}

// The file a chart goes to, written through cairo's stream callbacks so that
// a failed write keeps its errno.
struct Sink {
  FILE* f = nullptr;
  int error = 0;
};

cairo_status_t sink_write(void* closure, const unsigned char* data, unsigned int length) {
  Sink* s = static_cast<Sink*>(closure);
  if (fwrite(data, 1, length, s->f) != length) {
    if (!s->error) s->error = errno ? errno : EIO;
    return CAIRO_STATUS_WRITE_ERROR;
  }
  return CAIRO_STATUS_SUCCESS;
}

// The surface for format, or an error status.
cairo_surface_t* create_surface(ChartFormat format, Sink* sink, unsigned w, unsigned h,
                                const std::string& title) {
  cairo_surface_t* s = nullptr;
  switch (format) {
    case ChartFormat::kPng:
      s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, static_cast<int>(w), static_cast<int>(h));
      break;
    case ChartFormat::kSvg:
      s = cairo_svg_surface_create_for_stream(sink_write, sink, w, h);
      cairo_svg_surface_set_document_unit(s, CAIRO_SVG_UNIT_PX);
      break;
    case ChartFormat::kPdf:
      s = cairo_pdf_surface_create_for_stream(sink_write, sink, w, h);
      cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_TITLE, clean_utf8(title).c_str());
      cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATOR, "mtier");
      break;
  }
  return s;
}

}  // namespace

int text_width(std::string_view s, Font f) {
  if (s.empty()) return 0;
  Measure m(f);
  cairo_text_extents_t e;
  cairo_text_extents(m.cr, clean_utf8(s).c_str(), &e);
  return static_cast<int>(std::ceil(e.x_advance));
}

int text_height(Font f) {
  Measure m(f);
  cairo_font_extents_t e;
  cairo_font_extents(m.cr, &e);
  return static_cast<int>(std::ceil(e.ascent + e.descent));
}

void set_colour(cairo_t* cr, Rgb c) {
  cairo_set_source_rgb(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0);
}

void fill_rect(cairo_t* cr, double x, double y, double w, double h, Rgb c) {
  set_colour(cr, c);
  cairo_rectangle(cr, x, y, w, h);
  cairo_fill(cr);
}

void stroke_rect(cairo_t* cr, const Rect& r, Rgb c) {
  set_colour(cr, c);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, r.x + 0.5, r.y + 0.5, r.w - 1, r.h - 1);
  cairo_stroke(cr);
}

void hline(cairo_t* cr, int x0, int x1, int y, Rgb c) { fill_rect(cr, x0, y, x1 - x0 + 1, 1, c); }

void vline(cairo_t* cr, int x, int y0, int y1, Rgb c) { fill_rect(cr, x, y0, 1, y1 - y0 + 1, c); }

void text(cairo_t* cr, double x, double y, std::string_view s, Rgb c, Font f, Align align,
          VAlign valign) {
  if (s.empty()) return;
  const std::string u = clean_utf8(s);
  set_font(cr, f);
  cairo_text_extents_t e;
  cairo_text_extents(cr, u.c_str(), &e);
  if (align == Align::kCentre) x -= e.x_advance / 2;
  if (align == Align::kRight) x -= e.x_advance;
  if (valign == VAlign::kTop) {
    cairo_font_extents_t fe;
    cairo_font_extents(cr, &fe);
    y += fe.ascent;
  } else {
    y += cap_height(cr) / 2;
  }
  set_colour(cr, c);
  cairo_move_to(cr, x, y);
  cairo_show_text(cr, u.c_str());
  cairo_new_path(cr);
}

void text_vertical(cairo_t* cr, double x, double y, std::string_view s, Rgb c, Font f) {
  if (s.empty()) return;
  const std::string u = clean_utf8(s);
  set_font(cr, f);
  cairo_text_extents_t e;
  cairo_text_extents(cr, u.c_str(), &e);
  cairo_font_extents_t fe;
  cairo_font_extents(cr, &fe);
  cairo_save(cr);
  cairo_translate(cr, x + fe.ascent, y + e.x_advance / 2);
  cairo_rotate(cr, -M_PI / 2);
  set_colour(cr, c);
  cairo_move_to(cr, 0, 0);
  cairo_show_text(cr, u.c_str());
  cairo_new_path(cr);
  cairo_restore(cr);
}

int write_chart(const std::string& path, unsigned width, unsigned height, const std::string& title,
                const std::function<void(cairo_t*)>& draw, std::string* err) {
  ChartFormat format;
  if (int rc = chart_format(path, &format, err); rc < 0) return rc;
  const std::string tmp = path + ".tmp";
  Sink sink;
  sink.f = fopen(tmp.c_str(), "wbe");
  if (!sink.f) {
    const int e = errno;
    fail(err, "cannot create " + tmp + ": " + strerror(e));
    return -e;
  }
  cairo_surface_t* surface = create_surface(format, &sink, width, height, title);
  cairo_t* cr = cairo_create(surface);
  fill_rect(cr, 0, 0, width, height, kWhite);
  draw(cr);
  cairo_status_t status = cairo_status(cr);
  cairo_destroy(cr);
  if (status == CAIRO_STATUS_SUCCESS) {
    if (format == ChartFormat::kPng)
      status = cairo_surface_write_to_png_stream(surface, sink_write, &sink);
    cairo_surface_finish(surface);
    if (status == CAIRO_STATUS_SUCCESS) status = cairo_surface_status(surface);
  }
  cairo_surface_destroy(surface);

  int rc = 0;
  std::string why;
  if (sink.error) {
    rc = -sink.error, why = "cannot write " + tmp + ": " + strerror(sink.error);
  } else if (status != CAIRO_STATUS_SUCCESS) {
    rc = -EINVAL, why = std::string("cairo could not draw the chart: ") +
                        cairo_status_to_string(status);
  }
  if (fclose(sink.f) != 0 && rc == 0) {
    const int e = errno;
    rc = -e, why = "cannot write " + tmp + ": " + strerror(e);
  }
  if (rc == 0 && rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    rc = -e, why = "cannot rename " + tmp + " to " + path + ": " + strerror(e);
  }
  if (rc < 0) {
    unlink(tmp.c_str());
    if (err) *err = why;
  }
  return rc;
}

}  // namespace mtier::plot
