// What a SIGHUP reload may change (config/reload.hpp): only agents and
// operators; anything else is named by its JSON path.
#include "config/reload.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>

using namespace gw;
using nlohmann::json;

namespace {

const json base = json::parse(R"({
  "listen": {"port": 8080},
  "agents": [{"name": "a", "token_sha256": "aa", "tenants": ["t"]}],
  "operators": [{"name": "o", "token_sha256": "bb"}],
  "providers": [{"name": "booking", "max_connections": 32, "credential": {"tenants": {"t": {"env": "K"}}}}]
})");

std::optional<std::string> changed(const std::function<void(json&)>& edit) {
  json next = base;
  edit(next);
  return fixed_field_changed(base.dump(), next.dump(2));
}

}  // namespace

TEST_CASE("reload: tokens may change, and nothing else") {
  CHECK(changed([](json&) {}) == std::nullopt);
  CHECK(changed([](json& j) { j["agents"][0]["token_sha256"] = "cc"; }) == std::nullopt);
  CHECK(changed([](json& j) { j["agents"].push_back({{"name", "b"}}); }) == std::nullopt);
  CHECK(changed([](json& j) { j.erase("operators"); }) == std::nullopt);
  CHECK(changed([](json& j) { j["listen"]["port"] = 8081; }) == "$.listen.port");
  CHECK(changed([](json& j) { j["providers"][0]["max_connections"] = 8; }) == "$.providers[0].max_connections");
  CHECK(changed([](json& j) { j["providers"][0]["credential"]["tenants"]["t"]["env"] = "K2"; }) ==
        "$.providers[0].credential.tenants.t.env");
  CHECK(changed([](json& j) { j["providers"].push_back({{"name", "crm"}}); }) == "$.providers[1]");
  CHECK(changed([](json& j) { j["http"] = json::object(); }) == "$.http");
  CHECK(changed([](json& j) { j["listen"].erase("port"); }) == "$.listen.port");
}
