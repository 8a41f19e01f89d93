#include "core/fingerprint.hpp"

#include "core/base64url.hpp"
#include "core/digest.hpp"

namespace gw {

std::string payload_fingerprint(const PayloadParts& parts) {
  std::string framed;
  framed.reserve(parts.body.size() + parts.target.size() + 96);
  auto add = [&framed](std::string_view part) {
    framed += std::to_string(part.size());
    framed += ':';
    framed += part;
  };
  add("write-gateway/fingerprint/v1");
  add(parts.method);
  add(parts.provider);
  add(parts.target);
  add(std::to_string(parts.expected_version));
  add(parts.body);
  return sha256(framed);
}

}  // namespace gw

namespace gw {

std::string upstream_idempotency_key(std::string_view tenant, std::string_view task,
                                     std::string_view operation_id) {
  std::string framed;
  for (auto part : {std::string_view("write-gateway/operation/v1"), tenant, task, operation_id}) {
    framed += std::to_string(part.size());
    framed += ':';
    framed += part;
  }
  return "gw1-" + base64url_encode(sha256(framed));
}

}  // namespace gw
