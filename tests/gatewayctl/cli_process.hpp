// The real gatewayctl binary as a child process for end-to-end tests: its
// exit code, stdout and stderr, each read to the end. The environment is
// the test's own without GATEWAY_URL and GATEWAY_TOKEN (an operator's shell
// must not leak into a test), plus what the test sets.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gw::test {

struct CliRun {
  int exit_code = -1;  // -1 when the process did not exit normally
  std::string out;
  std::string err;
};

// The gateway's manual clock in the end-to-end tests: 2025-12-01T00:00:00Z.
inline constexpr std::int64_t t0 = 1764547200000;

using EnvVars = std::vector<std::pair<std::string, std::string>>;

// GATEWAY_TEST_BIN_DIR/gatewayctl ARGS. The limit only bounds a hang (the
// child is killed and the test fails); no test waits for it.
CliRun run_gatewayctl(const std::vector<std::string>& args, const EnvVars& env = {},
                      std::chrono::milliseconds limit = std::chrono::seconds(60));

}  // namespace gw::test
