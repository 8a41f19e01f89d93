// The outcome transaction failing after a forward: PostgreSQL is stopped
// while the request is held at the provider, so the provider executes it but
// the gateway cannot write the outcome down. The agent must be told the
// outcome is unknown (504, never "nothing was forwarded"), the operation
// must never be resent, and once PostgreSQL is back the outcome lane records
// the kept reply without an operator.
#include "proxy/proxy_fixture.hpp"

#include "support/eventually.hpp"
#include "support/private_cluster.hpp"

#include <pqxx/pqxx>

#include <future>

using namespace gw;
using namespace gw::test;


TEST_CASE("outcome record failing after a forward: 504, then recorded from the kept reply when the database is back") {
  PrivateCluster pg;
  ProviderProcess provider;
  auto options = proxy_options(provider);
  const auto edit_providers = options.edit;
  options.edit = [edit_providers](nlohmann::json& c) {
    edit_providers(c);
    c["database"]["connect_timeout_s"] = 1;
    c["database"]["statement_timeout_ms"] = 1000;
  };
  Gateway g(pg.url(), options);
  g.set_clock(0);
  Write w;
  w.grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 600000));
  w.key = "op-1";
  w.body = booking_body("slot-1");
  const auto key = upstream_key("tenant-a", "task-a", "op-1");

  provider.hold_next(1);
  auto upstream = std::async(std::launch::async, [&] {
    HttpClient own(g.port());
    return send(own, w);
  });
  ReleaseOnExit release_on_failure(provider);
  REQUIRE(provider.wait_for_held(1));  // admitted (committed) and forwarded
  pg.stop();
  provider.release();             // the provider executes and answers 201

  auto reply = upstream.get();
  check_problem(reply, 504, "unknown_outcome");
  CHECK(reply.body.find("booking_id") == std::string::npos);  // the provider's body is not guessed at
  CHECK(provider.effects_for(key) == 1);

  pg.start();
  REQUIRE(eventually([&] { return g.client().get("/readyz", "").status == 200; }));
  auto db = [&](const std::string& sql) {
    pqxx::connection conn(pg.url());
    pqxx::nontransaction tx(conn);
    auto r = tx.exec(sql);
    return r[0][0].is_null() ? std::string() : r[0][0].as<std::string>();
  };
  // The gateway kept the provider's reply and records it itself.
  REQUIRE(eventually([&] { return db("SELECT state FROM operations WHERE op_id = 'op-1'") == "succeeded"; }));
  CHECK(db("SELECT attempts FROM operations WHERE op_id = 'op-1'") == "1");
  CHECK(db("SELECT response_status FROM operations WHERE op_id = 'op-1'") == "201");
  CHECK(db("SELECT outcome FROM operation_attempts WHERE op_id = 'op-1'") == "succeeded");
  CHECK(db("SELECT version FROM task_ledger WHERE task = 'task-a'") == "1");
  CHECK(db("SELECT open_op FROM task_ledger WHERE task = 'task-a'").empty());

  // The exact retry reads the provider's own reply, byte for byte, and is
  // not forwarded again; the task takes the next operation.
  auto c = g.client();
  auto replayed = send(c, w);
  CHECK(replayed.status == 201);
  CHECK(replayed.header("Gateway-Status") == "historical_retry");
  CHECK(replayed.header("Idempotent-Replayed") == "true");
  // The provider's own record of what it answered, through its status lookup.
  HttpClient at_provider(provider.port());
  auto looked_up = at_provider.get("/bookings/by-key/" + key, provider_credential);
  REQUIRE(looked_up.status == 200);
  CHECK(nlohmann::json::parse(replayed.body) == nlohmann::json::parse(looked_up.body)["body"]);
  Write next = w;
  next.key = "op-2";
  next.body = booking_body("slot-2");
  next.expected_version = 1;
  auto committed = send(c, next);
  CHECK(committed.status == 201);
  CHECK(committed.header("Gateway-Status") == "committed");
  CHECK(provider.requests_with_key(key) == 1);
  CHECK(provider.effect_count() == 2);
}
