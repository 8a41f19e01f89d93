// tools/gatewayctl/cli.hpp: every flag of every command, the URL and token
// sources and their precedence, and each usage error (exit 2, nothing sent).
#include "gatewayctl/cli.hpp"

#include <doctest/doctest.h>

#include <map>

using namespace gwctl;

namespace {

using Env = std::map<std::string, std::string>;
const Env connected{{"GATEWAY_URL", "http://127.0.0.1:8080"}, {"GATEWAY_TOKEN", "env-token"}};

Parsed parse(const std::vector<std::string>& args, const Env& env = connected) {
  return parse_command_line(args, [env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  });
}

Invocation ok(const std::vector<std::string>& args, const Env& env = connected) {
  auto p = parse(args, env);
  if (auto* e = std::get_if<UsageError>(&p)) FAIL("usage error: " << e->message);
  REQUIRE(std::holds_alternative<Invocation>(p));
  return std::get<Invocation>(p);
}

// The usage error's message; fails the test when the parse succeeded.
std::string usage(const std::vector<std::string>& args, const Env& env = connected) {
  auto p = parse(args, env);
  REQUIRE_MESSAGE(std::holds_alternative<UsageError>(p), "accepted: " << args.size() << " args");
  return std::get<UsageError>(p).message;
}

using Query = std::vector<std::pair<std::string, std::string>>;

}  // namespace

TEST_CASE("held: every filter becomes a query parameter, in a fixed order, durations in ms") {
  auto inv = ok({"held", "--limit", "5", "--older-than=4m12s", "--reason", "forward_abandoned", "--state",
                 "unknown", "--provider", "booking", "--task", "trip-42", "--tenant", "tenant-a", "--all"});
  CHECK(inv.command == Command::held);
  CHECK(inv.operands.empty());
  CHECK(inv.all);
  CHECK_FALSE(inv.json);
  CHECK(inv.query == Query{{"tenant", "tenant-a"},
                           {"task", "trip-42"},
                           {"provider", "booking"},
                           {"state", "unknown"},
                           {"reason", "forward_abandoned"},
                           {"older_than_ms", "252000"},
                           {"limit", "5"}});
  CHECK(ok({"held"}).query.empty());
  CHECK(ok({"held", "--cursor", "abc"}).cursor == "abc");
  CHECK(ok({"--json", "held"}).json);  // flags may come before the command
}

TEST_CASE("rejections, show, reconcile, revoke, rotate-realm: operands and flags") {
  auto r = ok({"rejections", "--code", "stale_owner", "--since-ms", "0", "--tenant", "t", "--limit", "500"});
  CHECK(r.command == Command::rejections);
  CHECK(r.query == Query{{"tenant", "t"}, {"code", "stale_owner"}, {"since_ms", "0"}, {"limit", "500"}});

  auto s = ok({"show", "tenant-a", "trip/42", "op%1"});
  CHECK(s.command == Command::show);
  CHECK(s.operands == std::vector<std::string>{"tenant-a", "trip/42", "op%1"});
  CHECK(ok({"reconcile", "t", "k", "op"}).command == Command::reconcile);
  CHECK(ok({"revoke", "t", "k"}).operands == std::vector<std::string>{"t", "k"});
  CHECK(ok({"rotate-realm", "--yes"}).command == Command::rotate_realm);
  // An operand that starts with '-' goes after --.
  CHECK(ok({"show", "--json", "--", "-t", "-k", "--op"}).operands == std::vector<std::string>{"-t", "-k", "--op"});
  CHECK(ok({"show", "-", "k", "op"}).operands.front() == "-");
}

TEST_CASE("resolve: outcome and evidence required, note optional") {
  auto inv = ok({"resolve", "t", "k", "op", "--outcome", "not_executed", "--evidence", "INC-7", "--note", "checked"});
  CHECK(inv.outcome == "not_executed");
  CHECK(inv.evidence == "INC-7");
  CHECK(inv.note == "checked");
  CHECK_FALSE(ok({"resolve", "t", "k", "op", "--outcome", "succeeded", "--evidence", "x"}).note);
  CHECK(usage({"resolve", "t", "k", "op", "--evidence", "x"}).find("--outcome") != std::string::npos);
  CHECK(usage({"resolve", "t", "k", "op", "--outcome", "done", "--evidence", "x"}).find("--outcome must be") !=
        std::string::npos);
  CHECK(usage({"resolve", "t", "k", "op", "--outcome", "rejected"}).find("--evidence") != std::string::npos);
  CHECK(usage({"resolve", "t", "k", "op", "--outcome", "rejected", "--evidence", ""}).find("--evidence") !=
        std::string::npos);
}

TEST_CASE("rotate-realm refuses without --yes") {
  auto p = parse({"rotate-realm"});
  REQUIRE(std::holds_alternative<UsageError>(p));
  CHECK(std::get<UsageError>(p).message.find("--yes") != std::string::npos);
  CHECK(std::get<UsageError>(p).command == Command::rotate_realm);
  CHECK(usage_error_text(std::get<UsageError>(p)).find("usage: gatewayctl rotate-realm --yes") != std::string::npos);
}

TEST_CASE("usage errors: each is refused with a message that names the problem") {
  struct Case {
    std::vector<std::string> args;
    const char* says;
  };
  for (const auto& [args, says] : std::vector<Case>{
           {{}, "no command"},
           {{"--json"}, "no command"},
           {{"list"}, "unknown command 'list'"},
           {{"held", "--bogus"}, "unknown flag --bogus"},
           {{"held", "-x"}, "goes after --"},
           {{"show", "-t", "k", "op"}, "unknown flag -t"},
           {{"held", "--limit"}, "--limit needs a value"},
           {{"held", "--all=yes"}, "--all takes no value"},
           {{"held", "--tenant", "a", "--tenant", "b"}, "given twice"},
           {{"held", "extra"}, "held takes no operands, got 1 operand"},
           {{"show", "t", "k"}, "show takes TENANT TASK OPERATION, got 2 operands"},
           {{"revoke", "t"}, "revoke takes TENANT TASK, got 1 operand"},
           {{"show", "t", "k", "op", "more"}, "got 4 operands"},
           {{"show", "t", "k", std::string(81, 'o')}, "operation id must be 1 to 80"},
           {{"show", "t", "k", "has space"}, "operation id must be"},
           {{"revoke", "", "k"}, "tenant must be"},
           {{"show", "t", "k", "op", "--state", "unknown"}, "--state is not a flag of show"},
           {{"rejections", "--state", "unknown"}, "--state is not a flag of rejections"},
           {{"held", "--code", "x"}, "--code is not a flag of held"},
           {{"held", "--state", "succeeded"}, "--state must be in_flight or unknown"},
           {{"held", "--tenant", "has space"}, "--tenant must be"},
           {{"held", "--older-than", "10"}, "--older-than must be a duration"},
           {{"held", "--older-than", "-1m"}, "--older-than must be a duration"},
           {{"held", "--limit", "0"}, "--limit must be a positive integer"},
           {{"held", "--limit", "ten"}, "--limit must be a positive integer"},
           {{"rejections", "--since-ms", "-1"}, "--since-ms must be an integer"},
           {{"held", "--cursor", ""}, "--cursor must not be empty"},
           {{"held", "--cursor", "c", "--all"}, "--all starts at the first page"},
           {{"held", "--timeout", "0s"}, "--timeout must be a positive duration"},
           {{"held", "--timeout", "5"}, "--timeout must be a positive duration"},
           {{"held", "--token", "a b"}, "--token must be visible ASCII"},
           {{"held", "--token", "t", "--token-file", "f"}, "go separately"},
       }) {
    CAPTURE(args.size());
    CAPTURE(says);
    CHECK(usage(args).find(says) != std::string::npos);
  }
}

TEST_CASE("help: -h or --help anywhere before --, even beside a bad flag") {
  CHECK(std::holds_alternative<HelpRequest>(parse({"--help"})));
  CHECK(std::holds_alternative<HelpRequest>(parse({"held", "-h"})));
  CHECK(std::holds_alternative<HelpRequest>(parse({"held", "--bogus", "--help"}, {})));
  // After --, "--help" is an operand (a valid label).
  CHECK(ok({"show", "t", "k", "--", "--help"}).operands == std::vector<std::string>{"t", "k", "--help"});
  const auto help = help_text();
  for (const char* s : {"held", "show", "reconcile", "resolve", "rejections", "revoke", "rotate-realm --yes",
                        "GATEWAY_URL", "GATEWAY_TOKEN", "--token-file", "--json", "exit codes", "  0  done",
                        "  1  the gateway refused", "  2  usage error", "  3  no usable reply", "  4  not found",
                        "  5  the gateway failed"})
    CHECK_MESSAGE(help.find(s) != std::string::npos, s);
}

TEST_CASE("URL and token: flags win over GATEWAY_URL and GATEWAY_TOKEN, a token file is left to main") {
  auto from_env = ok({"held"});
  CHECK(from_env.endpoint.host == "127.0.0.1");
  CHECK(from_env.endpoint.port == "8080");
  CHECK(std::get<std::string>(from_env.token) == "env-token");

  auto flags = ok({"held", "--url", "http://gw.internal:9000/edge/", "--token", "flag-token"});
  CHECK(flags.endpoint.host == "gw.internal");
  CHECK(flags.endpoint.base_path == "/edge");
  CHECK(std::get<std::string>(flags.token) == "flag-token");

  auto file = ok({"held", "--token-file", "/run/secrets/op"});
  CHECK(std::get<TokenFile>(file.token).path == "/run/secrets/op");

  CHECK(usage({"held"}, {{"GATEWAY_TOKEN", "t"}}).find("no gateway URL") != std::string::npos);
  CHECK(usage({"held"}, {{"GATEWAY_URL", ""}, {"GATEWAY_TOKEN", "t"}}).find("no gateway URL") != std::string::npos);
  CHECK(usage({"held"}, {{"GATEWAY_URL", "http://h"}}).find("no operator token") != std::string::npos);
  CHECK(usage({"held"}, {{"GATEWAY_URL", "http://h"}, {"GATEWAY_TOKEN", ""}}).find("no operator token") !=
        std::string::npos);
  CHECK(usage({"held", "--url", "https://h"}).find("--url: https:// is not supported") != std::string::npos);
  CHECK(usage({"held"}, {{"GATEWAY_URL", "ftp://h"}, {"GATEWAY_TOKEN", "t"}}).find("GATEWAY_URL: ") !=
        std::string::npos);
  // Never the token's value in a message.
  auto bad = usage({"held"}, {{"GATEWAY_URL", "http://h"}, {"GATEWAY_TOKEN", "sec ret"}});
  CHECK(bad.find("GATEWAY_TOKEN must be") != std::string::npos);
  CHECK(bad.find("sec ret") == std::string::npos);
}

TEST_CASE("parse_url: http only, host, port, IPv6 and a path prefix") {
  auto ok_url = [](const char* url) {
    auto r = parse_url(url);
    if (auto* e = std::get_if<std::string>(&r)) FAIL(url << ": " << *e);
    return std::get<Endpoint>(r);
  };
  auto e = ok_url("http://127.0.0.1:8080");
  CHECK(e.host == "127.0.0.1");
  CHECK(e.port == "8080");
  CHECK(e.host_header == "127.0.0.1:8080");
  CHECK(e.base_path == "");
  e = ok_url("HTTP://gateway/");
  CHECK(e.host == "gateway");
  CHECK(e.port == "80");
  CHECK(e.base_path == "");
  e = ok_url("http://[::1]:8081/a/b//");
  CHECK(e.host == "::1");
  CHECK(e.port == "8081");
  CHECK(e.host_header == "[::1]:8081");
  CHECK(e.base_path == "/a/b");
  CHECK(ok_url("http://h:08080").port == "8080");

  for (const char* bad : {"", "127.0.0.1:8080", "https://h", "ftp://h", "http://", "http://:80", "http://h:",
                          "http://h:0", "http://h:65536", "http://h:x", "http://u:p@h", "http://h/?q=1",
                          "http://h/#f", "http://h /x", "http://[::1", "http://[::1]x", "http://[::1]:"}) {
    CAPTURE(bad);
    CHECK(std::holds_alternative<std::string>(parse_url(bad)));
  }
}

TEST_CASE("rejections --since: a duration back from the gateway's now, or a UTC time, and --since-ms still works") {
  CHECK(ok({"rejections", "--since", "10m"}).query == Query{{"newer_than_ms", "600000"}});
  CHECK(ok({"rejections", "--since=1h30m", "--limit", "5"}).query ==
        Query{{"newer_than_ms", "5400000"}, {"limit", "5"}});
  CHECK(ok({"rejections", "--since", "2025-12-01T00:00Z"}).query == Query{{"since_ms", "1764547200000"}});
  CHECK(ok({"rejections", "--since", "2025-12-01T00:00:00.250Z"}).query == Query{{"since_ms", "1764547200250"}});
  CHECK(ok({"rejections", "--since", "2025-12-01"}).query == Query{{"since_ms", "1764547200000"}});
  // The old flag, as before, marked for run() to say it is deprecated.
  CHECK(ok({"rejections", "--since-ms", "1764547200000"}).query == Query{{"since_ms", "1764547200000"}});
  CHECK(ok({"rejections", "--since-ms", "5"}).since_ms_flag);
  CHECK_FALSE(ok({"rejections", "--since", "5m"}).since_ms_flag);
  for (const char* bad : {"10", "1764547200000", "yesterday", "2025-12-01T09:00", "2025-02-30", "1969-12-31",
                          "-5m", ""}) {
    CAPTURE(bad);
    CHECK(usage({"rejections", "--since", bad}).starts_with("--since must be a duration such as 10m"));
  }
  CHECK(usage({"rejections", "--since", "10m", "--since-ms", "5"}) ==
        "--since and --since-ms go separately (--since-ms is its old form)");
  CHECK(usage({"held", "--since", "10m"}) == "--since is not a flag of held");
}

TEST_CASE("usage_report: --json's form of a usage error, with the synopsis on one line") {
  auto p = parse({"rejections", "--since", "soon"});
  REQUIRE(std::holds_alternative<UsageError>(p));
  auto r = usage_report(std::get<UsageError>(p));
  CHECK(r.exit == Exit::usage);
  CHECK(r.code == "usage");
  CHECK(r.detail.starts_with("--since must be"));
  CHECK(r.hint.starts_with("usage: gatewayctl rejections [--tenant T] [--task K] [--code C] [--since DURATION|TIME] "
                           "[--limit N] [--cursor C] [--all]; run 'gatewayctl --help'"));
  CHECK(wants_json({"held", "--bogus", "--json"}));
  CHECK_FALSE(wants_json({"show", "--", "--json", "k", "op"}));
  CHECK_FALSE(wants_json({"held"}));
}

TEST_CASE("token files: surrounding whitespace ignored, one visible-ASCII token") {
  CHECK(token_from_file_text("dev-operator-token\n") == "dev-operator-token");
  CHECK(token_from_file_text("  \tabc\r\n\n") == "abc");
  CHECK_FALSE(token_from_file_text(""));
  CHECK_FALSE(token_from_file_text("\n"));
  CHECK_FALSE(token_from_file_text("two tokens"));
  CHECK_FALSE(token_from_file_text("a\nb"));
  CHECK_FALSE(token_from_file_text("caf\xc3\xa9"));
}

TEST_CASE("labels: the gateway's rule") {
  CHECK(is_label("a"));
  CHECK(is_label(std::string(80, 'x')));
  CHECK(is_label("!~/%"));
  CHECK_FALSE(is_label(""));
  CHECK_FALSE(is_label(std::string(81, 'x')));
  CHECK_FALSE(is_label("a b"));
  CHECK_FALSE(is_label("a\x7f"));
}
