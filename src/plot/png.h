// PNG files for Images: written as 8-bit RGB, non-interlaced, filter 0 (None)
// on every row, one zlib stream in one IDAT; read back from the same kind of
// file (8-bit RGB, non-interlaced, any of the five row filters), which is
// what the tests need to check pixels. No libpng: zlib does deflate and CRCs.
#pragma once
#include <string>
#include <string_view>

#include "plot/canvas.h"

namespace mtier::plot {

// Writes img to path via path + ".tmp" renamed into place, so a failed write
// leaves neither a partial file at path nor the temporary. Returns 0, -EINVAL
// (an empty image, or rgb not width * height * 3 bytes), or the -errno of the
// failing call; *err (when not null) says what failed.
int write_png(const std::string& path, const Image& img, std::string* err);

// The same replace-by-rename write for any bytes (write_png and the SVG
// writers use it): 0, or the -errno of the failing call with *err saying which.
int write_file_replacing(const std::string& path, std::string_view bytes, std::string* err);

// Reads a PNG written by write_png (or any 8-bit RGB, non-interlaced PNG).
// Every chunk's CRC is checked. Returns 0, -errno when the file cannot be
// read, -EINVAL when it is not a PNG, is truncated or corrupt, or uses a
// format this reader does not handle (*err says which). *img is left as it
// was on error.
int read_png(const std::string& path, Image* img, std::string* err);

}  // namespace mtier::plot
