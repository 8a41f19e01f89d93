// Choosing a rule set, and the small helpers both rule sets share.
#include "business_rules.hpp"

namespace demo_provider {

std::unique_ptr<business_rules> make_rules(provider_kind kind) {
  return kind == provider_kind::booking ? make_booking_rules() : make_crm_rules();
}

std::optional<nlohmann::json> parse_object(std::string_view body) {
  auto value = nlohmann::json::parse(body, nullptr, false);
  if (value.is_discarded() || !value.is_object()) return std::nullopt;
  return value;
}

rule_outcome error_outcome(unsigned status, std::string_view error, bool remember) {
  return rule_outcome{status, {{"error", error}}, false, remember};
}

}  // namespace demo_provider
