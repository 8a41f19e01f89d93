// Routes of the control API under /__test/.
#include "control_api.hpp"

#include <nlohmann/json.hpp>

#include <string_view>

namespace demo_provider {
namespace {

plain_reply error_reply(unsigned status, std::string_view error) {
  return json_reply(status, {{"error", error}});
}

plain_reply set_faults(const plain_request& request, provider_core& core) {
  const auto body = nlohmann::json::parse(request.body, nullptr, false);
  if (body.is_discarded()) return error_reply(400, "invalid_json");
  if (const auto problem = core.faults().set(body))
    return json_reply(400, {{"error", "invalid_fault"}, {"detail", *problem}});
  return json_reply(200, core.faults().to_json());
}

}  // namespace

plain_reply handle_control(const plain_request& request, provider_core& core) {
  const std::string_view path = path_of(request.target);
  const std::string_view method = request.method;

  if (path == "/__test/requests" && method == "GET") return json_reply(200, core.requests_json());
  if (path == "/__test/effects" && method == "GET") return json_reply(200, core.effects_json());
  if (path == "/__test/faults" && method == "GET") return json_reply(200, core.faults().to_json());
  if (path == "/__test/faults" && method == "POST") return set_faults(request, core);
  if (path == "/__test/reset" && method == "POST") {
    core.reset();
    return json_reply(200, {{"reset", true}});
  }
  if (path == "/__test/requests" || path == "/__test/effects" || path == "/__test/faults" ||
      path == "/__test/reset")
    return error_reply(405, "method_not_allowed");
  return error_reply(404, "not_found");
}

}  // namespace demo_provider
