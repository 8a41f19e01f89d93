// gatewayctl: wiring only. The command line and environment in, the token
// file read, the real transport built; everything else is in run.cpp.
#include "gatewayctl/cli.hpp"
#include "gatewayctl/exit_codes.hpp"
#include "gatewayctl/http_transport.hpp"
#include "gatewayctl/run.hpp"
#include "gatewayctl/token_file.hpp"

#include <cstdlib>
#include <iostream>

using namespace gwctl;

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = parse_command_line(args, [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    return value ? std::optional<std::string>(value) : std::nullopt;
  });
  if (std::holds_alternative<HelpRequest>(parsed)) {
    std::cout << help_text();
    return code_of(Exit::ok);
  }
  // --json makes every error JSON, usage errors included (the flag may sit beside a bad one).
  const bool json = wants_json(args);
  auto usage = [&](const UsageError& error) {
    std::cerr << (json ? format_error(usage_report(error), true) : usage_error_text(error));
    return code_of(Exit::usage);
  };
  if (auto* error = std::get_if<UsageError>(&parsed)) return usage(*error);
  auto& inv = std::get<Invocation>(parsed);

  std::string token;
  if (auto* file = std::get_if<TokenFile>(&inv.token)) {
    auto read = read_token_file(file->path);
    if (auto* error = std::get_if<TokenFileError>(&read))
      return usage(UsageError{"--token-file " + file->path + ": " + error->why, inv.command});
    token = std::get<std::string>(std::move(read));
  } else {
    token = std::get<std::string>(inv.token);
  }

  try {
    HttpTransport transport(inv.endpoint, token, inv.timeout);
    return run(inv, transport, std::cout, std::cerr);
  } catch (const std::exception& e) {
    // Not a reply we could read; never a secret (the token is in no message).
    ErrorReport report;
    report.exit = Exit::no_reply;
    report.code = "internal";
    report.detail = e.what();
    std::cerr << format_error(report, inv.json);
    return code_of(Exit::no_reply);
  }
}
