// Signed provider webhooks (spec section 4): verified before anything is
// stored, stored raw before anything is parsed, then matched to an
// operation as evidence. A webhook that names an outcome resolves its held
// operation through the same transaction an operator's resolve uses; it is
// never a grant to act, and one about an operation in flight or already
// settled changes nothing but the evidence.
#include "core/labels.hpp"
#include "core/webhook_signature.hpp"
#include "http/problem.hpp"
#include "service/api/app.hpp"
#include "service/ops/event_log.hpp"
#include "service/api/refusal.hpp"

#include <chrono>

namespace gw {

App::Reply App::webhook(Call& call) {
  const auto& provider_name = call.target.segments[2];
  const auto providers = providers_.current();
  auto found = providers->routes.find(provider_name);
  if (!is_label(provider_name) || found == providers->routes.end() || !found->second.config->webhooks)
    throw Refusal(Code::not_found, "no provider with webhooks named '" + provider_name + "'",
                    {{"missing", "provider"}});
  const ProviderConfig& provider = *found->second.config;
  const WebhookConfig& hooks = *provider.webhooks;

  // The sender's clock is compared with this host's wall clock, not with
  // authority time: the manual test clock must not open a replay window.
  const auto wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  const auto verified =
      verify_webhook(call.request.headers, call.request.body, hooks.keys, wall_ms, hooks.tolerance.count());
  if (!verified.ok()) {
    nlohmann::json line{{"request_id", call.request_id}, {"provider", provider.name},
                        {"reason", name(*verified.refusal)}};
    if (!verified.id.empty()) line["webhook_id"] = verified.id;
    log_event(LogLevel::warn, "webhook_refused", std::move(line));
    deps_.metrics.count_event("webhooks_refused");
    co_return http::problem(Code::unauthenticated, "webhook signature verification failed");
  }

  const WebhookDelivery delivery{provider.name, verified.id, verified.timestamp_s, call.request.body};
  const auto accepted =
      co_await db(call).once([&](Session& s) { return deps_.webhooks.accept(s, delivery, hooks.rules); });
  nlohmann::json line{{"request_id", call.request_id},
                      {"provider", provider.name},
                      {"webhook_id", verified.id},
                      {"delivery", name(accepted.disposition)},
                      {"detail", accepted.detail}};
  if (accepted.disposition == WebhookDisposition::matched && accepted.match) {
    const auto& m = *accepted.match;
    line.update({{"tenant", m.scope.tenant}, {"task", m.scope.task}, {"operation", m.operation_id},
                 {"evidence", m.evidence_id}});
    if (m.outcome) {
      HeldResolution resolution;
      resolution.scope = m.scope;
      resolution.operation_id = m.operation_id;
      resolution.source = EvidenceSource::webhook;
      resolution.outcome = *m.outcome;
      resolution.actor = provider.name;
      resolution.reference = "webhook:" + verified.id;
      auto resolved =
          co_await db(call).decide([&](Session& s) { return deps_.resolutions.resolve_held(s, resolution); });
      line["resolution"] = name(resolved.code);
      if (resolved.code == Code::resolved) {
        deps_.metrics.count_event("operations_resolved_by_webhook");
        deps_.metrics.count_resolved("webhook", name(*m.outcome));
        log_event("operation_resolved", {{"request_id", call.request_id},
                                         {"tenant", m.scope.tenant},
                                         {"task", m.scope.task},
                                         {"operation", m.operation_id},
                                         {"provider", provider.name},
                                         {"source", "webhook"},
                                         {"outcome", name(*m.outcome)},
                                         {"reference", resolution.reference},
                                         {"authority_ms", resolved.now_ms}});
      }
    }
  }
  log_event("webhook_received", std::move(line));
  co_return http::json_reply(Code::ok, {{"webhook_id", verified.id},
                                        {"delivery", accepted.disposition == WebhookDisposition::duplicate
                                                         ? "duplicate"
                                                         : "accepted"}});
}

}  // namespace gw
