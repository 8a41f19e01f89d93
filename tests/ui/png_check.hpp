// Reads a screenshot back to check it by test: a PNG of the expected size
// that shows something (many colours), not an empty or single-colour page.
// Decodes what Chromium writes (8-bit RGB or RGBA, not interlaced) with zlib.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gw::test {

struct PngSummary {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::size_t distinct_colors = 0;  // distinct RGB(A) pixel values
};

// Throws std::runtime_error naming what is wrong if `bytes` is not such a PNG.
PngSummary summarize_png(const std::string& bytes);

}  // namespace gw::test
