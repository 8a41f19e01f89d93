// What a webhook body says by a provider's rules: the key, the outcome
// value and its meaning, and why a body is unparsable.
#include "core/webhook_match.hpp"

#include <doctest/doctest.h>

using namespace gw;

namespace {

WebhookRules demo_rules() {
  WebhookRules r;
  r.key_pointer = "/idempotency_key";
  r.outcome_pointer = "/status";
  r.outcomes = {{"200", OperationState::succeeded},
                {"201", OperationState::succeeded},
                {"409", OperationState::rejected},
                {"declined", OperationState::rejected},
                {"true", OperationState::not_executed}};
  return r;
}

}  // namespace

TEST_CASE("webhook match: key and mapped outcome from the configured pointers") {
  auto r = read_webhook(R"({"type":"operation.settled","idempotency_key":"gw1-abc","state":"executed","status":201})",
                        demo_rules());
  CHECK(r.parse == WebhookParse::parsed);
  CHECK(r.upstream_key == "gw1-abc");
  CHECK(r.outcome == "201");
  CHECK(r.mapped == OperationState::succeeded);

  CHECK(read_webhook(R"({"idempotency_key":"k","status":409})", demo_rules()).mapped == OperationState::rejected);
  CHECK(read_webhook(R"({"idempotency_key":"k","status":"declined"})", demo_rules()).mapped ==
        OperationState::rejected);
  CHECK(read_webhook(R"({"idempotency_key":"k","status":true})", demo_rules()).mapped == OperationState::not_executed);
}

TEST_CASE("webhook match: nested pointers and escaped member names") {
  WebhookRules rules;
  rules.key_pointer = "/data/request/idempotency~1key";
  rules.outcome_pointer = "/data/results/0/state~0x";
  rules.outcomes = {{"done", OperationState::succeeded}};
  auto r = read_webhook(R"({"data":{"request":{"idempotency/key":"gw1-n"},"results":[{"state~x":"done"}]}})", rules);
  CHECK(r.parse == WebhookParse::parsed);
  CHECK(r.upstream_key == "gw1-n");
  CHECK(r.mapped == OperationState::succeeded);
}

TEST_CASE("webhook match: an outcome value not in the table, or absent, resolves nothing but is parsed") {
  auto unlisted = read_webhook(R"({"idempotency_key":"k","status":500})", demo_rules());
  CHECK(unlisted.parse == WebhookParse::parsed);
  CHECK(unlisted.outcome == "500");
  CHECK_FALSE(unlisted.mapped);
  CHECK(unlisted.detail.find("resolves nothing") != std::string::npos);

  // Values are compared as text exactly: "201" the string equals 201 the number; 201.0 is neither.
  CHECK(read_webhook(R"({"idempotency_key":"k","status":"201"})", demo_rules()).mapped == OperationState::succeeded);
  CHECK_FALSE(read_webhook(R"({"idempotency_key":"k","status":201.0})", demo_rules()).outcome);
  CHECK_FALSE(read_webhook(R"({"idempotency_key":"k","status":"Declined"})", demo_rules()).mapped);

  for (const char* body : {R"({"idempotency_key":"k"})", R"({"idempotency_key":"k","status":null})",
                           R"({"idempotency_key":"k","status":{"code":201}})",
                           R"({"idempotency_key":"k","status":[201]})"}) {
    CAPTURE(body);
    auto r = read_webhook(body, demo_rules());
    CHECK(r.parse == WebhookParse::parsed);
    CHECK_FALSE(r.outcome);
    CHECK_FALSE(r.mapped);
  }

  WebhookRules no_outcome = demo_rules();
  no_outcome.outcome_pointer.reset();
  auto r = read_webhook(R"({"idempotency_key":"k","status":201})", no_outcome);
  CHECK(r.parse == WebhookParse::parsed);
  CHECK_FALSE(r.outcome);
  CHECK_FALSE(r.mapped);
}

TEST_CASE("webhook match: no JSON, or no non-empty string key, is unparsable") {
  for (const char* body : {"", "not json", R"({"idempotency_key":"k")", R"({"status":201})",
                           R"({"idempotency_key":"","status":201})", R"({"idempotency_key":42,"status":201})",
                           R"({"idempotency_key":null})", R"(["idempotency_key"])", R"("gw1-abc")"}) {
    CAPTURE(body);
    auto r = read_webhook(body, demo_rules());
    CHECK(r.parse == WebhookParse::unparsable);
    CHECK(r.upstream_key.empty());
    CHECK_FALSE(r.detail.empty());
  }
  // What the body said about the outcome is still read, for operators.
  auto keyless = read_webhook(R"({"status":201})", demo_rules());
  CHECK(keyless.parse == WebhookParse::unparsable);
  CHECK(keyless.outcome == "201");
  CHECK(keyless.detail.find("/idempotency_key") != std::string::npos);
  // A pointer through a value that is not a container is "nothing there", not an error.
  WebhookRules deep = demo_rules();
  deep.key_pointer = "/idempotency_key/0";
  CHECK(read_webhook(R"({"idempotency_key":"k"})", deep).parse == WebhookParse::unparsable);
  deep.key_pointer = "/list/x";
  CHECK(read_webhook(R"({"list":["k"]})", deep).parse == WebhookParse::unparsable);
}

TEST_CASE("webhook match: member pointers and webhook outcomes") {
  CHECK(is_member_pointer("/a"));
  CHECK(is_member_pointer("/a/0/b~0~1"));
  CHECK(is_member_pointer("/"));  // the member named ""
  CHECK_FALSE(is_member_pointer(""));
  CHECK_FALSE(is_member_pointer("a/b"));
  CHECK_FALSE(is_member_pointer("/a~"));
  CHECK_FALSE(is_member_pointer("/a~2"));

  CHECK(parse_webhook_outcome("succeeded") == OperationState::succeeded);
  CHECK(parse_webhook_outcome("rejected") == OperationState::rejected);
  CHECK(parse_webhook_outcome("not_executed") == OperationState::not_executed);
  CHECK_FALSE(parse_webhook_outcome("unknown"));
  CHECK_FALSE(parse_webhook_outcome("in_flight"));
  CHECK_FALSE(parse_webhook_outcome("Succeeded"));
}
