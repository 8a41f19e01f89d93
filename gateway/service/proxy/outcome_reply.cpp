#include "service/proxy/outcome_reply.hpp"

#include "http/problem.hpp"

#include <utility>

namespace gw {
namespace {

http::Response passed_through(ProviderReply reply, const char* gateway_status) {
  http::Response r;
  r.status = reply.status;
  r.headers = std::move(reply.headers);
  r.body = std::move(reply.body);
  r.set("Gateway-Status", gateway_status);
  return r;
}

}  // namespace

http::Response outcome_reply(OperationState state, std::optional<ProviderReply> reply,
                             const RecordedAttempt& attempt) {
  // Settled by another path (our own commit that was in doubt, or a sweep):
  // the ledger has the answer, and an exact retry reads it.
  if (!attempt.recorded)
    return http::problem(Code::unknown_outcome,
                         "this attempt's outcome was settled elsewhere; retry with the same "
                         "Idempotency-Key to read the recorded result");
  // Only the task's current owner may see the result (rules 2-6 at reply time).
  // The sender is still told that its request went out and what became of it
  // is recorded (`outcome_recorded`): the same grant code at admission means
  // nothing was done, and an agent that took this one for that and acted
  // again under a new operation id would act twice.
  if (attempt.reply_gate != Code::ok)
    return http::problem(attempt.reply_gate,
                         "this request was forwarded and its outcome recorded, but this grant is no longer the "
                         "task's current one: claim the task again and read the operation's receipt, or send "
                         "this exact request again with the new grant to have the recorded result replayed",
                         {{"outcome_recorded", true}});
  switch (state) {
    case OperationState::succeeded:
      if (reply) {
        auto r = passed_through(std::move(*reply), "committed");
        r.set("Committed-Version", std::to_string(attempt.version));
        return r;
      }
      break;
    case OperationState::rejected:
      if (reply) return passed_through(std::move(*reply), "rejected_by_provider");
      break;
    case OperationState::not_executed: {
      nlohmann::json extra = nlohmann::json::object();
      std::optional<std::string> retry_after;
      if (reply) {
        extra["provider_status"] = reply->status;
        if (auto v = http::find_header(reply->headers, "Retry-After")) retry_after = std::string(*v);
      }
      auto r = http::problem(Code::provider_unavailable,
                             "the provider did not execute the request; retry with the same Idempotency-Key", extra);
      if (retry_after) r.set("Retry-After", *retry_after);
      return r;
    }
    case OperationState::in_flight:
    case OperationState::unknown:
      break;
  }
  // Unknown, or a definite state without the reply that proves it: never
  // guess. Say what did happen: a provider that answered (a 5xx at once, say)
  // is not a timeout, though the spec's code for both is 504 unknown_outcome.
  if (reply) {
    const auto status = std::to_string(reply->status);
    return http::problem(Code::unknown_outcome,
                         "the provider answered " + status +
                             ", which does not say whether it acted: the outcome is unknown; the operation "
                             "is held for reconciliation and will not be resent",
                         {{"provider_status", reply->status}});
  }
  return http::problem(Code::unknown_outcome,
                       "the request was sent but no usable reply came back (a timeout, or the connection "
                       "was lost): the outcome is unknown; the operation is held for reconciliation and will "
                       "not be resent");
}

http::Response unrecorded_outcome_reply() {
  return http::problem(Code::unknown_outcome,
                       "the request was forwarded but its outcome could not be recorded; the operation "
                       "is held for reconciliation and will not be resent");
}

}  // namespace gw
