// tools/gatewayctl/run.hpp against a fake Transport: what each subcommand
// sends, what it prints where, paging with --all, and the exit code for
// every way a reply can go wrong. No sockets.
#include "gatewayctl/exit_codes.hpp"
#include "gatewayctl/run.hpp"
#include "invocation.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <deque>
#include <functional>
#include <sstream>

using namespace gwctl;
using gwctl::test::invocation;
// Ordered, so that the fake gateway's bodies keep the member order they are written in.
using json = nlohmann::ordered_json;

namespace {

// Replies in order; records every request. An empty queue is a test bug.
class FakeTransport : public Transport {
 public:
  std::deque<std::function<HttpReply(const HttpRequest&)>> replies;
  std::vector<HttpRequest> sent;

  HttpReply exchange(const HttpRequest& request) override {
    sent.push_back(request);
    REQUIRE_FALSE(replies.empty());
    auto next = std::move(replies.front());
    replies.pop_front();
    return next(request);
  }
  void reply(unsigned status, const std::string& body, const std::string& code = "ok") {
    replies.emplace_back([=](const HttpRequest&) {
      HttpReply r;
      r.status = status;
      r.body = body;
      r.gateway_status = code;
      r.request_id = "req-9";
      r.content_type = status < 300 ? "application/json" : "application/problem+json";
      return r;
    });
  }
  void reply(unsigned status, const json& body) { reply(status, body.dump(), body.value("code", "")); }
  void problem(unsigned status, const std::string& code, const std::string& detail) {
    reply(status, json{{"type", "urn:write-gateway:code:" + code}, {"title", "t"}, {"status", status}, {"code", code},
                       {"detail", detail}});
  }
  void fail(const std::string& kind, const std::string& detail) {
    replies.emplace_back([=](const HttpRequest&) -> HttpReply { throw TransportError(kind, detail); });
  }
};

struct Result {
  int exit;
  std::string out, err;
};

Result run_with(const Invocation& inv, FakeTransport& t) {
  std::ostringstream out, err;
  int code = run(inv, t, out, err);
  return {code, out.str(), err.str()};
}


json held_page(std::vector<std::string> tasks, json next_cursor, std::int64_t now = 1000) {
  json rows = json::array();
  for (const auto& t : tasks)
    rows.push_back({{"tenant", "tenant-a"}, {"task", t}, {"operation", "op"}, {"state", "unknown"},
                    {"reason", "outcome_unknown"}, {"provider", "booking"}, {"method", "POST"},
                    {"target", "/bookings"}, {"upstream_key", "gw1"}, {"attempts", 1}, {"held_since_ms", 0},
                    {"held_for_ms", now}, {"forward_deadline_ms", nullptr}});
  return {{"held", rows}, {"now_ms", now}, {"next_cursor", next_cursor}, {"code", "ok"}};
}

json operation_json() {
  return {{"tenant", "t"}, {"task", "k"}, {"id", "op"}, {"state", "unknown"}, {"attempts", json::array()},
          {"evidence", json::array()}};
}

}  // namespace

TEST_CASE("held: one page as a table, the next cursor a hint on stderr") {
  FakeTransport t;
  t.reply(200, held_page({"task-1"}, "c1"));
  auto r = run_with(invocation(Command::held), t);
  CHECK(r.exit == 0);
  REQUIRE(t.sent.size() == 1);
  CHECK(t.sent[0].method == "GET");
  CHECK(t.sent[0].target == "/v1/admin/held");
  CHECK(r.out.starts_with("TENANT    TASK    OPERATION"));
  CHECK(r.out.find("task-1") != std::string::npos);
  CHECK(r.err == "more: add --all for every page, or --cursor c1 for the next\n");
}

TEST_CASE("held --all: follows next_cursor to the end, one table") {
  FakeTransport t;
  t.reply(200, held_page({"task-1", "task-2"}, "c1"));
  t.reply(200, held_page({"task-3"}, "c2"));
  t.reply(200, held_page({"task-4"}, nullptr));
  auto inv = invocation(Command::held);
  inv.all = true;
  inv.query = {{"limit", "2"}};
  auto r = run_with(inv, t);
  CHECK(r.exit == 0);
  CHECK(r.err.empty());
  REQUIRE(t.sent.size() == 3);
  CHECK(t.sent[0].target == "/v1/admin/held?limit=2");
  CHECK(t.sent[1].target == "/v1/admin/held?limit=2&cursor=c1");
  CHECK(t.sent[2].target == "/v1/admin/held?limit=2&cursor=c2");
  std::size_t lines = 0;
  for (char ch : r.out) lines += ch == '\n';
  CHECK(lines == 5);  // header + 4 rows
  for (const char* task : {"task-1", "task-2", "task-3", "task-4"}) CHECK(r.out.find(task) != std::string::npos);
}

TEST_CASE("held --all --json: the pages merged into one reply, in the gateway's member order") {
  FakeTransport t;
  t.reply(200, held_page({"task-1"}, "c1", 1000));
  t.reply(200, held_page({"task-2"}, nullptr, 1005));
  auto inv = invocation(Command::held);
  inv.all = true;
  inv.json = true;
  auto r = run_with(inv, t);
  CHECK(r.exit == 0);
  auto merged = json::parse(r.out);
  CHECK(merged["held"].size() == 2);
  CHECK(merged["held"][1]["task"] == "task-2");
  CHECK(merged["next_cursor"].is_null());
  CHECK(merged["now_ms"] == 1005);
  CHECK(r.out.find("\"held\"") < r.out.find("\"now_ms\""));  // not re-sorted: held, now_ms, next_cursor, code
  CHECK(r.out.find("\"now_ms\"") < r.out.find("\"next_cursor\""));
  CHECK(r.out.find("\"next_cursor\"") < r.out.find("\"code\""));
}

TEST_CASE("--json: the reply as received, pretty, no hint on stderr") {
  FakeTransport t;
  const std::string body = R"({"held":[],"now_ms":7,"next_cursor":"c9","code":"ok","extra":{"z":1,"a":2}})";
  t.reply(200, body);
  auto inv = invocation(Command::held);
  inv.json = true;
  auto r = run_with(inv, t);
  CHECK(r.exit == 0);
  CHECK(r.out == json::parse(body).dump(2) + "\n");
  CHECK(r.err.empty());
}

TEST_CASE("--all stops at a cursor the gateway hands out twice") {
  FakeTransport t;
  auto inv = invocation(Command::rejections);
  inv.all = true;
  t.reply(200, json{{"rejections", json::array()}, {"next_cursor", "same"}, {"code", "ok"}});
  t.reply(200, json{{"rejections", json::array()}, {"next_cursor", "same"}, {"code", "ok"}});
  auto r = run_with(inv, t);
  CHECK(r.exit == 3);
  CHECK(r.out.empty());
  CHECK(r.err == "error: bad_reply: the gateway returned the same next_cursor twice\n");
  CHECK(t.sent.size() == 2);
}

TEST_CASE("an error on a later page: its exit code, nothing on stdout") {
  FakeTransport t;
  t.reply(200, held_page({"task-1"}, "c1"));
  t.problem(503, "authority_unavailable", "the authority database is unavailable");
  auto inv = invocation(Command::held);
  inv.all = true;
  auto r = run_with(inv, t);
  CHECK(r.exit == 5);
  CHECK(r.out.empty());
  CHECK(r.err.starts_with("error: authority_unavailable: the authority database is unavailable\n"));
  CHECK(r.err.find("req-9") != std::string::npos);
}

TEST_CASE("every kind of failure maps to its exit code, with the error line on stderr only") {
  struct Case {
    std::function<void(FakeTransport&)> script;
    int exit;
    std::string err_starts;
  };
  const std::vector<Case> cases{
      {[](FakeTransport& t) { t.problem(401, "unauthenticated", "missing or unknown bearer token"); }, 1,
       "error: unauthenticated: missing or unknown bearer token\n"},
      {[](FakeTransport& t) { t.problem(403, "forbidden", "operator routes need an operator token"); }, 1,
       "error: forbidden: operator routes need an operator token\n"},
      {[](FakeTransport& t) { t.problem(400, "invalid_request", "limit must be an integer from 1 to 500"); }, 1,
       "error: invalid_request: limit must be an integer from 1 to 500\n"},
      {[](FakeTransport& t) { t.problem(409, "operation_not_held", "already settled"); }, 1,
       "error: operation_not_held: already settled\n"},
      {[](FakeTransport& t) { t.problem(404, "not_found", "no such operation"); }, 4,
       "error: not_found: no such operation\n"},
      {[](FakeTransport& t) { t.problem(500, "internal_error", "internal error; see the gateway log"); }, 5,
       "error: internal_error: internal error; see the gateway log\n"},
      {[](FakeTransport& t) { t.reply(502, "<html>bad gateway</html>", ""); }, 5,
       "error: http_502: HTTP 502: <html>bad gateway</html>\n"},
      {[](FakeTransport& t) { t.reply(302, "", ""); }, 6,
       "error: not_gateway: HTTP 302 without the gateway's Gateway-Status header: HTTP 302 with an empty body\n"},
      {[](FakeTransport& t) { t.reply(404, "<html>Not Found</html>", ""); }, 6,
       "error: not_gateway: HTTP 404 without the gateway's Gateway-Status header: HTTP 404: <html>Not Found</html>\n"
       "hint: another server answered: is --url the gateway?"},
      {[](FakeTransport& t) {
         t.reply(404, json{{"type", "urn:write-gateway:code:not_found"}, {"title", "Not found"}, {"status", 404},
                           {"code", "not_found"}, {"detail", "no such route"}, {"missing", "route"}});
       },
       6, "error: not_found: no such route\nhint: the gateway has no such route: is --url's path prefix right"},
      {[](FakeTransport& t) { t.fail("unreachable", "cannot connect to 127.0.0.1:1: Connection refused"); }, 3,
       "error: unreachable: cannot connect to 127.0.0.1:1: Connection refused\n"},
      {[](FakeTransport& t) { t.fail("timeout", "no reply from h:1 within 2s"); }, 3,
       "error: timeout: no reply from h:1 within 2s\n"},
      {[](FakeTransport& t) { t.reply(200, "not json", "ok"); }, 3,
       "error: bad_reply: HTTP 200 but the body is not a JSON object\n"},
      {[](FakeTransport& t) { t.reply(200, "[1,2]", "ok"); }, 3,
       "error: bad_reply: HTTP 200 but the body is not a JSON object\n"},
      {[](FakeTransport& t) { t.reply(200, json{{"code", "ok"}}); }, 3,
       "error: bad_reply: the reply has no \"operation\" object\n"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(i);
    FakeTransport t;
    cases[i].script(t);
    auto r = run_with(invocation(Command::show, {"t", "k", "op"}), t);
    CHECK(r.exit == cases[i].exit);
    CHECK(r.out.empty());
    CHECK(r.err.starts_with(cases[i].err_starts));

    // --json: the same exit code, and the error as one JSON object on stderr.
    FakeTransport tj;
    cases[i].script(tj);
    auto inv = invocation(Command::show, {"t", "k", "op"});
    inv.json = true;
    auto rj = run_with(inv, tj);
    CHECK(rj.exit == cases[i].exit);
    CHECK(rj.out.empty());
    auto parsed = nlohmann::json::parse(rj.err, nullptr, false);
    REQUIRE_MESSAGE(parsed.is_object(), rj.err);
    const auto& error = parsed["error"];
    CHECK(error["exit_code"] == cases[i].exit);
    // The text form's first line is "error: <code>: <detail>".
    CHECK(cases[i].err_starts.starts_with("error: " + error["code"].get<std::string>() + ": " +
                                          error["detail"].get<std::string>().substr(0, 20)));
  }
}

TEST_CASE("show, reconcile, resolve, revoke, rotate-realm: each sends its request and prints its reply") {
  {
    FakeTransport t;
    t.reply(200, json{{"operation", operation_json()}, {"now_ms", 1}, {"code", "ok"}});
    auto r = run_with(invocation(Command::show, {"t", "k", "op"}), t);
    CHECK(r.exit == 0);
    CHECK(t.sent.at(0).method == "GET");
    CHECK(t.sent.at(0).target == "/v1/admin/operations/t/k/op");
    CHECK(r.out.starts_with("tenant             t\n"));
  }
  {
    FakeTransport t;
    t.reply(200, json{{"lookup", {{"status", 200}, {"decision", "resolved"}, {"outcome", "succeeded"},
                                  {"detail", "found"}}},
                      {"operation", operation_json()},
                      {"code", "ok"}});
    auto r = run_with(invocation(Command::reconcile, {"t", "k", "op"}), t);
    CHECK(r.exit == 0);
    CHECK(t.sent.at(0).method == "POST");
    CHECK(t.sent.at(0).target == "/v1/admin/operations/t/k/op/reconcile");
    CHECK(t.sent.at(0).body == "{}");
    CHECK(r.out.starts_with("lookup           resolved\n"));
  }
  {
    FakeTransport t;
    t.reply(200, json{{"operation", operation_json()}, {"code", "resolved"}});
    auto inv = invocation(Command::resolve, {"t", "k", "op"});
    inv.outcome = "succeeded";
    inv.evidence = "INC-1";
    auto r = run_with(inv, t);
    CHECK(r.exit == 0);
    CHECK(t.sent.at(0).target == "/v1/admin/operations/t/k/op/resolve");
    CHECK(json::parse(*t.sent.at(0).body) == json{{"outcome", "succeeded"}, {"evidence", "INC-1"}});
  }
  {
    FakeTransport t;
    t.reply(200, json{{"revoked", {{"realm", "r"}, {"owner", "o"}, {"epoch", 2}}}, {"expires_at_ms", 0},
                      {"code", "revoked"}});
    auto r = run_with(invocation(Command::revoke, {"t", "k"}), t);
    CHECK(r.exit == 0);
    CHECK(t.sent.at(0).target == "/v1/admin/tasks/t/k/revoke");
    CHECK(r.out.find("revoked_owner  o\n") != std::string::npos);
  }
  {
    FakeTransport t;
    t.reply(200, json{{"realm", "new"}, {"previous_realm", "old"}, {"code", "ok"}});
    auto r = run_with(invocation(Command::rotate_realm), t);
    CHECK(r.exit == 0);
    CHECK(t.sent.at(0).target == "/v1/admin/authority/rotate-realm");
    CHECK(r.out.starts_with("realm           new\n"));
  }
}

TEST_CASE("--json refuses the same bad shapes as the table") {
  FakeTransport t;
  t.reply(200, json{{"held", "not an array"}, {"code", "ok"}});
  auto inv = invocation(Command::held);
  inv.json = true;
  auto r = run_with(inv, t);
  CHECK(r.exit == 3);
  CHECK(r.out.empty());
  CHECK(nlohmann::json::parse(r.err) ==
        nlohmann::json::parse(R"({"error": {"code": "bad_reply", "detail": "the reply has no \"held\" array",
                                             "exit_code": 3, "http_status": null, "request_id": null, "hint": null,
                                             "problem": null}})"));
}

TEST_CASE("--json: a refusal's error carries the gateway's problem and request id") {
  FakeTransport t;
  t.problem(409, "operation_not_held", "already settled");
  auto inv = invocation(Command::resolve, {"t", "k", "op"});
  inv.json = true;
  auto r = run_with(inv, t);
  CHECK(r.exit == 1);
  CHECK(r.out.empty());
  auto error = nlohmann::json::parse(r.err)["error"];
  CHECK(error["code"] == "operation_not_held");
  CHECK(error["http_status"] == 409);
  CHECK(error["request_id"] == "req-9");
  CHECK(error["problem"]["code"] == "operation_not_held");
  CHECK(error["problem"]["detail"] == "already settled");
}

TEST_CASE("rejections --since-ms: works, with a note on stderr that it is deprecated (not with --json)") {
  FakeTransport t;
  t.reply(200, json{{"rejections", json::array()}, {"now_ms", 5}, {"next_cursor", nullptr}, {"code", "ok"}});
  auto inv = invocation(Command::rejections);
  inv.since_ms_flag = true;
  auto r = run_with(inv, t);
  CHECK(r.exit == 0);
  CHECK(r.out == "no rejections\n");
  CHECK(r.err.starts_with("note: --since-ms is deprecated; use --since TIME"));

  FakeTransport tj;
  tj.reply(200, json{{"rejections", json::array()}, {"now_ms", 5}, {"next_cursor", nullptr}, {"code", "ok"}});
  inv.json = true;
  CHECK(run_with(inv, tj).err.empty());
}
