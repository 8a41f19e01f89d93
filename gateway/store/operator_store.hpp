// The operator's view of one operation and the operator's authority actions
// (spec section 4): the operation detail (every attempt with the grant that
// admitted it, and every piece of evidence), ending a lease (revoke), and
// rotating the realm after a restore. The detail is a READ COMMITTED read;
// revoke and rotation are SERIALIZABLE decisions like claim and release.
#pragma once

#include "core/codes.hpp"
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
#include <vector>

namespace gw {

// One admission of the operation, with the grant identity that admitted it.
struct AttemptDetail {
  int attempt = 0;
  GrantIdentity grant;  // realm, scope, owner, epoch as admitted, never rewritten
  std::int64_t admitted_ms = 0;
  std::optional<OperationState> outcome;  // null: never recorded (in flight, or resolved while abandoned)
  std::optional<std::int64_t> outcome_ms;
  std::optional<unsigned> upstream_status;
  std::optional<std::string> detail;
};

// How much of a stored body the detail carries: enough to read what a
// provider said, bounded so a large body cannot swell the operator's page.
constexpr std::int64_t body_preview_bytes = 4096;

// A reply as stored: its digest, and the first body_preview_bytes of its body.
struct ReplyDigest {
  unsigned status = 0;
  std::optional<std::string> sha256;  // hex
  std::optional<std::int64_t> length;
  std::optional<std::string> body;    // bytes as received, cut at body_preview_bytes; nullopt: none stored
};

// A row of operation_evidence, or a run of identical consecutive lookups
// shown as one (operator_store.cpp, evidence_sql): its first row, how many,
// and the last row's id and time. The body is cut at body_preview_bytes.
struct EvidenceDetail {
  std::int64_t id = 0;
  int attempt = 0;
  EvidenceSource source = EvidenceSource::sweep;
  std::optional<OperationState> outcome;
  std::optional<unsigned> upstream_status;
  std::string detail;
  std::optional<std::string> body_sha256;  // hex
  std::optional<std::int64_t> body_length;
  std::optional<std::string> reference, actor;
  std::int64_t recorded_ms = 0;        // the first row's
  std::int64_t count = 1;              // rows in the run (1 but for repeated lookups)
  std::int64_t last_id = 0;            // the run's last row (== id when count is 1)
  std::int64_t last_recorded_ms = 0;   // the run's last row's time
  std::optional<std::string> body;     // bytes as received, cut at body_preview_bytes; nullopt: none stored
};

struct OperationDetail {
  TaskScope scope;
  std::string operation_id;
  OperationState state = OperationState::in_flight;
  std::optional<HeldReason> held_reason;
  std::string method, provider, target;
  std::string fingerprint_hex;
  std::int64_t expected_version = 0;
  std::string upstream_key;
  int attempt_count = 0;
  std::int64_t created_ms = 0, updated_ms = 0;
  std::optional<std::int64_t> committed_version;
  std::optional<std::int64_t> forward_deadline_ms;
  // The provider reply stored on the operation: the one that settled it,
  // or, for an unknown or resolved operation, the reply that did not.
  std::optional<ReplyDigest> reply;
  std::optional<OperationResolution> resolution;  // settled by evidence
  std::vector<AttemptDetail> attempts;            // by attempt number
  std::vector<EvidenceDetail> evidence;           // by id, repeated lookups folded
  std::int64_t task_version = 0;                  // the task's business version now
  std::optional<std::string> task_open_operation; // the operation holding the task now
  std::int64_t now_ms = 0;                        // authority time of the read
};

struct RevokeResult {
  // revoked; or not_found (no such task, or its lease had already ended),
  // and nothing changed.
  Code code = Code::ok;
  std::optional<GrantIdentity> grant;  // the ended grant (not_found: the task's last one, if any)
  std::int64_t expires_at_ms = 0;      // the lease's end: now when revoked
  std::int64_t previous_expires_at_ms = 0;
  std::int64_t now_ms = 0;
};

struct RotationOptions {
  // The operator's own floor for the next epoch (core/ownership.hpp,
  // rotation_next_epoch), e.g. the largest Fence-Epoch a provider has seen.
  std::optional<std::int64_t> at_least = std::nullopt;
  // Rotate only if this is the current realm: an operator's retry of a
  // rotation that did happen then changes nothing.
  std::optional<std::string> expected_realm = std::nullopt;
};

struct RealmRotation {
  // realm_rotated; or authority_generation_mismatch (the current realm is
  // not expected_realm), and nothing changed.
  Code code = Code::ok;
  std::string previous_realm;
  std::string realm;              // the realm now (unchanged when refused)
  std::int64_t rotated_ms = 0;    // authority time
  std::int64_t next_epoch = 0;    // the smallest epoch any later claim can get
  std::int64_t leases_ended = 0;  // unexpired leases ended by the rotation
};

class OperatorStore {
 public:
  explicit OperatorStore(AuthorityClock& clock) : clock_(clock) {}

  // All of these throw AuthorityUnavailable when the database cannot answer.

  // nullopt: no such operation. READ COMMITTED: the operation row is read
  // first, so attempts and evidence may include rows newer than its state.
  std::optional<OperationDetail> detail(Session& s, const TaskScope& scope, const std::string& operation_id);

  // Ends the task's lease now (authority time), whoever holds it: that grant
  // is expired_owner from then on and the next claim gets a new epoch.
  RevokeResult revoke(Session& s, const TaskScope& scope, const std::string& actor);

  // A new realm (after restoring a backup): every outstanding grant is
  // authority_generation_mismatch from then on, every unexpired lease ends
  // now so the tasks can be claimed at once, and the epoch sequence jumps
  // to rotation_next_epoch() (core/ownership.hpp), so epochs stay strictly
  // increasing even past grants the restored backup never saw.
  RealmRotation rotate_realm(Session& s, const std::string& actor, const RotationOptions& options = {});

 private:
  AuthorityClock& clock_;
};

}  // namespace gw
