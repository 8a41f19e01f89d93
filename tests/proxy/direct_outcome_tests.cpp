// A protected write's two decisions, admission and outcome, made on the I/O
// thread's own database connection (database.direct_connections), seen
// where they land: the ledger's rows, the provider's requests, /metrics.
#include "proxy/proxy_fixture.hpp"
#include "support/eventually.hpp"
#include "support/pool_probes.hpp"

using namespace gw;
using namespace gw::test;

namespace {

// The booking provider and a gateway with one I/O thread, so every request
// is served by the lane the test has seen open, one decision at a time on
// its direct connection (none sent behind another: the turns are the point).
struct DirectRig {
  ProviderProcess provider;
  Gateway gateway{one_thread(provider)};

  static GatewayOptions one_thread(const ProviderProcess& provider) {
    auto options = proxy_options(provider);
    options.edit = [edit = options.edit](nlohmann::json& c) {
      if (edit) edit(c);
      c["http"]["io_threads"] = 1;
      c["database"]["direct_connections"] = 1;
      c["database"]["direct_pipeline"] = 1;
    };
    return options;
  }

  double direct() const { return metric(gateway, "gateway_db_direct_decisions_total"); }

  // Claims task-a, then claims new tasks until the lane has its connection.
  Write warm() {
    auto claimed = gateway.claim("tenant-a", "task-a", "region-a", 600000);
    int n = 0;
    REQUIRE(eventually([&] {
      gateway.claim("tenant-a", "warm-" + std::to_string(++n), "o", 600000);
      return direct() > 0;
    }));
    Write w;
    w.grant = grant_token(claimed);
    return w;
  }

  // Sends `w` (as op-1, booking slot-1) from its own thread, the provider
  // holding it before it executes; returns once it is held.
  std::thread send_held(Write& w, Reply& reply) {
    w.key = "op-1";
    w.body = booking_body("slot-1");
    provider.hold_next(1);
    std::thread agent([&] {
      HttpClient own(gateway.port());
      reply = send(own, w);
    });
    REQUIRE(provider.wait_for_held(1));
    return agent;
  }

  std::string operation(const std::string& key) const {
    return gateway.db().scalar("SELECT state || ' ' || coalesce(committed_version::text, '-') FROM operations"
                               " WHERE op_id = '" + key + "'");
  }
  std::string attempt(const std::string& key) const {
    return gateway.db().scalar("SELECT outcome || ' ' || upstream_status FROM operation_attempts WHERE op_id = '" +
                               key + "'");
  }
};

}  // namespace

TEST_CASE("direct decisions: a protected write is admitted and recorded without a worker, forwarded once") {
  DirectRig rig;
  auto w = rig.warm();
  auto c = rig.gateway.client();
  const auto before = rig.direct();
  for (int i = 1; i <= 3; ++i) {
    w.key = "op-" + std::to_string(i);
    w.body = booking_body("slot-" + std::to_string(i));
    w.expected_version = i - 1;
    auto r = send(c, w);
    CHECK(r.status == 201);
    CHECK(rig.operation(w.key) == "succeeded " + std::to_string(i));
    CHECK(rig.attempt(w.key) == "succeeded 201");
    CHECK(rig.provider.requests_with_key(upstream_key("tenant-a", "task-a", w.key)) == 1);
  }
  // Two decisions each: the admission and the outcome.
  CHECK(rig.direct() == before + 6);
  CHECK(rig.provider.effect_count() == 3);
  // An exact retry is the full decision (the key exists): a replay, made on
  // a worker, and nothing more reaches the provider.
  auto replay = send(c, w);
  CHECK(replay.status == 201);
  CHECK(rig.direct() == before + 6);
  CHECK(rig.provider.requests_with_key(upstream_key("tenant-a", "task-a", w.key)) == 1);
}

TEST_CASE("direct decisions: an outcome whose operation row moved while forwarding is recorded by key") {
  DirectRig rig;
  auto w = rig.warm();
  Reply reply;
  auto agent = rig.send_held(w, reply);
  // Another version of the operation's row (what VACUUM FULL or a repack
  // does to its address), same values: the outcome's statement misses it
  // and writes nothing; a worker records it from a read by key.
  rig.gateway.db().exec("UPDATE operations SET updated_ms = updated_ms WHERE op_id = 'op-1'");
  const auto before = rig.direct();
  rig.provider.release();
  agent.join();
  CHECK(reply.status == 201);
  CHECK(rig.direct() == before);
  CHECK(rig.operation("op-1") == "succeeded 1");
  CHECK(rig.attempt("op-1") == "succeeded 201");
  CHECK(rig.gateway.db().scalar("SELECT count(*) FROM operation_evidence") == "0");
}

TEST_CASE("direct decisions: an outcome waiting for the lent direct connection is served before a new request") {
  // The lane's one connection is held by a fresh claim that waits for the
  // test's own uncommitted insert of the same task. A second fresh claim
  // waits its turn there, then the provider answers a held write, whose
  // outcome waits too. When the connection comes back, the outcome is
  // recorded first (as in the pool's lanes), then the claim is decided.
  DirectRig rig;
  auto w = rig.warm();
  Reply written;
  auto agent = rig.send_held(w, written);

  pqxx::connection inserter(rig.gateway.db().url());
  pqxx::work insert(inserter);
  insert.exec(
      "INSERT INTO tasks (tenant, task, owner, epoch, secret_hash, expires_at_ms, granted_at_ms)"
      " VALUES ('tenant-a', 'first', 'x', 1, sha256('x'), 0, 0)");
  const nlohmann::json claim_body{{"owner", "o"}, {"lease_ms", 60000}};
  std::array<Reply, 2> claimed;
  std::thread first([&] {
    claimed[0] = HttpClient(rig.gateway.port(), std::chrono::seconds(120))
                     .post_json(task_path("tenant-a", "first", "claim"), claim_body, agent_a);
  });
  REQUIRE(eventually([&] {
    return rig.gateway.db().scalar(
               "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
               " AND application_name = 'write-gateway-direct' AND wait_event_type = 'Lock'") == "1";
  }));
  std::thread second([&] {
    claimed[1] = HttpClient(rig.gateway.port(), std::chrono::seconds(120))
                     .post_json(task_path("tenant-a", "second", "claim"), claim_body, agent_a);
  });
  REQUIRE(eventually([&] { return metric(rig.gateway, "gateway_db_direct_waiting") == 1; }));
  rig.provider.release();
  REQUIRE(eventually([&] { return metric(rig.gateway, "gateway_db_direct_waiting") == 2; }));

  insert.abort();
  first.join();
  second.join();
  agent.join();
  CHECK(claimed[0].code() == "granted");
  CHECK(claimed[1].code() == "granted");
  CHECK(written.status == 201);
  CHECK(rig.operation("op-1") == "succeeded 1");
  // One connection, one statement after the other: the outcome's write
  // took its transaction id before the second claim's.
  CHECK(rig.gateway.db().scalar(
            "SELECT (SELECT xmin::text::bigint FROM operations WHERE op_id = 'op-1')"
            " < (SELECT xmin::text::bigint FROM tasks WHERE task = 'second')") == "t");
}
