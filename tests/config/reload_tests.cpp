// What a SIGHUP reload may change (config/reload.hpp): the tokens and each
// provider's credentials and limits; anything else is named by its JSON path
// and refuses the whole file. And what a reload reports as changed: paths,
// never a credential.
#include "config/reload.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
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
  "providers": [{"name": "booking", "base_url": "http://127.0.0.1:9101", "max_connections": 32,
                 "credential": {"tenants": {"t": {"env": "K"}}}}]
})");

std::optional<std::string> changed(const std::function<void(json&)>& edit) {
  json next = base;
  edit(next);
  return fixed_field_changed(base.dump(), next.dump(2));
}

// A directory of credential files, removed at the end of the test.
struct SecretDir {
  SecretDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gw-reload-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~SecretDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    auto file = path + "/" + name;
    std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
    std::filesystem::permissions(file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    return file;
  }
  std::string path;
};

const std::string agent_hash(64, 'a'), operator_hash(64, 'b'), rotated_operator_hash(64, 'c');

json valid(const json& credential) {
  return {{"database", {{"url", "host=127.0.0.1 dbname=x"}}},
          {"agents", {{{"name", "a"}, {"token_sha256", agent_hash}, {"tenants", {"tenant-a", "tenant-b"}}}}},
          {"operators", {{{"name", "o"}, {"token_sha256", operator_hash}}}},
          {"providers", {{{"name", "booking"}, {"base_url", "http://127.0.0.1:9101"}, {"credential", credential}}}}};
}

}  // namespace

TEST_CASE("reload: tokens, provider credentials and provider limits may change") {
  CHECK(changed([](json&) {}) == std::nullopt);
  CHECK(changed([](json& j) { j["agents"][0]["token_sha256"] = "cc"; }) == std::nullopt);
  CHECK(changed([](json& j) { j["agents"].push_back({{"name", "b"}}); }) == std::nullopt);
  CHECK(changed([](json& j) { j.erase("operators"); }) == std::nullopt);
  for (const auto& field : reloadable_provider_fields()) {
    CAPTURE(field);
    CHECK(changed([&](json& j) { j["providers"][0][field] = 7; }) == std::nullopt);
  }
  CHECK(changed([](json& j) { j["providers"][0].erase("max_connections"); }) == std::nullopt);
  // A credential's source: another variable, a file instead, a tenant account added or removed.
  CHECK(changed([](json& j) { j["providers"][0]["credential"]["tenants"]["t"]["env"] = "K2"; }) == std::nullopt);
  CHECK(changed([](json& j) { j["providers"][0]["credential"]["tenants"]["t"] = {{"file", "/run/secrets/t"}}; }) ==
        std::nullopt);
  CHECK(changed([](json& j) { j["providers"][0]["credential"]["tenants"]["u"] = {{"env", "U"}}; }) == std::nullopt);
  CHECK(changed([](json& j) {
          j["providers"][0]["credential"] = {{"file", "/run/secrets/shared"}, {"shared_by_tenants", true}};
        }) == "$.providers[0].credential.shared_by_tenants");
}

TEST_CASE("reload: everything else is fixed, named by the first field that differs") {
  CHECK(changed([](json& j) { j["listen"]["port"] = 8081; }) == "$.listen.port");
  CHECK(changed([](json& j) { j["listen"].erase("port"); }) == "$.listen.port");
  CHECK(changed([](json& j) { j["http"] = json::object(); }) == "$.http");
  CHECK(changed([](json& j) { j["providers"].push_back({{"name", "crm"}}); }) == "$.providers[1]");
  CHECK(changed([](json& j) { j["providers"] = json::array(); }) == "$.providers[0]");
  const std::pair<std::string, json> fixed[] = {
      {"name", "booking2"},
      {"base_url", "http://127.0.0.1:9102"},
      {"ca_file", "/etc/ca.pem"},
      {"idempotency_header", "X-Key"},
      {"fence_epoch_header", "X-Epoch"},
      {"unfenced_methods", {"GET"}},
      {"allowed_path_forms", {"dot_segments"}},
      {"outcomes", {{"not_executed", {408}}}},
      {"lookup", {{"path", "/by-key/{key}"}}},
      {"webhooks", {{"secret_envs", {"W"}}}},
  };
  for (const auto& [field, value] : fixed) {
    CAPTURE(field);
    CHECK(changed([&](json& j) { j["providers"][0][field] = value; }) == "$.providers[0]." + field);
  }
  CHECK(changed([](json& j) { j["providers"][0]["credential"]["header"] = "X-Api-Key"; }) ==
        "$.providers[0].credential.header");
  CHECK(changed([](json& j) { j["providers"][0]["credential"]["prefix"] = ""; }) == "$.providers[0].credential.prefix");
}

TEST_CASE("reload: a file that changes a reloadable field and a fixed one is refused whole") {
  // The reloadable change comes first in key order; the fixed one is still found and named.
  CHECK(changed([](json& j) {
          j["providers"][0]["connect_timeout_ms"] = 5;
          j["providers"][0]["credential"]["tenants"]["t"]["env"] = "K2";
          j["providers"][0]["idempotency_header"] = "X-Key";
        }) == "$.providers[0].idempotency_header");
  CHECK(changed([](json& j) {
          j["agents"][0]["token_sha256"] = "cc";
          j["providers"][0]["max_queued"] = 0;
          j["listen"]["address"] = "0.0.0.0";
        }) == "$.listen.address");
}

TEST_CASE("reload: what changed is reported by path, a rotated credential file included, never its value") {
  SecretDir dir;
  dir.write("a", "secret-a-1-reload\n");
  dir.write("b", "secret-b-1-reload");
  ::setenv("GW_TEST_RELOAD_KEY_B", "secret-b-env-reload", 1);
  const auto credential = json{{"tenants", {{"tenant-a", {{"file", "a"}}}, {"tenant-b", {{"file", dir.path + "/b"}}}}}};
  const auto running = parse_config(valid(credential).dump(), dir.path);

  CHECK(reloaded_fields_changed(running, parse_config(valid(credential).dump(), dir.path)).empty());

  // The same text, a new file content: the rotation is seen.
  dir.write("a", "secret-a-2-reload\n");
  auto next = parse_config(valid(credential).dump(), dir.path);
  CHECK(*next.providers[0].credential_for("tenant-a") == "secret-a-2-reload");
  CHECK(reloaded_fields_changed(running, next) ==
        std::vector<std::string>{"$.providers[0].credential.tenants.tenant-a.file"});

  // A tenant moved to an environment variable, one added, limits and tokens.
  auto j = valid(credential);
  j["providers"][0]["credential"]["tenants"]["tenant-b"] = {{"env", "GW_TEST_RELOAD_KEY_B"}};
  dir.write("c", "secret-c-1-reload");
  j["providers"][0]["credential"]["tenants"]["tenant-c"] = {{"file", "c"}};
  j["providers"][0]["max_queued"] = 0;
  j["providers"][0]["request_timeout_ms"] = 100;
  j["operators"][0]["token_sha256"] = rotated_operator_hash;
  // The running value from another file: its source changed.
  dir.write("a2", "secret-a-1-reload");
  j["providers"][0]["credential"]["tenants"]["tenant-a"] = {{"file", dir.path + "/a2"}};
  const auto report = reloaded_fields_changed(running, parse_config(j.dump(), dir.path));
  CHECK(report == std::vector<std::string>{"$.operators",
                                           "$.providers[0].credential.tenants.tenant-a.file",
                                           "$.providers[0].credential.tenants.tenant-b.env",
                                           "$.providers[0].credential.tenants.tenant-b.file",
                                           "$.providers[0].credential.tenants.tenant-c",
                                           "$.providers[0].request_timeout_ms",
                                           "$.providers[0].max_queued"});
  for (const auto& path : report) {
    CHECK(path.find("secret") == std::string::npos);
  }
}

TEST_CASE("reload: a shared credential rotated in its file is reported at credential.file") {
  SecretDir dir;
  dir.write("shared", "shared-1-reload");
  const auto credential = json{{"file", "shared"}, {"shared_by_tenants", true}};
  const auto running = parse_config(valid(credential).dump(), dir.path);
  CHECK(*running.providers[0].credential_for("anyone") == "shared-1-reload");
  dir.write("shared", "shared-2-reload\n");
  const auto next = parse_config(valid(credential).dump(), dir.path);
  CHECK(*next.providers[0].credential_for("anyone") == "shared-2-reload");
  CHECK(reloaded_fields_changed(running, next) == std::vector<std::string>{"$.providers[0].credential.file"});
}

TEST_CASE("reload: read_config_file resolves credential files next to the config file") {
  SecretDir dir;
  dir.write("tenant-a.key", "from-the-config-dir\n");
  const auto file = dir.write("gateway.json", valid({{"tenants", {{"tenant-a", {{"file", "tenant-a.key"}}}}}}).dump());
  const auto loaded = read_config_file(file);
  CHECK(*loaded.config.providers[0].credential_for("tenant-a") == "from-the-config-dir");
  CHECK(*load_config(file).providers[0].credential_for("tenant-a") == "from-the-config-dir");

  std::filesystem::remove(dir.path + "/tenant-a.key");
  try {
    read_config_file(file);
    FAIL("a missing credential file must be refused");
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    CHECK(what == file + ": $.providers[0].credential.tenants.tenant-a.file: cannot read " + dir.path +
                      "/tenant-a.key: No such file or directory");
  }
}
