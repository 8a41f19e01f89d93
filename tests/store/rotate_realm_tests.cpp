// Realm rotation (spec section 4, POST /v1/admin/authority/rotate-realm): a
// new realm makes every outstanding grant authority_generation_mismatch
// (rule 5), ends every lease so the tasks can be claimed at once, and moves
// the epoch sequence so epochs stay strictly increasing across it.
#include "store/store_fixture.hpp"

#include <algorithm>
#include <atomic>
#include <future>
#include <set>
#include <stdexcept>
#include <thread>

using namespace gw;
using namespace gw::test;

TEST_CASE("rotate realm: every outstanding grant is authority_generation_mismatch, new claims work with greater epochs") {
  StoreFixture f;
  auto a = f.claim("tenant-a", "task-1", "region-a", 0, 1'000);
  auto b = f.claim("tenant-a", "task-2", "region-b", 0, 1'000);
  auto c = f.claim("tenant-b", "task-3", "region-a", 0, 50);  // its lease ends before the rotation
  REQUIRE(f.commit(a, {"tenant-a", "task-1", "op-1", "v", 0}, 10) == Code::committed);
  const auto old_realm = a.identity.realm;
  const auto max_epoch = std::max({a.identity.epoch, b.identity.epoch, c.identity.epoch});

  f.at(100);
  auto r = f.operators.rotate_realm(f.session, "alice");
  CHECK(r.code == Code::realm_rotated);
  CHECK(r.previous_realm == old_realm);
  CHECK(r.realm != old_realm);
  CHECK(r.realm.size() == 36);  // a UUID, like the first realm
  CHECK(r.rotated_ms == 100);
  CHECK(r.next_epoch == 100 * epochs_per_ms_bound);
  CHECK(r.leases_ended == 2);  // task-3's had ended already
  CHECK(f.db.scalar("SELECT realm FROM authority") == r.realm);
  CHECK(f.db.scalar("SELECT string_agg(task || '=' || expires_at_ms, ',' ORDER BY task) FROM tasks") ==
        "task-1=100,task-2=100,task-3=50");
  CHECK(f.db.scalar("SELECT concat_ws(' ', action, actor, realm, recorded_ms) FROM operator_actions") ==
        "rotate_realm alice " + r.realm + " 100");
  CHECK(f.db.scalar("SELECT detail FROM operator_actions") ==
        "previous realm " + old_realm + "; epochs from " + std::to_string(r.next_epoch) + "; 2 unexpired leases ended");

  // Every grant from before, whatever it is used for.
  for (const auto* g : {&a, &b, &c}) {
    const TaskScope scope = g->identity.scope;
    CAPTURE(scope.task);
    CHECK(f.ledger.admit(f.session, f.admission(*g, {scope.tenant, scope.task, "op-2", "v", 1})).decision.code ==
          Code::authority_generation_mismatch);
    CHECK(f.authority.renew(f.session, scope, *g, 1'000).code == Code::authority_generation_mismatch);
    CHECK(f.authority.release(f.session, scope, *g).code == Code::authority_generation_mismatch);
    CHECK(f.ledger.receipt(f.session, scope, *g, "op-1").code == Code::authority_generation_mismatch);
  }
  // The audit keeps the realm the refused grants presented.
  CHECK(f.db.scalar("SELECT string_agg(DISTINCT realm, ',') FROM rejections") == old_realm);
  CHECK(f.db.scalar("SELECT string_agg(DISTINCT code, ',') FROM rejections") == "authority_generation_mismatch");

  // New claims: at once (no lease is left), in the new realm, above every epoch issued before.
  for (const auto* g : {&a, &b, &c}) {
    const TaskScope scope = g->identity.scope;
    auto fresh = f.claim(scope.tenant, scope.task, "region-c", 101, 1'000);
    CHECK(fresh.identity.realm == r.realm);
    CHECK(fresh.identity.epoch >= r.next_epoch);
    CHECK(fresh.identity.epoch > max_epoch);
  }
  // The ledger carried over: task-1's version is 1.
  auto fresh = f.claim("tenant-a", "task-1", "region-d", 2'000, 1'000);
  CHECK(f.commit(fresh, {"tenant-a", "task-1", "op-2", "v", 1}, 2'001) == Code::committed);
  CHECK(f.db.scalar("SELECT version FROM task_ledger WHERE task = 'task-1'") == "2");
}

TEST_CASE("rotate realm: the epoch sequence never goes back, and the operator's floor is honoured") {
  StoreFixture f;
  f.db.exec("SELECT setval('epoch_seq', 5000000)");  // issued far more than the time bound
  f.at(10);
  auto r = f.operators.rotate_realm(f.session, "alice");
  CHECK(r.next_epoch == 5'000'001);
  CHECK(f.claim("tenant-a", "task-1", "region-a", 10, 100).identity.epoch == 5'000'001);

  auto floor = f.operators.rotate_realm(f.session, "alice", {.at_least = 9'000'000});
  CHECK(floor.previous_realm == r.realm);
  CHECK(floor.next_epoch == 9'000'000);
  CHECK(f.claim("tenant-a", "task-2", "region-a", 10, 100).identity.epoch == 9'000'000);

  // A floor below the sequence changes nothing about the epochs.
  auto low = f.operators.rotate_realm(f.session, "alice", {.at_least = 3});
  CHECK(low.next_epoch == 9'000'001);
  CHECK(f.claim("tenant-a", "task-3", "region-a", 10, 100).identity.epoch == 9'000'001);
  CHECK(f.db.scalar("SELECT count(*) FROM operator_actions WHERE action = 'rotate_realm'") == "3");
}

TEST_CASE("rotate realm: claims racing a rotation never share an epoch, and the new realm's are above its floor") {
  StoreFixture f;
  constexpr int claimers = 4, per_claimer = 25;
  auto task = [](int c, int i) { return "task-" + std::to_string(c) + "-" + std::to_string(i); };
  // Every task claimed once before, its lease over: the race re-claims
  // existing rows. (First claims of new tasks conflict among themselves on
  // the index pages their point reads lock, and can use up their retries
  // under this load without any rotation; that is not what this tests.)
  std::vector<std::int64_t> before;
  for (int c = 0; c < claimers; ++c)
    for (int i = 0; i < per_claimer; ++i) before.push_back(f.claim("tenant-a", task(c, i), "region-a", 0, 1).identity.epoch);
  f.at(1'000);
  const auto old_realm = f.db.scalar("SELECT realm FROM authority");

  std::atomic<int> claimed{0}, finished{0};
  std::vector<std::future<std::vector<GrantIdentity>>> runs;
  for (int c = 0; c < claimers; ++c)
    runs.push_back(std::async(std::launch::async, [&f, &claimed, &finished, &task, c] {
      struct Done {
        std::atomic<int>& n;
        ~Done() { ++n; }
      } done{finished};
      Session own(f.session_options, no_failures());
      std::vector<GrantIdentity> grants;
      for (int i = 0; i < per_claimer; ++i) {
        auto r = until_decided([&] { return f.authority.claim(own, {"tenant-a", task(c, i)}, "region-b", 1'000'000); });
        if (r.code != Code::granted) throw std::runtime_error("claim answered " + std::string(name(r.code)));
        grants.push_back(r.grant);
        ++claimed;
      }
      return grants;
    }));
  // Rotate once some claims are in, while the rest are still coming.
  while (claimed.load() < claimers * per_claimer / 4 && finished.load() < claimers) std::this_thread::yield();
  Session own(f.session_options, no_failures());
  auto rotation = until_decided([&] { return f.operators.rotate_realm(own, "alice"); });

  std::vector<GrantIdentity> all;
  for (auto& run : runs)
    for (auto& g : run.get()) all.push_back(g);
  REQUIRE(all.size() == claimers * per_claimer);
  std::set<std::int64_t> epochs(before.begin(), before.end());
  int in_new_realm = 0;
  for (const auto& g : all) {
    CHECK(epochs.insert(g.epoch).second);
    if (g.realm == rotation.realm) {
      ++in_new_realm;
      CHECK(g.epoch >= rotation.next_epoch);
    } else {
      CHECK(g.realm == old_realm);
      CHECK(g.epoch < rotation.next_epoch);
    }
  }
  // Every task's owner row is the grant its claim returned.
  for (const auto& g : all)
    CHECK(f.db.scalar("SELECT epoch FROM tasks WHERE task = '" + g.scope.task + "'") == std::to_string(g.epoch));
  MESSAGE(in_new_realm << " of " << all.size() << " grants issued after the rotation");
}

TEST_CASE("rotate realm: with the realm the operator expects, a repeated rotation changes nothing") {
  StoreFixture f;
  auto g = f.claim("tenant-a", "task-1", "region-a", 0, 1'000);
  const auto first_realm = g.identity.realm;
  f.at(10);
  auto r = f.operators.rotate_realm(f.session, "alice", {.expected_realm = first_realm});
  REQUIRE(r.code == Code::realm_rotated);
  auto fresh = f.claim("tenant-a", "task-1", "region-b", 11, 1'000);
  const auto after = f.db.scalar("SELECT a::text || ' ' || (SELECT last_value FROM epoch_seq) FROM authority a");
  const auto tasks = f.db.scalar("SELECT t::text FROM tasks t");

  // The operator's retry names the realm it saw before: refused, nothing changed.
  auto again = f.operators.rotate_realm(f.session, "alice", {.expected_realm = first_realm});
  CHECK(again.code == Code::authority_generation_mismatch);
  CHECK(again.previous_realm == r.realm);
  CHECK(again.realm == r.realm);
  CHECK(f.db.scalar("SELECT a::text || ' ' || (SELECT last_value FROM epoch_seq) FROM authority a") == after);
  CHECK(f.db.scalar("SELECT t::text FROM tasks t") == tasks);
  CHECK(f.db.scalar("SELECT count(*) FROM operator_actions") == "1");
  // The grant issued after the first rotation is still good.
  CHECK(f.authority.renew(f.session, {"tenant-a", "task-1"}, fresh, 1'000).code == Code::renewed);
}
