// The audit trail of refused protected attempts (spec section 4,
// GET /v1/admin/rejections): every refusal of the admission transaction is
// kept with the grant exactly as presented, never rewritten to the task's
// current epoch; admissions and replays are not refusals. The listing
// filters by tenant, task, code and time, and pages by a keyset cursor.
#include "store/store_fixture.hpp"

#include "core/digest.hpp"

#include <set>

using namespace gw;
using namespace gw::test;

namespace {
std::string codes(const StoreFixture& f) {
  return f.db.scalar("SELECT coalesce(string_agg(code, ',' ORDER BY id), '') FROM rejections");
}
}  // namespace

TEST_CASE("rejection audit: a stale owner's refused attempt appears with its own epoch, never the current one") {
  StoreFixture f;
  auto old_grant = f.claim("tenant-a", "task-a", "region-a", 0, 100);
  auto current = f.claim("tenant-a", "task-a", "region-b", 100, 1'000);  // region-a's lease ended at 100
  REQUIRE(current.identity.epoch > old_grant.identity.epoch);
  f.at(101);
  auto rq = f.admission(old_grant, {"tenant-a", "task-a", "op-x", "value-x", 0});
  rq.request_id = "req-1";
  CHECK(f.ledger.admit(f.session, rq).decision.code == Code::stale_owner);

  CHECK(f.db.scalar("SELECT count(*) FROM rejections") == "1");
  CHECK(f.db.scalar("SELECT concat_ws(' ', tenant, task, op_id, realm, grant_tenant, grant_task, owner, epoch)"
                    " FROM rejections") ==
        "tenant-a task-a op-x " + old_grant.identity.realm + " tenant-a task-a region-a " +
            std::to_string(old_grant.identity.epoch));
  CHECK(f.db.scalar("SELECT concat_ws(' ', method, provider, target, expected_version, code, request_id, recorded_ms)"
                    " FROM rejections") == "POST booking /bookings 0 stale_owner req-1 101");
  CHECK(f.db.scalar("SELECT encode(fingerprint, 'hex') FROM rejections") == to_hex(rq.fingerprint));
  // Nothing else was written: the refusal is audit only.
  CHECK(f.db.scalar("SELECT count(*) FROM operations") == "0");

  // The listing says the same.
  auto page = f.rejections.list(f.session, {});
  REQUIRE(page.rejections.size() == 1);
  const auto& r = page.rejections[0];
  CHECK(r.recorded_ms == 101);
  CHECK(r.code_name == "stale_owner");
  CHECK(r.rejection.code == Code::stale_owner);
  CHECK(r.rejection.operation_id == "op-x");
  REQUIRE(r.rejection.presented);
  CHECK(r.rejection.presented->owner == "region-a");
  CHECK(r.rejection.presented->epoch == old_grant.identity.epoch);
  CHECK(r.rejection.presented->realm == old_grant.identity.realm);
  CHECK(r.rejection.fingerprint == rq.fingerprint);
  CHECK(r.rejection.request_id == "req-1");
  CHECK(r.rejection.expected_version == 0);
  CHECK(page.now_ms == 101);
  CHECK_FALSE(page.more);
}

TEST_CASE("rejection audit: every refusal of the admission is kept, and admissions and replays are not") {
  StoreFixture f;
  auto g = f.claim("tenant-a", "task-a", "region-a", 0, 1'000);
  f.at(1);
  auto a = f.ledger.admit(f.session, f.admission(g, op_a));
  REQUIRE(a.decision.action == Admission::admit_new);
  CHECK(codes(f).empty());
  CHECK(f.ledger.admit(f.session, f.admission(g, op_a)).decision.code == Code::operation_in_flight);
  CHECK(f.ledger.admit(f.session, f.admission(g, {"tenant-a", "task-a", "op-b", "v", 0})).decision.code ==
        Code::unresolved_operation);
  REQUIRE(f.ledger.record_outcome(f.session, {{"tenant-a", "task-a"}, "op-a", a.attempt, OperationState::succeeded,
                                              RecordedResponse{201, "[]", "ok", "", 2}, "test"},
                                  g).recorded);
  CHECK(f.ledger.admit(f.session, f.admission(g, op_a)).decision.code == Code::historical_retry);  // not a refusal
  CHECK(f.ledger.admit(f.session, f.admission(g, {"tenant-a", "task-a", "op-a", "changed", 0})).decision.code ==
        Code::operation_conflict);
  CHECK(f.ledger.admit(f.session, f.admission(g, {"tenant-a", "task-a", "op-c", "v", 0})).decision.code ==
        Code::version_conflict);
  auto elsewhere = g;
  elsewhere.identity.scope = {"tenant-a", "task-z"};
  CHECK(f.ledger.admit(f.session, f.admission(elsewhere, op_a)).decision.code == Code::scope_mismatch);
  f.at(1'000);
  CHECK(f.ledger.admit(f.session, f.admission(g, {"tenant-a", "task-a", "op-d", "v", 1})).decision.code ==
        Code::expired_owner);
  CHECK(codes(f) == "operation_in_flight,unresolved_operation,operation_conflict,version_conflict,"
                    "scope_mismatch,expired_owner");
  // scope_mismatch keeps the grant's own scope beside the path's.
  CHECK(f.db.scalar("SELECT concat_ws(' ', tenant, task, grant_tenant, grant_task) FROM rejections"
                    " WHERE code = 'scope_mismatch'") == "tenant-a task-a tenant-a task-z");
}

TEST_CASE("rejection audit: a refusal before any admission is recorded without the parts it lacks") {
  StoreFixture f;
  f.at(7);
  RejectionRecord r;
  r.scope = {"tenant-a", "task-a"};
  r.method = "POST";
  r.provider = "booking";
  r.target = "/bookings";
  r.code = Code::invalid_grant;
  r.request_id = "req-9";
  f.rejections.record(f.session, r);
  CHECK(f.db.scalar("SELECT concat_ws(' ', code, recorded_ms, op_id IS NULL, realm IS NULL, epoch IS NULL,"
                    " fingerprint IS NULL, expected_version IS NULL) FROM rejections") ==
        "invalid_grant 7 t t t t t");
  auto page = f.rejections.list(f.session, {});
  REQUIRE(page.rejections.size() == 1);
  CHECK_FALSE(page.rejections[0].rejection.presented);
  CHECK_FALSE(page.rejections[0].rejection.operation_id);
  CHECK_FALSE(page.rejections[0].rejection.fingerprint);
  CHECK(page.rejections[0].rejection.request_id == "req-9");
}

TEST_CASE("rejection listing: newest first, filters by tenant, task, code and since, and pages by cursor") {
  StoreFixture f;
  // Expired grants on three tasks of two tenants, refused at times 10..90.
  auto a1 = f.claim("tenant-a", "task-1", "region-a", 0, 5);
  auto a2 = f.claim("tenant-a", "task-2", "region-a", 0, 5);
  auto b1 = f.claim("tenant-b", "task-1", "region-a", 0, 5);
  struct Refusal {
    const GrantToken* grant;
    std::int64_t at;
  };
  const Refusal refusals[] = {{&a1, 10}, {&a2, 20}, {&b1, 30}, {&a1, 40}, {&a1, 40}, {&b1, 60}, {&a2, 70}, {&a1, 90}};
  int n = 0;
  for (const auto& r : refusals) {
    f.at(r.at);
    const auto& scope = r.grant->identity.scope;
    CHECK(f.ledger.admit(f.session, f.admission(*r.grant, {scope.tenant, scope.task, "op-" + std::to_string(n++), "v", 0}))
              .decision.code == Code::expired_owner);
  }
  // One of another code, to filter on.
  auto stale = a1;
  stale.identity.epoch = 999;
  f.at(95);
  CHECK(f.ledger.admit(f.session, f.admission(stale, {"tenant-a", "task-1", "op-s", "v", 0})).decision.code ==
        Code::stale_owner);

  auto ops = [](const RejectionPage& p) {
    std::string out;
    for (const auto& r : p.rejections) out += (out.empty() ? "" : ",") + *r.rejection.operation_id;
    return out;
  };
  auto list = [&](RejectionFilter filter) { return f.rejections.list(f.session, filter); };

  CHECK(ops(list({})) == "op-s,op-7,op-6,op-5,op-4,op-3,op-2,op-1,op-0");
  RejectionFilter by_tenant;
  by_tenant.tenant = "tenant-b";
  CHECK(ops(list(by_tenant)) == "op-5,op-2");
  RejectionFilter by_task;
  by_task.tenant = "tenant-a";
  by_task.task = "task-1";
  CHECK(ops(list(by_task)) == "op-s,op-7,op-4,op-3,op-0");
  RejectionFilter task_only;
  task_only.task = "task-1";
  CHECK(ops(list(task_only)) == "op-s,op-7,op-5,op-4,op-3,op-2,op-0");
  RejectionFilter by_code;
  by_code.code = Code::stale_owner;
  CHECK(ops(list(by_code)) == "op-s");
  RejectionFilter since;
  since.since_ms = 40;  // at or after
  CHECK(ops(list(since)) == "op-s,op-7,op-6,op-5,op-4,op-3");
  RejectionFilter combined;
  combined.tenant = "tenant-a";
  combined.code = Code::expired_owner;
  combined.since_ms = 41;
  CHECK(ops(list(combined)) == "op-7,op-6");
  RejectionFilter nothing;
  nothing.tenant = "tenant-z";
  auto empty = list(nothing);
  CHECK(empty.rejections.empty());
  CHECK_FALSE(empty.more);
  CHECK(empty.now_ms == 95);

  // Pages of 2 with the cursor of the last row: every row once, newest first,
  // including the two recorded at the same time (40).
  RejectionFilter paged;
  paged.limit = 2;
  std::string seen;
  int pages = 0;
  for (;;) {
    auto page = list(paged);
    ++pages;
    REQUIRE(pages <= 5);
    seen += (seen.empty() || page.rejections.empty() ? "" : ",") + ops(page);
    if (!page.more) break;
    CHECK(page.rejections.size() == 2);
    const auto& last = page.rejections.back();
    paged.after = RejectionCursor{last.recorded_ms, last.id};
  }
  CHECK(pages == 5);
  CHECK(seen == "op-s,op-7,op-6,op-5,op-4,op-3,op-2,op-1,op-0");

  // A page that ends exactly at the last row says there is no more.
  RejectionFilter exact;
  exact.limit = 9;
  CHECK_FALSE(list(exact).more);
  exact.limit = 8;
  CHECK(list(exact).more);
}
