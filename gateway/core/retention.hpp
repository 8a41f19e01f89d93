// Retention (issue #7): which records may be removed, as pure rules. The
// store removes them in small batches (store/retention_store.hpp); this file
// decides what "old enough" and "safe to forget" mean.
//
// Forgetting a finished operation ends its idempotency window: its exact
// retry is no longer replayed. That must never turn into a second execution,
// so an operation is forgotten only when its retry could not be admitted as
// new anyway (see removable_operation).
#pragma once

#include "core/ledger.hpp"

#include <chrono>
#include <cstdint>

namespace gw {

// How long each kind of record is kept, in authority time, and how many rows
// one removal transaction takes.
struct RetentionPolicy {
  bool enabled = true;
  // Finished operations with everything about them: the stored reply, the
  // attempts, the evidence and the webhook deliveries matched to them.
  std::chrono::milliseconds operations{std::chrono::hours(24 * 30)};
  std::chrono::milliseconds rejections{std::chrono::hours(24 * 90)};  // the rejection audit
  // Webhook deliveries that matched no operation (matched ones go with theirs).
  std::chrono::milliseconds webhooks{std::chrono::hours(24 * 30)};
  std::chrono::milliseconds interval{60000};  // between two removal passes
  unsigned batch = 500;                       // rows per kind per transaction
};

// Records last changed before this authority time are old enough to remove
// after `age`: now - age, never below 0 (an age longer than the clock has
// run removes nothing).
std::int64_t retention_cutoff_ms(std::int64_t now_ms, std::chrono::milliseconds age);

// Whether a finished operation may be forgotten without letting its exact
// retry run again. Every protected request carries Expected-Version, and an
// unknown key goes through that check:
//   - succeeded moved the task's version past its expected version, so the
//     retry is version_conflict;
//   - rejected left the version alone: safe only once something else moved
//     the task on, otherwise the retry would be forwarded afresh;
//   - not_executed may be admitted again under the same key by rule anyway;
//   - in_flight and unknown are never finished: they are held, not old.
bool removable_operation(OperationState state, std::int64_t expected_version, std::int64_t task_version);

}  // namespace gw
