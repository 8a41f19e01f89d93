// What a verified webhook's body says, by the provider's configured rules:
// the upstream idempotency key it is about (a JSON pointer into the body),
// the outcome value it reports (another pointer) and what that value means
// for the operation (a table). Pure: the store passes the stored body.
#pragma once

#include "core/ledger.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace gw {

struct WebhookRules {
  std::string key_pointer;                     // e.g. "/idempotency_key"; required
  std::optional<std::string> outcome_pointer;  // e.g. "/status"; none: no webhook resolves anything
  // Outcome value as text -> succeeded, rejected or not_executed. A value
  // not listed keeps the webhook as evidence that resolves nothing.
  std::map<std::string, OperationState> outcomes;
};

// Whether `pointer` is a JSON pointer (RFC 6901) to a member, not the whole
// document: starts with '/', and every '~' is "~0" or "~1".
bool is_member_pointer(std::string_view pointer);

// The outcome states a webhook may report (the final ones and not_executed).
std::optional<OperationState> parse_webhook_outcome(std::string_view text);

enum class WebhookParse {
  parsed,      // the key was found
  unparsable,  // not JSON, or no non-empty string at the key pointer
};

struct WebhookReading {
  WebhookParse parse = WebhookParse::unparsable;
  std::string detail;                     // why unparsable, or what was read, for operators
  std::string upstream_key;               // parsed: the key the webhook is about
  // Read whether or not a key was found, so operators see what the body said.
  std::optional<std::string> outcome;     // the value at the outcome pointer, as text
  std::optional<OperationState> mapped;   // what it means, when the table lists it
};

// Strings are read as they are; integers and booleans as their JSON text
// ("201", "true"), so a numeric status can be mapped; anything else (a
// float, null, object, array, or nothing there) gives no outcome.
WebhookReading read_webhook(std::string_view body, const WebhookRules& rules);

}  // namespace gw
