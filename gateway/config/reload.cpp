#include "config/reload.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace gw {
namespace {

// The path of the first difference between a and b, or nullopt.
std::optional<std::string> first_difference(const nlohmann::json& a, const nlohmann::json& b, const std::string& at) {
  if (a.is_object() && b.is_object()) {
    std::set<std::string> keys;
    for (const auto& item : a.items()) keys.insert(item.key());
    for (const auto& item : b.items()) keys.insert(item.key());
    for (const auto& key : keys) {
      std::string path = at;
      path += '.';
      path += key;
      if (!a.contains(key) || !b.contains(key)) return path;
      if (auto d = first_difference(a[key], b[key], path)) return d;
    }
    return std::nullopt;
  }
  if (a.is_array() && b.is_array()) {
    for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
      std::string path = at;
      path += '[';
      path += std::to_string(i);
      path += ']';
      if (i >= a.size() || i >= b.size()) return path;
      if (auto d = first_difference(a[i], b[i], path)) return d;
    }
    return std::nullopt;
  }
  if (a != b) return at;
  return std::nullopt;
}

// The config without what a reload may change: what is left must be equal.
void drop_reloadable(nlohmann::json& config) {
  if (!config.is_object()) return;
  config.erase("agents");
  config.erase("operators");
  auto providers = config.find("providers");
  if (providers == config.end() || !providers->is_array()) return;
  for (auto& p : *providers) {
    if (!p.is_object()) continue;
    for (const auto& field : reloadable_provider_fields()) p.erase(field);
    auto credential = p.find("credential");
    if (credential == p.end() || !credential->is_object()) continue;
    for (const char* field : {"env", "file", "tenants"}) credential->erase(field);
  }
}

void credential_changes(const std::string& at, const std::optional<std::string>& old_value,
                        const std::optional<CredentialSource>& old_source, const std::optional<std::string>& new_value,
                        const std::optional<CredentialSource>& new_source, std::vector<std::string>& out) {
  if (old_value == new_value && old_source == new_source) return;
  // A tenant added or removed is named by its own path; a changed source or
  // value by the field it comes from now (and the one it came from, if that
  // was another).
  if (!old_source || !new_source) {
    out.push_back(at);
    return;
  }
  std::string path = at;
  path += '.';
  path += new_source->field;
  out.push_back(path);
  if (old_source->field != new_source->field) {
    std::string was = at;
    was += '.';
    was += old_source->field;
    out.push_back(was);
  }
}

template <class T>
std::optional<T> find(const std::map<std::string, T>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? std::nullopt : std::optional<T>(it->second);
}

}  // namespace

const std::vector<std::string>& reloadable_provider_fields() {
  static const std::vector<std::string> fields{
      "connect_timeout_ms", "request_timeout_ms",    "queue_timeout_ms",       "idle_retire_ms",
      "max_connections",    "max_queued",            "max_request_body_bytes", "max_response_body_bytes"};
  return fields;
}

ConfigFile read_config_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  ConfigFile file{ss.str(), {}};
  try {
    file.config = parse_config(file.text, std::filesystem::path(path).parent_path().string());
  } catch (const ConfigError& e) {
    throw ConfigError(path + ": " + e.what());
  }
  return file;
}

std::optional<std::string> fixed_field_changed(const std::string& running_text, const std::string& next_text) {
  auto running = nlohmann::json::parse(running_text);
  auto next = nlohmann::json::parse(next_text);
  drop_reloadable(running);
  drop_reloadable(next);
  return first_difference(running, next, "$");
}

std::vector<std::string> reloaded_fields_changed(const Config& running, const Config& next) {
  std::vector<std::string> out;
  if (running.agents != next.agents) out.emplace_back("$.agents");
  if (running.operators != next.operators) out.emplace_back("$.operators");
  const auto n = std::min(running.providers.size(), next.providers.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto& a = running.providers[i];
    const auto& b = next.providers[i];
    std::string at = "$.providers[";
    at += std::to_string(i);
    at += ']';
    const auto field = [&](const char* name) {
      std::string path = at;
      path += '.';
      path += name;
      out.push_back(std::move(path));
    };
    std::string credential = at;
    credential += ".credential";
    credential_changes(credential, a.shared_credential, a.shared_credential_source, b.shared_credential,
                       b.shared_credential_source, out);
    std::set<std::string> tenants;
    for (const auto& [t, _] : a.tenant_credentials) tenants.insert(t);
    for (const auto& [t, _] : b.tenant_credentials) tenants.insert(t);
    for (const auto& t : tenants) {
      std::string tenant = credential;
      tenant += ".tenants.";
      tenant += t;
      credential_changes(tenant, find(a.tenant_credentials, t), find(a.tenant_credential_sources, t),
                         find(b.tenant_credentials, t), find(b.tenant_credential_sources, t), out);
    }
    if (a.connect_timeout != b.connect_timeout) field("connect_timeout_ms");
    if (a.request_timeout != b.request_timeout) field("request_timeout_ms");
    if (a.queue_timeout != b.queue_timeout) field("queue_timeout_ms");
    if (a.idle_retire != b.idle_retire) field("idle_retire_ms");
    if (a.max_connections != b.max_connections) field("max_connections");
    if (a.max_queued != b.max_queued) field("max_queued");
    if (a.max_request_body_bytes != b.max_request_body_bytes) field("max_request_body_bytes");
    if (a.max_response_body_bytes != b.max_response_body_bytes) field("max_response_body_bytes");
  }
  return out;
}

}  // namespace gw
