// One invocation from request to exit code: send, follow pages (--all),
// print the table or the JSON on `out` and errors on `err`. It sees the
// gateway only through Transport, so tests run it against a fake.
#pragma once

#include "gatewayctl/cli.hpp"
#include "gatewayctl/transport.hpp"

#include <iosfwd>

namespace gwctl {

int run(const Invocation& inv, Transport& transport, std::ostream& out, std::ostream& err);

}  // namespace gwctl
