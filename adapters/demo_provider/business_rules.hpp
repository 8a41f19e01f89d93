// The kind-specific business rules (bookings or contacts) behind one
// interface, so provider_core adds auth, idempotency and effect counting once.
#pragma once

#include "provider_kind.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace demo_provider {

struct rule_outcome {
  unsigned status = 200;
  nlohmann::json body;
  bool effect = false;    // state actually changed: what tests count
  bool remember = false;  // kept under the Idempotency-Key and replayed; only processed requests are
};

class business_rules {
 public:
  virtual ~business_rules() = default;

  // The first path segment this provider serves, e.g. "bookings".
  virtual std::string_view collection() const = 0;

  // `id` is the percent-decoded second path segment, empty for the collection.
  virtual rule_outcome apply(std::string_view method, const std::string& id, std::string_view body) = 0;

  virtual void reset() = 0;
};

std::unique_ptr<business_rules> make_rules(provider_kind kind);
std::unique_ptr<business_rules> make_booking_rules();
std::unique_ptr<business_rules> make_crm_rules();

// Shared by both rule sets.
std::optional<nlohmann::json> parse_object(std::string_view body);
rule_outcome error_outcome(unsigned status, std::string_view error, bool remember);

}  // namespace demo_provider
