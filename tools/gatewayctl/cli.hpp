// The command line: which subcommand, its operands and flags, the gateway's
// URL and where the operator token comes from (flags win over GATEWAY_URL
// and GATEWAY_TOKEN). Everything is checked here, before anything is sent;
// a problem is a UsageError (exit 2). The environment is passed in, so this
// is pure; reading a --token-file is left to main.
#pragma once

#include "gatewayctl/exit_codes.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace gwctl {

enum class Command { held, show, reconcile, resolve, rejections, revoke, rotate_realm };

std::string_view command_name(Command c);

// An http:// URL: host, port and an optional path prefix in front of /v1.
struct Endpoint {
  std::string host;         // a name or address; IPv6 without its brackets
  std::string port;         // "80" when the URL names none
  std::string host_header;  // as written in the URL: "host[:port]"
  std::string base_path;    // "" or "/prefix" (no trailing '/')
};

// The endpoint, or why the URL is refused.
std::variant<Endpoint, std::string> parse_url(std::string_view url);

struct TokenFile {
  std::string path;
};
using TokenSource = std::variant<std::string, TokenFile>;

struct Invocation {
  Command command = Command::held;
  std::vector<std::string> operands;  // TENANT TASK [OPERATION]
  Endpoint endpoint;
  TokenSource token;
  std::chrono::milliseconds timeout{30'000};
  bool json = false;
  bool all = false;  // held, rejections: follow next_cursor to the last page
  bool since_ms_flag = false;  // rejections: the deprecated --since-ms was used (run() says so)
  // held, rejections: query parameters (raw values), in a fixed order.
  std::vector<std::pair<std::string, std::string>> query;
  std::optional<std::string> cursor;
  // resolve
  std::string outcome;
  std::string evidence;
  std::optional<std::string> note;
};

struct HelpRequest {};

struct UsageError {
  std::string message;
  std::optional<Command> command;  // known when the command word was
};

using Parsed = std::variant<Invocation, HelpRequest, UsageError>;
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// `args` without argv[0]. -h or --help anywhere before "--" asks for help.
Parsed parse_command_line(const std::vector<std::string>& args, const EnvLookup& env);

// What a bearer token may be here: visible ASCII, no spaces, not empty.
bool is_token(std::string_view text);

// A token file's text with surrounding whitespace (a trailing newline)
// removed; nullopt when what is left is not a token.
std::optional<std::string> token_from_file_text(std::string_view text);

// The gateway's label rule (docs/api.md): 1 to 80 printable ASCII characters.
bool is_label(std::string_view text);

std::string help_text();
// stderr for a usage error: the error line, the command's synopsis, a pointer to --help.
std::string usage_error_text(const UsageError& error);

// Whether --json is among `args` (before "--"), whatever else is wrong with them.
bool wants_json(const std::vector<std::string>& args);
// A usage error as --json prints it: code "usage", the synopsis in the hint.
ErrorReport usage_report(const UsageError& error);

}  // namespace gwctl
