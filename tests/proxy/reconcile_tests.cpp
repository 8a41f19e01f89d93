// HeldWrite operations resolved by evidence over HTTP, against a real demo
// provider and a real PostgreSQL: the provider's status lookup (its settle
// window on the authority clock), the operator's resolve, the operation's
// history, the rejection audit, revoke and realm rotation. Operator routes
// answer operator tokens only.
#include "proxy/proxy_fixture.hpp"

#include "support/eventually.hpp"

using namespace gw;
using namespace gw::test;

namespace {

// The demo provider's status lookup, and a reconcile loop that never runs on
// its own here: lookups happen when the test presses "reconcile".
GatewayOptions with_lookup(const ProviderProcess& provider, std::int64_t settle_window_ms) {
  auto options = proxy_options(provider);
  auto providers = options.edit;
  options.edit = [providers, settle_window_ms](nlohmann::json& c) {
    providers(c);
    c["providers"][0]["lookup"] = {{"path", "/bookings/by-key/{key}"},
                                   {"status_pointer", "/status"},
                                   {"body_pointer", "/body"},
                                   {"settle_window_ms", settle_window_ms}};
    c["recovery"] = {{"reconcile", {{"interval_ms", 3600000}}}};
  };
  return options;
}

std::string op_path(const std::string& id, const std::string& tail = "") {
  return "/v1/admin/operations/tenant-a/task-a/" + id + tail;
}

struct HeldWrite {
  Write w;
  std::string key;
};

// op-1 admitted at authority time 1000 and answered 503 by the provider
// without executing: held unknown (outcome_unknown).
HeldWrite hold_one(Gateway& g, ProviderProcess& provider) {
  g.set_clock(1000);
  HeldWrite h;
  h.w.grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 10'000'000));
  h.w.key = "op-1";
  h.w.body = booking_body("slot-1");
  h.key = upstream_key("tenant-a", "task-a", "op-1");
  provider.set_fault("error_5xx", 0, 1);
  auto c = g.client();
  check_problem(send(c, h.w), 504, "unknown_outcome");
  REQUIRE(g.db().scalar("SELECT state FROM operations WHERE op_id = 'op-1'") == "unknown");
  return h;
}

}  // namespace

TEST_CASE("lookup: not found inside the settle window stays held, and after it, not_executed and the retry executes once") {
  ProviderProcess provider;
  Gateway g(with_lookup(provider, 10'000));
  auto h = hold_one(g, provider);
  auto c = g.client();
  // Forward deadline = 1000 + queue 2000 + connect 2000 + request 10000 + margin 5000 = 20000;
  // a "not found" is trusted from 20000 + 10000 on.
  g.set_clock(29'999);
  auto early = c.post_json(op_path("op-1", "/reconcile"), nlohmann::json::object(), operator_token);
  REQUIRE(early.status == 200);
  CHECK(early.json()["lookup"]["status"] == 404);
  CHECK(early.json()["lookup"]["decision"] == "held");
  CHECK(early.json()["operation"]["state"] == "unknown");
  check_problem(send(c, h.w), 504, "unknown_outcome");

  g.set_clock(30'000);
  auto settled = c.post_json(op_path("op-1", "/reconcile"), nlohmann::json::object(), operator_token);
  REQUIRE(settled.status == 200);
  CHECK(settled.json()["lookup"]["decision"] == "resolved");
  CHECK(settled.json()["lookup"]["outcome"] == "not_executed");
  CHECK(settled.json()["operation"]["state"] == "not_executed");
  CHECK(settled.json()["operation"]["resolution"]["source"] == "lookup");
  // Both lookups are kept as evidence, the resolution beside them names the
  // second, and the original attempt record is untouched.
  CHECK(g.db().scalar("SELECT count(*) FROM operation_evidence WHERE source = 'lookup' AND upstream_status = 404") ==
        "2");
  CHECK(g.db().scalar("SELECT e.reference FROM operations o JOIN operation_evidence e ON e.id = (o.resolution).evidence") ==
        "evidence:" + settled.json()["lookup"]["evidence"].dump());
  CHECK(g.db().scalar("SELECT outcome FROM operation_attempts WHERE attempt = 1") == "unknown");

  // The owner's exact retry is admitted again and executes once.
  auto retried = send(c, h.w);
  CHECK(retried.status == 201);
  CHECK(retried.header("Gateway-Status") == "committed");
  CHECK(provider.effects_for(h.key) == 1);
  CHECK(g.db().scalar("SELECT attempts FROM operations WHERE op_id = 'op-1'") == "2");
}

TEST_CASE("lookup: found resolves succeeded from the provider's evidence, and the task moves on") {
  ProviderProcess provider;
  Gateway g(with_lookup(provider, 10'000));
  g.set_clock(1000);
  Write w;
  w.grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 10'000'000));
  w.key = "op-1";
  w.body = booking_body("slot-1");
  const auto key = upstream_key("tenant-a", "task-a", "op-1");
  // The provider executes, then drops the connection: the gateway cannot know.
  provider.set_fault("drop_after_execute", 0, 1);
  auto c = g.client();
  check_problem(send(c, w), 504, "unknown_outcome");
  REQUIRE(provider.effects_for(key) == 1);

  auto r = c.post_json(op_path("op-1", "/reconcile"), nlohmann::json::object(), operator_token);
  REQUIRE(r.status == 200);
  CHECK(r.json()["lookup"]["status"] == 200);
  CHECK(r.json()["lookup"]["outcome"] == "succeeded");
  CHECK(r.json()["operation"]["state"] == "succeeded");
  CHECK(r.json()["operation"]["task_version"] == 1);
  // Settled by evidence: no provider reply to replay, and the answer says so.
  check_problem(send(c, w), 409, "resolved_without_reply");
  Write next = w;
  next.key = "op-2";
  next.body = booking_body("slot-2");
  next.expected_version = 1;
  CHECK(send(c, next).header("Gateway-Status") == "committed");
  CHECK(provider.effects_for(key) == 1);
  CHECK(provider.requests_with_key(key) == 1);
}

TEST_CASE("operator resolve: operator token only, the original record kept, the task released") {
  ProviderProcess provider;
  Gateway g(proxy_options(provider));
  auto h = hold_one(g, provider);
  auto c = g.client();
  const nlohmann::json body{{"outcome", "rejected"}, {"evidence", "ticket OPS-42: provider support says declined"}};

  check_problem(c.post_json(op_path("op-1", "/resolve"), body, agent_a), 403, "forbidden");
  check_problem(c.post_json(op_path("op-1", "/resolve"), body, ""), 401, "unauthenticated");
  check_problem(c.get(op_path("op-1"), agent_a), 403, "forbidden");
  // Bad input changes nothing.
  check_problem(c.post_json(op_path("op-1", "/resolve"), {{"outcome", "unknown"}, {"evidence", "x"}}, operator_token),
                400, "invalid_request");
  check_problem(c.post_json(op_path("op-1", "/resolve"), {{"outcome", "rejected"}}, operator_token), 400,
                "invalid_request");
  check_problem(c.post_json(op_path("op-1", "/resolve"), {{"outcome", "rejected"}, {"evidence", "a\nb"}}, operator_token),
                400, "invalid_request");
  check_problem(c.post_json(op_path("op-9", "/resolve"), body, operator_token), 404, "not_found");
  CHECK(g.db().scalar("SELECT state FROM operations WHERE op_id = 'op-1'") == "unknown");
  CHECK(g.db().scalar("SELECT count(*) FROM operation_evidence") == "0");

  auto resolved = c.post_json(op_path("op-1", "/resolve"), body, operator_token);
  REQUIRE(resolved.status == 200);
  CHECK(resolved.code() == "resolved");
  const auto op = resolved.json()["operation"];
  CHECK(op["state"] == "rejected");
  CHECK(op["holds_task"] == false);
  CHECK(op["resolution"]["source"] == "operator");
  // The attempt still says what the forward saw; the resolution sits beside it.
  REQUIRE(op["attempts"].size() == 1);
  CHECK(op["attempts"][0]["outcome"] == "unknown");
  CHECK(op["attempts"][0]["upstream_status"] == 503);
  bool found = false;
  for (const auto& e : op["evidence"])
    if (e["source"] == "operator") {
      found = true;
      CHECK(e["reference"] == "ticket OPS-42: provider support says declined");
      CHECK(e["actor"] == "ops");
    }
  CHECK(found);
  // The owner's receipt says how it was settled, like the operator's view.
  auto receipt = c.request("GET", task_path("tenant-a", "task-a", "operations/op-1"),
                           {{"Authorization", "Bearer " + agent_a}, {"Fence-Grant", h.w.grant}});
  REQUIRE(receipt.status == 200);
  CHECK(receipt.json()["operation"]["state"] == "rejected");
  CHECK(receipt.json()["operation"]["resolution"] == op["resolution"]);
  CHECK(receipt.json()["operation"]["resolution"]["source"] == "operator");
  // Resolved once: a second resolve is refused and changes nothing.
  check_problem(c.post_json(op_path("op-1", "/resolve"), body, operator_token), 409, "operation_not_held");
  // The task takes new operations; the provider never saw op-1 executed.
  Write next = h.w;
  next.key = "op-2";
  next.body = booking_body("slot-2");
  CHECK(send(c, next).header("Gateway-Status") == "committed");
  CHECK(provider.effects_for(h.key) == 0);
}

TEST_CASE("operator routes by query: the same operation, resolve and reconcile, and bad queries change nothing") {
  ProviderProcess provider;
  Gateway g(with_lookup(provider, 0));
  hold_one(g, provider);
  auto c = g.client();
  const std::string q = "?tenant=tenant-a&task=task-a&id=op-1";
  auto by_query = c.get("/v1/admin/operation" + q, operator_token);
  REQUIRE_MESSAGE(by_query.status == 200, by_query.body);
  CHECK(by_query.json()["operation"] == c.get(op_path("op-1"), operator_token).json()["operation"]);

  const nlohmann::json body{{"outcome", "rejected"}, {"evidence", "ticket OPS-43"}};
  check_problem(c.get("/v1/admin/operation" + q, agent_a), 403, "forbidden");
  check_problem(c.post_json("/v1/admin/operation/resolve" + q, body, agent_a), 403, "forbidden");
  for (const char* bad : {"", "?tenant=tenant-a&task=task-a", "?tenant=tenant-a&task=task-a&id=op-1&id=op-1",
                          "?tenant=tenant-a&task=task-a&id=op-1&extra=1", "?tenant=tenant-a&task=task-a&id=",
                          "?tenant=tenant-a&task=task-a&id=%zz"}) {
    CAPTURE(bad);
    check_problem(c.get(std::string("/v1/admin/operation") + bad, operator_token), 400, "invalid_request");
    check_problem(c.post_json(std::string("/v1/admin/operation/resolve") + bad, body, operator_token), 400,
                  "invalid_request");
  }
  check_problem(c.get("/v1/admin/operation?tenant=tenant-a&task=task-a&id=op-9", operator_token), 404, "not_found");
  CHECK(g.db().scalar("SELECT state FROM operations WHERE op_id = 'op-1'") == "unknown");

  auto looked = c.post_json("/v1/admin/operation/reconcile" + q, nlohmann::json::object(), operator_token);
  REQUIRE_MESSAGE(looked.status == 200, looked.body);
  auto resolved = c.post_json("/v1/admin/operation/resolve" + q, body, operator_token);
  // The lookup may have settled it already (the provider never executed it): either way it is not held now.
  CHECK((resolved.status == 200 || resolved.code() == "operation_not_held"));
  CHECK(g.db().scalar("SELECT state FROM operations WHERE op_id = 'op-1'") != "unknown");
}

TEST_CASE("rejection audit: a stale owner's attempt appears with its own epoch, not the current one") {
  ProviderProcess provider;
  Gateway g(proxy_options(provider));
  g.set_clock(1000);
  auto first = g.claim("tenant-a", "task-a", "region-a", 1000);
  g.set_clock(5000);  // region-a's lease ended
  auto second = g.claim("tenant-a", "task-a", "region-b", 100000);
  Write stale;
  stale.grant = grant_token(first);
  stale.key = "op-stale";
  stale.body = booking_body("slot-1");
  auto c = g.client();
  check_problem(send(c, stale), 409, "stale_owner");

  check_problem(c.get("/v1/admin/rejections", agent_a), 403, "forbidden");
  auto page = c.get("/v1/admin/rejections?tenant=tenant-a&task=task-a", operator_token);
  REQUIRE(page.status == 200);
  const auto rows = page.json()["rejections"];
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["code"] == "stale_owner");
  CHECK(rows[0]["owner"] == "region-a");
  CHECK(rows[0]["epoch"] == first["grant"]["epoch"]);
  CHECK(rows[0]["epoch"] != second["grant"]["epoch"]);
  CHECK(rows[0]["operation"] == "op-stale");
  CHECK(rows[0]["authority_ms"] == 5000);
  CHECK(page.json()["next_cursor"].is_null());
  check_problem(c.get("/v1/admin/rejections?code=nonsense", operator_token), 400, "invalid_request");
  check_problem(c.get("/v1/admin/rejections?limit=0", operator_token), 400, "invalid_request");
  CHECK(provider.requests().empty());
}

TEST_CASE("rejection audit: refusals before the admission are kept too, with what was read before the refusal") {
  ProviderProcess provider;
  Gateway g(proxy_options(provider));
  g.set_clock(1000);
  auto claimed = g.claim("tenant-a", "task-a", "region-a", 100000);
  auto c = g.client();
  Write w;
  w.grant = grant_token(claimed);
  w.key = "op-1";
  w.body = booking_body("slot-1");

  Write no_grant = w;
  no_grant.grant.clear();
  check_problem(send(c, no_grant), 400, "invalid_grant");
  Write garbled = w;
  garbled.grant = "not-a-grant";
  check_problem(send(c, garbled), 400, "invalid_grant");
  Write no_key = w;
  no_key.key.clear();
  check_problem(send(c, no_key), 400, "missing_idempotency_key");
  Write bad_version = w;
  bad_version.expected_version.reset();
  check_problem(send(c, bad_version, {{"Expected-Version", "-1"}}), 400, "invalid_request");
  // Not an agent's attempt: no audit row for a caller who did not authenticate.
  Write anonymous = w;
  anonymous.agent.clear();
  check_problem(send(c, anonymous), 401, "unauthenticated");

  auto page = c.get("/v1/admin/rejections?tenant=tenant-a&task=task-a", operator_token);
  REQUIRE(page.status == 200);
  const auto rows = page.json()["rejections"];
  REQUIRE(rows.size() == 4);
  for (const auto& row : rows) {
    CHECK(row["method"] == "POST");
    CHECK(row["provider"] == "booking");
    CHECK(row["target"] == "/bookings");
    CHECK(row["fingerprint"].is_null());  // never computed: the request stopped before
    CHECK(row["request_id"].is_string());
    CHECK(row["authority_ms"] == 1000);
  }
  // Newest first.
  CHECK(rows[3]["code"] == "invalid_grant");
  CHECK(rows[3]["owner"].is_null());
  CHECK(rows[2]["code"] == "invalid_grant");
  CHECK(rows[2]["owner"].is_null());
  CHECK(rows[1]["code"] == "missing_idempotency_key");
  CHECK(rows[1]["owner"] == "region-a");
  CHECK(rows[1]["epoch"] == claimed["grant"]["epoch"]);
  CHECK(rows[1]["operation"].is_null());
  CHECK(rows[0]["code"] == "invalid_request");
  CHECK(rows[0]["operation"] == "op-1");
  CHECK(rows[0]["expected_version"].is_null());
  CHECK(provider.requests().empty());
}

TEST_CASE("revoke ends a lease now, and rotate-realm voids every outstanding grant") {
  ProviderProcess provider;
  Gateway g(proxy_options(provider));
  g.set_clock(1000);
  auto c = g.client();
  Write w;
  w.grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 1'000'000'000));  // a very long lease
  w.key = "op-1";
  w.body = booking_body("slot-1");

  check_problem(c.post_json("/v1/admin/tasks/tenant-a/task-a/revoke", nlohmann::json::object(), agent_a), 403,
                "forbidden");
  auto revoked = c.post_json("/v1/admin/tasks/tenant-a/task-a/revoke", nlohmann::json::object(), operator_token);
  REQUIRE(revoked.status == 200);
  CHECK(revoked.code() == "revoked");
  CHECK(revoked.json()["revoked"]["owner"] == "region-a");
  CHECK(revoked.json()["expires_at_ms"] == 1000);
  check_problem(send(c, w), 409, "expired_owner");
  check_problem(c.post_json("/v1/admin/tasks/tenant-a/task-a/revoke", nlohmann::json::object(), operator_token), 404,
                "not_found");

  Write other = w;
  other.task = "task-b";
  other.grant = grant_token(g.claim("tenant-a", "task-b", "region-a", 1'000'000));
  check_problem(c.post_json("/v1/admin/authority/rotate-realm", nlohmann::json::object(), agent_a), 403, "forbidden");
  auto rotated = c.post_json("/v1/admin/authority/rotate-realm", nlohmann::json::object(), operator_token);
  REQUIRE(rotated.status == 200);
  CHECK(rotated.json()["realm"] != rotated.json()["previous_realm"]);
  check_problem(send(c, other), 409, "authority_generation_mismatch");
  // A new claim lives in the new realm, with a larger epoch, and writes.
  auto fresh = g.claim("tenant-a", "task-b", "region-b", 1'000'000);
  CHECK(fresh["grant"]["realm"] == rotated.json()["realm"]);
  other.grant = grant_token(fresh);
  CHECK(send(c, other).header("Gateway-Status") == "committed");
  CHECK(provider.effect_count() == 1);
}
