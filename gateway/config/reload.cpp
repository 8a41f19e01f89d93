#include "config/reload.hpp"

#include <nlohmann/json.hpp>

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

}  // namespace

ConfigFile read_config_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  ConfigFile file{ss.str(), {}};
  try {
    file.config = parse_config(file.text);
  } catch (const ConfigError& e) {
    throw ConfigError(path + ": " + e.what());
  }
  return file;
}

std::optional<std::string> fixed_field_changed(const std::string& running_text, const std::string& next_text) {
  auto running = nlohmann::json::parse(running_text);
  auto next = nlohmann::json::parse(next_text);
  for (auto* j : {&running, &next}) {
    j->erase("agents");
    j->erase("operators");
  }
  return first_difference(running, next, "$");
}

}  // namespace gw
