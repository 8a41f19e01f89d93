// Verified webhooks in the authority (spec section 4): the raw delivery is
// stored before anything parses it, once per (provider, webhook id); a
// delivery that names an operation of its provider becomes evidence with the
// body's digest; anything else is kept and listed for operators. Operation
// state is never changed here.
#include "store/store_fixture.hpp"

#include "core/digest.hpp"
#include "store/webhook_store.hpp"

#include <future>

using namespace gw;
using namespace gw::test;

namespace {


WebhookRules demo_rules() {
  WebhookRules r;
  r.key_pointer = "/idempotency_key";
  r.outcome_pointer = "/status";
  r.outcomes = {{"201", OperationState::succeeded}, {"409", OperationState::rejected}};
  return r;
}

std::string settled(const std::string& key, int status) {
  return R"({"type":"operation.settled","idempotency_key":")" + key + R"(","state":"executed","status":)" +
         std::to_string(status) + "}";
}

WebhookDelivery delivery(const std::string& id, const std::string& body, const std::string& provider = "booking") {
  return WebhookDelivery{provider, id, 1700000000, body};
}

// A claimed task with op-a admitted at the provider "booking" and its
// forward ended unknown: the held operation a webhook is meant to settle.
struct Held {
  Held() {
    grant = f.claim("tenant-a", "task-a", "region-a", 0, 1'000'000);
    f.at(10);
    auto a = f.ledger.admit(f.session, f.admission(grant, op_a));
    REQUIRE(a.decision.action == Admission::admit_new);
    attempt = a.attempt;
    key = a.upstream_key;
    OutcomeRecord unknown{{"tenant-a", "task-a"}, "op-a", attempt, OperationState::unknown, std::nullopt, "timeout"};
    REQUIRE(f.ledger.record_outcome(f.session, unknown, grant).recorded);
    f.at(50);
  }
  std::string count(const std::string& table, const std::string& where = "true") const {
    return f.db.scalar("SELECT count(*) FROM " + table + " WHERE " + where);
  }
  StoreFixture f;
  WebhookStore webhooks{f.clock};
  GrantToken grant;
  int attempt = 0;
  std::string key;
};

}  // namespace

TEST_CASE("webhook store: a matched delivery records evidence with the body, its digest, id and provider") {
  Held h;
  const std::string body = settled(h.key, 201);
  auto r = h.webhooks.accept(h.f.session, delivery("msg_1", body), demo_rules());
  REQUIRE(r.disposition == WebhookDisposition::matched);
  REQUIRE(r.match);
  CHECK(r.match->scope.tenant == "tenant-a");
  CHECK(r.match->scope.task == "task-a");
  CHECK(r.match->operation_id == "op-a");
  CHECK(r.match->attempt == h.attempt);
  CHECK(r.match->state_seen == OperationState::unknown);
  CHECK(r.match->outcome == OperationState::succeeded);

  const std::string ev = "operation_evidence WHERE source = 'webhook'";
  CHECK(h.count("operation_evidence", "source = 'webhook'") == "1");
  CHECK(h.f.db.scalar("SELECT id FROM " + ev) == std::to_string(r.match->evidence_id));
  CHECK(h.f.db.scalar("SELECT tenant || '/' || task || '/' || op_id || '/' || attempt FROM " + ev) ==
        "tenant-a/task-a/op-a/1");
  CHECK(h.f.db.scalar("SELECT outcome FROM " + ev) == "succeeded");
  CHECK(h.f.db.scalar("SELECT reference FROM " + ev) == "msg_1");
  CHECK(h.f.db.scalar("SELECT actor FROM " + ev) == "booking");
  CHECK(h.f.db.scalar("SELECT encode(response_sha256, 'hex') FROM " + ev) == sha256_hex(body));
  CHECK(h.f.db.scalar("SELECT response_length FROM " + ev) == std::to_string(body.size()));
  CHECK(h.f.db.scalar("SELECT convert_from(response_body, 'UTF8') FROM " + ev) == body);
  CHECK(h.f.db.scalar("SELECT recorded_ms FROM " + ev) == "50");
  CHECK(h.f.db.scalar("SELECT detail FROM " + ev).find("msg_1") != std::string::npos);

  CHECK(h.f.db.scalar("SELECT status FROM webhook_deliveries") == "matched");
  CHECK(h.f.db.scalar("SELECT evidence_id FROM webhook_deliveries") == std::to_string(r.match->evidence_id));
  CHECK(h.f.db.scalar("SELECT op_id || '/' || attempt FROM webhook_deliveries") == "op-a/1");
  CHECK(h.f.db.scalar("SELECT upstream_key FROM webhook_deliveries") == h.key);
  CHECK(h.f.db.scalar("SELECT outcome || '/' || mapped_outcome FROM webhook_deliveries") == "201/succeeded");
  CHECK(h.f.db.scalar("SELECT received_ms || '/' || processed_ms FROM webhook_deliveries") == "50/50");
  CHECK(h.f.db.scalar("SELECT webhook_timestamp FROM webhook_deliveries") == "1700000000");

  // Evidence only: resolving the operation is not this store's step.
  CHECK(h.f.db.scalar("SELECT state FROM operations") == "unknown");
  CHECK(h.f.db.scalar("SELECT open_op FROM task_ledger") == "op-a");
  CHECK(h.f.db.scalar("SELECT version FROM task_ledger") == "0");
  CHECK(h.webhooks.list_unmatched(h.f.session, std::nullopt, 10, std::nullopt).deliveries.empty());
}

TEST_CASE("webhook store: an outcome value outside the table matches but resolves nothing") {
  Held h;
  auto r = h.webhooks.accept(h.f.session, delivery("msg_1", settled(h.key, 500)), demo_rules());
  REQUIRE(r.disposition == WebhookDisposition::matched);
  CHECK_FALSE(r.match->outcome);
  CHECK(h.f.db.scalar("SELECT outcome IS NULL FROM operation_evidence WHERE source = 'webhook'") == "t");
  CHECK(h.f.db.scalar("SELECT outcome || '/' || coalesce(mapped_outcome, '-') FROM webhook_deliveries") == "500/-");
  CHECK(h.webhooks.accept(h.f.session, delivery("msg_2", settled(h.key, 409)), demo_rules()).match->outcome ==
        OperationState::rejected);
}

TEST_CASE("webhook store: a repeated webhook id is a duplicate and changes nothing") {
  Held h;
  const std::string first = settled(h.key, 201);
  REQUIRE(h.webhooks.accept(h.f.session, delivery("msg_1", first), demo_rules()).disposition ==
          WebhookDisposition::matched);
  const auto delivery_id = h.f.db.scalar("SELECT id FROM webhook_deliveries");
  h.f.at(60);
  // The same id again, even with another body (a different outcome): nothing changes.
  for (const auto& body : {first, settled(h.key, 409), std::string("not json")}) {
    auto again = h.webhooks.accept(h.f.session, delivery("msg_1", body), demo_rules());
    CHECK(again.disposition == WebhookDisposition::duplicate);
    CHECK_FALSE(again.match);
    CHECK(std::to_string(again.delivery_id) == delivery_id);
  }
  CHECK(h.count("webhook_deliveries") == "1");
  CHECK(h.count("operation_evidence", "source = 'webhook'") == "1");
  CHECK(h.f.db.scalar("SELECT convert_from(body, 'UTF8') FROM webhook_deliveries") == first);
  CHECK(h.f.db.scalar("SELECT received_ms || '/' || processed_ms FROM webhook_deliveries") == "50/50");
  CHECK(h.f.db.scalar("SELECT outcome FROM operation_evidence WHERE source = 'webhook'") == "succeeded");

  // The id is the provider's: another provider's delivery with the same id is its own.
  auto other = h.webhooks.accept(h.f.session, delivery("msg_1", first, "crm"), demo_rules());
  CHECK(other.disposition == WebhookDisposition::unmatched);
  CHECK(h.count("webhook_deliveries") == "2");
}

TEST_CASE("webhook store: a key no operation of the provider has is kept unmatched and listed") {
  Held h;
  auto r = h.webhooks.accept(h.f.session, delivery("msg_1", settled("gw1-nobody", 201)), demo_rules());
  CHECK(r.disposition == WebhookDisposition::unmatched);
  CHECK_FALSE(r.match);
  // The operation's key, but signed by another provider: not its evidence.
  auto crm = h.webhooks.accept(h.f.session, delivery("msg_2", settled(h.key, 201), "crm"), demo_rules());
  CHECK(crm.disposition == WebhookDisposition::unmatched);
  CHECK(h.count("operation_evidence", "source = 'webhook'") == "0");
  CHECK(h.count("webhook_deliveries", "status = 'unmatched'") == "2");

  auto page = h.webhooks.list_unmatched(h.f.session, std::nullopt, 10, std::nullopt);
  REQUIRE(page.deliveries.size() == 2);
  CHECK_FALSE(page.more);
  const auto& w = page.deliveries[0];
  CHECK(w.id == r.delivery_id);
  CHECK(w.provider == "booking");
  CHECK(w.webhook_id == "msg_1");
  CHECK(w.webhook_timestamp_s == 1700000000);
  CHECK(w.received_ms == 50);
  CHECK(w.status == "unmatched");
  CHECK(w.upstream_key == "gw1-nobody");
  CHECK(w.outcome == "201");
  CHECK(w.body == settled("gw1-nobody", 201));
  CHECK(w.body_sha256 == sha256_hex(w.body));
  CHECK(w.detail->find("gw1-nobody") != std::string::npos);
  CHECK(page.deliveries[1].provider == "crm");

  auto only_crm = h.webhooks.list_unmatched(h.f.session, std::string("crm"), 10, std::nullopt);
  REQUIRE(only_crm.deliveries.size() == 1);
  CHECK(only_crm.deliveries[0].webhook_id == "msg_2");
}

TEST_CASE("webhook store: an unparsable body is stored byte for byte before parsing, and listed") {
  Held h;
  const char raw[] = "\xff\0 not json at all\x01";
  const std::string body(raw, sizeof raw - 1);
  REQUIRE(body.size() == 19);
  auto r = h.webhooks.accept(h.f.session, delivery("msg_1", body), demo_rules());
  CHECK(r.disposition == WebhookDisposition::unparsable);
  CHECK(h.f.db.scalar("SELECT status FROM webhook_deliveries") == "unparsable");
  CHECK(h.f.db.scalar("SELECT encode(body, 'hex') FROM webhook_deliveries") == to_hex(body));
  CHECK(h.f.db.scalar("SELECT detail FROM webhook_deliveries") == "the body is not JSON, or has a member twice");
  // JSON without the key is unparsable too, with the outcome it did hold.
  CHECK(h.webhooks.accept(h.f.session, delivery("msg_2", R"({"status":201})"), demo_rules()).disposition ==
        WebhookDisposition::unparsable);
  CHECK(h.count("operation_evidence", "source = 'webhook'") == "0");

  auto page = h.webhooks.list_unmatched(h.f.session, std::string("booking"), 10, std::nullopt);
  REQUIRE(page.deliveries.size() == 2);
  CHECK(page.deliveries[0].status == "unparsable");
  CHECK(page.deliveries[0].body == body);
  CHECK_FALSE(page.deliveries[0].upstream_key);
  CHECK(page.deliveries[1].outcome == "201");
}

TEST_CASE("webhook store: a delivery whose matching step failed stays stored, listed, and its redelivery matches it") {
  Held h;
  const std::string body = settled(h.key, 201);
  // A real fault in the second step only: the evidence table is away.
  h.f.db.exec("ALTER TABLE operation_evidence RENAME TO operation_evidence_away");
  CHECK_THROWS(h.webhooks.accept(h.f.session, delivery("msg_1", body), demo_rules()));
  h.f.db.exec("ALTER TABLE operation_evidence_away RENAME TO operation_evidence");

  CHECK(h.f.db.scalar("SELECT status FROM webhook_deliveries WHERE webhook_id = 'msg_1'") == "received");
  CHECK(h.f.db.scalar("SELECT convert_from(body, 'UTF8') FROM webhook_deliveries") == body);
  auto page = h.webhooks.list_unmatched(h.f.session, std::nullopt, 10, std::nullopt);
  REQUIRE(page.deliveries.size() == 1);
  CHECK(page.deliveries[0].status == "received");

  // The provider delivers again: the stored delivery is matched, once.
  auto again = h.webhooks.accept(h.f.session, delivery("msg_1", body), demo_rules());
  CHECK(again.disposition == WebhookDisposition::matched);
  CHECK(h.count("operation_evidence", "source = 'webhook'") == "1");
  CHECK(h.webhooks.accept(h.f.session, delivery("msg_1", body), demo_rules()).disposition ==
        WebhookDisposition::duplicate);
  CHECK(h.count("webhook_deliveries") == "1");
  CHECK(h.count("operation_evidence", "source = 'webhook'") == "1");
}

TEST_CASE("webhook store: the listing pages in arrival order and leaves matched deliveries out") {
  Held h;
  for (int i = 0; i < 5; ++i) {
    const auto id = "msg_" + std::to_string(i);
    // msg_2 matches; the others name nobody.
    const auto key = i == 2 ? h.key : "gw1-nobody-" + std::to_string(i);
    h.webhooks.accept(h.f.session, delivery(id, settled(key, 201)), demo_rules());
  }
  auto first = h.webhooks.list_unmatched(h.f.session, std::nullopt, 2, std::nullopt);
  REQUIRE(first.deliveries.size() == 2);
  CHECK(first.more);
  REQUIRE(first.next);
  CHECK(first.deliveries[0].webhook_id == "msg_0");
  CHECK(first.deliveries[1].webhook_id == "msg_1");
  auto second = h.webhooks.list_unmatched(h.f.session, std::nullopt, 2, first.next);
  REQUIRE(second.deliveries.size() == 2);
  CHECK(second.deliveries[0].webhook_id == "msg_3");
  CHECK(second.deliveries[1].webhook_id == "msg_4");
  CHECK_FALSE(second.more);
  CHECK_FALSE(second.next);
  CHECK(h.webhooks.list_unmatched(h.f.session, std::string("crm"), 2, std::nullopt).deliveries.empty());
}

TEST_CASE("webhook store: concurrent deliveries of one webhook id are stored and matched exactly once") {
  Held h;
  const std::string body = settled(h.key, 201);
  constexpr int callers = 6;
  std::vector<std::future<WebhookDisposition>> deliveries;
  for (int i = 0; i < callers; ++i)
    deliveries.push_back(std::async(std::launch::async, [&] {
      Session own(h.f.session_options, no_failures());
      return h.webhooks.accept(own, delivery("msg_1", body), demo_rules()).disposition;
    }));
  int matched = 0, duplicate = 0;
  for (auto& d : deliveries) {
    const auto disposition = d.get();
    matched += disposition == WebhookDisposition::matched;
    duplicate += disposition == WebhookDisposition::duplicate;
  }
  CHECK(matched == 1);
  CHECK(duplicate == callers - 1);
  CHECK(h.count("webhook_deliveries") == "1");
  CHECK(h.count("operation_evidence", "source = 'webhook'") == "1");
}
