// Routes of the control API under /__test/.
#include "control_api.hpp"

#include "reply_headers.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <variant>
#include <string_view>

namespace demo_provider {
namespace {

plain_reply invalid(std::string_view error, const std::string& detail) {
  return json_reply(400, {{"error", error}, {"detail", detail}});
}

plain_reply set_faults(const plain_request& request, provider_core& core) {
  const auto body = nlohmann::json::parse(request.body, nullptr, false);
  if (body.is_discarded()) return error_reply(400, "invalid_json");
  if (const auto problem = core.faults().set(body)) return invalid("invalid_fault", *problem);
  return json_reply(200, core.faults().to_json());
}

plain_reply release(const plain_request& request, provider_core& core) {
  // An empty body releases all: `curl -X POST .../release` is the common use.
  const auto body = request.body.empty() ? nlohmann::json::object()
                                         : nlohmann::json::parse(request.body, nullptr, false);
  if (body.is_discarded()) return error_reply(400, "invalid_json");
  if (!body.is_object()) return invalid("invalid_release", "the body must be a JSON object");
  std::optional<std::size_t> count;
  if (const auto it = body.find("count"); it != body.end() && !it->is_null()) {
    if (!it->is_number_unsigned() || it->get<std::uint64_t>() == 0)
      return invalid("invalid_release", "count must be an integer >= 1");
    count = it->get<std::size_t>();
  }
  const std::size_t released = core.holds().release(count);
  return json_reply(200, {{"released", released}, {"held", core.holds().held()}});
}

plain_reply set_reply_headers(const plain_request& request, provider_core& core) {
  const auto body = nlohmann::json::parse(request.body, nullptr, false);
  if (body.is_discarded()) return error_reply(400, "invalid_json");
  if (const auto problem = core.set_reply_headers(body)) return invalid("invalid_reply_headers", *problem);
  return json_reply(200, reply_headers_json(core.reply_headers()));
}

plain_reply send_webhook(const plain_request& request, provider_core& core) {
  if (!core.webhook_config())
    return json_reply(409, {{"error", "webhooks_not_configured"},
                            {"detail", "start demo-provider with --webhook-url and --webhook-secret"}});
  const auto body = nlohmann::json::parse(request.body, nullptr, false);
  if (body.is_discarded()) return error_reply(400, "invalid_json");
  const auto queued = core.queue_webhook(body);
  if (const auto* problem = std::get_if<std::string>(&queued)) return invalid("invalid_webhook", *problem);
  const auto& event = std::get<webhook_event>(queued);
  // The server sends it before answering and replaces this with the result.
  return json_reply(202, {{"queued", {{"id", event.id}, {"key", event.key}}}});
}

plain_reply set_echo(const plain_request& request, provider_core& core) {
  const auto body = nlohmann::json::parse(request.body, nullptr, false);
  if (body.is_discarded()) return error_reply(400, "invalid_json");
  if (const auto problem = core.set_echo(body)) return invalid("invalid_echo", *problem);
  return json_reply(200, echo_json(core.echo()));
}

constexpr std::array<std::string_view, 9> control_paths{
    "/__test/requests", "/__test/effects",       "/__test/activity", "/__test/faults", "/__test/release",
    "/__test/reply_headers", "/__test/reset",    "/__test/webhooks", "/__test/echo"};

}  // namespace

plain_reply handle_control(const plain_request& request, provider_core& core) {
  const std::string_view path = path_of(request.target);
  const std::string_view method = request.method;

  if (path == "/__test/requests" && method == "GET") return json_reply(200, core.requests_json());
  if (path == "/__test/effects" && method == "GET") return json_reply(200, core.effects_json());
  if (path == "/__test/activity" && method == "GET") return json_reply(200, core.activity_json());
  if (path == "/__test/faults" && method == "GET") return json_reply(200, core.faults().to_json());
  if (path == "/__test/faults" && method == "POST") return set_faults(request, core);
  if (path == "/__test/release" && method == "POST") return release(request, core);
  if (path == "/__test/reply_headers" && method == "GET") return json_reply(200, reply_headers_json(core.reply_headers()));
  if (path == "/__test/reply_headers" && method == "POST") return set_reply_headers(request, core);
  if (path == "/__test/echo" && method == "GET") return json_reply(200, echo_json(core.echo()));
  if (path == "/__test/echo" && method == "POST") return set_echo(request, core);
  if (path == "/__test/webhooks" && method == "GET") return json_reply(200, core.webhooks_json());
  if (path == "/__test/webhooks" && method == "POST") return send_webhook(request, core);
  if (path == "/__test/reset" && method == "POST") {
    core.reset();
    return json_reply(200, {{"reset", true}});
  }
  for (const std::string_view known : control_paths)
    if (path == known) return error_reply(405, "method_not_allowed");
  return error_reply(404, "not_found");
}

}  // namespace demo_provider
