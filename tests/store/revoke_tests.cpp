// An operator ends a lease (spec section 4, POST .../revoke): the lease ends
// now in authority time, so the grant is expired_owner for every later use
// (rule 2), the next claim gets a new epoch (rule 1), and who did it is kept.
#include "store/store_fixture.hpp"

using namespace gw;
using namespace gw::test;

TEST_CASE("revoke ends the lease now: the grant is expired_owner and the next claim gets a new epoch") {
  StoreFixture f;
  const TaskScope scope{"tenant-a", "task-a"};
  auto g = f.claim("tenant-a", "task-a", "region-a", 0, 1'000);
  f.at(50);
  auto r = f.operators.revoke(f.session, scope, "alice");
  CHECK(r.code == Code::revoked);
  REQUIRE(r.grant);
  CHECK(r.grant->realm == g.identity.realm);
  CHECK(r.grant->scope == scope);
  CHECK(r.grant->owner == "region-a");
  CHECK(r.grant->epoch == g.identity.epoch);
  CHECK(r.expires_at_ms == 50);
  CHECK(r.previous_expires_at_ms == 1'000);
  CHECK(r.now_ms == 50);
  // The owner row keeps owner and epoch; only the lease's end moved.
  CHECK(f.db.scalar("SELECT concat_ws(' ', owner, epoch, expires_at_ms) FROM tasks") ==
        "region-a " + std::to_string(g.identity.epoch) + " 50");
  CHECK(f.db.scalar("SELECT concat_ws(' ', action, actor, tenant, task, realm, owner, epoch, recorded_ms)"
                    " FROM operator_actions") ==
        "revoke alice tenant-a task-a " + g.identity.realm + " region-a " + std::to_string(g.identity.epoch) + " 50");

  // Every later use of the grant: expired, at the same authority time already.
  CHECK(f.ledger.admit(f.session, f.admission(g, {"tenant-a", "task-a", "op-a", "v", 0})).decision.code ==
        Code::expired_owner);
  CHECK(f.authority.renew(f.session, scope, g, 1'000).code == Code::expired_owner);
  CHECK(f.authority.release(f.session, scope, g).code == Code::expired_owner);
  CHECK(f.ledger.receipt(f.session, scope, g, "op-a").code == Code::expired_owner);
  CHECK(f.db.scalar("SELECT expires_at_ms FROM tasks") == "50");  // renew did not revive it

  // The task is free at once, under a new epoch.
  auto next = f.authority.claim(f.session, scope, "region-b", 1'000);
  REQUIRE(next.code == Code::granted);
  CHECK(next.grant.epoch > g.identity.epoch);
  auto b = *decode_grant_token(next.token);
  CHECK(f.commit(b, {"tenant-a", "task-a", "op-a", "v", 0}, 51) == Code::committed);
}

TEST_CASE("revoke with no live lease is not_found and changes nothing") {
  StoreFixture f;
  auto g = f.claim("tenant-a", "task-a", "region-a", 0, 100);
  f.at(100);  // the lease ended at 100
  const auto tasks = f.db.scalar("SELECT t::text FROM tasks t");

  auto ended = f.operators.revoke(f.session, {"tenant-a", "task-a"}, "alice");
  CHECK(ended.code == Code::not_found);
  REQUIRE(ended.grant);  // the task's last grant, for the operator's information
  CHECK(ended.grant->epoch == g.identity.epoch);
  CHECK(ended.expires_at_ms == 100);

  auto none = f.operators.revoke(f.session, {"tenant-a", "task-b"}, "alice");
  CHECK(none.code == Code::not_found);
  CHECK_FALSE(none.grant);

  CHECK(f.db.scalar("SELECT t::text FROM tasks t") == tasks);
  CHECK(f.db.scalar("SELECT count(*) FROM operator_actions") == "0");
}

TEST_CASE("revoke: a forward in flight under the revoked grant is still recorded, its bearer gets expired_owner") {
  StoreFixture f;
  const TaskScope scope{"tenant-a", "task-a"};
  auto g = f.claim("tenant-a", "task-a", "region-a", 0, 1'000);
  f.at(10);
  auto a = f.ledger.admit(f.session, f.admission(g, {"tenant-a", "task-a", "op-a", "v", 0}));
  REQUIRE(a.decision.action == Admission::admit_new);
  f.at(20);
  REQUIRE(f.operators.revoke(f.session, scope, "alice").code == Code::revoked);
  f.at(30);
  auto o = f.ledger.record_outcome(f.session, {scope, "op-a", a.attempt, OperationState::succeeded,
                                               RecordedResponse{201, "[]", "ok", "", 2}, "provider replied 201"},
                                   g);
  CHECK(o.recorded);
  CHECK(o.reply_gate == Code::expired_owner);
  CHECK(f.db.scalar("SELECT state FROM operations") == "succeeded");
  CHECK(f.db.scalar("SELECT version FROM task_ledger") == "1");
}
