// A parsed command line made directly, for the tests that start past the
// parser (tools/gatewayctl/cli.hpp).
#pragma once

#include "gatewayctl/cli.hpp"

#include <string>
#include <utility>
#include <vector>

namespace gwctl::test {

inline Invocation invocation(Command c, std::vector<std::string> operands = {}) {
  Invocation inv;
  inv.command = c;
  inv.operands = std::move(operands);
  return inv;
}

}  // namespace gwctl::test
