// The process's resident memory as the kernel counts it, for tests that
// bound what a provider's reply can make the client hold: VmHWM (the peak)
// is reset to the current RSS first, so only what happens after counts.
#pragma once

#include "../support/sanitizers.hpp"

#include <cstddef>
#include <fstream>
#include <string>

namespace gw::upstream::test {

// What AddressSanitizer adds to a peak on its own: clang's runtime gives every thread fake stack
// frames (detect_stack_use_after_return, on by default since LLVM 15), about 33 MiB over the
// randomized misbehaving-provider test's threads (its peak with the option off and on). The
// release tree checks the bounds without it.
#ifdef GW_TEST_ASAN
inline constexpr std::size_t sanitizer_allowance_kib = 40 * 1024;
#else
inline constexpr std::size_t sanitizer_allowance_kib = 0;
#endif

// Linux >= 4.0: "5" resets the peak resident set size of the process.
inline bool reset_peak_rss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

// A "VmRSS" or "VmHWM" line of /proc/self/status, in KiB; 0 if absent.
inline std::size_t status_kib(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(field + ":", 0) == 0) return std::stoul(line.substr(field.size() + 1));
  return 0;
}

}  // namespace gw::upstream::test
