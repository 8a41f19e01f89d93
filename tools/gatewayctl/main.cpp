// gatewayctl: wiring only. The command line and environment in, the token
// file read, the real transport built; everything else is in run.cpp.
#include "gatewayctl/cli.hpp"
#include "gatewayctl/exit_codes.hpp"
#include "gatewayctl/http_transport.hpp"
#include "gatewayctl/run.hpp"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

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
  if (auto* usage = std::get_if<UsageError>(&parsed)) {
    std::cerr << usage_error_text(*usage);
    return code_of(Exit::usage);
  }
  auto& inv = std::get<Invocation>(parsed);

  std::string token;
  if (auto* file = std::get_if<TokenFile>(&inv.token)) {
    std::ifstream in(file->path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    auto read = token_from_file_text(text.str());
    if (!in || !read) {
      std::cerr << usage_error_text(UsageError{
          in ? "--token-file: the file does not hold one token (visible ASCII, no spaces)"
             : "--token-file: cannot read the file",
          inv.command});
      return code_of(Exit::usage);
    }
    token = *read;
  } else {
    token = std::get<std::string>(inv.token);
  }

  try {
    HttpTransport transport(inv.endpoint, token, inv.timeout);
    return run(inv, transport, std::cout, std::cerr);
  } catch (const std::exception& e) {
    // Not a reply we could read; never a secret (the token is in no message).
    std::cerr << "error: internal: " << e.what() << "\n";
    return code_of(Exit::no_reply);
  }
}
