#include "gatewayctl/cli.hpp"

#include "gatewayctl/format.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>

namespace gwctl {
namespace {

struct CommandSpec {
  Command command;
  std::string_view name;
  std::size_t operands;                     // exactly this many
  std::vector<std::string_view> flags;      // besides the global ones
  std::string_view synopsis;                // after "gatewayctl "; '\n' where a line continues
  std::string_view summary;
};

const std::vector<CommandSpec>& commands() {
  static const std::vector<CommandSpec> specs{
      {Command::held, "held", 0,
       {"--tenant", "--task", "--provider", "--state", "--reason", "--older-than", "--limit", "--cursor", "--all"},
       "held [--tenant T] [--task K] [--provider P] [--state in_flight|unknown] [--reason R]\n"
       "[--older-than DURATION] [--limit N] [--cursor C] [--all]",
       "operations that hold their task (in flight or unknown), oldest first"},
      {Command::show, "show", 3, {}, "show TENANT TASK OPERATION",
       "one operation: its state, every attempt with the grant that admitted it, the evidence"},
      {Command::reconcile, "reconcile", 3, {}, "reconcile TENANT TASK OPERATION",
       "look the operation up at its provider now, by its upstream key; settles it if the answer does"},
      {Command::resolve, "resolve", 3, {"--outcome", "--evidence", "--note"},
       "resolve TENANT TASK OPERATION --outcome succeeded|rejected|not_executed --evidence REF [--note TEXT]",
       "settle a held operation on the operator's evidence (recorded beside, never replacing, the attempts)"},
      {Command::rejections, "rejections", 0,
       {"--tenant", "--task", "--code", "--since", "--since-ms", "--limit", "--cursor", "--all"},
       "rejections [--tenant T] [--task K] [--code C] [--since DURATION|TIME] [--limit N]\n"
       "[--cursor C] [--all]",
       "refused protected attempts, newest first, with the grant each presented; --since 10m: the\n"
       "last ten minutes (authority time), --since 2025-12-01T09:00Z: from then on"},
      {Command::revoke, "revoke", 2, {}, "revoke TENANT TASK", "end the task's current lease now"},
      {Command::rotate_realm, "rotate-realm", 0, {"--yes"}, "rotate-realm --yes",
       "start a new authority realm: every outstanding grant is refused from then on"},
  };
  return specs;
}

// Every flag gatewayctl knows, and whether it takes a value.
const std::map<std::string_view, bool>& known_flags() {
  static const std::map<std::string_view, bool> flags{
      {"--url", true},      {"--token", true},     {"--token-file", true}, {"--timeout", true},
      {"--json", false},    {"--tenant", true},    {"--task", true},       {"--provider", true},
      {"--state", true},    {"--reason", true},    {"--older-than", true}, {"--limit", true},
      {"--cursor", true},   {"--all", false},      {"--code", true},       {"--since-ms", true},
      {"--since", true},
      {"--outcome", true},  {"--evidence", true},  {"--note", true},       {"--yes", false},
  };
  return flags;
}

constexpr std::array<std::string_view, 5> global_flags{"--url", "--token", "--token-file", "--timeout", "--json"};

const CommandSpec* find_command(std::string_view name) {
  for (const auto& spec : commands())
    if (spec.name == name) return &spec;
  return nullptr;
}

const CommandSpec& spec_of(Command c) {
  for (const auto& spec : commands())
    if (spec.command == c) return spec;
  throw std::logic_error("command without a spec");
}

// Decimal digits only, up to 2^63-1.
std::optional<std::int64_t> decimal(std::string_view text) {
  if (text.empty() || text.size() > 19) return std::nullopt;
  std::int64_t v = 0;
  for (char ch : text) {
    if (ch < '0' || ch > '9') return std::nullopt;
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, ch - '0', &v)) return std::nullopt;
  }
  return v;
}

// The synopsis with each continuation line indented to start under the
// first flag, when the first line starts `column` characters in.
std::string synopsis_at(const CommandSpec& spec, std::size_t column) {
  std::string out;
  for (char ch : spec.synopsis) {
    out += ch;
    if (ch == '\n') out.append(column + spec.name.size() + 1, ' ');
  }
  return out;
}

}  // namespace

std::string_view command_name(Command c) { return spec_of(c).name; }

bool is_label(std::string_view text) {
  return !text.empty() && text.size() <= 80 &&
         std::all_of(text.begin(), text.end(), [](char ch) { return ch >= 33 && ch <= 126; });
}

bool is_token(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char ch) { return ch >= 33 && ch <= 126; });
}

std::optional<std::string> token_from_file_text(std::string_view text) {
  auto space = [](char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  if (!is_token(text)) return std::nullopt;
  return std::string(text);
}

std::variant<Endpoint, std::string> parse_url(std::string_view url) {
  constexpr std::string_view scheme = "http://";
  auto lower = [](std::string_view s) {
    std::string out(s);
    for (auto& ch : out) ch = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
    return out;
  };
  if (lower(url.substr(0, 8)) == "https://")
    return std::string("https:// is not supported: give the gateway's http:// URL (e.g. a local TLS terminator)");
  if (lower(url.substr(0, scheme.size())) != scheme)
    return std::string("the URL must start with http:// (e.g. http://127.0.0.1:8080)");
  auto rest = url.substr(scheme.size());
  if (rest.find_first_of("?#") != std::string_view::npos)
    return std::string("the URL must not have a query or fragment");
  for (char ch : rest)
    if (ch <= 32 || ch >= 127) return std::string("the URL has a space or a character that is not printable ASCII");
  const auto slash = rest.find('/');
  const auto authority = rest.substr(0, slash);
  auto path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (authority.find('@') != std::string_view::npos)
    return std::string("the URL must not carry credentials: give the token with --token-file, --token or GATEWAY_TOKEN");
  Endpoint e;
  e.host_header = std::string(authority);
  e.base_path = std::string(path);
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return std::string("the URL's IPv6 address has no closing ']'");
    e.host = std::string(authority.substr(1, close - 1));
    auto after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return std::string("unexpected text after the URL's IPv6 address");
      port = after.substr(1);
      if (port.empty()) return std::string("the URL's port is empty");
    }
  } else {
    const auto colon = authority.rfind(':');
    e.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port = authority.substr(colon + 1);
      if (port.empty()) return std::string("the URL's port is empty");
    }
  }
  if (e.host.empty()) return std::string("the URL has no host");
  if (!port.empty()) {
    auto n = decimal(port);
    if (!n || *n < 1 || *n > 65535) return std::string("the URL's port must be a number from 1 to 65535");
    e.port = std::to_string(*n);
  } else {
    e.port = "80";
  }
  return e;
}

Parsed parse_command_line(const std::vector<std::string>& args, const EnvLookup& env) {
  // Help first, so that `gatewayctl held --bogus --help` still helps.
  for (const auto& a : args) {
    if (a == "--") break;
    if (a == "-h" || a == "--help") return HelpRequest{};
  }

  std::vector<std::string> positionals;
  std::vector<std::pair<std::string, std::string>> given;  // flag, value ("" for switches)
  std::optional<std::string> error;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      positionals.insert(positionals.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
    if (a.size() < 2 || a[0] != '-') {
      positionals.push_back(a);
      continue;
    }
    const auto eq = a.find('=');
    const std::string name = a.substr(0, eq);
    const auto known = known_flags().find(name);
    if (known == known_flags().end()) {
      error = "unknown flag " + escape_for_terminal(name) +
              (a[1] != '-' ? " (an operand that starts with '-' goes after --)" : "");
      break;
    }
    std::string value;
    if (known->second) {
      if (eq != std::string::npos) {
        value = a.substr(eq + 1);
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        error = name + " needs a value";
        break;
      }
    } else if (eq != std::string::npos) {
      error = name + " takes no value";
      break;
    }
    if (std::any_of(given.begin(), given.end(), [&](const auto& g) { return g.first == name; })) {
      error = name + " is given twice";
      break;
    }
    given.emplace_back(name, std::move(value));
  }

  std::optional<Command> command;
  const CommandSpec* spec = nullptr;
  if (!positionals.empty()) {
    spec = find_command(positionals.front());
    if (spec) command = spec->command;
  }
  if (error) return UsageError{*error, command};
  if (positionals.empty()) return UsageError{"no command given", std::nullopt};
  if (!spec) return UsageError{"unknown command '" + escape_for_terminal(positionals.front()) + "'", std::nullopt};

  auto fail = [&](std::string message) -> Parsed { return UsageError{std::move(message), command}; };
  std::map<std::string, std::string, std::less<>> flags;
  for (auto& [name, value] : given) {
    const bool global = std::find(global_flags.begin(), global_flags.end(), name) != global_flags.end();
    const bool own = std::find(spec->flags.begin(), spec->flags.end(), name) != spec->flags.end();
    if (!global && !own) return fail(name + " is not a flag of " + std::string(spec->name));
    flags[name] = value;
  }
  auto flag = [&](std::string_view name) -> std::optional<std::string> {
    if (auto it = flags.find(name); it != flags.end()) return it->second;
    return std::nullopt;
  };

  Invocation inv;
  inv.command = spec->command;
  inv.operands.assign(positionals.begin() + 1, positionals.end());
  if (inv.operands.size() != spec->operands) {
    static const std::array<std::string_view, 3> names{"TENANT", "TASK", "OPERATION"};
    std::string wanted;
    for (std::size_t i = 0; i < spec->operands; ++i) wanted += (i ? " " : "") + std::string(names[i]);
    return fail(std::string(spec->name) + " takes " +
                (spec->operands == 0 ? std::string("no operands") : wanted) + ", got " +
                std::to_string(inv.operands.size()) + (inv.operands.size() == 1 ? " operand" : " operands"));
  }
  {
    static const std::array<std::string_view, 3> names{"tenant", "task", "operation id"};
    for (std::size_t i = 0; i < inv.operands.size(); ++i)
      if (!is_label(inv.operands[i]))
        return fail("the " + std::string(names[i]) + " must be 1 to 80 printable ASCII characters, without spaces");
  }

  // Query filters, in this order whatever the order on the command line.
  struct Filter {
    std::string_view flag, param;
    enum { label, state, duration, count, integer, since } kind;
  };
  static const std::array<Filter, 10> filters{{{"--tenant", "tenant", Filter::label},
                                              {"--task", "task", Filter::label},
                                              {"--provider", "provider", Filter::label},
                                              {"--code", "code", Filter::label},
                                              {"--state", "state", Filter::state},
                                              {"--reason", "reason", Filter::label},
                                              {"--older-than", "older_than_ms", Filter::duration},
                                              {"--since-ms", "since_ms", Filter::integer},
                                              {"--since", "", Filter::since},
                                              {"--limit", "limit", Filter::count}}};
  if (flag("--since") && flag("--since-ms"))
    return fail("--since and --since-ms go separately (--since-ms is its old form)");
  for (const auto& f : filters) {
    auto value = flag(f.flag);
    if (!value) continue;
    std::string param = std::string(f.param), param_value = *value;
    switch (f.kind) {
      case Filter::label:
        if (!is_label(*value)) return fail(std::string(f.flag) + " must be 1 to 80 printable ASCII characters");
        break;
      case Filter::state:
        if (*value != "in_flight" && *value != "unknown") return fail("--state must be in_flight or unknown");
        break;
      case Filter::duration: {
        auto ms = parse_duration_ms(*value);
        if (!ms) return fail(std::string(f.flag) + " must be a duration such as 90s, 10m, 2h, 1d or 1h30m");
        param_value = std::to_string(*ms);
        break;
      }
      case Filter::integer:
        if (!decimal(*value)) return fail(std::string(f.flag) + " must be an integer from 0 to 2^63-1");
        break;
      case Filter::since:
        // A duration back from the gateway's now (as held's --older-than), or a UTC time.
        if (auto ms = parse_duration_ms(*value)) {
          param = "newer_than_ms";
          param_value = std::to_string(*ms);
        } else if (auto at = parse_time_ms(*value); at && *at >= 0) {
          param = "since_ms";
          param_value = std::to_string(*at);
        } else {
          return fail("--since must be a duration such as 10m, 2h or 1d (that long ago until now) or a UTC time "
                      "such as 2025-12-01T09:00Z or 2025-12-01T09:00:00.000Z (from then on)");
        }
        break;
      case Filter::count: {
        auto n = decimal(*value);
        if (!n || *n < 1) return fail(std::string(f.flag) + " must be a positive integer");
        break;
      }
    }
    inv.query.emplace_back(std::move(param), std::move(param_value));
  }
  if (auto c = flag("--cursor")) {
    if (c->empty()) return fail("--cursor must not be empty");
    if (flag("--all")) return fail("--cursor and --all go separately: --all starts at the first page");
    inv.cursor = *c;
  }
  inv.all = flag("--all").has_value();
  inv.since_ms_flag = flag("--since-ms").has_value();
  inv.json = flag("--json").has_value();

  if (spec->command == Command::resolve) {
    auto outcome = flag("--outcome");
    if (!outcome) return fail("resolve needs --outcome succeeded|rejected|not_executed");
    if (*outcome != "succeeded" && *outcome != "rejected" && *outcome != "not_executed")
      return fail("--outcome must be succeeded, rejected or not_executed");
    auto evidence = flag("--evidence");
    if (!evidence || evidence->empty())
      return fail("resolve needs --evidence REF: where the outcome can be checked (a ticket, a provider reference)");
    inv.outcome = *outcome;
    inv.evidence = *evidence;
    inv.note = flag("--note");
  }
  if (spec->command == Command::rotate_realm && !flag("--yes"))
    return fail("rotate-realm makes every outstanding grant invalid (agents must claim again); add --yes to do it");

  if (auto t = flag("--timeout")) {
    auto ms = parse_duration_ms(*t);
    if (!ms || *ms < 1) return fail("--timeout must be a positive duration such as 500ms, 10s or 2m");
    inv.timeout = std::chrono::milliseconds(*ms);
  }

  auto non_empty_env = [&](const char* name) -> std::optional<std::string> {
    auto v = env(name);
    if (v && v->empty()) return std::nullopt;
    return v;
  };
  auto url = flag("--url");
  const char* url_origin = "--url";
  if (!url) {
    url = non_empty_env("GATEWAY_URL");
    url_origin = "GATEWAY_URL";
  }
  if (!url) return fail("no gateway URL: give --url or set GATEWAY_URL (e.g. http://127.0.0.1:8080)");
  auto endpoint = parse_url(*url);
  if (auto* why = std::get_if<std::string>(&endpoint)) return fail(std::string(url_origin) + ": " + *why);
  inv.endpoint = std::get<Endpoint>(std::move(endpoint));

  // The token's value never appears in a message: only where it came from.
  auto token = flag("--token");
  auto token_file = flag("--token-file");
  if (token && token_file) return fail("--token and --token-file go separately");
  if (token) {
    if (!is_token(*token)) return fail("--token must be visible ASCII without spaces");
    inv.token = *token;
  } else if (token_file) {
    if (token_file->empty()) return fail("--token-file needs a file name");
    inv.token = TokenFile{*token_file};
  } else if (auto from_env = non_empty_env("GATEWAY_TOKEN")) {
    if (!is_token(*from_env)) return fail("GATEWAY_TOKEN must be visible ASCII without spaces");
    inv.token = *from_env;
  } else {
    return fail("no operator token: give --token-file FILE, --token TOKEN or set GATEWAY_TOKEN");
  }
  return inv;
}

std::string help_text() {
  std::string out =
      "gatewayctl: the write gateway's operator CLI, over its operator HTTP API (/v1/admin)\n"
      "\n"
      "usage: gatewayctl COMMAND [OPERANDS] [FLAGS]\n"
      "\n"
      "commands:\n";
  for (const auto& spec : commands()) {
    out += "  " + synopsis_at(spec, 2) + "\n";
    out += "      ";
    for (char ch : spec.summary) out += ch == '\n' ? std::string("\n      ") : std::string(1, ch);
    out += "\n";
  }
  out +=
      "\n"
      "flags of every command:\n"
      "  --url URL           the gateway, http://host[:port][/prefix]; default $GATEWAY_URL\n"
      "  --token-file FILE   read the operator token from FILE (surrounding whitespace ignored);\n"
      "                      its mode is not checked: keep it chmod 600\n"
      "  --token TOKEN       the operator token; default $GATEWAY_TOKEN. Visible in ps: prefer the others\n"
      "  --timeout DURATION  deadline for each request, connect to last byte (default 30s)\n"
      "  --json              print the gateway's JSON reply, pretty, instead of a table; with --all,\n"
      "                      the pages merged into one reply (every row, next_cursor null). Errors\n"
      "                      are then one JSON line on stderr: {\"error\": {\"code\", \"detail\",\n"
      "                      \"exit_code\", \"http_status\", \"request_id\", \"hint\", \"problem\"}}\n"
      "  -h, --help          this text\n"
      "\n"
      "Flags win over the environment. DURATION is digits with a unit, or a sum of them:\n"
      "500ms, 90s, 10m, 2h, 1d, 1h30m; durations back from now are measured by the gateway's\n"
      "clock. TIME is UTC: 2025-12-01, 2025-12-01T09:00Z, 2025-12-01T09:00:00.000Z. rejections\n"
      "--since-ms N (epoch milliseconds) still works but is deprecated: use --since.\n"
      "Without --all, one page is shown (--limit rows, the gateway's default 100) and the next\n"
      "page's cursor is printed on stderr. An operand that starts with '-' goes after --. Times\n"
      "are UTC.\n"
      "\n"
      "exit codes:\n"
      "  0  done\n"
      "  1  the gateway refused: a 4xx problem other than 404 (unauthenticated, forbidden,\n"
      "     invalid_request, a conflict such as an operation that is not held)\n"
      "  2  usage error: bad or missing flags or operands, or a --token-file that cannot be read\n"
      "     (the message says why); nothing was sent\n"
      "  3  no usable reply: cannot connect, timeout, bytes that are not HTTP, or a 2xx whose body\n"
      "     is not the operator API's JSON\n"
      "  4  not found (404 from the gateway on one of its routes): no such operation or task\n"
      "  5  the gateway failed (5xx: authority_unavailable, internal_error): try again later\n"
      "  6  wrong --url: the gateway has no such route (check the path prefix, the part before\n"
      "     /v1), or another server answered (no Gateway-Status header)\n"
      "\n"
      "Errors go to stderr, as \"error: <code>: <detail>\" (and a \"hint:\" line for some), or as\n"
      "JSON with --json; stdout has output only with exit 0.\n";
  return out;
}

namespace {

constexpr std::string_view help_pointer = "run 'gatewayctl --help' for every command, flag and exit code";

// "usage: gatewayctl ..." for the command, or for every command; continuation
// lines indented (text) or joined with spaces (JSON).
std::string usage_line(const UsageError& error, bool one_line) {
  const std::string prefix = "usage: gatewayctl ";
  if (!error.command) {
    std::string names;
    for (const auto& spec : commands()) names += (names.empty() ? "" : "|") + std::string(spec.name);
    return prefix + names + " [OPERANDS] [FLAGS]";
  }
  const auto& spec = spec_of(*error.command);
  if (!one_line) return prefix + synopsis_at(spec, prefix.size());
  std::string synopsis(spec.synopsis);
  std::replace(synopsis.begin(), synopsis.end(), '\n', ' ');
  return prefix + synopsis;
}

}  // namespace

std::string usage_error_text(const UsageError& error) {
  return "error: usage: " + error.message + "\n" + usage_line(error, false) + "\n" + std::string(help_pointer) + "\n";
}

bool wants_json(const std::vector<std::string>& args) {
  for (const auto& a : args) {
    if (a == "--") break;
    if (a == "--json") return true;
  }
  return false;
}

ErrorReport usage_report(const UsageError& error) {
  ErrorReport r;
  r.exit = Exit::usage;
  r.code = "usage";
  r.detail = error.message;
  r.hint = usage_line(error, true) + "; " + std::string(help_pointer);
  return r;
}

}  // namespace gwctl
