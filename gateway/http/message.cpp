#include "http/message.hpp"

#include "core/labels.hpp"

namespace gw::http {

std::optional<std::string_view> find_header(const Fields& fields, std::string_view name) {
  for (const auto& [k, v] : fields)
    if (iequals(k, name)) return std::string_view(v);
  return std::nullopt;
}

void Response::set(std::string name, std::string value) {
  for (auto& [k, v] : headers)
    if (iequals(k, name)) {
      v = std::move(value);
      return;
    }
  headers.emplace_back(std::move(name), std::move(value));
}

}  // namespace gw::http
