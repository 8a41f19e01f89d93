#include "service/api/refusal.hpp"

#include "http/problem.hpp"

namespace gw {

http::Response refusal(Code code) {
  const char* detail = nullptr;
  switch (code) {
    case Code::busy:
      detail = "another lease on this task has not expired; claim again after it ends";
      break;
    case Code::stale_owner:
      detail = "this grant is not the task's current one; claim the task again";
      break;
    case Code::expired_owner:
      detail = "this grant expired; claim the task again for a new epoch";
      break;
    case Code::authority_generation_mismatch:
      detail = "this grant was issued by another authority realm";
      break;
    case Code::scope_mismatch:
      detail = "this grant is for another tenant or task than the path";
      break;
    case Code::epoch_exhausted:
      detail = "the realm has issued its last epoch";
      break;
    case Code::invalid_request:
      detail = "lease_ms would end the lease past 2^63-1 ms";
      break;
    case Code::operation_conflict:
      detail = "this Idempotency-Key was used with a different request; use a new key";
      break;
    case Code::operation_in_flight:
      detail = "this operation is being forwarded now; retry later for its result";
      break;
    case Code::unresolved_operation:
      detail = "another operation of this task has no known outcome yet";
      break;
    case Code::version_conflict:
      detail = "Expected-Version is not the task's business version";
      break;
    case Code::unknown_outcome:
      detail = "this operation's outcome is unknown and is held for reconciliation; it is never resent";
      break;
    case Code::version_exhausted:
      detail = "the task's business version is at 2^63-1";
      break;
    case Code::resolved_without_reply:
      detail = "this operation was settled from evidence (a provider lookup, webhook or operator); there is no "
               "provider reply to replay, and it is never resent. Its receipt shows the outcome";
      break;
    default:
      break;
  }
  return http::problem(code, detail ? detail : std::string(title(code)));
}

http::Response not_found(std::string_view missing, std::string detail) {
  return http::problem(Code::not_found, std::move(detail), {{"missing", missing}});
}

http::Response no_such_operation() { return not_found("operation", "no operation with this id on this task"); }

Refusal no_such_route() { return Refusal(Code::not_found, "no such route", {{"missing", "route"}}); }

}  // namespace gw
