// Retention's pure rules: the cutoff, and which finished operations may be
// forgotten. The safety claim is checked against decide_admission itself: a
// forgotten operation's exact retry must never be admitted again, except a
// not_executed one, which the rules re-admit anyway.
#include "core/ledger.hpp"
#include "core/retention.hpp"

#include <doctest/doctest.h>

#include <limits>

using namespace gw;
using std::chrono::milliseconds;

TEST_CASE("retention cutoff: now minus the age, never below zero") {
  CHECK(retention_cutoff_ms(10'000, milliseconds(3'000)) == 7'000);
  CHECK(retention_cutoff_ms(10'000, milliseconds(10'000)) == 0);
  CHECK(retention_cutoff_ms(10'000, milliseconds(10'001)) == 0);
  CHECK(retention_cutoff_ms(0, milliseconds(1)) == 0);
  CHECK(retention_cutoff_ms(std::numeric_limits<std::int64_t>::max(), milliseconds(1)) ==
        std::numeric_limits<std::int64_t>::max() - 1);
  CHECK(retention_cutoff_ms(5, milliseconds::max()) == 0);
}

TEST_CASE("retention defaults: on, 30 days of operations and webhooks, 90 of rejections, small batches") {
  RetentionPolicy p;
  CHECK(p.enabled);
  CHECK(p.operations == std::chrono::hours(720));
  CHECK(p.rejections == std::chrono::hours(2160));
  CHECK(p.webhooks == std::chrono::hours(720));
  CHECK(p.interval == milliseconds(60'000));
  CHECK(p.batch == 500);
}

TEST_CASE("removable_operation: only what the admission rules would not run again") {
  struct Case {
    const char* name;
    OperationState state;
    std::int64_t expected, task_version;
    bool removable;
  };
  const Case cases[] = {
      {"succeeded: its own commit moved the version on", OperationState::succeeded, 4, 5, true},
      {"succeeded long ago, many commits since", OperationState::succeeded, 4, 90, true},
      {"rejected, the task moved on since", OperationState::rejected, 4, 5, true},
      {"rejected, the task still at its expected version", OperationState::rejected, 4, 4, false},
      {"not_executed: re-admitted by rule anyway", OperationState::not_executed, 4, 4, true},
      {"not_executed, the task moved on", OperationState::not_executed, 4, 6, true},
      {"in_flight is never finished", OperationState::in_flight, 4, 9, false},
      {"unknown is held, never old", OperationState::unknown, 4, 9, false},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    CHECK(removable_operation(c.state, c.expected, c.task_version) == c.removable);
  }
}

TEST_CASE("removable_operation: the exact retry of a forgotten operation is never admitted as new") {
  // For every finished state, expected version and later task version a
  // removable operation can have, the retry (same key, nothing stored any
  // more) must be refused by decide_admission, unless it was not_executed.
  const OperationState finished[] = {OperationState::succeeded, OperationState::rejected,
                                     OperationState::not_executed};
  for (auto state : finished) {
    for (std::int64_t expected = 0; expected < 4; ++expected) {
      for (std::int64_t version = expected; version < expected + 4; ++version) {
        if (!removable_operation(state, expected, version)) continue;
        CAPTURE(name(state));
        CAPTURE(expected);
        CAPTURE(version);
        AdmissionInput in;
        in.operation_id = "op-1";
        in.fingerprint = "fp";
        in.ledger = TaskLedger{version, std::nullopt};
        in.expected_version = expected;
        auto d = decide_admission(in);
        if (state == OperationState::not_executed) {
          CHECK(d.action != Admission::replay);
        } else {
          CHECK(d.action == Admission::reject);
          CHECK(d.code == Code::version_conflict);
        }
      }
    }
  }
}
