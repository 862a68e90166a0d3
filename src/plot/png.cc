// The PNG container: signature, then chunks of (length, type, data, CRC-32 of
// type + data), big-endian. We write IHDR, IDAT, IEND; on reading, ancillary
// chunks (lower-case first letter) are skipped and unknown critical ones are
// refused, as the specification requires.
#include "plot/png.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace mtier::plot {
namespace {

constexpr uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
// Readers refuse images above this many pixels rather than allocate for a
// corrupt header's idea of a size; far beyond any chart.
constexpr uint64_t kMaxPixels = 1ull << 28;

int fail(std::string* err, int rc, const std::string& why) {
  if (err) *err = why;
  return rc;
}

std::string errno_text(const std::string& what, const std::string& path, int e) {
  return what + " " + path + ": " + std::strerror(e);
}

void put32(std::vector<uint8_t>* out, uint32_t v) {
  out->push_back(static_cast<uint8_t>(v >> 24));
  out->push_back(static_cast<uint8_t>(v >> 16));
  out->push_back(static_cast<uint8_t>(v >> 8));
  out->push_back(static_cast<uint8_t>(v));
}

uint32_t get32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

void put_chunk(std::vector<uint8_t>* out, const char type[4], const uint8_t* data, size_t n) {
  put32(out, static_cast<uint32_t>(n));
  const size_t start = out->size();
  out->insert(out->end(), type, type + 4);
  if (n) out->insert(out->end(), data, data + n);
  uLong crc = crc32(0L, Z_NULL, 0);
  // crc32 takes uInt lengths; chunks here are far below 4 GiB, but feed it in
  // pieces anyway so the contract holds for any size.
  for (size_t off = start; off < out->size();) {
    uInt piece = static_cast<uInt>(std::min<size_t>(out->size() - off, 1u << 30));
    crc = crc32(crc, out->data() + off, piece);
    off += piece;
  }
  put32(out, static_cast<uint32_t>(crc));
}

int write_all(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return 0;
}

int read_file(const std::string& path, std::vector<uint8_t>* out, std::string* err) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return fail(err, -e, errno_text("cannot open", path, e));
  }
  uint8_t buf[65536];
  for (;;) {
    ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      return fail(err, -e, errno_text("cannot read", path, e));
    }
    if (r == 0) break;
    out->insert(out->end(), buf, buf + r);
  }
  ::close(fd);
  return 0;
}

int paeth(int a, int b, int c) {
  int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

// Undoes the row filters in place: `raw` holds height rows of (filter byte,
// stride bytes); the result goes to `out` without the filter bytes.
bool unfilter(const std::vector<uint8_t>& raw, unsigned height, size_t stride,
              std::vector<uint8_t>* out, std::string* why) {
  constexpr size_t bpp = 3;
  out->assign(stride * height, 0);
  for (unsigned y = 0; y < height; ++y) {
    const uint8_t type = raw[y * (stride + 1)];
    const uint8_t* in = &raw[y * (stride + 1) + 1];
    uint8_t* row = &(*out)[y * stride];
    const uint8_t* up = y ? row - stride : nullptr;
    for (size_t i = 0; i < stride; ++i) {
      const int a = i >= bpp ? row[i - bpp] : 0;
      const int b = up ? up[i] : 0;
      const int c = (up && i >= bpp) ? up[i - bpp] : 0;
      int pred;
      switch (type) {
        case 0:
          pred = 0;
          break;
        case 1:
          pred = a;
          break;
        case 2:
          pred = b;
          break;
        case 3:
          pred = (a + b) / 2;
          break;
        case 4:
          pred = paeth(a, b, c);
          break;
        default:
          *why = "unknown filter type " + std::to_string(type) + " on row " + std::to_string(y);
          return false;
      }
      row[i] = static_cast<uint8_t>(in[i] + pred);
    }
  }
  return true;
}

// Inflates `z` into exactly `expect` bytes; false (with *why) when the stream
// is corrupt, ends early or holds more.
bool inflate_exact(const std::vector<uint8_t>& z, size_t expect, std::vector<uint8_t>* out,
                   std::string* why) {
  out->assign(expect, 0);
  z_stream s{};
  if (inflateInit(&s) != Z_OK) {
    *why = "inflateInit failed";
    return false;
  }
  s.next_in = const_cast<Bytef*>(z.data());
  s.avail_in = static_cast<uInt>(z.size());
  s.next_out = out->data();
  s.avail_out = static_cast<uInt>(expect);
  // One spare byte of room tells "exactly the expected size" from "more".
  uint8_t spare;
  int rc = inflate(&s, Z_FINISH);
  if (rc == Z_BUF_ERROR && s.avail_out == 0) {
    s.next_out = &spare;
    s.avail_out = 1;
    rc = inflate(&s, Z_FINISH);
    if (s.avail_out == 0) rc = Z_DATA_ERROR;  // it produced more than expected
  }
  const size_t got = expect - (s.next_out == &spare ? 0 : s.avail_out);
  inflateEnd(&s);
  if (rc != Z_STREAM_END || got != expect) {
    *why = rc == Z_STREAM_END
               ? "image data has the wrong size"
               : "image data is truncated or corrupt (zlib " + std::to_string(rc) + ")";
    return false;
  }
  return true;
}

}  // namespace

int write_png(const std::string& path, const Image& img, std::string* err) {
  if (img.width == 0 || img.height == 0 || img.width > 0x7fffffffu || img.height > 0x7fffffffu)
    return fail(err, -EINVAL,
                "image size " + std::to_string(img.width) + "x" + std::to_string(img.height) +
                    " cannot be written");
  const size_t stride = static_cast<size_t>(img.width) * 3;
  if (img.rgb.size() != stride * img.height)
    return fail(err, -EINVAL,
                "image holds " + std::to_string(img.rgb.size()) + " bytes, not width * height * 3");

  std::vector<uint8_t> raw;
  raw.reserve((stride + 1) * img.height);
  for (unsigned y = 0; y < img.height; ++y) {
    raw.push_back(0);  // filter None
    raw.insert(raw.end(), img.rgb.begin() + y * stride, img.rgb.begin() + (y + 1) * stride);
  }
  uLongf zlen = compressBound(raw.size());
  std::vector<uint8_t> z(zlen);
  int zrc = compress2(z.data(), &zlen, raw.data(), raw.size(), Z_BEST_COMPRESSION);
  if (zrc != Z_OK)
    return fail(err, zrc == Z_MEM_ERROR ? -ENOMEM : -EINVAL,
                "deflate failed (zlib " + std::to_string(zrc) + ")");
  z.resize(zlen);

  std::vector<uint8_t> file(kSignature, kSignature + sizeof kSignature);
  std::vector<uint8_t> ihdr;
  put32(&ihdr, img.width);
  put32(&ihdr, img.height);
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});  // depth 8, RGB, deflate, filter set 0, no interlace
  put_chunk(&file, "IHDR", ihdr.data(), ihdr.size());
  put_chunk(&file, "IDAT", z.data(), z.size());
  put_chunk(&file, "IEND", nullptr, 0);

  return write_file_replacing(
      path, std::string_view(reinterpret_cast<const char*>(file.data()), file.size()), err);
}

int write_file_replacing(const std::string& path, std::string_view bytes, std::string* err) {
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    int e = errno;
    return fail(err, -e, errno_text("cannot create", tmp, e));
  }
  int rc = write_all(fd, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (rc < 0) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return fail(err, rc, errno_text("cannot write", tmp, -rc));
  }
  if (::close(fd) < 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return fail(err, -e, errno_text("cannot close", tmp, e));
  }
  if (::rename(tmp.c_str(), path.c_str()) < 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return fail(err, -e, errno_text("cannot rename " + tmp + " to", path, e));
  }
  return 0;
}

int read_png(const std::string& path, Image* img, std::string* err) {
  std::vector<uint8_t> f;
  if (int rc = read_file(path, &f, err); rc < 0) return rc;
  const std::string where = path + ": ";
  if (f.size() < sizeof kSignature || std::memcmp(f.data(), kSignature, sizeof kSignature) != 0)
    return fail(err, -EINVAL, where + "not a PNG file (bad signature)");

  unsigned width = 0, height = 0;
  bool have_ihdr = false, have_iend = false;
  std::vector<uint8_t> z;
  size_t pos = sizeof kSignature;
  while (!have_iend) {
    if (f.size() - pos < 12) return fail(err, -EINVAL, where + "truncated (chunk header)");
    const uint32_t len = get32(&f[pos]);
    const uint8_t* type = &f[pos + 4];
    const std::string name(reinterpret_cast<const char*>(type), 4);
    if (len > 0x7fffffffu || f.size() - pos - 12 < len)
      return fail(err, -EINVAL, where + "truncated (" + name + " chunk)");
    const uint8_t* data = type + 4;
    const uLong crc = crc32(crc32(0L, Z_NULL, 0), type, 4 + len);
    if (crc != get32(data + len))
      return fail(err, -EINVAL, where + "bad CRC in " + name + " chunk");
    pos += 12 + len;

    if (!have_ihdr && name != "IHDR")
      return fail(err, -EINVAL, where + "first chunk is " + name + ", not IHDR");
    if (name == "IHDR") {
      if (have_ihdr || len != 13) return fail(err, -EINVAL, where + "bad IHDR chunk");
      width = get32(data);
      height = get32(data + 4);
      if (width == 0 || height == 0 || width > 0x7fffffffu || height > 0x7fffffffu ||
          uint64_t{width} * height > kMaxPixels)
        return fail(err, -EINVAL,
                    where + "unsupported image size " + std::to_string(width) + "x" +
                        std::to_string(height));
      if (data[8] != 8 || data[9] != 2 || data[10] != 0 || data[11] != 0 || data[12] != 0)
        return fail(err, -EINVAL,
                    where + "not 8-bit RGB, non-interlaced (depth " + std::to_string(data[8]) +
                        ", colour type " + std::to_string(data[9]) + ", interlace " +
                        std::to_string(data[12]) + ")");
      have_ihdr = true;
    } else if (name == "IDAT") {
      z.insert(z.end(), data, data + len);
    } else if (name == "IEND") {
      have_iend = true;
    } else if (!(type[0] & 0x20)) {
      return fail(err, -EINVAL, where + "unknown critical chunk " + name);
    }  // else: ancillary, skipped
  }
  if (z.empty()) return fail(err, -EINVAL, where + "no IDAT chunk");
  if (z.size() > UINT_MAX) return fail(err, -EINVAL, where + "image data too large");

  const size_t stride = size_t{width} * 3;
  std::vector<uint8_t> raw, pixels;
  std::string why;
  if (!inflate_exact(z, (stride + 1) * height, &raw, &why) ||
      !unfilter(raw, height, stride, &pixels, &why))
    return fail(err, -EINVAL, where + why);
  img->width = width;
  img->height = height;
  img->rgb = std::move(pixels);
  return 0;
}

}  // namespace mtier::plot
