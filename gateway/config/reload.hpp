// What SIGHUP may change in a running gateway: the tokens (`agents`,
// `operators`). Everything else (listen, database, providers and their
// credentials and limits, recovery, ...) is wired into pools, threads and
// connections at start, so a new file that changes it is refused, naming
// the first field that differs, and the running config stays.
#pragma once

#include "config/config.hpp"

#include <optional>
#include <string>

namespace gw {

// The config file as read: its text (to compare with the next one) and the
// validated Config. Throws ConfigError naming the file and the field.
struct ConfigFile {
  std::string text;
  Config config;
};
ConfigFile read_config_file(const std::string& path);

// The JSON path of the first field outside `agents` and `operators` whose
// value differs between the two config texts (both already valid), e.g.
// "$.providers[0].max_connections" (as config errors name fields); nullopt when only tokens changed.
std::optional<std::string> fixed_field_changed(const std::string& running_text, const std::string& next_text);

}  // namespace gw
