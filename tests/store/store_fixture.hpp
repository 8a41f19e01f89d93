// Store-level fixture: a fresh database, the stores under the manual clock,
// and the reference article's "commit" (admission, then a success outcome).
#pragma once

#include "core/fingerprint.hpp"
#include "core/grant.hpp"
#include "store/authority_store.hpp"
#include "store/ledger_store.hpp"
#include "store/operator_store.hpp"
#include "store/rejection_store.hpp"
#include "store/resolution_store.hpp"
#include "support/test_database.hpp"

#include <doctest/doctest.h>

namespace gw::test {

struct Intent {
  std::string tenant, task, operation, value;
  std::int64_t expected_version = 0;
};

// The operation most store tests start from.
inline const Intent op_a{"tenant-a", "task-a", "op-a", "value-a", 0};

// A store decision tried again, at once, while it conflicts: what the
// gateway does after a pause on a timer (service/db/database.hpp). For tests
// that race sessions on purpose; a single session never conflicts.
template <class Fn>
auto until_decided(Fn fn) {
  for (int tries = 1;; ++tries) {
    try {
      return fn();
    } catch (const Conflict&) {
      REQUIRE(tries < 1000);
    }
  }
}

inline std::shared_ptr<std::atomic<std::int64_t>> no_failures() {
  return std::make_shared<std::atomic<std::int64_t>>(-1'000'000'000);
}

// `intent` as the protected POST /bookings it stands for, under `grant`.
inline AdmissionRequest admission_request(const GrantToken& grant, const Intent& intent,
                                          std::int64_t forward_budget_ms) {
  AdmissionRequest rq;
  rq.scope = {intent.tenant, intent.task};
  rq.token = grant;
  rq.operation_id = intent.operation;
  rq.method = "POST";
  rq.provider = "booking";
  rq.target = "/bookings";
  rq.expected_version = intent.expected_version;
  rq.fingerprint = payload_fingerprint({rq.method, rq.provider, rq.target, intent.expected_version, intent.value});
  rq.forward_budget_ms = forward_budget_ms;
  return rq;
}

struct StoreFixture {
  explicit StoreFixture(ClockSource source = ClockSource::manual) : clock(source), session_options{db.url()}, session(session_options, last_failure) {}

  TestDatabase db;
  AuthorityClock clock;
  AuthorityStore authority{clock};
  LedgerStore ledger{clock};
  ResolutionStore resolutions{clock};
  OperatorStore operators{clock};
  RejectionStore rejections{clock};
  SessionOptions session_options;
  // Admissions' forward budget: long enough that no store test's attempt is
  // abandoned unless the test means it to be.
  std::int64_t forward_budget_ms = 1'000'000;
  // When the session last failed to connect; it does not retry within its
  // reconnect backoff. Tests that cut the database forget it to go on at once.
  std::shared_ptr<std::atomic<std::int64_t>> last_failure = no_failures();
  Session session;

  void at(std::int64_t now) { REQUIRE(authority.set_manual_clock(session, now) == Code::ok); }

  GrantToken claim(const std::string& tenant, const std::string& task, const std::string& owner,
                   std::int64_t now, std::int64_t lease) {
    at(now);
    auto r = authority.claim(session, {tenant, task}, owner, lease);
    REQUIRE(r.code == Code::granted);
    return *decode_grant_token(r.token);
  }

  AdmissionRequest admission(const GrantToken& grant, const Intent& intent) const {
    return admission_request(grant, intent, forward_budget_ms);
  }

  // Admission then, when admitted, a recorded success: the article's commit.
  Code commit(const GrantToken& grant, const Intent& intent, std::int64_t now) {
    at(now);
    auto a = ledger.admit(session, admission(grant, intent));
    if (a.decision.action == Admission::reject || a.decision.action == Admission::replay)
      return a.decision.code;
    RecordedResponse reply{201, R"([["Content-Type","application/json"]])", R"({"booked":true})", "", 15};
    auto o = ledger.record_outcome(
        session,
        {{intent.tenant, intent.task}, intent.operation, a.attempt, OperationState::succeeded, reply, "test", a.rows},
        grant);
    REQUIRE(o.recorded);
    return Code::committed;
  }
};

}  // namespace gw::test
