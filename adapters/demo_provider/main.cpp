// demo-provider: a booking or CRM provider stand-in for the gateway's tests.
// main only wires the options, the credential and the server together.
#include "options.hpp"
#include "provider_core.hpp"
#include "server.hpp"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string_view>

int main(int argc, char** argv) {
  using namespace demo_provider;
  const parsed_options parsed = parse_options({argv + 1, static_cast<std::size_t>(argc - 1)});
  if (parsed.help) {
    std::cout << usage();
    return 0;
  }
  if (!parsed.value) {
    std::cerr << "demo-provider: " << parsed.error << '\n' << usage();
    return 2;
  }
  const options& opts = *parsed.value;

  core_config config;
  config.kind = opts.kind;
  config.settle = opts.settle;
  config.webhooks = opts.webhooks;
  // Webhook ids must not repeat across restarts: the receiver drops a repeated id.
  config.webhook_id_prefix = "msg_demo_" + std::to_string(::getpid()) + "_" +
                             std::to_string(std::chrono::system_clock::now().time_since_epoch().count()) + "_";
  // Accounts: DEMO_PROVIDER_CREDENTIAL, and DEMO_PROVIDER_CREDENTIALS as a
  // comma-separated list (one account each). An empty credential would make
  // "Bearer " a valid header; it is skipped.
  if (const char* credential = std::getenv("DEMO_PROVIDER_CREDENTIAL"); credential && *credential)
    config.credentials.emplace_back(credential);
  if (const char* list = std::getenv("DEMO_PROVIDER_CREDENTIALS")) {
    std::string_view rest = list;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      const auto item = rest.substr(0, comma);
      if (!item.empty()) config.credentials.emplace_back(item);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }

  // A peer closing mid-write must be an error code, never a process kill.
  std::signal(SIGPIPE, SIG_IGN);

  try {
    provider_core core(std::move(config));
    return run_server(opts, core);
  } catch (const std::exception& e) {
    std::cerr << "demo-provider: " << e.what() << '\n';
    return 1;
  }
}
