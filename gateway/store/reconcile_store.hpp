// The reconciler's schedule of provider lookups (spec section 4): which held
// operations are due for a lookup, handed to exactly one gateway each even
// with several on one database; what each lookup answered, kept as evidence;
// and the operator's "look up now". It never changes an operation's state:
// the loop decides with core/reconcile.hpp and resolve_held settles.
// READ COMMITTED throughout, like the sweep: row locks and SKIP LOCKED, no
// SERIALIZABLE predicate locks on the scan of the due index.
#pragma once

#include "core/grant.hpp"
#include "core/ledger.hpp"
#include "store/authority_clock.hpp"
#include "store/pool.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gw {

// A held operation handed to this gateway for one lookup. It stays reserved
// (not due for anyone) for the lease given to due_for_lookup; record_lookup
// then sets its next lookup time.
struct DueLookup {
  TaskScope scope;
  std::string operation_id;
  int attempt = 0;           // the attempt held unknown; evidence is recorded against it
  std::string provider;
  std::string upstream_key;  // the idempotency key the provider received
  // The attempt's forward deadline: its last possible send (core/reconcile.hpp).
  std::optional<std::int64_t> forward_deadline_ms;
  int lookups = 0;                 // lookups already recorded for this attempt
  std::optional<std::int64_t> last_lookup_ms;
  std::int64_t handed_out_ms = 0;  // authority time of the hand-out, before the lookup is sent
};

// What one lookup answered, as received, and when to look again.
struct LookupRecord {
  TaskScope scope;
  std::string operation_id;
  int attempt = 0;
  std::string provider;           // the evidence's actor
  std::optional<unsigned> status;  // the lookup reply's status; nullopt: no reply
  std::string headers_json = "[]";  // the lookup reply's headers, [[name, value], ...]
  std::string body;                 // the lookup reply's body, exactly (sha256 and length are computed here)
  // What the evidence says (LookupDecision::outcome): succeeded, rejected,
  // not_executed, or unknown when it settles nothing.
  OperationState outcome = OperationState::unknown;
  std::string detail;                    // LookupDecision::detail, plus anything the loop adds
  std::int64_t next_lookup_delay_ms = 0;  // from the recording's authority time (next_lookup_delay_ms)
};

struct RecordedLookup {
  std::int64_t evidence_id = 0;  // operation_evidence.id, for resolve_held to cite
  std::int64_t recorded_ms = 0;
  // When the operation is due again; nullopt when it was no longer held
  // under this attempt (settled meanwhile): evidence kept, nothing scheduled.
  std::optional<std::int64_t> next_lookup_ms;
};

// The operator's "look up now".
struct LookupNow {
  // nullopt: no such operation. unknown: it is due now. Anything else: it
  // is not held unknown (in flight, or settled), so nothing was scheduled.
  std::optional<OperationState> state;
  std::int64_t now_ms = 0;
};

class ReconcileStore {
 public:
  explicit ReconcileStore(AuthorityClock& clock) : clock_(clock) {}

  // All of these throw AuthorityUnavailable when the database cannot answer.

  // Up to `limit` unknown operations of the named providers whose lookup is
  // due, oldest due first, each reserved for `lease_ms` (config's
  // lookup_lease): until then no gateway (this one included) gets it again.
  // A lookup not recorded within its lease is handed out again.
  std::vector<DueLookup> due_for_lookup(Session& s, const std::vector<std::string>& providers, unsigned limit,
                                        std::int64_t lease_ms);

  // Keeps the lookup's answer as evidence (source 'lookup', actor the
  // provider) whatever the operation's state now, and, if it is still held
  // unknown under the same attempt, counts the lookup and schedules the
  // next one `next_lookup_delay_ms` from now.
  RecordedLookup record_lookup(Session& s, const LookupRecord& lookup);

  // Makes a held unknown operation due at once (the operator's reconcile
  // button); the lookups count, and so the backoff after it, is kept.
  LookupNow lookup_now(Session& s, const TaskScope& scope, const std::string& operation_id);

 private:
  AuthorityClock& clock_;
};

}  // namespace gw
