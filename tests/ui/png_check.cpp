#include "ui/png_check.hpp"

#include <zlib.h>

#include <cstdlib>
#include <stdexcept>
#include <unordered_set>
#include <vector>

namespace gw::test {
namespace {

std::uint32_t big_endian(const std::string& bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  return v;
}

int paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

}  // namespace

PngSummary summarize_png(const std::string& bytes) {
  static const std::string signature("\x89PNG\r\n\x1a\n", 8);
  if (bytes.compare(0, 8, signature) != 0) throw std::runtime_error("not a PNG: no signature");
  PngSummary out;
  std::size_t channels = 0;
  std::string compressed;
  for (std::size_t at = 8; at + 12 <= bytes.size();) {
    const auto length = big_endian(bytes, at);
    const auto type = bytes.substr(at + 4, 4);
    if (at + 12 + length > bytes.size()) throw std::runtime_error("PNG chunk " + type + " runs past the end");
    const auto data = bytes.substr(at + 8, length);
    if (type == "IHDR") {
      out.width = big_endian(data, 0);
      out.height = big_endian(data, 4);
      const int depth = static_cast<unsigned char>(data[8]), color = static_cast<unsigned char>(data[9]);
      const int interlace = static_cast<unsigned char>(data[12]);
      if (depth != 8 || (color != 2 && color != 6) || interlace != 0)
        throw std::runtime_error("PNG is not 8-bit RGB/RGBA without interlace");
      channels = color == 6 ? 4 : 3;
    } else if (type == "IDAT") {
      compressed += data;
    } else if (type == "IEND") {
      break;
    }
    at += 12 + length;
  }
  if (!channels || !out.width || !out.height) throw std::runtime_error("PNG has no usable IHDR");
  const std::size_t stride = out.width * channels;
  std::vector<unsigned char> raw(out.height * (stride + 1));
  uLongf raw_size = raw.size();
  if (::uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(compressed.data()), compressed.size()) != Z_OK ||
      raw_size != raw.size())
    throw std::runtime_error("PNG pixel data does not inflate to width x height");

  // Undo each row's filter (PNG spec section 9), counting colours as rows come out.
  std::vector<unsigned char> previous(stride, 0), row(stride);
  std::unordered_set<std::uint32_t> colors;
  for (std::uint32_t y = 0; y < out.height; ++y) {
    const unsigned char* line = raw.data() + y * (stride + 1);
    const int filter = line[0];
    for (std::size_t x = 0; x < stride; ++x) {
      const int a = x >= channels ? row[x - channels] : 0, b = previous[x], c = x >= channels ? previous[x - channels] : 0;
      int predictor = 0;
      switch (filter) {
        case 0: predictor = 0; break;
        case 1: predictor = a; break;
        case 2: predictor = b; break;
        case 3: predictor = (a + b) / 2; break;
        case 4: predictor = paeth(a, b, c); break;
        default: throw std::runtime_error("PNG row has an unknown filter");
      }
      row[x] = static_cast<unsigned char>(line[1 + x] + predictor);
    }
    for (std::size_t x = 0; x < stride; x += channels) {
      std::uint32_t v = 0;
      for (std::size_t k = 0; k < channels; ++k) v = (v << 8) | row[x + k];
      colors.insert(v);
    }
    previous.swap(row);
  }
  out.distinct_colors = colors.size();
  return out;
}

}  // namespace gw::test
