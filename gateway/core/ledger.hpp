// The operation ledger's rules (spec section 3): the admission decision in
// its fixed order, and what an outcome does to the operation and the task.
// Pure: the store reads the rows, calls these, writes what they decide.
#pragma once

#include "core/codes.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gw {

enum class OperationState { in_flight, succeeded, rejected, not_executed, unknown };

std::string_view name(OperationState state);
std::optional<OperationState> parse_operation_state(std::string_view text);

// An operation already recorded under the request's Idempotency-Key.
struct ExistingOperation {
  std::string fingerprint;
  OperationState state = OperationState::in_flight;
  // In flight past its forward deadline: whoever forwarded it is gone, so
  // it is answered as unknown even before a sweep records that.
  bool abandoned = false;
  // Whether the provider's own reply to this operation's forward is stored
  // and settled it. False for an operation settled by evidence (a lookup, a
  // webhook, an operator): what evidence carries answers another request, so
  // it is never replayed as this one's reply.
  bool reply_recorded = true;
};

// Why an unknown operation holds its task.
enum class HeldReason { outcome_unknown, forward_abandoned };
std::string_view name(HeldReason reason);
std::optional<HeldReason> parse_held_reason(std::string_view text);

// Whether an attempt in flight has outlived its forward deadline (no
// deadline: admitted before deadlines existed, so abandoned too).
bool forward_abandoned(OperationState state, std::optional<std::int64_t> deadline_ms, std::int64_t now_ms);

// Whether the outcome of `attempt` may settle the operation now: the
// attempt in flight, or the same attempt after a sweep declared it
// abandoned (its own late reply is the best evidence there is). Anything
// else is kept as evidence only.
bool settles_operation(OperationState state, std::optional<HeldReason> held, int current_attempt, int attempt);

// The task's business state: confirmed version and the operation (if any)
// that holds the task until its outcome is known.
struct TaskLedger {
  std::int64_t version = 0;
  std::optional<std::string> open_operation;
  bool operator==(const TaskLedger&) const = default;
};

struct AdmissionInput {
  Code grant_check = Code::ok;  // check_grant's answer
  std::optional<ExistingOperation> existing;
  std::string_view operation_id;
  std::string_view fingerprint;
  TaskLedger ledger;
  std::int64_t expected_version = 0;
};

enum class Admission {
  reject,       // answer `code`, change nothing
  replay,       // answer the recorded result (historical_retry)
  admit_new,    // record a new operation in_flight
  readmit,      // a not_executed operation goes in_flight again, same key
};

struct AdmissionDecision {
  Admission action = Admission::reject;
  Code code = Code::ok;
};

// grant current -> existing operation by key and fingerprint -> another
// unresolved operation on the task -> expected version -> admit.
// The exact retry of a succeeded or rejected operation without a recorded
// reply (settled by evidence) is resolved_without_reply: never a replay of
// something the provider did not send, never a resend; the receipt tells
// the state and the committed version.
AdmissionDecision decide_admission(const AdmissionInput& in);

// What recording an outcome does to the task ledger.
TaskLedger apply_outcome(const TaskLedger& ledger, std::string_view operation_id,
                         OperationState outcome);

}  // namespace gw
