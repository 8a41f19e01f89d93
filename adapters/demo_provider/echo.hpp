// The echo switch: every business reply also carries the request's headers
// back, the way a debug or /anything-style endpoint does, in the forms a
// gateway must recognise its injected credential in (the gateway's
// core/secret_scan.hpp). Each form is chosen on its own:
//   body          the reply's JSON gains "echo": {"method", "target", "headers": {name: value}}
//   json_escaped  the reply's JSON gains "echo_escaped": {name: value with every byte as \u00XX}
//   upper         X-Echo-Upper-<name>: the value in upper case
//   split         X-Echo-Split-<name> twice: the value's first half, then its second
//   percent       X-Echo-Percent-<name>: every byte of the value as %XX
//   name          <the value's last word>: <name>, the value as a header name (when it is a token)
//   base64        X-Echo-Base64-<name>: the value in standard base64
//   base64url     X-Echo-Base64url-<name>: the value in base64url, unpadded
// Set with POST /__test/echo {"forms": [...]} ([] turns it off). Pure.
#pragma once

#include "plain_http.hpp"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <vector>

namespace demo_provider {

enum class echo_form { body, json_escaped, upper, split, percent, name, base64, base64url };

// From a POST /__test/echo body; on a bad body returns why in `error` and no forms.
struct parsed_echo {
  std::optional<std::vector<echo_form>> forms;
  std::string error;
};
parsed_echo parse_echo(const nlohmann::json& body);

nlohmann::json echo_json(const std::vector<echo_form>& forms);  // {"forms": [...]}

// Adds the request's headers to `reply` in each form (none: unchanged).
void apply_echo(const std::vector<echo_form>& forms, const plain_request& request, plain_reply& reply);

}  // namespace demo_provider
