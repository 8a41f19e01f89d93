// The JSON log of a real write-gateway process, its stderr captured: one
// line per request with the fields an operator searches by, one line per
// event, and never a token, a grant secret, a provider credential or a body,
// whatever the request carried. An unknown_outcome leaves a line even with
// the access log off.
#include "proxy/proxy_fixture.hpp"

#include "core/base64url.hpp"
#include "support/eventually.hpp"
#include "support/process.hpp"

#include <sstream>

using namespace gw;
using namespace gw::test;

namespace {

std::vector<nlohmann::json> log_lines(const GatewayProcess& g) {
  std::vector<nlohmann::json> out;
  std::istringstream in(g.log());
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    REQUIRE_MESSAGE(j.is_object(), "not a JSON line: " << line);
    out.push_back(std::move(j));
  }
  return out;
}

// The first line with this event (and request id, when given); waits for
// the writer thread to write it.
std::optional<nlohmann::json> find_line(const GatewayProcess& g, const std::string& event,
                                        const std::string& request_id = "") {
  std::optional<nlohmann::json> found;
  eventually([&] {
    for (auto& j : log_lines(g))
      if (j["event"] == event && (request_id.empty() || j.value("request_id", "") == request_id)) {
        found = j;
        return true;
      }
    return false;
  }, std::chrono::seconds(20));
  return found;
}

nlohmann::json gateway_config(const TestDatabase& db, const ProviderProcess& provider, bool access) {
  auto config = test_config_json(db.url());
  config["providers"] = nlohmann::json::array({booking_provider_config(provider)});
  config["log"] = {{"level", "info"}, {"access", access}};
  return config;
}

const std::string logged_trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
const std::string logged_traceparent = "00-" + logged_trace_id + "-00f067aa0ba902b7-01";

}  // namespace

TEST_CASE("log: a protected request's line has its fields and none of its token, grant secret, credential or body") {
  TestDatabase db;
  ProviderProcess provider;
  GatewayProcess g(gateway_config(db, provider, true), true, booking_credential_envs(), true);
  auto c = g.client();
  REQUIRE(c.post_json("/v1/admin/clock", {{"now_ms", 1000}}, operator_token).status == 200);
  auto claimed = c.post_json(task_path("tenant-a", "task-log", "claim"), {{"owner", "region-a"}, {"lease_ms", 600000}},
                             agent_a);
  REQUIRE(claimed.code() == "granted");
  const auto token = grant_token(claimed.json());
  const auto decoded = nlohmann::json::parse(base64url_decode(token).value());
  const std::string secret = decoded.at("secret");

  const std::string body_marker = "body-marker-7f3a9c1e";
  Write w;
  w.task = "task-log";
  w.grant = token;
  w.key = "op-log-1";
  w.body = booking_body("slot-log", body_marker);
  auto r = send(c, w, {{"X-Request-Id", "req-log-1"}, {"traceparent", logged_traceparent}});
  REQUIRE(r.code() == "committed");

  auto line = find_line(g, "request", "req-log-1");
  REQUIRE(line);
  const auto& j = *line;
  CHECK(j["level"] == "info");
  CHECK(j["time"].get<std::string>().ends_with("Z"));
  CHECK(j["route"] == "proxy");
  CHECK(j["method"] == "POST");
  CHECK(j["tenant"] == "tenant-a");
  CHECK(j["task"] == "task-log");
  CHECK(j["operation"] == "op-log-1");
  CHECK(j["attempt"] == 1);
  CHECK(j["epoch"] == decoded["epoch"]);
  CHECK(j["code"] == "committed");
  CHECK(j["status"] == r.status);
  CHECK(j["provider"] == "booking");
  CHECK(j["provider_status"] == r.status);
  CHECK(j["trace_id"] == logged_trace_id);
  CHECK(j["parent_span_id"] == "00f067aa0ba902b7");
  CHECK(j["span_id"].get<std::string>().size() == 16);
  for (const auto* field : {"duration_ms", "db_ms", "upstream_ms"}) CHECK(j[field].is_number());
  CHECK(j["db_ms"].get<double>() > 0);
  CHECK(j["upstream_ms"].get<double>() > 0);

  // Refused at admission: nothing was forwarded, so no upstream fields.
  Write stale = w;
  stale.key = "op-log-2";
  stale.expected_version = 7;
  REQUIRE(send(c, stale, {{"X-Request-Id", "req-log-2"}}).code() == "version_conflict");
  auto refused_line = find_line(g, "request", "req-log-2");
  REQUIRE(refused_line);
  CHECK((*refused_line)["provider"] == "booking");
  CHECK((*refused_line)["operation"] == "op-log-2");
  for (const auto* field : {"upstream_ms", "provider_status", "span_id", "attempt"})
    CHECK_MESSAGE(!refused_line->contains(field), std::string(field));

  // A refusal with a token in it (stale grant, other agent's token) too.
  auto refused = c.post_json(task_path("tenant-a", "task-log", "renew"), {{"grant_token", token + "x"}, {"lease_ms", 1000}},
                             agent_a);
  CHECK(refused.status == 400);
  REQUIRE(find_line(g, "request", refused.header("X-Request-Id").value()));

  const auto log = g.log();
  CHECK(log.find(agent_a) == std::string::npos);
  CHECK(log.find(token) == std::string::npos);
  CHECK(log.find(secret) == std::string::npos);
  CHECK(log.find(provider_credential) == std::string::npos);
  CHECK(log.find(body_marker) == std::string::npos);
  CHECK(log.find(operator_token) == std::string::npos);
  // The start line names the build and the library malloc came from: the release binary's
  // is mimalloc's, bound for the whole process (docs/performance.md).
  auto started = find_line(g, "gateway_started");
  REQUIRE(started);
  CHECK((*started)["version"].is_string());
  CHECK((*started)["commit"].is_string());
  CHECK_MESSAGE((*started)["allocator"].get<std::string>().starts_with(GW_EXPECTED_MALLOC), (*started)["allocator"]);
}

TEST_CASE("log: with the access log off, an unknown_outcome still leaves a warn line, and so does the held operation") {
  TestDatabase db;
  ProviderProcess provider;
  GatewayProcess g(gateway_config(db, provider, false), true, booking_credential_envs(), true);
  auto c = g.client();
  REQUIRE(c.post_json("/v1/admin/clock", {{"now_ms", 1000}}, operator_token).status == 200);
  auto claimed = c.post_json(task_path("tenant-a", "task-held", "claim"), {{"owner", "region-a"}, {"lease_ms", 600000}},
                             agent_a);
  REQUIRE(claimed.code() == "granted");
  Write w;
  w.task = "task-held";
  w.grant = grant_token(claimed.json());
  w.key = "op-ok";
  w.body = booking_body("slot-ok");
  REQUIRE(send(c, w, {{"X-Request-Id", "req-ok"}}).code() == "committed");

  provider.set_fault("error_5xx", 0, 1);
  w.key = "op-held";
  w.body = booking_body("slot-held");
  w.expected_version = 1;
  REQUIRE(send(c, w, {{"X-Request-Id", "req-held"}}).code() == "unknown_outcome");
  // The exact retry is refused unknown_outcome again, and logged again.
  REQUIRE(send(c, w, {{"X-Request-Id", "req-held-retry"}}).code() == "unknown_outcome");

  auto held = find_line(g, "operation_held");
  REQUIRE(held);
  CHECK((*held)["level"] == "warn");
  CHECK((*held)["operation"] == "op-held");
  CHECK((*held)["request_id"] == "req-held");
  for (const auto* id : {"req-held", "req-held-retry"}) {
    auto line = find_line(g, "request", id);
    REQUIRE(line);
    CHECK((*line)["level"] == "warn");
    CHECK((*line)["code"] == "unknown_outcome");
    CHECK((*line)["operation"] == "op-held");
  }
  // Written by now, since later lines are: the committed request left none.
  for (const auto& j : log_lines(g)) CHECK(j.value("request_id", "") != "req-ok");
}
