#include "service/runtime/reconciler.hpp"

#include "core/digest.hpp"
#include "core/reconcile.hpp"
#include "service/ops/event_log.hpp"
#include "service/proxy/forwarding.hpp"
#include "service/proxy/reply_screen.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <algorithm>

namespace gw {

Reconciler::Reconciler(const Config& config, Database& database, ReconcileStore& store,
                       ResolutionStore& resolutions, Metrics& metrics, upstream::Client& upstream,
                       const LiveProviders& providers)
    : config_(config),
      database_(database),
      store_(store),
      resolutions_(resolutions),
      metrics_(metrics),
      upstream_(upstream),
      providers_(providers),
      lookup_providers_(lookup_providers(config)) {}

bool Reconciler::has_lookup(const std::string& provider) const {
  const auto providers = providers_.current();
  auto it = providers->routes.find(provider);
  return it != providers->routes.end() && it->second.config->lookup.has_value();
}

asio::awaitable<void> Reconciler::run(asio::steady_timer& timer) {
  const auto& rc = config_.recovery.reconcile;
  while (!stopping_) {
    timer.expires_after(rc.interval);
    if (auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable)); ec) co_return;
    if (lookup_providers_.empty() || in_progress_ >= rc.max_concurrent) continue;
    const unsigned room = rc.max_concurrent - in_progress_;
    // From the current timeouts: a reload may have changed them.
    const auto lease_ms = lookup_lease(providers_.current()->configs, config_.recovery.forward_margin).count();
    std::vector<DueLookup> due;
    try {
      due = co_await database_.once(
          [&](Session& s) { return store_.due_for_lookup(s, lookup_providers_, room, lease_ms); });
      streak_.succeeded();
    } catch (const std::exception& e) {
      // The database is away or busy: nothing was handed out; the next round asks again.
      metrics_.count_event("reconcile_failed");
      streak_.failed("reconcile_failed", e);
      continue;
    }
    for (auto& d : due) {
      ++in_progress_;
      asio::co_spawn(timer.get_executor(), look_up_in_background(std::move(d)), asio::detached);
    }
  }
}

asio::awaitable<void> Reconciler::look_up_in_background(DueLookup due) {
  try {
    co_await look_up(due);
  } catch (const std::exception& e) {
    // Not recorded: the lease runs out and the operation is handed out again.
    metrics_.count_event("lookup_failed");
    metrics_.count_lookup(due.provider, "failed");
    log_event(LogLevel::warn, "lookup_failed", {{"tenant", due.scope.tenant},
                                                {"task", due.scope.task},
                                                {"operation", due.operation_id},
                                                {"provider", due.provider},
                                                {"error", e.what()}});
  }
  --in_progress_;
}

void Reconciler::withheld(const std::string& provider, unsigned status, const std::string& request_id,
                          std::string_view what) {
  // One line per withheld reply, naming the provider, never the credential.
  metrics_.count_event("provider_reply_withheld");
  log_event(LogLevel::warn, "provider_reply_withheld",
            {{"request_id", request_id}, {"provider", provider}, {"provider_status", status}, {"reply", what},
             {"reason", "the reply contained a provider credential"}});
}

asio::awaitable<LookupReport> Reconciler::look_up(DueLookup due) {
  // The provider's settings now (a credential rotated by a reload included),
  // kept to the end of this lookup.
  const auto providers = providers_.current();
  const ProviderRoute& route = providers->routes.at(due.provider);
  const ProviderConfig& provider = *route.config;
  const LookupConfig& lookup = *provider.lookup;
  metrics_.count_event("lookups");

  // A read with the operation's tenant's credential: no fence, no
  // idempotency key. A tenant the provider config no longer has an account
  // for is not looked up under another's: the operation stays held.
  const std::string request_id = "lookup-" + random_hex(8);
  const std::string* credential = provider.credential_for(due.scope.tenant);
  upstream::Result result;
  std::string_view failure = "the provider config has no credential for this tenant; nothing was sent";
  if (credential) {
    upstream::Request request{
        lookup.method, lookup_target(provider.base_path, lookup.path, due.upstream_key),
        upstream_headers({}, provider, *credential, {request_id, "", std::nullopt}, std::nullopt), ""};
    request.partition = due.scope.tenant;  // the tenant's credential: the tenant's connections
    result = co_await upstream_.exchange(route.endpoint, std::move(request));
    failure = upstream::to_string(result.failure);
  }

  std::optional<unsigned> status;
  std::string body, headers_json = "[]";
  std::optional<ScreenedReply> screened;
  if (result.response) {
    status = result.response->status;
    body = std::move(result.response->body);
    // The evidence an operator sees goes through the reply rules, so a
    // provider echoing a credential never has it stored; the decision reads
    // the body as the provider sent it.
    screened = screen_reply(*status, std::move(result.response->headers), body, provider);
    headers_json = headers_to_json(screened->reply.headers);
    if (screened->withheld) withheld(provider.name, *status, request_id, "lookup");
  }
  const auto decision =
      decide_lookup(lookup, provider.outcomes,
                    {status, body, result.response ? std::string_view() : failure,
                     due.forward_deadline_ms, due.handed_out_ms});
  if (screened) body = std::move(screened->reply.body);
  // Backoff, but never past the moment a "not found" starts to count: the
  // lookup right after the settle window is the one that can settle it.
  auto delay_ms = next_lookup_delay_ms(config_.recovery.reconcile.backoff, due.lookups + 1, Database::jitter());
  if (!decision.settles())
    if (auto trusted = not_found_trusted_from(lookup, due.forward_deadline_ms); trusted && *trusted > due.handed_out_ms)
      delay_ms = std::min(delay_ms, *trusted - due.handed_out_ms);
  const LookupRecord record{due.scope,
                            due.operation_id,
                            due.attempt,
                            provider.name,
                            status,
                            headers_json,
                            body,
                            decision.outcome,
                            decision.detail,
                            delay_ms};
  const auto recorded = co_await database_.once([&](Session& s) { return store_.record_lookup(s, record); });

  LookupReport report{.status = status,
                      .outcome = decision.outcome,
                      .detail = decision.detail,
                      .evidence_id = recorded.evidence_id};
  metrics_.count_lookup(provider.name, decision.settles() ? "settled" : "held");
  if (!decision.settles()) co_return report;

  HeldResolution resolution;
  resolution.scope = due.scope;
  resolution.operation_id = due.operation_id;
  resolution.source = EvidenceSource::lookup;
  resolution.outcome = decision.outcome;
  resolution.actor = provider.name;
  resolution.reference = "evidence:" + std::to_string(recorded.evidence_id);
  if (decision.original_status) {
    // The original reply as the lookup copied it becomes the operation's
    // recorded reply, replayed to the agent: screened again on its own.
    std::string original = decision.original_body.value_or("");
    std::string original_headers = "[]";
    if (provider.reveals_credential(original)) {
      auto stand_in = withheld_reply(*decision.original_status, provider);
      original = std::move(stand_in.body);
      original_headers = headers_to_json(stand_in.headers);
      withheld(provider.name, *decision.original_status, request_id, "lookup_original_reply");
    }
    resolution.reply = RecordedResponse{*decision.original_status, original_headers, original, sha256_hex(original),
                                        static_cast<std::int64_t>(original.size())};
  }
  const auto resolved = co_await database_.decide([&](Session& s) { return resolutions_.resolve_held(s, resolution); });
  report.resolution = resolved.code;
  if (resolved.code == Code::resolved) {
    metrics_.count_event("operations_reconciled");
    metrics_.count_resolved("lookup", name(decision.outcome));
    log_event("operation_reconciled", {{"tenant", due.scope.tenant},
                                       {"task", due.scope.task},
                                       {"operation", due.operation_id},
                                       {"attempt", due.attempt},
                                       {"provider", provider.name},
                                       {"outcome", name(decision.outcome)},
                                       {"lookup_status", status ? nlohmann::json(*status) : nlohmann::json(nullptr)},
                                       {"evidence", recorded.evidence_id},
                                       {"detail", decision.detail},
                                       {"authority_ms", resolved.now_ms}});
  }
  co_return report;
}

}  // namespace gw
