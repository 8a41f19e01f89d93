#include "core/webhook_match.hpp"

#include "core/strict_json.hpp"

#include <nlohmann/json.hpp>

namespace gw {
namespace {

using json = nlohmann::json;

// The value at `pointer`, or null when the document has nothing there.
const json* at_pointer(const json& document, const std::string& pointer) {
  try {
    const json::json_pointer p(pointer);
    if (!document.contains(p)) return nullptr;
    return &document.at(p);
  } catch (const json::exception&) {
    // E.g. "/a/0" into a string, or an array index that is not a number.
    return nullptr;
  }
}

std::optional<std::string> scalar_text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer() || value.is_boolean()) return value.dump();
  return std::nullopt;
}

}  // namespace

bool is_member_pointer(std::string_view pointer) {
  if (!pointer.starts_with('/')) return false;
  for (std::size_t i = 0; i < pointer.size(); ++i)
    if (pointer[i] == '~' && (i + 1 == pointer.size() || (pointer[i + 1] != '0' && pointer[i + 1] != '1')))
      return false;
  return true;
}

std::optional<OperationState> parse_webhook_outcome(std::string_view text) {
  auto state = parse_operation_state(text);
  if (!state || *state == OperationState::in_flight || *state == OperationState::unknown) return std::nullopt;
  return state;
}

WebhookReading read_webhook(std::string_view body, const WebhookRules& rules) {
  WebhookReading r;
  const auto document = parse_strict_json(body);
  if (document.is_discarded()) {
    r.detail = "the body is not JSON, or has a member twice";
    return r;
  }
  // The outcome is read even without a key: operators see what the body said.
  std::string outcome_detail = "no outcome pointer configured";
  if (rules.outcome_pointer) {
    if (const json* value = at_pointer(document, *rules.outcome_pointer)) r.outcome = scalar_text(*value);
    if (!r.outcome) {
      outcome_detail = "no outcome value (string, integer or boolean) at " + *rules.outcome_pointer;
    } else if (auto it = rules.outcomes.find(*r.outcome); it != rules.outcomes.end()) {
      r.mapped = it->second;
      outcome_detail = *rules.outcome_pointer + " = " + *r.outcome + ": " + std::string(name(it->second));
    } else {
      outcome_detail = *rules.outcome_pointer + " = " + *r.outcome + ": not in the outcome table, resolves nothing";
    }
  }
  const json* key = at_pointer(document, rules.key_pointer);
  if (!key || !key->is_string() || key->get_ref<const std::string&>().empty()) {
    r.detail = "no idempotency key (a non-empty string) at " + rules.key_pointer;
    return r;
  }
  r.parse = WebhookParse::parsed;
  r.upstream_key = key->get<std::string>();
  r.detail = std::move(outcome_detail);
  return r;
}

}  // namespace gw
