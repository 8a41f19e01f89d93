// Command-line options of demo-provider and their parsing (std only).
#pragma once

#include "provider_kind.hpp"
#include "webhooks.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace demo_provider {

struct options {
  provider_kind kind = provider_kind::booking;
  std::uint16_t port = 0;  // 0: the kernel picks one, printed at start
  std::uint16_t control_port = 0;
  std::string listen = "127.0.0.1";
  std::chrono::milliseconds idle_timeout{5000};
  std::chrono::milliseconds settle{0};
  std::string tls_cert;  // both empty, or both set: then the business port speaks HTTPS
  std::string tls_key;
  // --webhook-url and --webhook-secret, both or neither: executed keyed
  // mutations are reported by a signed webhook to this URL.
  std::optional<webhook_settings> webhooks;
};

// Exactly one of: `value`, `help`, or a non-empty `error`.
struct parsed_options {
  std::optional<options> value;
  bool help = false;
  std::string error;
};

// `args` excludes the program name.
parsed_options parse_options(std::span<char* const> args);
std::string_view usage();

}  // namespace demo_provider
