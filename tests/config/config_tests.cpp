#include "config/config.hpp"
#include "support/tls_certs.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

using namespace gw;
using nlohmann::json;

namespace {
const std::string hash_a(64, 'a');
json minimal() {
  return {{"database", {{"url", "host=127.0.0.1 dbname=x"}}},
          {"agents", {{{"name", "a"}, {"token_sha256", hash_a}, {"tenants", {"tenant-a"}}}}}};
}
std::string error_of(const json& j) {
  try {
    parse_config(j.dump());
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("config: a minimal config takes documented defaults") {
  auto c = parse_config(minimal().dump());
  CHECK(c.listen.port == 8080);
  CHECK(c.database.pool_size == 8);
  CHECK(c.http.max_body_bytes == 1 << 20);
  REQUIRE(c.agents.size() == 1);
  CHECK(c.agents[0].tenants.count("tenant-a") == 1);
}

// A database count: its default, values taken as given, values refused at its JSON path.
struct DatabaseCount {
  const char* field;
  unsigned DatabaseConfig::*member;
  unsigned by_default;
  std::vector<int> taken;
  std::vector<json> refused;
};

TEST_CASE("config: database.direct_connections (8 per I/O thread, 0 turns them off), direct_pipeline (4) and group_max (1: no shared transactions)") {
  const DatabaseCount counts[] = {
      {"direct_connections", &DatabaseConfig::direct_connections, 8, {0, 1, 64},
       {json(-1), json(65), json(1.5), json("2"), json(true)}},
      {"direct_pipeline", &DatabaseConfig::direct_pipeline, 4, {1, 2, 64},
       {json(0), json(65), json(-1), json(2.5), json("4")}},
      {"group_max", &DatabaseConfig::group_max, 1, {1, 32, 1024}, {json(0), json(1025), json(-1), json("32")}},
  };
  for (const auto& count : counts) {
    CAPTURE(count.field);
    CHECK(parse_config(minimal().dump()).database.*count.member == count.by_default);
    for (int n : count.taken) {
      auto j = minimal();
      j["database"][count.field] = n;
      CHECK(parse_config(j.dump()).database.*count.member == static_cast<unsigned>(n));
    }
    for (const json& bad : count.refused) {
      auto j = minimal();
      j["database"][count.field] = bad;
      CHECK(error_of(j).find(std::string("$.database.") + count.field) != std::string::npos);
    }
  }
}

TEST_CASE("config: errors name the JSON path of the bad field") {
  auto j = minimal();
  j["database"]["pool_size"] = 0;
  CHECK(error_of(j).find("$.database.pool_size") != std::string::npos);
  j = minimal();
  j["database"]["pool_size"] = true;
  CHECK(error_of(j).find("$.database.pool_size") != std::string::npos);
  j = minimal();
  j["database"]["poolsize"] = 4;
  CHECK(error_of(j).find("$.database.poolsize: unknown field") != std::string::npos);
  j = minimal();
  j["agents"][0]["token_sha256"] = "ABC";
  CHECK(error_of(j).find("$.agents[0].token_sha256") != std::string::npos);
  j = minimal();
  j["agents"][0]["tenants"] = {"has space"};
  CHECK(error_of(j).find("$.agents[0].tenants[0]") != std::string::npos);
  j = minimal();
  j["operators"] = {{{"name", "o"}, {"token_sha256", hash_a}}};
  CHECK(error_of(j).find("is used twice") != std::string::npos);
  j = minimal();
  j["database"].erase("url");
  CHECK(error_of(j).find("$.database.url") != std::string::npos);
  CHECK(std::string(error_of(json::array())).find("$") != std::string::npos);
}

TEST_CASE("config: database url from an environment variable") {
  auto j = minimal();
  j["database"] = {{"url_env", "GW_TEST_DB_URL"}};
  ::unsetenv("GW_TEST_DB_URL");
  CHECK(error_of(j).find("GW_TEST_DB_URL is not set") != std::string::npos);
  ::setenv("GW_TEST_DB_URL", "host=db", 1);
  CHECK(parse_config(j.dump()).database.url == "host=db");
}

TEST_CASE("config: providers with base URL, credential env and outcome rules") {
  ::setenv("GW_TEST_BOOKING_KEY", "k-123-booking-test", 1);
  auto j = minimal();
  j["providers"] = {{{"name", "booking"},
                     {"base_url", "https://api.example:8443/v2/"},
                     {"credential", {{"env", "GW_TEST_BOOKING_KEY"}, {"shared_by_tenants", true}}},
                     {"outcomes", {{"rejected", {"400-499"}}, {"not_executed", {503}}}}}};
  auto c = parse_config(j.dump());
  REQUIRE(c.providers.size() == 1);
  const auto& p = c.providers[0];
  CHECK(p.tls);
  CHECK(p.host == "api.example");
  CHECK(p.port == "8443");
  CHECK(p.base_path == "/v2");
  CHECK(p.shared_credential == "k-123-booking-test");
  CHECK(*p.credential_for("any-tenant") == "k-123-booking-test");
  CHECK(p.outcomes.not_executed.at(0).contains(503));

  auto bad = j;
  bad["providers"][0]["base_url"] = "ftp://x";
  CHECK(error_of(bad).find("$.providers[0].base_url") != std::string::npos);
  bad = j;
  bad["providers"][0]["outcomes"]["rejected"] = {"200-299"};
  CHECK(error_of(bad).find("2xx") != std::string::npos);
  bad = j;
  bad["providers"][0]["credential"]["env"] = "GW_TEST_UNSET_VAR";
  CHECK(error_of(bad).find("$.providers[0].credential.env") != std::string::npos);
}

TEST_CASE("config: listen address, header-safe credentials and non-overlapping outcome lists") {
  auto j = minimal();
  j["listen"] = {{"address", "localhost:80"}};
  CHECK(error_of(j).find("$.listen.address") != std::string::npos);
  j["listen"] = {{"address", "::1"}};
  CHECK(error_of(j).empty());

  ::setenv("GW_TEST_CRM_KEY", "crm-test-credential", 1);
  auto p = minimal();
  p["providers"] = {{{"name", "crm"}, {"base_url", "http://127.0.0.1:9102"}, {"credential", {{"env", "GW_TEST_CRM_KEY"}, {"shared_by_tenants", true}}}}};
  CHECK(error_of(p).empty());
  auto bad = p;
  bad["providers"][0]["credential"]["prefix"] = "Bearer\r\nX-Injected: 1 ";
  CHECK(error_of(bad).find("$.providers[0].credential.prefix") != std::string::npos);
  bad = p;
  bad["providers"][0]["outcomes"] = {{"rejected", {"400-499"}}};  // the default not_executed has 408 and 429
  CHECK(error_of(bad).find("overlaps") != std::string::npos);
  bad = p;
  bad["providers"][0]["outcomes"] = {{"not_executed", {"100-199"}}};
  CHECK(error_of(bad).find("300-599") != std::string::npos);
}

TEST_CASE("config: an outcome status too large for its type is refused, never wrapped into range") {
  ::setenv("GW_TEST_CRM_KEY", "crm-test-credential", 1);
  auto j = minimal();
  // 2^32 + 400 would wrap to 400 in an unsigned.
  j["providers"] = {{{"name", "crm"},
                     {"base_url", "http://127.0.0.1:9102"},
                     {"credential", {{"env", "GW_TEST_CRM_KEY"}, {"shared_by_tenants", true}}},
                     {"outcomes", {{"rejected", {4294967696}}}}}};
  CHECK(error_of(j).find("$.providers[0].outcomes.rejected[0]: must lie within 300-599") != std::string::npos);
  j["providers"][0]["outcomes"] = {{"not_executed", {"503-4294967799"}}};
  CHECK(error_of(j).find("$.providers[0].outcomes.not_executed[0]: must lie within 300-599") != std::string::npos);
}

TEST_CASE("config: recovery defaults, limits and the forward budget") {
  auto c = parse_config(minimal().dump());
  CHECK(c.recovery.forward_margin == std::chrono::milliseconds(5000));
  CHECK(c.recovery.sweep_interval == std::chrono::milliseconds(1000));
  CHECK(c.recovery.sweep_batch == 100);
  auto j = minimal();
  j["recovery"] = {{"forward_margin_ms", 0}, {"sweep_interval_ms", 10}, {"sweep_batch", 10000}};
  c = parse_config(j.dump());
  CHECK(c.recovery.forward_margin == std::chrono::milliseconds(0));
  CHECK(c.recovery.sweep_interval == std::chrono::milliseconds(10));
  CHECK(c.recovery.sweep_batch == 10000);
  for (const auto& [field, bad] : std::vector<std::pair<std::string, json>>{
           {"forward_margin_ms", -1}, {"forward_margin_ms", 3600001}, {"sweep_interval_ms", 9},
           {"sweep_batch", 0}, {"sweep_batch", 10001}, {"sweep_batch", "5"}, {"sweep_interval_ms", 1.5}}) {
    CAPTURE(field);
    j = minimal();
    j["recovery"] = {{field, bad}};
    CHECK(error_of(j).find("$.recovery." + field) != std::string::npos);
  }
  j = minimal();
  j["recovery"] = {{"sweep_every_ms", 5}};
  CHECK(error_of(j).find("$.recovery.sweep_every_ms: unknown field") != std::string::npos);

  ProviderConfig p;  // the documented timeouts: queue 2 s + connect 2 s + request 10 s
  CHECK(p.forward_budget() == std::chrono::milliseconds(14000));
}

namespace {
json with_lookup(const json& lookup) {
  ::setenv("GW_TEST_BOOKING_KEY", "k-123-booking-test", 1);
  auto j = minimal();
  j["providers"] = {{{"name", "booking"},
                     {"base_url", "http://127.0.0.1:9101/api"},
                     {"credential", {{"env", "GW_TEST_BOOKING_KEY"}, {"shared_by_tenants", true}}},
                     {"lookup", lookup}}};
  return j;
}
}  // namespace

TEST_CASE("config: a provider without a lookup has none, and its operations are not looked up") {
  auto c = parse_config(with_lookup(nullptr).dump());
  REQUIRE(c.providers.size() == 1);
  CHECK_FALSE(c.providers[0].lookup.has_value());
  CHECK(lookup_providers(c).empty());
}

TEST_CASE("config: a provider's lookup takes documented defaults") {
  auto c = parse_config(with_lookup({{"path", "/bookings/by-key/{key}"}}).dump());
  REQUIRE(c.providers[0].lookup.has_value());
  const auto& l = *c.providers[0].lookup;
  CHECK(l.method == "GET");
  CHECK(l.path == "/bookings/by-key/{key}");
  REQUIRE(l.found.size() == 1);
  CHECK(l.found[0].first == 200);
  CHECK(l.found[0].last == 200);
  REQUIRE(l.not_found.size() == 1);
  CHECK(l.not_found[0].first == 404);
  CHECK(l.not_found[0].last == 404);
  CHECK(l.settle_window == std::chrono::milliseconds(60000));
  CHECK_FALSE(l.status_pointer.has_value());
  CHECK_FALSE(l.body_pointer.has_value());
  CHECK(lookup_providers(c) == std::vector<std::string>{"booking"});
}

TEST_CASE("config: a provider's lookup with every field") {
  auto c = parse_config(with_lookup({{"method", "GET"},
                                     {"path", "/bookings/lookup?key={key}"},
                                     {"found", {200, "202-203"}},
                                     {"not_found", {404, 410}},
                                     {"settle_window_ms", 0},
                                     {"status_pointer", "/status"},
                                     {"body_pointer", "/body"}})
                            .dump());
  const auto& l = c.providers[0].lookup.value();
  CHECK(l.path == "/bookings/lookup?key={key}");
  REQUIRE(l.found.size() == 2);
  CHECK(l.found[1].first == 202);
  CHECK(l.found[1].last == 203);
  REQUIRE(l.not_found.size() == 2);
  CHECK(l.not_found[1].first == 410);
  CHECK(l.settle_window == std::chrono::milliseconds(0));
  CHECK(l.status_pointer == "/status");
  CHECK(l.body_pointer == "/body");
  // The root pointer is a pointer too: the whole found body is the original body.
  CHECK(parse_config(with_lookup({{"path", "/k/{key}"}, {"body_pointer", ""}}).dump())
            .providers[0].lookup->body_pointer == "");
  CHECK(parse_config(with_lookup({{"path", "/k/{key}"}, {"method", "HEAD"}}).dump()).providers[0].lookup->method ==
        "HEAD");
}

TEST_CASE("config: a bad lookup field stops the load with its path") {
  const std::string at = "$.providers[0].lookup.";
  struct Case {
    json lookup;
    std::string field;
    std::string says;
  };
  const Case cases[] = {
      {{{"method", "GET"}}, "path", "is required"},
      {{{"path", "bookings/{key}"}}, "path", "must start with '/'"},
      {{{"path", "/bookings/by-key"}}, "path", "must contain {key}"},
      {{{"path", "/b/{key}/{key}"}}, "path", "exactly once"},
      {{{"path", "/b/{id}/{key}"}}, "path", "brace"},
      {{{"path", "/b/{key"}}, "path", "must contain {key}"},
      {{{"path", "/b /{key}"}}, "path", "printable ASCII"},
      {{{"path", "/b/{key}#x"}}, "path", "'#'"},
      {{{"path", 5}}, "path", "must be a string"},
      {{{"path", "/b/{key}"}, {"method", "POST"}}, "method", "must be GET or HEAD"},
      {{{"path", "/b/{key}"}, {"method", "get"}}, "method", "must be GET or HEAD"},
      {{{"path", "/b/{key}"}, {"method", "HEAD"}, {"status_pointer", "/status"}}, "method", "HEAD has no body"},
      {{{"path", "/b/{key}"}, {"method", "HEAD"}, {"body_pointer", "/body"}}, "method", "HEAD has no body"},
      {{{"path", "/b/{key}"}, {"found", json::array()}}, "found", "non-empty"},
      {{{"path", "/b/{key}"}, {"found", 200}}, "found", "non-empty array"},
      {{{"path", "/b/{key}"}, {"found", {199}}}, "found[0]", "200-599"},
      {{{"path", "/b/{key}"}, {"found", {"200-600"}}}, "found[0]", "200-599"},
      {{{"path", "/b/{key}"}, {"found", {4294967496.0}}}, "found[0]", "must be a status"},
      {{{"path", "/b/{key}"}, {"found", {4294967496}}}, "found[0]", "200-599"},
      {{{"path", "/b/{key}"}, {"not_found", {"410-404"}}}, "not_found[0]", "200-599"},
      {{{"path", "/b/{key}"}, {"not_found", {"x"}}}, "not_found[0]", "must be a status"},
      {{{"path", "/b/{key}"}, {"not_found", {200}}}, "not_found", "overlaps the found statuses"},
      {{{"path", "/b/{key}"}, {"found", {"200-404"}}}, "not_found", "overlaps the found statuses"},
      {{{"path", "/b/{key}"}, {"settle_window_ms", -1}}, "settle_window_ms", "integer from 0 to 86400000"},
      {{{"path", "/b/{key}"}, {"settle_window_ms", 86400001}}, "settle_window_ms", "integer from 0 to 86400000"},
      {{{"path", "/b/{key}"}, {"settle_window_ms", "60000"}}, "settle_window_ms", "integer"},
      {{{"path", "/b/{key}"}, {"status_pointer", "status"}}, "status_pointer", "JSON pointer"},
      {{{"path", "/b/{key}"}, {"body_pointer", "/a/~2"}}, "body_pointer", "JSON pointer"},
      {{{"path", "/b/{key}"}, {"status_pointer", 1}}, "status_pointer", "must be a string"},
      {{{"path", "/b/{key}"}, {"settle_ms", 5}}, "settle_ms", "unknown field"},
      {"GET /b/{key}", "lookup", "must be an object"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.lookup.dump());
    auto error = error_of(with_lookup(c.lookup));
    auto path = c.field == "lookup" ? std::string("$.providers[0].lookup") : at + c.field;
    CHECK(error.find(path + ": ") != std::string::npos);
    CHECK(error.find(c.says) != std::string::npos);
  }
}


TEST_CASE("config: reconcile defaults, limits, and the lookup lease") {
  auto c = parse_config(minimal().dump());
  const auto& r = c.recovery.reconcile;
  CHECK(r.interval == std::chrono::milliseconds(1000));
  CHECK(r.max_concurrent == 4);
  CHECK(r.backoff.base == std::chrono::milliseconds(1000));
  CHECK(r.backoff.cap == std::chrono::milliseconds(300000));
  CHECK(r.backoff.jitter_percent == 100);

  auto j = minimal();
  j["recovery"] = {{"reconcile",
                    {{"interval_ms", 10}, {"max_concurrent", 1000}, {"backoff_base_ms", 5},
                     {"backoff_cap_ms", 5}, {"jitter_percent", 0}}}};
  c = parse_config(j.dump());
  CHECK(c.recovery.reconcile.interval == std::chrono::milliseconds(10));
  CHECK(c.recovery.reconcile.max_concurrent == 1000);
  CHECK(c.recovery.reconcile.backoff.base == std::chrono::milliseconds(5));
  CHECK(c.recovery.reconcile.backoff.cap == std::chrono::milliseconds(5));
  CHECK(c.recovery.reconcile.backoff.jitter_percent == 0);

  for (const auto& [field, bad] : std::vector<std::pair<std::string, json>>{
           {"interval_ms", 9}, {"interval_ms", 3600001}, {"max_concurrent", 0}, {"max_concurrent", 1001},
           {"backoff_base_ms", 0}, {"backoff_cap_ms", 86400001}, {"jitter_percent", 101},
           {"jitter_percent", -1}, {"jitter_percent", 0.5}, {"max_concurrent", true}}) {
    CAPTURE(field);
    j = minimal();
    j["recovery"] = {{"reconcile", {{field, bad}}}};
    CHECK(error_of(j).find("$.recovery.reconcile." + field + ": must be an integer") != std::string::npos);
  }
  j = minimal();
  j["recovery"] = {{"reconcile", {{"backoff_base_ms", 2000}, {"backoff_cap_ms", 1000}}}};
  CHECK(error_of(j).find("$.recovery.reconcile.backoff_cap_ms: must not be below backoff_base_ms") !=
        std::string::npos);
  j = minimal();
  j["recovery"] = {{"reconcile", {{"every_ms", 5}}}};
  CHECK(error_of(j).find("$.recovery.reconcile.every_ms: unknown field") != std::string::npos);

  // The lease covers the slowest lookup provider's exchange plus the margin;
  // a provider without a lookup does not count.
  ::setenv("GW_TEST_CRM_KEY", "crm-test-credential", 1);
  j = with_lookup({{"path", "/bookings/by-key/{key}"}});
  j["providers"][0]["request_timeout_ms"] = 3000;  // 2000 + 2000 + 3000
  j["providers"].push_back({{"name", "crm"},
                            {"base_url", "http://127.0.0.1:9102"},
                            {"credential", {{"env", "GW_TEST_CRM_KEY"}, {"shared_by_tenants", true}}},
                            {"request_timeout_ms", 60000}});
  j["recovery"] = {{"forward_margin_ms", 500}};
  c = parse_config(j.dump());
  CHECK(lookup_providers(c) == std::vector<std::string>{"booking"});
  CHECK(lookup_lease(c) == std::chrono::milliseconds(7500));
}

TEST_CASE("config: provider webhooks with rotated secrets, pointers and an outcome table") {
  ::setenv("GW_TEST_CRM_KEY", "crm-test-credential", 1);
  ::setenv("GW_TEST_WH_NEW", "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", 1);
  ::setenv("GW_TEST_WH_OLD", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", 1);
  auto j = minimal();
  j["providers"] = {{{"name", "crm"},
                     {"base_url", "http://127.0.0.1:9102"},
                     {"credential", {{"env", "GW_TEST_CRM_KEY"}, {"shared_by_tenants", true}}},
                     {"webhooks",
                      {{"secret_envs", {"GW_TEST_WH_NEW", "GW_TEST_WH_OLD"}},
                       {"key_pointer", "/idempotency_key"},
                       {"outcome_pointer", "/status"},
                       {"outcomes", {{"201", "succeeded"}, {"409", "rejected"}, {"429", "not_executed"}}}}}}};
  auto c = parse_config(j.dump());
  REQUIRE(c.providers[0].webhooks);
  const auto& w = *c.providers[0].webhooks;
  CHECK(w.secret_envs == std::vector<std::string>{"GW_TEST_WH_NEW", "GW_TEST_WH_OLD"});
  REQUIRE(w.keys.size() == 2);
  CHECK(w.keys[0].size() == 32);
  CHECK(w.keys[0][31] == '\x1f');
  CHECK(w.keys[1].size() == 24);
  CHECK(w.tolerance == std::chrono::milliseconds(300000));  // the default
  CHECK(w.rules.key_pointer == "/idempotency_key");
  CHECK(w.rules.outcome_pointer == "/status");
  CHECK(w.rules.outcomes.at("201") == OperationState::succeeded);
  CHECK(w.rules.outcomes.at("409") == OperationState::rejected);
  CHECK(w.rules.outcomes.at("429") == OperationState::not_executed);

  // Without a webhooks block a provider has none.
  auto plain = j;
  plain["providers"][0].erase("webhooks");
  CHECK_FALSE(parse_config(plain.dump()).providers[0].webhooks);

  // Only the key pointer is required besides the secrets.
  auto small = j;
  small["providers"][0]["webhooks"] = {
      {"secret_envs", {"GW_TEST_WH_OLD"}}, {"key_pointer", "/k"}, {"tolerance_ms", 1000}};
  auto s = parse_config(small.dump()).providers[0].webhooks.value();
  CHECK_FALSE(s.rules.outcome_pointer);
  CHECK(s.rules.outcomes.empty());
  CHECK(s.tolerance == std::chrono::milliseconds(1000));
}

TEST_CASE("config: a bad webhooks field is named by its JSON path, and a secret is never echoed") {
  ::setenv("GW_TEST_CRM_KEY", "crm-test-credential", 1);
  ::setenv("GW_TEST_WH_OLD", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", 1);
  ::setenv("GW_TEST_WH_EMPTY", "", 1);
  ::setenv("GW_TEST_WH_NOPREFIX", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", 1);
  ::setenv("GW_TEST_WH_SHORT", "whsec_c2hvcnQtc2VjcmV0", 1);
  ::setenv("GW_TEST_WH_NOTB64", "whsec_not*base64*at*all*not*base64*at*all", 1);
  ::unsetenv("GW_TEST_WH_UNSET");
  auto j = minimal();
  j["providers"] = {{{"name", "crm"},
                     {"base_url", "http://127.0.0.1:9102"},
                     {"credential", {{"env", "GW_TEST_CRM_KEY"}, {"shared_by_tenants", true}}},
                     {"webhooks", {{"secret_envs", {"GW_TEST_WH_OLD"}}, {"key_pointer", "/idempotency_key"}}}}};
  REQUIRE(error_of(j).empty());
  const std::string at = "$.providers[0].webhooks.";
  auto with = [&](const std::string& field, const json& value) {
    auto b = j;
    b["providers"][0]["webhooks"][field] = value;
    return error_of(b);
  };
  CHECK(with("secret_envs", {"GW_TEST_WH_OLD", "GW_TEST_WH_UNSET"})
            .find(at + "secret_envs[1]: environment variable GW_TEST_WH_UNSET is not set") == 0);
  CHECK(with("secret_envs", {"GW_TEST_WH_EMPTY"})
            .find(at + "secret_envs[0]: environment variable GW_TEST_WH_EMPTY is not set") == 0);
  for (const char* env : {"GW_TEST_WH_NOPREFIX", "GW_TEST_WH_SHORT", "GW_TEST_WH_NOTB64"}) {
    CAPTURE(env);
    auto e = with("secret_envs", {env});
    CHECK(e.find(at + "secret_envs[0]: environment variable " + env + " must hold whsec_") == 0);
    CHECK(e.find(std::getenv(env)) == std::string::npos);
  }
  CHECK(with("secret_envs", {"GW_TEST_WH_OLD", "GW_TEST_WH_OLD"}).find(at + "secret_envs[1]") == 0);
  CHECK(with("secret_envs", json::array()).find(at + "secret_envs: must name at least one") == 0);
  CHECK(with("secret_envs", "GW_TEST_WH_OLD").find(at + "secret_envs: must be an array") == 0);
  CHECK(with("secret_envs", {7}).find(at + "secret_envs[0]: must be a string") == 0);
  CHECK(with("secret_envs", nullptr).find(at + "secret_envs: is required") == 0);
  CHECK(with("key_pointer", nullptr).find(at + "key_pointer: is required") == 0);
  CHECK(with("key_pointer", "idempotency_key").find(at + "key_pointer: must be a JSON pointer") == 0);
  CHECK(with("key_pointer", "").find(at + "key_pointer: must be a JSON pointer") == 0);
  CHECK(with("outcome_pointer", "/a~2").find(at + "outcome_pointer: must be a JSON pointer") == 0);
  CHECK(with("tolerance_ms", 999).find(at + "tolerance_ms: must be an integer") == 0);
  CHECK(with("tolerance_ms", "300000").find(at + "tolerance_ms: must be an integer") == 0);
  CHECK(with("outcomes", {{"201", "succeeded"}}).find(at + "outcomes: needs outcome_pointer") == 0);
  CHECK(with("secret", "x").find(at + "secret: unknown field") == 0);
  auto b = j;
  b["providers"][0]["webhooks"]["outcome_pointer"] = "/status";
  b["providers"][0]["webhooks"]["outcomes"] = {{"201", "succeeded"}, {"500", "unknown"}};
  CHECK(error_of(b).find(at + "outcomes[\"500\"]: must be") == 0);
  b["providers"][0]["webhooks"]["outcomes"] = {{"201", 1}};
  CHECK(error_of(b).find(at + "outcomes[\"201\"]: must be") == 0);
  b["providers"][0]["webhooks"]["outcomes"] = json::array({"201"});
  CHECK(error_of(b).find(at + "outcomes: must be an object") == 0);
  b["providers"][0]["webhooks"] = "yes";
  CHECK(error_of(b).find("$.providers[0].webhooks: must be an object") == 0);
}

TEST_CASE("config: unfenced_methods default to GET and HEAD, and TRACE, CONNECT and the old protected_methods are refused") {
  ::setenv("GW_TEST_BOOKING_KEY", "k-123-booking-test", 1);
  auto with = [](const json& provider_fields) {
    auto j = minimal();
    json p = {{"name", "booking"}, {"base_url", "http://127.0.0.1:9101"}, {"credential", {{"env", "GW_TEST_BOOKING_KEY"}, {"shared_by_tenants", true}}}};
    for (auto it = provider_fields.begin(); it != provider_fields.end(); ++it) p[it.key()] = it.value();
    j["providers"] = json::array({p});
    return j;
  };
  auto c = parse_config(with(json::object()).dump());
  CHECK(c.providers[0].unfenced_methods == std::set<std::string>{"GET", "HEAD"});
  c = parse_config(with({{"unfenced_methods", {"GET", "PROPFIND"}}}).dump());
  CHECK(c.providers[0].unfenced_methods == std::set<std::string>{"GET", "PROPFIND"});
  c = parse_config(with({{"unfenced_methods", json::array()}}).dump());
  CHECK(c.providers[0].unfenced_methods.empty());  // everything fenced

  for (const char* never : {"TRACE", "connect"}) {
    CAPTURE(never);
    CHECK(error_of(with({{"unfenced_methods", {"GET", never}}})).find("$.providers[0].unfenced_methods[1]: ") !=
          std::string::npos);
  }
  CHECK(error_of(with({{"unfenced_methods", {"GE T"}}})).find("must be an HTTP method") != std::string::npos);
  CHECK(error_of(with({{"unfenced_methods", "GET"}})).find("$.providers[0].unfenced_methods") != std::string::npos);
  CHECK(error_of(with({{"protected_methods", {"POST"}}})).find("$.providers[0].protected_methods: was replaced by unfenced_methods") !=
        std::string::npos);
}

TEST_CASE("config: a credential per tenant, or one shared account declared as such") {
  ::setenv("GW_TEST_KEY_A", "key-a-0123456789", 1);
  ::setenv("GW_TEST_KEY_B", "key-b-0123456789", 1);
  ::setenv("GW_TEST_KEY_A_AGAIN", "key-a-0123456789", 1);
  auto with = [](const json& credential) {
    auto j = minimal();
    j["providers"] = {{{"name", "booking"}, {"base_url", "http://127.0.0.1:9101"}, {"credential", credential}}};
    return j;
  };
  auto c = parse_config(with({{"tenants", {{"tenant-a", {{"env", "GW_TEST_KEY_A"}}}, {"tenant-b", {{"env", "GW_TEST_KEY_B"}}}}}})
                            .dump());
  const auto& p = c.providers[0];
  CHECK_FALSE(p.shared_credential);
  REQUIRE(p.credential_for("tenant-a"));
  CHECK(*p.credential_for("tenant-a") == "key-a-0123456789");
  CHECK(*p.credential_for("tenant-b") == "key-b-0123456789");
  CHECK(p.credential_for("tenant-c") == nullptr);  // no account: refused, never another tenant's
  CHECK(p.reveals_credential("echo: key-b-0123456789"));
  CHECK_FALSE(p.reveals_credential("key"));

  c = parse_config(with({{"env", "GW_TEST_KEY_A"}, {"shared_by_tenants", true}, {"header", "X-Api-Key"}, {"prefix", ""}})
                       .dump());
  CHECK(*c.providers[0].credential_for("tenant-z") == "key-a-0123456789");
  CHECK(c.providers[0].credential_header == "X-Api-Key");

  const std::pair<json, std::string> bad[] = {
      {{{"env", "GW_TEST_KEY_A"}}, "$.providers[0].credential.env: one credential for every tenant"},
      {{{"env", "GW_TEST_KEY_A"}, {"shared_by_tenants", false}}, "$.providers[0].credential.env: one credential"},
      {{{"env", "GW_TEST_KEY_A"}, {"shared_by_tenants", "yes"}}, "$.providers[0].credential.shared_by_tenants"},
      {{{"shared_by_tenants", true}, {"tenants", {{"tenant-a", {{"env", "GW_TEST_KEY_A"}}}}}},
       "$.providers[0].credential.shared_by_tenants: needs env"},
      {{{"env", "GW_TEST_KEY_A"}, {"shared_by_tenants", true}, {"tenants", {{"tenant-a", {{"env", "GW_TEST_KEY_A"}}}}}},
       "either env"},
      {json::object(), "$.providers[0].credential: needs tenants"},
      {{{"tenants", json::object()}}, "$.providers[0].credential.tenants: must be an object"},
      {{{"tenants", {{"tenant-a", {{"env", "GW_TEST_KEY_A"}}}, {"tenant-b", {{"env", "GW_TEST_KEY_A_AGAIN"}}}}}},
       "$.providers[0].credential.tenants.tenant-b: has the same credential as tenant tenant-a"},
      {{{"tenants", {{"has space", {{"env", "GW_TEST_KEY_A"}}}}}}, "the tenant must be a label"},
      {{{"tenants", {{"tenant-a", {{"env", "GW_TEST_UNSET_VAR"}}}}}}, "$.providers[0].credential.tenants.tenant-a.env"},
      {{{"tenants", {{"tenant-a", {{"env", "GW_TEST_KEY_A"}, {"extra", 1}}}}}}, "tenants.tenant-a.extra: unknown field"},
  };
  for (const auto& [credential, expected] : bad) {
    CAPTURE(credential.dump());
    const auto error = error_of(with(credential));
    CAPTURE(error);
    CHECK(error.find(expected) != std::string::npos);
    CHECK(error.find("key-a-0123456789") == std::string::npos);  // a secret is never echoed
  }
}

TEST_CASE("config: a credential from a file, as secrets are mounted, checked like one from the environment") {
  std::string pattern = (std::filesystem::temp_directory_path() / "gw-config-XXXXXX").string();
  const std::string dir = ::mkdtemp(pattern.data());
  struct Cleanup {
    std::string dir;
    ~Cleanup() { std::filesystem::remove_all(dir); }
  } cleanup{dir};
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name, std::ios::binary | std::ios::trunc) << text;
    std::filesystem::permissions(dir + "/" + name, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    return dir + "/" + name;
  };
  const auto with = [](const json& credential) {
    auto j = minimal();
    j["providers"] = {{{"name", "booking"}, {"base_url", "http://127.0.0.1:9101"}, {"credential", credential}}};
    return j.dump();
  };
  const auto error = [&](const json& credential) {
    try {
      parse_config(with(credential), dir);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  ::setenv("GW_TEST_FILE_KEY_B", "file-secret-b1", 1);
  write("a", "file-secret-a1\n");
  const auto b = write("b", "file-secret-b2");

  // Relative to the config's directory, absolute as is; one trailing newline is not part of it.
  auto c = parse_config(with({{"tenants", {{"tenant-a", {{"file", "a"}}}, {"tenant-b", {{"file", b}}}}}}), dir);
  const auto& p = c.providers[0];
  CHECK(*p.credential_for("tenant-a") == "file-secret-a1");
  CHECK(*p.credential_for("tenant-b") == "file-secret-b2");
  CHECK(p.tenant_credential_sources.at("tenant-a") == CredentialSource{"file", dir + "/a"});
  CHECK(p.reveals_credential("x file-secret-b2 y"));
  // Env and file side by side; a shared account from a file.
  c = parse_config(with({{"tenants", {{"tenant-a", {{"file", "a"}}}, {"tenant-b", {{"env", "GW_TEST_FILE_KEY_B"}}}}}}), dir);
  CHECK(*c.providers[0].credential_for("tenant-b") == "file-secret-b1");
  CHECK(c.providers[0].tenant_credential_sources.at("tenant-b") == CredentialSource{"env", "GW_TEST_FILE_KEY_B"});
  c = parse_config(with({{"file", "a"}, {"shared_by_tenants", true}}), dir);
  CHECK(*c.providers[0].credential_for("tenant-z") == "file-secret-a1");
  CHECK(c.providers[0].shared_credential_source == CredentialSource{"file", dir + "/a"});

  write("empty", "\n");
  write("two-newlines", "file-secret-c\n\n");
  write("control", "file-secret\x01-d");
  write("same-as-a", "file-secret-a1");
  write("large", std::string(max_credential_file_bytes + 1, 'k'));
  std::filesystem::create_directory(dir + "/directory");
  // Readable by the group or by everyone, or writable by them: refused (finding 8 of issue 29).
  using std::filesystem::perms;
  for (const auto& [name, extra] : {std::pair{"group-read", perms::group_read}, std::pair{"others-read", perms::others_read},
                                    std::pair{"group-write", perms::group_write}}) {
    write(name, "file-secret-open");
    std::filesystem::permissions(dir + "/" + name, extra, std::filesystem::perm_options::add);
  }
  const auto tenant_a = [](const json& source) { return json{{"tenants", {{"tenant-a", source}}}}; };
  const std::string at = "$.providers[0].credential.tenants.tenant-a";
  const std::pair<json, std::string> bad[] = {
      {tenant_a({{"file", "missing"}}), at + ".file: cannot read " + dir + "/missing: No such file or directory"},
      {tenant_a({{"file", "directory"}}), at + ".file: cannot read " + dir + "/directory: not a regular file"},
      {tenant_a({{"file", "/dev/null"}}), at + ".file: cannot read /dev/null: not a regular file"},
      {tenant_a({{"file", "large"}}), at + ".file: cannot read " + dir + "/large: larger than 65536 bytes"},
      {tenant_a({{"file", "empty"}}), at + ".file: " + dir + "/empty is empty"},
      {tenant_a({{"file", "two-newlines"}}), at + ".file: the credential must be printable ASCII"},
      {tenant_a({{"file", "control"}}), at + ".file: the credential must be printable ASCII"},
      {tenant_a({{"file", "group-read"}}),
       at + ".file: cannot read " + dir + "/group-read: open to group or others (mode 0640); make it readable by its owner only (chmod 600)"},
      {tenant_a({{"file", "others-read"}}), at + ".file: cannot read " + dir + "/others-read: open to group or others (mode 0604)"},
      {tenant_a({{"file", "group-write"}}), at + ".file: cannot read " + dir + "/group-write: open to group or others (mode 0620)"},
      {tenant_a({{"file", ""}}), at + ".file: must be a path"},
      {tenant_a({{"file", 5}}), at + ".file: must be a string"},
      {tenant_a({{"env", "GW_TEST_FILE_KEY_B"}, {"file", "a"}}), at + ": give env or file, not both"},
      {tenant_a(json::object()), at + ": needs env (an environment variable) or file (a path)"},
      {{{"tenants", {{"tenant-a", {{"file", "a"}}}, {"tenant-b", {{"file", "same-as-a"}}}}}},
       "$.providers[0].credential.tenants.tenant-b: has the same credential as tenant tenant-a"},
      {{{"file", "a"}}, "$.providers[0].credential.file: one credential for every tenant"},
      {{{"file", "a"}, {"env", "GW_TEST_FILE_KEY_B"}, {"shared_by_tenants", true}},
       "$.providers[0].credential: give env or file, not both"},
      {{{"file", "a"}, {"shared_by_tenants", true}, {"tenants", {{"tenant-a", {{"file", "a"}}}}}},
       "$.providers[0].credential: give either env or file (one shared account) or tenants, not both"},
      {{{"file", "missing"}, {"shared_by_tenants", true}}, "$.providers[0].credential.file: cannot read "},
  };
  for (const auto& [credential, expected] : bad) {
    CAPTURE(credential.dump());
    const auto e = error(credential);
    CAPTURE(e);
    CHECK(e.starts_with(expected));
    for (const char* secret : {"file-secret", "kkkk"}) CHECK(e.find(secret) == std::string::npos);  // never echoed
  }
}

TEST_CASE("config: retention defaults, every field, and its limits") {
  using std::chrono::hours;
  auto c = parse_config(minimal().dump());
  CHECK(c.retention.enabled);
  CHECK(c.retention.operations == hours(24 * 30));
  CHECK(c.retention.rejections == hours(24 * 90));
  CHECK(c.retention.webhooks == hours(24 * 30));
  CHECK(c.retention.interval == std::chrono::milliseconds(60000));
  CHECK(c.retention.batch == 500);

  auto j = minimal();
  j["retention"] = {{"enabled", false}, {"operations_days", 1},  {"rejections_days", 36500},
                    {"webhooks_days", 7}, {"interval_ms", 10}, {"batch", 10000}};
  c = parse_config(j.dump());
  CHECK_FALSE(c.retention.enabled);
  CHECK(c.retention.operations == hours(24));
  CHECK(c.retention.rejections == hours(24 * 36500));
  CHECK(c.retention.webhooks == hours(24 * 7));
  CHECK(c.retention.interval == std::chrono::milliseconds(10));
  CHECK(c.retention.batch == 10000);

  const std::pair<std::string, json> bad[] = {
      {"enabled", "yes"},        {"enabled", 1},           {"operations_days", 0},
      {"operations_days", 36501}, {"rejections_days", -1}, {"webhooks_days", 1.5},
      {"interval_ms", 9},        {"batch", 0},             {"batch", "500"},
      {"keep_days", 3}};
  for (const auto& [field, value] : bad) {
    CAPTURE(field);
    CAPTURE(value.dump());
    j = minimal();
    j["retention"] = {{field, value}};
    CHECK(error_of(j).find("$.retention." + field) != std::string::npos);
  }
  j = minimal();
  j["retention"] = 30;
  CHECK(error_of(j).find("$.retention: must be an object") != std::string::npos);
}

TEST_CASE("config: leases.max_lease_ms defaults to 30 days, within 1 s and 10 years") {
  CHECK(parse_config(minimal().dump()).leases.max_lease == std::chrono::milliseconds(2'592'000'000));
  auto j = minimal();
  j["leases"] = {{"max_lease_ms", 60000}};
  CHECK(parse_config(j.dump()).leases.max_lease == std::chrono::milliseconds(60000));
  for (const json& bad : {json(999), json(315360000001LL), json("60000"), json(true)}) {
    CAPTURE(bad.dump());
    j["leases"] = {{"max_lease_ms", bad}};
    CHECK(error_of(j).find("$.leases.max_lease_ms") != std::string::npos);
  }
}

TEST_CASE("config: an object with a member twice is refused, not read first- or last-wins") {
  const std::string text = minimal().dump();
  REQUIRE(error_of(minimal()).empty());
  std::string twice = text;
  twice.insert(1, R"("listen":{"port":1},)");
  twice.insert(1, R"("listen":{"port":2},)");
  CHECK(error_of(json::parse(text)).empty());
  try {
    parse_config(twice);
    FAIL("a repeated member was accepted");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("member twice") != std::string::npos);
  }
}

TEST_CASE("config: connection limits and database TCP timeouts take documented defaults and ranges") {
  auto c = parse_config(minimal().dump());
  CHECK(c.http.header_timeout == std::chrono::milliseconds(10000));
  CHECK(c.http.max_connections == 10000);
  CHECK(c.database.keepalives_idle_s == 30);
  CHECK(c.database.keepalives_interval_s == 5);
  CHECK(c.database.keepalives_count == 3);
  CHECK(c.database.tcp_user_timeout == std::chrono::milliseconds(10000));
  CHECK(c.database.call_timeout == std::chrono::milliseconds(10000));

  auto j = minimal();
  j["http"] = {{"header_timeout_ms", 500}, {"max_connections", 2}};
  j["database"]["keepalives_idle_s"] = 10;
  j["database"]["keepalives_interval_s"] = 2;
  j["database"]["keepalives_count"] = 4;
  j["database"]["tcp_user_timeout_ms"] = 0;
  j["database"]["call_timeout_ms"] = 2500;
  c = parse_config(j.dump());
  CHECK(c.http.header_timeout == std::chrono::milliseconds(500));
  CHECK(c.http.max_connections == 2);
  CHECK(c.database.keepalives_idle_s == 10);
  CHECK(c.database.keepalives_interval_s == 2);
  CHECK(c.database.keepalives_count == 4);
  CHECK(c.database.tcp_user_timeout == std::chrono::milliseconds(0));
  CHECK(c.database.call_timeout == std::chrono::milliseconds(2500));

  const std::vector<std::pair<std::string, json>> bad_http{
      {"header_timeout_ms", 0}, {"header_timeout_ms", "1s"}, {"max_connections", 0}, {"max_connections", 1000001}};
  for (const auto& [field, value] : bad_http) {
    CAPTURE(field);
    j = minimal();
    j["http"] = {{field, value}};
    CHECK(error_of(j).find("$.http." + field) != std::string::npos);
  }
  const std::vector<std::pair<std::string, json>> bad_database{
      {"keepalives_idle_s", 0},     {"keepalives_interval_s", 601}, {"keepalives_count", 0},
      {"tcp_user_timeout_ms", -1},  {"call_timeout_ms", 99},        {"call_timeout_ms", true}};
  for (const auto& [field, value] : bad_database) {
    CAPTURE(field);
    j = minimal();
    j["database"][field] = value;
    CHECK(error_of(j).find("$.database." + field) != std::string::npos);
  }
}

TEST_CASE("config: call_timeout_ms follows a long statement_timeout_ms, and may not be below it") {
  auto j = minimal();
  j["database"]["statement_timeout_ms"] = 30000;
  CHECK(parse_config(j.dump()).database.call_timeout == std::chrono::milliseconds(60000));
  j["database"]["call_timeout_ms"] = 20000;
  CHECK(error_of(j).find("$.database.call_timeout_ms: must not be below statement_timeout_ms") != std::string::npos);
  j["database"]["call_timeout_ms"] = 30000;
  CHECK(parse_config(j.dump()).database.call_timeout == std::chrono::milliseconds(30000));
}

TEST_CASE("config: providers' max_queued and allowed_path_forms") {
  ::setenv("GW_TEST_BOOKING_KEY", "k-123-booking-test", 1);
  auto j = minimal();
  j["providers"] = {{{"name", "booking"},
                     {"base_url", "http://127.0.0.1:9101"},
                     {"credential", {{"env", "GW_TEST_BOOKING_KEY"}, {"shared_by_tenants", true}}}}};
  auto p = parse_config(j.dump()).providers.at(0);
  CHECK(p.max_queued == 1024);
  CHECK_FALSE(p.allowed_path_forms.dot_segments);
  CHECK_FALSE(p.allowed_path_forms.encoded_slash);
  CHECK_FALSE(p.allowed_path_forms.backslash);
  CHECK_FALSE(p.allowed_path_forms.leading_double_slash);

  j["providers"][0]["max_queued"] = 0;
  j["providers"][0]["allowed_path_forms"] = {"encoded_slash", "backslash"};
  p = parse_config(j.dump()).providers.at(0);
  CHECK(p.max_queued == 0);
  CHECK(p.allowed_path_forms.encoded_slash);
  CHECK(p.allowed_path_forms.backslash);
  CHECK_FALSE(p.allowed_path_forms.dot_segments);

  for (const json& bad : {json{"encoded_nul"}, json{"Dot_Segments"}, json{1}, json("dot_segments")}) {
    CAPTURE(bad.dump());
    j["providers"][0]["allowed_path_forms"] = bad;
    CHECK(error_of(j).find("$.providers[0].allowed_path_forms") != std::string::npos);
  }
  j["providers"][0]["allowed_path_forms"] = json::array();
  j["providers"][0]["max_queued"] = -1;
  CHECK(error_of(j).find("$.providers[0].max_queued") != std::string::npos);
}

namespace {
// A config whose listen.tls is `tls`, and the error it loads with ("" when none).
std::string tls_error(const json& tls) {
  auto j = minimal();
  j["listen"] = {{"tls", tls}};
  return error_of(j);
}
}  // namespace

TEST_CASE("config: listen.tls loads its files at config time and takes documented defaults") {
  gw::test::CertDir dir;
  auto ca = dir.ca("ca");
  auto server = dir.issue(ca, "server", 1);
  CHECK_FALSE(parse_config(minimal().dump()).listen.tls);

  auto j = minimal();
  j["listen"] = {{"tls", {{"cert_file", server.cert}, {"key_file", server.key}}}};
  auto c = parse_config(j.dump());
  REQUIRE(c.listen.tls);
  CHECK(c.listen.tls->cert_file == server.cert);
  CHECK(c.listen.tls->key_file == server.key);
  CHECK_FALSE(c.listen.tls->client_ca_file);
  CHECK(c.listen.tls->min_version == tls::TlsVersion::v1_2);

  j["listen"]["tls"]["client_ca_file"] = ca.cert;
  j["listen"]["tls"]["min_version"] = "1.3";
  c = parse_config(j.dump());
  CHECK(c.listen.tls->client_ca_file == ca.cert);
  CHECK(c.listen.tls->min_version == tls::TlsVersion::v1_3);
  j["listen"]["tls"]["min_version"] = "1.2";
  CHECK(parse_config(j.dump()).listen.tls->min_version == tls::TlsVersion::v1_2);
}

TEST_CASE("config: a bad listen.tls field or file stops the load with its path") {
  gw::test::CertDir dir;
  auto ca = dir.ca("ca");
  auto server = dir.issue(ca, "server", 1);
  auto other = dir.issue(ca, "other", 2);
  const json good = {{"cert_file", server.cert}, {"key_file", server.key}};
  CHECK(tls_error(good).empty());
  auto with = [&](const std::string& key, const json& value) {
    auto t = good;
    t[key] = value;
    return tls_error(t);
  };
  auto without = [&](const std::string& key) {
    auto t = good;
    t.erase(key);
    return tls_error(t);
  };
  auto starts = [](const std::string& error, const std::string& prefix) {
    CAPTURE(error);
    CHECK(error.rfind(prefix, 0) == 0);
  };

  // Shape.
  starts(tls_error("yes"), "$.listen.tls: must be an object");
  starts(with("ciphers", "HIGH"), "$.listen.tls.ciphers: unknown field");
  starts(without("cert_file"), "$.listen.tls.cert_file: is required");
  starts(without("key_file"), "$.listen.tls.key_file: is required");
  starts(with("cert_file", 5), "$.listen.tls.cert_file: must be a string");
  starts(with("key_file", json::array()), "$.listen.tls.key_file: must be a string");
  starts(with("client_ca_file", true), "$.listen.tls.client_ca_file: must be a string");
  starts(with("min_version", 1.2), "$.listen.tls.min_version: must be a string");
  starts(with("min_version", "1.1"), "$.listen.tls.min_version: must be \"1.2\" or \"1.3\"");
  starts(with("min_version", "TLSv1.3"), "$.listen.tls.min_version: must be \"1.2\" or \"1.3\"");

  // Files that cannot be read.
  const std::string missing = dir.path() + "/missing.pem";
  starts(with("cert_file", missing), "$.listen.tls.cert_file: cannot read " + missing);
  starts(with("key_file", missing), "$.listen.tls.key_file: cannot read " + missing);
  starts(with("client_ca_file", missing), "$.listen.tls.client_ca_file: cannot read " + missing);
  starts(with("client_ca_file", ""), "$.listen.tls.client_ca_file: cannot read");

  // Files that are not what they should be.
  starts(with("cert_file", server.key), "$.listen.tls.cert_file: not a PEM certificate chain");
  starts(with("key_file", server.cert), "$.listen.tls.key_file: not an unencrypted PEM private key");
  starts(with("key_file", dir.write("garbage.key", "-----BEGIN PRIVATE KEY-----\nbm8=\n-----END PRIVATE KEY-----\n")),
         "$.listen.tls.key_file: not an unencrypted PEM private key");
  starts(with("client_ca_file", server.key), "$.listen.tls.client_ca_file: ");
  // The key of another certificate.
  starts(with("key_file", other.key), "$.listen.tls.key_file: does not match the certificate in cert_file");
  // An encrypted key is refused without asking for a passphrase.
  const std::string encrypted = dir.path() + "/encrypted.key";
  REQUIRE(std::system(("openssl pkey -in '" + server.key + "' -aes256 -passout pass:secret -out '" + encrypted +
                       "' 2>/dev/null")
                          .c_str()) == 0);
  starts(with("key_file", encrypted), "$.listen.tls.key_file: not an unencrypted PEM private key");
}

TEST_CASE("config: log level and access log") {
  auto c = parse_config(minimal().dump());
  CHECK(c.log.level == LogLevel::info);
  CHECK(c.log.access);
  auto j = minimal();
  j["log"] = {{"level", "warn"}, {"access", false}};
  c = parse_config(j.dump());
  CHECK(c.log.level == LogLevel::warn);
  CHECK_FALSE(c.log.access);
  for (auto level : {"debug", "info", "warn", "error"}) {
    j["log"] = {{"level", level}};
    CHECK(name(parse_config(j.dump()).log.level) == level);
  }
  for (const json& bad : {json("verbose"), json("INFO"), json(""), json(2)}) {
    j["log"] = {{"level", bad}};
    CHECK(error_of(j).find("$.log.level: must be one of") != std::string::npos);
  }
  j["log"] = {{"access", "yes"}};
  CHECK(error_of(j).find("$.log.access") != std::string::npos);
  j["log"] = {{"file", "/tmp/x"}};
  CHECK(error_of(j).find("$.log.file: unknown field") != std::string::npos);
}

TEST_CASE("config: a credential too short to recognise in a reply is refused, naming provider and tenant") {
  // Eleven letters and digits (and any amount of punctuation): a reply echoing
  // it could not be told from ordinary text (core/secret_scan.hpp).
  ::setenv("GW_TEST_SHORT_KEY", "short-key-1234", 1);      // shortkey1234: 12, accepted
  ::setenv("GW_TEST_TOO_SHORT_KEY", "--short-key-123--", 1);  // shortkey123: 11
  auto with = [](const json& credential) {
    auto j = minimal();
    j["providers"] = {{{"name", "booking"}, {"base_url", "http://127.0.0.1:9101"}, {"credential", credential}}};
    return j;
  };
  auto c = parse_config(with({{"tenants", {{"tenant-a", {{"env", "GW_TEST_SHORT_KEY"}}}}}}).dump());
  REQUIRE(c.providers[0].credential_scan);
  CHECK(c.providers[0].reveals_credential("SHORT%2DKEY%2D1234"));
  const std::pair<json, std::string> bad[] = {
      {{{"tenants", {{"tenant-a", {{"env", "GW_TEST_SHORT_KEY"}}}, {"tenant-b", {{"env", "GW_TEST_TOO_SHORT_KEY"}}}}}},
       "$.providers[0].credential.tenants.tenant-b.env: the credential of provider booking for tenant tenant-b has "
       "fewer than 12 letters and digits"},
      {{{"env", "GW_TEST_TOO_SHORT_KEY"}, {"shared_by_tenants", true}},
       "$.providers[0].credential.env: the credential of provider booking for every tenant has fewer than 12"},
  };
  for (const auto& [credential, expected] : bad) {
    const auto error = error_of(with(credential));
    CAPTURE(error);
    CHECK(error.find(expected) != std::string::npos);
    CHECK(error.find("short-key") == std::string::npos);  // never the value
  }
}
