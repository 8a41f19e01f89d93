#include "gatewayctl/request.hpp"

#include <nlohmann/json.hpp>

namespace gwctl {

std::string percent_encode(std::string_view text) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                            c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string query_string(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string out;
  for (const auto& [name, value] : params)
    out += (out.empty() ? "?" : "&") + percent_encode(name) + "=" + percent_encode(value);
  return out;
}

// Every POST carries a JSON object, "{}" when the route takes no member: the
// gateway's bodies are strict objects (docs/api.md), and an empty object is
// what a route without members accepts.
HttpRequest build_request(const Invocation& inv, const std::optional<std::string>& cursor) {
  const std::string admin = inv.endpoint.base_path + "/v1/admin";
  auto operation = [&] {
    return admin + "/operations/" + percent_encode(inv.operands.at(0)) + "/" + percent_encode(inv.operands.at(1)) +
           "/" + percent_encode(inv.operands.at(2));
  };
  auto listing = [&](const char* path) {
    auto params = inv.query;
    if (auto page = cursor ? cursor : inv.cursor) params.emplace_back("cursor", *page);
    return HttpRequest{"GET", admin + path + query_string(params), std::nullopt};
  };
  switch (inv.command) {
    case Command::held:
      return listing("/held");
    case Command::rejections:
      return listing("/rejections");
    case Command::show:
      return {"GET", operation(), std::nullopt};
    case Command::reconcile:
      return {"POST", operation() + "/reconcile", "{}"};
    case Command::resolve: {
      nlohmann::ordered_json body{{"outcome", inv.outcome}, {"evidence", inv.evidence}};
      if (inv.note) body["note"] = *inv.note;
      return {"POST", operation() + "/resolve", body.dump()};
    }
    case Command::revoke:
      return {"POST",
              admin + "/tasks/" + percent_encode(inv.operands.at(0)) + "/" + percent_encode(inv.operands.at(1)) +
                  "/revoke",
              "{}"};
    case Command::rotate_realm:
      return {"POST", admin + "/authority/rotate-realm", "{}"};
  }
  throw std::logic_error("build_request: unknown command");
}

}  // namespace gwctl
