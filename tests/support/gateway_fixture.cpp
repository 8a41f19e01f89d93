#include "support/gateway_fixture.hpp"

#include "core/base64url.hpp"
#include "core/codes.hpp"
#include "core/digest.hpp"

#include <doctest/doctest.h>

namespace gw::test {

nlohmann::json test_config_json(const std::string& database_url) {
  return {
      {"listen", {{"address", "127.0.0.1"}, {"port", 0}}},
      {"database", {{"url", database_url}, {"pool_size", 8}, {"statement_timeout_ms", 3000},
                    {"queue_timeout_ms", 5000}}},
      {"http", {{"max_body_bytes", 65536}, {"max_header_bytes", 8192}, {"read_timeout_ms", 5000},
                {"idle_timeout_ms", 30000}, {"io_threads", 2}}},
      {"agents",
       {{{"name", "agent-a"}, {"token_sha256", sha256_hex(agent_a)}, {"tenants", {"tenant-a", "tenant-c"}}},
        {{"name", "agent-b"}, {"token_sha256", sha256_hex(agent_b)}, {"tenants", {"tenant-b"}}}}},
      {"operators", {{{"name", "ops"}, {"token_sha256", sha256_hex(operator_token)}}}},
      // Events and warn lines (unknown_outcome, authority_unavailable) in the
      // test output, not a line per request of a soak run.
      {"log", {{"level", "info"}, {"access", false}}},
  };
}

Gateway::Gateway(GatewayOptions options) : db_(std::make_unique<TestDatabase>()) {
  start(db_->url(), options);
}

Gateway::Gateway(const std::string& database_url, GatewayOptions options) { start(database_url, options); }

void Gateway::start(const std::string& url, const GatewayOptions& options) {
  auto json = test_config_json(url);
  if (options.edit) options.edit(json);
  RuntimeOptions ro;
  ro.manual_clock = options.manual_clock;
  runtime_ = std::make_unique<Runtime>(parse_config(json.dump()), ro);
  port_ = runtime_->start();
}

Gateway::~Gateway() {
  if (runtime_) runtime_->stop(std::chrono::milliseconds(2000));
}

void Gateway::set_clock(std::int64_t now_ms) {
  auto r = client().post_json("/v1/admin/clock", {{"now_ms", now_ms}}, operator_token);
  REQUIRE_MESSAGE(r.status == 200, r.body);
}

nlohmann::json Gateway::claim(const std::string& tenant, const std::string& task, const std::string& owner,
                              std::int64_t lease_ms, const std::string& token) {
  auto r = client().post_json(task_path(tenant, task, "claim"), {{"owner", owner}, {"lease_ms", lease_ms}}, token);
  REQUIRE_MESSAGE(r.status == 200, r.body);
  REQUIRE(r.code() == "granted");
  return r.json();
}

std::string forge(const std::string& token, const std::string& field, const nlohmann::json& value) {
  auto j = nlohmann::json::parse(*base64url_decode(token));
  j[field] = value;
  return base64url_encode(j.dump());
}

std::optional<Code> code_named(const std::string& wire_name) {
  for (auto c = static_cast<int>(Code::ok); c <= static_cast<int>(Code::internal_error); ++c)
    if (name(static_cast<Code>(c)) == wire_name) return static_cast<Code>(c);
  return std::nullopt;
}

void check_problem(const Reply& r, unsigned status, const std::string& code) {
  CHECK_MESSAGE(r.status == status, r.body);
  CHECK(r.code() == code);
  CHECK(r.header("Content-Type") == "application/problem+json");
  auto j = r.json();
  CHECK(j["status"] == status);
  CHECK(j["code"] == code);
  const auto known = code_named(code);
  REQUIRE_MESSAGE(known, "no gateway code named " << code);
  CHECK(j["title"] == std::string(title(*known)));
  CHECK(j["detail"].is_string());
  CHECK_FALSE(j["detail"].get<std::string>().empty());
}

std::string task_path(const std::string& tenant, const std::string& task, const std::string& tail) {
  return "/v1/tenants/" + tenant + "/tasks/" + task + (tail.empty() ? "" : "/" + tail);
}

}  // namespace gw::test
