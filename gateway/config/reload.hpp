// What SIGHUP may change in a running gateway: the tokens (`agents`,
// `operators`) and, for each provider, its credentials (their sources and
// values: credential files are read again) and its limits (the timeouts,
// max_connections, max_queued and the body limits). Everything else (listen,
// database, a provider's name, URL, rules, headers, lookup and webhooks,
// adding or removing a provider, recovery, ...) is wired into pools, threads,
// routes and the ledger at start, so a new file that changes it is refused
// whole, naming the first field that differs, and the running config stays.
#pragma once

#include "config/config.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gw {

// The config file as read: its text (to compare with the next one) and the
// validated Config. Throws ConfigError naming the file and the field.
struct ConfigFile {
  std::string text;
  Config config;
};
ConfigFile read_config_file(const std::string& path);

// A provider's fields that a reload may change, as named in the config
// (credential's env, file and tenants are reloadable too).
const std::vector<std::string>& reloadable_provider_fields();

// The JSON path of the first field a reload may not change whose value
// differs between the two config texts (both already valid), e.g.
// "$.providers[0].base_url" (as config errors name fields); nullopt when only
// reloadable fields changed.
std::optional<std::string> fixed_field_changed(const std::string& running_text, const std::string& next_text);

// The reloadable fields whose effective value differs between two valid
// configs with the same fixed fields, as JSON paths: "$.agents",
// "$.operators", "$.providers[0].max_connections",
// "$.providers[0].credential.tenants.tenant-a.file" (a credential whose
// source or value changed, or a tenant account added or removed). Paths
// only: a credential value never appears. A rotated credential file shows
// here although the config text is the same.
std::vector<std::string> reloaded_fields_changed(const Config& running, const Config& next);

}  // namespace gw
