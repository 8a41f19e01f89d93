// The outcome lane: what a provider said about a forwarded attempt is
// recorded however long the database takes to answer. The agent's reply
// waits for the record up to recovery.outcome_wait; past it the agent is told
// the outcome is unknown to it (504) while the record goes on being tried,
// with backoff on a timer, in the pool's outcome lane, which is never shed for
// load. Only stopping the process ends the tries: the sweep then finds the
// attempt still in flight past its deadline and holds it.
#include "core/digest.hpp"
#include "core/outcome.hpp"
#include "service/api/app.hpp"
#include "service/ops/event_log.hpp"
#include "service/proxy/forwarding.hpp"
#include "service/proxy/outcome_reply.hpp"
#include "service/proxy/reply_screen.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>

namespace gw {

struct App::PendingOutcome {
  explicit PendingOutcome(const asio::any_io_executor& executor) : wake(executor), pause(executor) {}

  OutcomeRecord record;
  GrantToken admitted_by;
  std::string request_id, trace_id;
  std::string provider;
  std::optional<ProviderReply> reply;  // what the agent may see of the provider's reply
  std::optional<OutcomeResult> recorded;
  bool done = false;          // recorded, or given up at stop
  asio::steady_timer wake;    // the agent's reply waits on it
  asio::steady_timer pause;   // between two tries
};

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

nlohmann::json describe(const App::PendingOutcome& p) {
  nlohmann::json line{{"request_id", p.request_id},
                      {"trace_id", p.trace_id},
                      {"tenant", p.record.scope.tenant},
                      {"task", p.record.scope.task},
                      {"operation", p.record.operation_id},
                      {"attempt", p.record.attempt},
                      {"provider", p.provider},
                      {"outcome", name(p.record.state)}};
  if (p.record.response)
    line["provider_reply"] = {{"status", p.record.response->status},
                              {"sha256", p.record.response->body_sha256},
                              {"length", p.record.response->body_length}};
  return line;
}

}  // namespace

App::Reply App::record(Call& call, const ProviderConfig& config, const AdmissionRequest& admission,
                       const AdmissionResult& admitted, upstream::Result result) {
  auto executor = co_await asio::this_coro::executor;
  auto p = std::make_shared<PendingOutcome>(executor);
  std::optional<unsigned> status;
  if (result.response) status = result.response->status;
  const auto state = classify_outcome(config.outcomes, result.request_bytes_sent, status);
  deps_.metrics.count_outcome(config.name, name(state));
  p->record = OutcomeRecord{admission.scope, admission.operation_id, admitted.attempt, state, std::nullopt,
                            result.response ? "provider replied " + std::to_string(*status)
                                            : std::string(upstream::to_string(result.failure)) + ": " + result.detail,
                            admitted.rows};
  if (result.response) {
    // What the agent gets is what the ledger keeps: a reply withheld for
    // revealing a credential is recorded withheld, so a replay is too.
    auto screened = screen_reply(*status, std::move(result.response->headers), std::move(result.response->body), config);
    if (screened.withheld) reply_withheld(call, config.name, *status);
    p->reply = std::move(screened.reply);
    p->record.response = RecordedResponse{*status, headers_to_json(p->reply->headers), p->reply->body,
                                          sha256_hex(p->reply->body),
                                          static_cast<std::int64_t>(p->reply->body.size())};
  }
  p->admitted_by = admission.token;
  p->request_id = call.request_id;
  p->trace_id = call.trace.trace_id;
  p->provider = config.name;
  {
    std::lock_guard lock(pending_mutex_);
    pending_.insert(p);
  }
  // On the same io_context thread as this coroutine: `done` and the timers
  // need no lock.
  asio::co_spawn(executor, keep_recording(p), asio::detached);
  if (!p->done) {
    const auto waited = std::chrono::steady_clock::now();
    p->wake.expires_after(deps_.config.recovery.outcome_wait);
    co_await p->wake.async_wait(use_tuple);
    call.db_time += std::chrono::steady_clock::now() - waited;
  }
  if (!p->recorded) co_return unrecorded_outcome_reply();
  const auto& r = *p->recorded;
  co_return outcome_reply(state, std::move(p->reply), RecordedAttempt{r.recorded, r.reply_gate, r.version});
}

asio::awaitable<void> App::keep_recording(std::shared_ptr<PendingOutcome> p) {
  const RetryPolicy pacing{0, std::chrono::milliseconds(50), deps_.config.recovery.outcome_retry_cap};
  unsigned tries = 0;
  std::string error;
  while (!stopping_) {
    ++tries;
    const auto asked = std::chrono::steady_clock::now();
    try {
      p->recorded = co_await deps_.database.decide_direct(
          [&] {
            // Only an attempt whose admission wrote its rows has them.
            std::optional<OutcomeAtRows> ask;
            if (p->record.rows) ask.emplace(deps_.ledger.outcome_at_rows(p->record, p->admitted_by));
            return ask;
          },
          [&](Session& s, bool at_rows_tried) {
            return deps_.ledger.record_outcome(s, p->record, p->admitted_by, at_rows_tried);
          },
          [&](pqxx::dbtransaction& tx) { return deps_.ledger.record_outcome(tx, p->record, p->admitted_by); },
          Lane::outcome);
      deps_.metrics.observe_decision("outcome", std::chrono::steady_clock::now() - asked);
      break;
    } catch (const AuthorityUnavailable& e) {
      error = e.what();
    } catch (const std::exception& e) {
      // Not the database being away: trying again would fail the same way.
      auto line = describe(*p);
      line["error"] = e.what();
      log_event(LogLevel::error, "outcome_record_failed", std::move(line));
      deps_.metrics.count_event("outcome_record_failed");
      break;
    }
    if (tries == 1) {
      auto line = describe(*p);
      line["error"] = error;
      log_event(LogLevel::warn, "outcome_record_waiting", std::move(line));
      deps_.metrics.count_event("outcome_record_waiting");
    }
    if (stopping_) break;  // stop() set it before posting the cancel: checked here, no wait is missed
    p->pause.expires_after(backoff_delay(pacing, tries, Database::jitter()));
    co_await p->pause.async_wait(use_tuple);
  }
  if (p->recorded && p->recorded->recorded && p->record.state == OperationState::unknown) {
    // One line per operation that becomes held, for the operator on call.
    auto line = describe(*p);
    line["reason"] = "outcome_unknown";
    line["detail"] = p->record.detail;
    log_event(LogLevel::warn, "operation_held", std::move(line));
    deps_.metrics.count_event("operations_held");
  }
  if (p->recorded && tries > 1) {
    auto line = describe(*p);
    line["tries"] = tries;
    log_event("outcome_recorded_late", std::move(line));
  } else if (!p->recorded && stopping_) {
    // The reply's digest is logged so an operator can match the provider's
    // record when the sweep holds this attempt.
    auto line = describe(*p);
    line["error"] = error;
    log_event(LogLevel::error, "outcome_unrecorded_at_stop", std::move(line));
    deps_.metrics.count_event("outcome_unrecorded_at_stop");
  }
  p->done = true;
  p->wake.cancel();
  bool settled = false;
  {
    std::lock_guard lock(pending_mutex_);
    pending_.erase(p);
    settled = pending_.empty();
  }
  // Outside pending_mutex_: the drain's waiter reads pending_outcomes() under its own lock.
  if (settled && outcomes_settled_) outcomes_settled_();
}

std::size_t App::pending_outcomes() const {
  std::lock_guard lock(pending_mutex_);
  return pending_.size();
}

void App::stop() {
  stopping_ = true;
  std::lock_guard lock(pending_mutex_);
  for (const auto& p : pending_) asio::post(p->pause.get_executor(), [p] { p->pause.cancel(); });
}

}  // namespace gw
