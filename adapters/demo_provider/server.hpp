// Runs demo-provider's business and control listeners until SIGINT or SIGTERM.
#pragma once

#include "options.hpp"
#include "provider_core.hpp"

namespace demo_provider {

// Prints the start line once both ports are bound. Throws on a bind or TLS
// setup failure; returns the exit status after a clean stop.
int run_server(const options& opts, provider_core& core);

}  // namespace demo_provider
