// The two providers one demo-provider binary can stand in for.
#pragma once

#include <optional>
#include <string_view>

namespace demo_provider {

enum class provider_kind { booking, crm };

constexpr std::string_view to_string(provider_kind kind) {
  return kind == provider_kind::booking ? "booking" : "crm";
}

constexpr std::optional<provider_kind> kind_from_string(std::string_view name) {
  if (name == "booking") return provider_kind::booking;
  if (name == "crm") return provider_kind::crm;
  return std::nullopt;
}

}  // namespace demo_provider
