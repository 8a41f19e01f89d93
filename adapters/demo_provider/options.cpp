// Parsing of demo-provider's command line: `--name value` or `--name=value`.
#include "options.hpp"

#include <charconv>
#include <limits>

namespace demo_provider {
namespace {

// Whole-string integers only: "80x" or "" must not silently become a port.
template <class Int>
std::optional<Int> to_integer(std::string_view text, Int min, Int max) {
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < min || value > max)
    return std::nullopt;
  return static_cast<Int>(value);
}

}  // namespace

std::string_view usage() {
  return "usage: demo-provider --kind booking|crm --port N --control-port M\n"
         "                     [--listen 127.0.0.1] [--idle-timeout-ms 5000] [--settle-ms 0]\n"
         "                     [--tls-cert FILE --tls-key FILE]\n"
         "                     [--webhook-url http://host:port/path --webhook-secret whsec_...]\n"
         "Business requests need 'Authorization: Bearer <credential>' when $DEMO_PROVIDER_CREDENTIAL or\n"
         "$DEMO_PROVIDER_CREDENTIALS (comma-separated) is set: one account per credential, each with its\n"
         "own data and idempotency keys.\n"
         "The control port serves the test API under /__test/: requests, effects, activity, faults,\n"
         "release, reply_headers, reset, webhooks (see control_api.hpp).\n"
         "With --webhook-url, every executed request with an Idempotency-Key is reported by a signed\n"
         "Standard Webhooks POST to that URL.\n";
}

parsed_options parse_options(std::span<char* const> args) {
  options out;
  bool have_kind = false, have_port = false, have_control_port = false;
  std::optional<webhook_url> hook_url;
  std::optional<std::string> hook_key;
  const auto fail = [](std::string message) { return parsed_options{{}, false, std::move(message)}; };

  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view name = args[i];
    std::optional<std::string_view> value;
    if (name == "--help" || name == "-h") return parsed_options{{}, true, {}};
    if (const auto eq = name.find('='); name.starts_with("--") && eq != std::string_view::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    }
    if (!value) return fail(std::string(name) + " needs a value");

    if (name == "--kind") {
      const auto kind = kind_from_string(*value);
      if (!kind) return fail("--kind must be booking or crm");
      out.kind = *kind;
      have_kind = true;
    } else if (name == "--port" || name == "--control-port") {
      const auto port = to_integer<std::uint16_t>(*value, 0, 65535);
      if (!port) return fail(std::string(name) + " must be 0 to 65535");
      (name == "--port" ? out.port : out.control_port) = *port;
      (name == "--port" ? have_port : have_control_port) = true;
    } else if (name == "--listen") {
      out.listen = *value;
    } else if (name == "--idle-timeout-ms") {
      const auto ms = to_integer<long long>(*value, 1, 86'400'000);
      if (!ms) return fail("--idle-timeout-ms must be 1 to 86400000");
      out.idle_timeout = std::chrono::milliseconds(*ms);
    } else if (name == "--settle-ms") {
      const auto ms = to_integer<long long>(*value, 0, 86'400'000);
      if (!ms) return fail("--settle-ms must be 0 to 86400000");
      out.settle = std::chrono::milliseconds(*ms);
    } else if (name == "--tls-cert") {
      out.tls_cert = *value;
    } else if (name == "--tls-key") {
      out.tls_key = *value;
    } else if (name == "--webhook-url") {
      hook_url = parse_webhook_url(*value);
      if (!hook_url) return fail("--webhook-url must be http://host[:port][/path]");
    } else if (name == "--webhook-secret") {
      hook_key = decode_webhook_secret(*value);
      if (!hook_key) return fail("--webhook-secret must be whsec_ followed by standard base64");
    } else {
      return fail("unknown option " + std::string(name));
    }
  }

  if (!have_kind) return fail("--kind is required");
  if (!have_port) return fail("--port is required");
  if (!have_control_port) return fail("--control-port is required");
  if (out.tls_cert.empty() != out.tls_key.empty()) return fail("--tls-cert and --tls-key go together");
  if (hook_url.has_value() != hook_key.has_value()) return fail("--webhook-url and --webhook-secret go together");
  if (hook_url) out.webhooks = webhook_settings{std::move(*hook_url), std::move(*hook_key)};
  return parsed_options{std::move(out), false, {}};
}

}  // namespace demo_provider
