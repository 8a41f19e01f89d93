// A real gateway for HTTP tests: a fresh database, the full Runtime on an
// ephemeral port, and the tokens of the test config.
#pragma once

#include "config/config.hpp"
#include "core/codes.hpp"
#include "service/runtime/runtime.hpp"
#include "support/http_client.hpp"
#include "support/test_database.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>

namespace gw::test {

inline const std::string agent_a = "test-agent-token-a";   // tenants: tenant-a, tenant-c
inline const std::string agent_b = "test-agent-token-b";   // tenant: tenant-b
inline const std::string operator_token = "test-operator-token";

// The test config as JSON, pointing at `database_url`; tests may edit it.
nlohmann::json test_config_json(const std::string& database_url);

// Config edits for a test that stops its database: connects, statements and
// the pool's queue give up within seconds, so a request answers
// authority_unavailable promptly instead of waiting out the defaults.
inline void fail_fast_database(nlohmann::json& config) {
  config["database"]["connect_timeout_s"] = 1;
  config["database"]["statement_timeout_ms"] = 1000;
  config["database"]["queue_timeout_ms"] = 2000;
}

struct GatewayOptions {
  bool manual_clock = true;
  // Changes applied to the config JSON before it is parsed.
  std::function<void(nlohmann::json&)> edit;
};

class Gateway {
 public:
  explicit Gateway(GatewayOptions options = {});
  // Runs against an existing database instead of a fresh one.
  Gateway(const std::string& database_url, GatewayOptions options);
  ~Gateway();

  std::uint16_t port() const { return port_; }
  HttpClient client() const { return HttpClient(port_); }
  const TestDatabase& db() const { return *db_; }
  Runtime& runtime() { return *runtime_; }

  // Operator sets the manual clock; fails the test unless accepted.
  void set_clock(std::int64_t now_ms);
  // Agent A claims; fails the test unless granted. Returns the reply JSON.
  nlohmann::json claim(const std::string& tenant, const std::string& task, const std::string& owner,
                       std::int64_t lease_ms, const std::string& token = agent_a);

 private:
  void start(const std::string& url, const GatewayOptions& options);
  std::unique_ptr<TestDatabase> db_;
  std::unique_ptr<Runtime> runtime_;
  std::uint16_t port_ = 0;
};

// A token with one field changed, as a forger or a confused client sends it.
std::string forge(const std::string& token, const std::string& field, const nlohmann::json& value);

// The code with this wire name, if the gateway has one.
std::optional<Code> code_named(const std::string& wire_name);

// A gateway-made refusal: status, Gateway-Status and the problem+json body
// agree, and the title is the code's own title from the one code table.
void check_problem(const Reply& r, unsigned status, const std::string& code);

std::string task_path(const std::string& tenant, const std::string& task, const std::string& tail = "");

}  // namespace gw::test
