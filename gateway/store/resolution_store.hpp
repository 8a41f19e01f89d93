// Resolving a held operation from evidence (spec section 4): the one
// transaction the operator's resolve, the provider lookup and signed
// webhooks all use. SERIALIZABLE, every row by primary key. The evidence is
// inserted into operation_evidence beside the original record, which is
// never rewritten: the attempt rows keep what the forward saw.
#pragma once

#include "core/grant.hpp"
#include "core/ledger.hpp"
#include "core/resolution.hpp"
#include "store/authority_clock.hpp"
#include "store/pool.hpp"
#include "store/task_snapshot.hpp"
#include "store/transaction.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace gw {

struct HeldResolution {
  TaskScope scope;
  std::string operation_id;
  EvidenceSource source = EvidenceSource::operator_;  // lookup, webhook or operator
  OperationState outcome = OperationState::unknown;   // succeeded, rejected or not_executed
  std::string actor;      // the operator token's name; the provider's name for lookups and webhooks
  std::string reference;  // the operator's ticket or evidence id, a webhook's event id, a lookup's id
  std::optional<std::string> note;
  // What the source said (a lookup's reply, a webhook's body): kept as
  // evidence, never replayed as the operation's reply.
  std::optional<RecordedResponse> reply;
};

struct ResolutionResult {
  // resolved; otherwise decide_resolution's refusal (invalid_request,
  // not_found, operation_in_flight, operation_not_held, version_exhausted),
  // and nothing was written.
  Code code = Code::ok;
  std::optional<OperationState> found_state;  // as found; nullopt: no such operation
  std::optional<HeldReason> held_reason;      // why it was held (unknown operations)
  std::optional<OperationResolution> found_resolution;  // refused: how it was already settled, if by evidence
  int attempt = 0;               // the operation's last attempt, which the evidence is about
  std::int64_t evidence_id = 0;  // resolved: the operation_evidence row
  std::int64_t now_ms = 0;       // authority time of the decision (resolved_ms when resolved)
  std::int64_t version = 0;      // the task's business version after (as read when refused)
  std::optional<std::int64_t> committed_version;  // resolved succeeded: the version it made
};

class ResolutionStore {
 public:
  explicit ResolutionStore(AuthorityClock& clock) : clock_(clock) {}

  // Throws AuthorityUnavailable when the database cannot answer.
  ResolutionResult resolve_held(Session& s, const HeldResolution& resolution);

 private:
  AuthorityClock& clock_;
};

}  // namespace gw
