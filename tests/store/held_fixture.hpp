// Store tests of held operations: a claimed task with one operation the
// provider left unknown (it answered 503), ready to be resolved, and a
// fingerprint of every ledger row to show that a refusal changed nothing.
#pragma once

#include "store/store_fixture.hpp"

#include <string>

namespace gw::test {

struct HeldFixture {
  HeldFixture() {
    grant = f.claim("tenant-a", "task-a", "region-a", 0, 1'000'000);
    f.at(10);
    auto a = f.ledger.admit(f.session, f.admission(grant, op));
    REQUIRE(a.decision.action == Admission::admit_new);
    f.at(20);
    OutcomeRecord unknown{{op.tenant, op.task}, op.operation, a.attempt, OperationState::unknown,
                          RecordedResponse{503, R"([["Retry-After","5"]])", "try later", "", 9},
                          "provider replied 503"};
    REQUIRE(f.ledger.record_outcome(f.session, unknown, grant).recorded);
    REQUIRE(scalar("SELECT state FROM operations") == "unknown");
  }

  std::string scalar(const std::string& sql) const { return f.db.scalar(sql); }

  // Every row of the ledger's and the authority's tables, as text.
  std::string all_rows() const {
    std::string out;
    for (const char* table : {"authority", "tasks", "task_ledger", "operations", "operation_attempts",
                              "operation_evidence", "operator_actions"})
      out += std::string(table) + ": " +
             f.db.scalar(std::string("SELECT coalesce(string_agg(t::text, ' | ' ORDER BY t::text), '') FROM ") +
                         table + " t") +
             "\n";
    return out;
  }

  AdmissionResult retry() { return f.ledger.admit(f.session, f.admission(grant, op)); }

  StoreFixture f;
  GrantToken grant;
  Intent op{"tenant-a", "task-a", "op-a", "value-a", 0};
};

}  // namespace gw::test
