// Every fixture of the reference article, at the store level, tick by tick
// on the manual authority clock. Each TEST_CASE replays the article's
// sequence up to the assertion it is named after.
#include "store/store_fixture.hpp"
#include "support/gateway_fixture.hpp"

#include <pqxx/pqxx>

using namespace gw;
using namespace gw::test;

namespace {

const Intent intent{"tenant-a", "task-a", "operation-a", "synthetic-value", 0};

// The article's opening: region-a claims at 0 for 10, expires at 10, and
// region-b claims at 10 for 10.
struct Regrant {
  StoreFixture f;
  GrantToken old_grant = f.claim("tenant-a", "task-a", "region-a", 0, 10);
  GrantToken new_grant;
  void regrant() { new_grant = f.claim("tenant-a", "task-a", "region-b", 10, 10); }
};

}  // namespace

TEST_CASE("fixture: expired owner is rejected before any regrant") {
  Regrant s;
  CHECK(s.f.commit(s.old_grant, intent, 10) == Code::expired_owner);
  s.f.at(10);
  CHECK(s.f.authority.renew(s.f.session, {"tenant-a", "task-a"}, s.old_grant, 10).code == Code::expired_owner);
}

TEST_CASE("fixture: old owner is rejected after regrant, before the new owner's first write") {
  Regrant s;
  s.regrant();
  CHECK(s.new_grant.identity.epoch > s.old_grant.identity.epoch);
  CHECK(s.f.commit(s.old_grant, intent, 11) == Code::stale_owner);
}

TEST_CASE("fixture: an impostor presenting the current epoch is rejected") {
  Regrant s;
  s.regrant();
  auto impostor = s.new_grant;
  impostor.identity.owner = "another-owner";
  CHECK(s.f.commit(impostor, intent, 11) == Code::stale_owner);
}

TEST_CASE("fixture: the current owner renews, commits once, then retries exactly") {
  Regrant s;
  s.regrant();
  s.f.at(11);
  auto renewed = s.f.authority.renew(s.f.session, {"tenant-a", "task-a"}, s.new_grant, 2);
  CHECK(renewed.code == Code::renewed);
  CHECK(renewed.expires_at_ms == 20);  // never shortened: 11 + 2 < 20
  CHECK(s.f.commit(s.new_grant, intent, 12) == Code::committed);
  CHECK(s.f.commit(s.new_grant, intent, 12) == Code::historical_retry);
}

TEST_CASE("fixture: exact retry replays, a changed payload is operation_conflict") {
  Regrant s;
  s.regrant();
  REQUIRE(s.f.commit(s.new_grant, intent, 12) == Code::committed);
  CHECK(s.f.commit(s.new_grant, intent, 12) == Code::historical_retry);
  Intent changed = intent;
  changed.value = "different-value";
  CHECK(s.f.commit(s.new_grant, changed, 12) == Code::operation_conflict);
}

TEST_CASE("fixture: a new operation at a passed version is version_conflict") {
  Regrant s;
  s.regrant();
  REQUIRE(s.f.commit(s.new_grant, intent, 12) == Code::committed);
  CHECK(s.f.commit(s.new_grant, {"tenant-a", "task-a", "operation-b", "synthetic-value", 0}, 12) ==
        Code::version_conflict);
}

TEST_CASE("fixture: unavailable authority holds the action and changes nothing") {
  Regrant s;
  s.regrant();
  s.f.at(12);
  // A real fault on the session's own database: its connections are cut and
  // no new one is accepted, so the admission cannot reach the authority.
  pqxx::connection admin(admin_url());
  pqxx::nontransaction tx(admin);
  const auto name = s.f.db.name();
  tx.exec("ALTER DATABASE " + name + " ALLOW_CONNECTIONS false");
  tx.exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = " + tx.quote(name));
  CHECK_THROWS_AS(s.f.ledger.admit(s.f.session, s.f.admission(s.new_grant, intent)), AuthorityUnavailable);
  tx.exec("ALTER DATABASE " + name + " ALLOW_CONNECTIONS true");
  *s.f.last_failure = no_failures()->load();  // as if the reconnect backoff had passed

  // The same database, seen once it is back: nothing was recorded or moved.
  CHECK(s.f.db.scalar("SELECT count(*) FROM operations") == "0");
  CHECK(s.f.db.scalar("SELECT count(*) FROM operation_attempts") == "0");
  CHECK(s.f.db.scalar("SELECT coalesce(max(version), 0) FROM task_ledger") == "0");
  // The same session recovers, and the held action is admitted as new.
  CHECK(s.f.commit(s.new_grant, intent, 12) == Code::committed);
}

TEST_CASE("fixture: a held owner's commit is rejected after a newer grant") {
  Regrant s;
  s.regrant();
  REQUIRE(s.f.commit(s.new_grant, intent, 12) == Code::committed);
  // The held owner computed its commit at 13, paused; authority moved to 20
  // and region-c claimed. When it resumes, authority time is 20.
  auto latest = s.f.claim("tenant-a", "task-a", "region-c", 20, 10);
  CHECK(s.f.commit(s.new_grant, {"tenant-a", "task-a", "operation-b", "synthetic-next", 1}, 20) ==
        Code::stale_owner);
  // The new owner gets the recorded result of the exact operation.
  CHECK(s.f.commit(latest, intent, 21) == Code::historical_retry);
}

TEST_CASE("fixture: a grant used for another task is scope_mismatch") {
  Regrant s;
  s.regrant();
  auto latest = s.f.claim("tenant-a", "task-a", "region-c", 20, 10);
  CHECK(s.f.commit(latest, {"tenant-a", "other-task", "operation-a", "synthetic-value", 0}, 21) ==
        Code::scope_mismatch);
}

TEST_CASE("fixture: a grant from another realm is authority_generation_mismatch") {
  Regrant s;
  s.regrant();
  auto latest = s.f.claim("tenant-a", "task-a", "region-c", 20, 10);
  StoreFixture fresh;  // a newly initialised, independent authority store
  fresh.claim("tenant-a", "task-a", "region-c", 21, 10);
  CHECK(latest.identity.realm != fresh.authority.view(fresh.session, {"tenant-a", "task-a"})->realm);
  CHECK(fresh.commit(latest, intent, 21) == Code::authority_generation_mismatch);
}

TEST_CASE("fixture: renewal cannot revive an expired grant") {
  StoreFixture f;
  auto same_owner = f.claim("tenant-a", "task-b", "region-c", 30, 1);
  f.at(31);
  CHECK(f.authority.renew(f.session, {"tenant-a", "task-b"}, same_owner, 10).code == Code::expired_owner);
  CHECK(f.authority.view(f.session, {"tenant-a", "task-b"})->expires_at_ms == 31);
}

TEST_CASE("fixture: reclaiming after expiry gets a new epoch") {
  StoreFixture f;
  auto same_owner = f.claim("tenant-a", "task-b", "region-c", 30, 1);
  f.at(31);
  REQUIRE(f.authority.renew(f.session, {"tenant-a", "task-b"}, same_owner, 10).code == Code::expired_owner);
  auto reclaimed = f.claim("tenant-a", "task-b", "region-c", 31, 10);
  CHECK(reclaimed.identity.epoch > same_owner.identity.epoch);
  // The old grant stays dead: the new generation does not authorize it.
  f.at(32);
  CHECK(f.authority.renew(f.session, {"tenant-a", "task-b"}, same_owner, 10).code == Code::stale_owner);
}

TEST_CASE("fixture: the authority clock cannot roll back") {
  StoreFixture f;
  f.at(21);
  CHECK(f.authority.set_manual_clock(f.session, 19) == Code::authority_clock_rollback);
  CHECK(f.authority.set_manual_clock(f.session, 21) == Code::ok);  // standing still is fine
  CHECK(f.db.scalar("SELECT manual_now_ms FROM authority") == "21");
}

TEST_CASE("fixture: a boolean is not a time") {
  // The clock is set only through the operator route: what reaches it over
  // HTTP is what must be refused, and the authority's clock must not move.
  Gateway g;
  g.set_clock(21);
  auto c = g.client();
  for (const char* value : {"true", "false", "null", "\"22\"", "22.0", "2.2e1", "[22]", "{}"}) {
    CAPTURE(value);
    auto r = c.request("POST", "/v1/admin/clock",
                       {{"Authorization", "Bearer " + operator_token}, {"Content-Type", "application/json"}},
                       std::string(R"({"now_ms":)") + value + "}");
    check_problem(r, 400, "invalid_request");
    CHECK(g.db().scalar("SELECT manual_now_ms FROM authority") == "21");
  }
  // The same route with an integer does move it: the refusals above were the types.
  g.set_clock(22);
  CHECK(g.db().scalar("SELECT manual_now_ms FROM authority") == "22");
}
