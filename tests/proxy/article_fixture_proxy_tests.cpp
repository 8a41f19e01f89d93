// Every fixture of the reference article, replayed over HTTP through the
// reverse proxy to the real booking provider, tick by tick on the manual
// authority clock. The article's intent (tenant-a, task-a, operation-a,
// value, expected version 0) becomes a protected POST /bookings whose slot is
// the value, under Idempotency-Key operation-a and Expected-Version 0. Each
// TEST_CASE replays the article's sequence up to the assertion it is named
// after, and checks what the provider executed, not only the agent's reply.
#include "proxy/proxy_fixture.hpp"

#include "core/base64url.hpp"
#include "support/private_cluster.hpp"
#include "support/process.hpp"

#include <functional>
#include <thread>

using namespace gw;
using namespace gw::test;
using nlohmann::json;

namespace {

struct Intent {
  std::string task;
  std::string operation;
  std::string value;
  std::int64_t expected_version;
};

const Intent intent{"task-a", "operation-a", "synthetic-value", 0};

// The article's sequence on one gateway and one booking provider.
struct Article {
  ProviderProcess provider;
  Gateway g;
  HttpClient c;
  std::string old_grant, new_grant, latest_grant;

  Article() : g(proxy_options(provider)), c(g.port()) {}
  // On an existing database, with more config edits after the provider's.
  Article(const std::string& database_url, std::function<void(json&)> more)
      : g(database_url, with(proxy_options(provider), std::move(more))), c(g.port()) {}

  static GatewayOptions with(GatewayOptions options, std::function<void(json&)> more) {
    options.edit = [first = options.edit, more](json& c) {
      first(c);
      more(c);
    };
    return options;
  }

  Reply write(const std::string& grant, const Intent& i) {
    Write w;
    w.task = i.task;
    w.grant = grant;
    w.key = i.operation;
    w.expected_version = i.expected_version;
    w.body = booking_body(i.value);
    return send(c, w);
  }
  Reply renew(const std::string& grant, std::int64_t lease_ms, const std::string& task = "task-a") {
    return c.post_json(task_path("tenant-a", task, "renew"), {{"grant_token", grant}, {"lease_ms", lease_ms}},
                       agent_a);
  }
  std::string key(const Intent& i) const { return upstream_key("tenant-a", i.task, i.operation); }

  // region-a claims at 0 for 10; authority time reaches its expiry.
  void opening() {
    g.set_clock(0);
    old_grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 10));
    g.set_clock(10);
  }
  // region-b claims at 10 for 10: the fence is published with the grant.
  void regrant() {
    opening();
    new_grant = grant_token(g.claim("tenant-a", "task-a", "region-b", 10));
    g.set_clock(11);
  }
  // region-b renews at 11 (never shortening) and commits the intent at 12.
  Reply renew_and_commit() {
    regrant();
    REQUIRE(renew(new_grant, 2).code() == "renewed");
    g.set_clock(12);
    auto committed = write(new_grant, intent);
    REQUIRE(committed.code() == "committed");
    return committed;
  }
  // region-b's next write is held at 13 while authority moves to 20 and
  // region-c claims; returns the original commit reply.
  Reply newer_grant_while_held() {
    auto committed = renew_and_commit();
    g.set_clock(13);
    g.set_clock(20);
    latest_grant = grant_token(g.claim("tenant-a", "task-a", "region-c", 10));
    g.set_clock(21);
    return committed;
  }
  void nothing_reached_the_provider() {
    CHECK(provider.requests().empty());
    CHECK(provider.effect_count() == 0);
    CHECK(g.db().scalar("SELECT count(*) FROM operations") == "0");
  }
  // The intent executed exactly once, and nothing else did.
  void intent_executed_once() {
    CHECK(provider.effect_count() == 1);
    CHECK(provider.effects_for(key(intent)) == 1);
    CHECK(provider.requests().size() == 1);
  }
};


}  // namespace

TEST_CASE("proxy fixture: expired owner is rejected before any regrant") {
  Article a;
  a.opening();
  check_problem(a.write(a.old_grant, intent), 409, "expired_owner");
  check_problem(a.renew(a.old_grant, 10), 409, "expired_owner");
  a.nothing_reached_the_provider();
}

TEST_CASE("proxy fixture: old owner is rejected after regrant, before the new owner's first write") {
  Article a;
  a.regrant();
  auto old_epoch = json::parse(*base64url_decode(a.old_grant))["epoch"].get<std::int64_t>();
  auto new_epoch = json::parse(*base64url_decode(a.new_grant))["epoch"].get<std::int64_t>();
  CHECK(new_epoch > old_epoch);
  check_problem(a.write(a.old_grant, intent), 409, "stale_owner");
  a.nothing_reached_the_provider();
}

TEST_CASE("proxy fixture: an impostor presenting the current epoch gets no write and no receipt") {
  Article a;
  a.regrant();
  auto impostor = forge(a.new_grant, "owner", "another-owner");
  check_problem(a.write(impostor, intent), 409, "stale_owner");
  a.nothing_reached_the_provider();
  // Not even a receipt once the real owner has written.
  a.g.set_clock(12);
  REQUIRE(a.write(a.new_grant, intent).code() == "committed");
  auto receipt = a.c.request("GET", task_path("tenant-a", "task-a", "operations/operation-a"),
                             {{"Authorization", "Bearer " + agent_a}, {"Fence-Grant", impostor}});
  check_problem(receipt, 409, "stale_owner");
  CHECK(receipt.body.find("succeeded") == std::string::npos);
}

TEST_CASE("proxy fixture: renewal never shortens, and the current owner's write executes once") {
  Article a;
  a.regrant();
  auto renewed = a.renew(a.new_grant, 2);
  CHECK(renewed.code() == "renewed");
  CHECK(renewed.json()["expires_at_ms"] == 20);  // 11 + 2 < 20: kept
  a.g.set_clock(12);
  auto r = a.write(a.new_grant, intent);
  CHECK(r.status == 201);
  CHECK(r.code() == "committed");
  CHECK(r.header("Committed-Version") == "1");
  CHECK(r.json()["slot"] == "synthetic-value");
  a.intent_executed_once();
  CHECK(a.g.db().scalar("SELECT state FROM operations WHERE op_id = 'operation-a'") == "succeeded");
}

TEST_CASE("proxy fixture: exact retry is replayed, and a changed payload is operation_conflict") {
  Article a;
  auto committed = a.renew_and_commit();
  auto retry = a.write(a.new_grant, intent);
  CHECK(retry.status == committed.status);
  CHECK(retry.code() == "historical_retry");
  CHECK(retry.header("Idempotent-Replayed") == "true");
  CHECK(retry.body == committed.body);
  CHECK(replayable_headers(retry) == replayable_headers(committed));
  check_problem(a.write(a.new_grant, {"task-a", "operation-a", "different-value", 0}), 422, "operation_conflict");
  a.intent_executed_once();
}

TEST_CASE("proxy fixture: a new operation at a passed version is version_conflict") {
  Article a;
  a.renew_and_commit();
  check_problem(a.write(a.new_grant, {"task-a", "operation-b", "synthetic-value", 0}), 412, "version_conflict");
  a.intent_executed_once();
  CHECK(a.g.db().scalar("SELECT count(*) FROM operations") == "1");
}

TEST_CASE("proxy fixture: unavailable authority holds the write, forwards and discloses nothing") {
  PrivateCluster pg;
  Article a(pg.url(), fail_fast_database);
  const auto& provider = a.provider;
  auto committed = [&] {
    // The article's prefix, on this gateway: the new owner has committed at 12.
    a.g.set_clock(0);
    a.old_grant = grant_token(a.g.claim("tenant-a", "task-a", "region-a", 10));
    a.g.set_clock(10);
    a.new_grant = grant_token(a.g.claim("tenant-a", "task-a", "region-b", 10));
    a.g.set_clock(12);
    auto r = a.write(a.new_grant, intent);
    REQUIRE(r.code() == "committed");
    return r;
  }();
  auto provider_requests = provider.requests().size();

  pg.stop();
  // The exact retry would be a replay: with no authority it is neither
  // replayed nor forwarded, and a new operation is not forwarded either.
  auto held = a.write(a.new_grant, intent);
  check_problem(held, 503, "authority_unavailable");
  CHECK(held.header("Retry-After"));
  CHECK(held.body.find("booking_id") == std::string::npos);
  check_problem(a.write(a.new_grant, {"task-a", "operation-b", "synthetic-next", 1}), 503, "authority_unavailable");
  CHECK(provider.requests().size() == provider_requests);
  CHECK(provider.effect_count() == 1);

  pg.start();
  bool ready = false;
  for (int i = 0; i < 200 && !ready; ++i) {  // liveness only: the pool reconnects by itself
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ready = a.c.get("/readyz", "").status == 200;
  }
  REQUIRE(ready);
  // Nothing was recorded while the authority was away.
  auto replay = a.write(a.new_grant, intent);
  CHECK(replay.code() == "historical_retry");
  CHECK(replay.body == committed.body);
  CHECK(provider.effect_count() == 1);
  CHECK(provider.requests().size() == provider_requests);
}

TEST_CASE("proxy fixture: a held owner's write is rejected after a newer grant") {
  Article a;
  a.newer_grant_while_held();
  // region-b computed this write at 13; it arrives after region-c's grant.
  auto held = a.write(a.new_grant, {"task-a", "operation-b", "synthetic-next", 1});
  check_problem(held, 409, "stale_owner");
  a.intent_executed_once();
  CHECK(a.g.db().scalar("SELECT count(*) FROM operations WHERE op_id = 'operation-b'") == "0");
}

TEST_CASE("proxy fixture: the new owner's exact operation gets historical_retry, not a second effect") {
  Article a;
  auto committed = a.newer_grant_while_held();
  auto r = a.write(a.latest_grant, intent);
  CHECK(r.code() == "historical_retry");
  CHECK(r.status == 201);
  CHECK(r.body == committed.body);
  CHECK(r.header("Committed-Version") == "1");
  a.intent_executed_once();
  // The receipt is the current owner's too.
  auto receipt = a.c.request("GET", task_path("tenant-a", "task-a", "operations/operation-a"),
                             {{"Authorization", "Bearer " + agent_a}, {"Fence-Grant", a.latest_grant}});
  REQUIRE(receipt.status == 200);
  CHECK(receipt.json()["operation"]["state"] == "succeeded");
  CHECK(receipt.json()["operation"]["committed_version"] == 1);
}

TEST_CASE("proxy fixture: a grant used for another task is scope_mismatch") {
  Article a;
  a.newer_grant_while_held();
  check_problem(a.write(a.latest_grant, {"other-task", "operation-a", "synthetic-value", 0}), 409,
                "scope_mismatch");
  a.intent_executed_once();
}

TEST_CASE("proxy fixture: a grant from another realm is authority_generation_mismatch") {
  Article a;
  a.newer_grant_while_held();
  // A newly initialised, independent authority in front of the same provider.
  Gateway fresh(proxy_options(a.provider));
  fresh.set_clock(21);
  fresh.claim("tenant-a", "task-a", "region-c", 10);
  Write w;
  w.grant = a.latest_grant;
  w.key = intent.operation;
  w.body = booking_body(intent.value);
  auto fresh_client = fresh.client();
  check_problem(send(fresh_client, w), 409, "authority_generation_mismatch");
  a.intent_executed_once();
  CHECK(fresh.db().scalar("SELECT count(*) FROM operations") == "0");
}

TEST_CASE("proxy fixture: renewal cannot revive an expired grant, and reclaiming gets a new epoch") {
  Article a;
  a.g.set_clock(30);
  auto same_owner = grant_token(a.g.claim("tenant-a", "task-b", "region-c", 1));
  a.g.set_clock(31);
  check_problem(a.renew(same_owner, 10, "task-b"), 409, "expired_owner");
  const Intent on_b{"task-b", "operation-a", "synthetic-value", 0};
  check_problem(a.write(same_owner, on_b), 409, "expired_owner");
  a.nothing_reached_the_provider();
  auto reclaimed = grant_token(a.g.claim("tenant-a", "task-b", "region-c", 10));
  CHECK(json::parse(*base64url_decode(reclaimed))["epoch"].get<std::int64_t>() >
        json::parse(*base64url_decode(same_owner))["epoch"].get<std::int64_t>());
  // The new generation writes; the old one still cannot.
  CHECK(a.write(reclaimed, on_b).code() == "committed");
  check_problem(a.write(same_owner, on_b), 409, "stale_owner");
  CHECK(a.provider.effects_for(a.key(on_b)) == 1);
  CHECK(a.provider.effect_count() == 1);
}

TEST_CASE("proxy fixture: the authority clock cannot roll back to revive a lease") {
  Article a;
  a.newer_grant_while_held();
  // At 19 region-b's lease (until 20) would be valid again.
  auto rollback = a.c.post_json("/v1/admin/clock", {{"now_ms", 19}}, operator_token);
  check_problem(rollback, 400, "authority_clock_rollback");
  CHECK(a.c.get(task_path("tenant-a", "task-a"), agent_a).json()["now_ms"] == 21);
  check_problem(a.write(a.new_grant, {"task-a", "operation-b", "synthetic-next", 1}), 409, "stale_owner");
  a.intent_executed_once();
}

TEST_CASE("proxy fixture: a boolean is not a time, a lease or a version") {
  Article a;
  a.g.set_clock(21);
  check_problem(a.c.post_json("/v1/admin/clock", {{"now_ms", true}}, operator_token), 400, "invalid_request");
  check_problem(a.c.post_json(task_path("tenant-a", "task-a", "claim"), {{"owner", "region-z"}, {"lease_ms", true}},
                              agent_a),
                400, "invalid_request");
  CHECK(a.c.get(task_path("tenant-a", "task-a"), agent_a).status == 404);  // nobody claimed
  auto grant = grant_token(a.g.claim("tenant-a", "task-a", "region-z", 10));
  Write w;
  w.grant = grant;
  w.key = "operation-a";
  w.expected_version.reset();
  w.body = booking_body("synthetic-value");
  check_problem(send(a.c, w, {{"Expected-Version", "true"}}), 400, "invalid_request");
  CHECK(a.c.get(task_path("tenant-a", "task-a"), agent_a).json()["now_ms"] == 21);
  a.nothing_reached_the_provider();
}
