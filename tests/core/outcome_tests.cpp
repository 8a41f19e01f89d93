#include "core/fingerprint.hpp"
#include "core/outcome.hpp"

#include <doctest/doctest.h>

using namespace gw;

TEST_CASE("classify_outcome: SPEC section 3's table with default rules") {
  const auto rules = OutcomeRules::defaults();
  struct Case {
    bool sent;
    std::optional<unsigned> status;
    OperationState expected;
  };
  const Case cases[] = {
      {true, 200, OperationState::succeeded},     {true, 201, OperationState::succeeded},
      {true, 299, OperationState::succeeded},     {true, 400, OperationState::rejected},
      {true, 409, OperationState::rejected},      {true, 422, OperationState::rejected},
      {true, 408, OperationState::not_executed},  {true, 429, OperationState::not_executed},
      {true, 500, OperationState::unknown},       {true, 503, OperationState::unknown},
      {true, 302, OperationState::unknown},       {true, std::nullopt, OperationState::unknown},
      {false, std::nullopt, OperationState::not_executed},
  };
  for (const auto& c : cases) {
    CAPTURE(c.status.value_or(0));
    CAPTURE(c.sent);
    CHECK(classify_outcome(rules, c.sent, c.status) == c.expected);
  }
}

TEST_CASE("classify_outcome: per-provider rules") {
  OutcomeRules rules{{{409, 409}}, {{503, 503}}};
  CHECK(classify_outcome(rules, true, 409) == OperationState::rejected);
  CHECK(classify_outcome(rules, true, 400) == OperationState::unknown);
  CHECK(classify_outcome(rules, true, 503) == OperationState::not_executed);
}

TEST_CASE("payload fingerprint covers each part and is framed") {
  PayloadParts base{"POST", "booking", "/bookings?x=1", 0, R"({"slot":"a"})"};
  auto fp = payload_fingerprint(base);
  CHECK(fp.size() == 32);
  CHECK(payload_fingerprint(base) == fp);
  auto changed = [&](auto edit) {
    auto p = base;
    edit(p);
    return payload_fingerprint(p) != fp;
  };
  CHECK(changed([](PayloadParts& p) { p.method = "PUT"; }));
  CHECK(changed([](PayloadParts& p) { p.provider = "crm"; }));
  CHECK(changed([](PayloadParts& p) { p.target = "/bookings?x=2"; }));
  CHECK(changed([](PayloadParts& p) { p.expected_version = 1; }));
  CHECK(changed([](PayloadParts& p) { p.body = R"({"slot":"b"})"; }));
  // Moving a byte across a boundary changes the fingerprint too.
  PayloadParts a{"POST", "b", "/x", 0, ""}, b{"POS", "Tb", "/x", 0, ""};
  CHECK(payload_fingerprint(a) != payload_fingerprint(b));
}

TEST_CASE("upstream idempotency key is stable and scoped per tenant and task") {
  auto k = upstream_idempotency_key("tenant-a", "task-a", "op-1");
  CHECK(k == upstream_idempotency_key("tenant-a", "task-a", "op-1"));
  CHECK(k != upstream_idempotency_key("tenant-b", "task-a", "op-1"));
  CHECK(k != upstream_idempotency_key("tenant-a", "task-b", "op-1"));
  CHECK(k != upstream_idempotency_key("tenant-a", "task-a", "op-2"));
  CHECK(k.rfind("gw1-", 0) == 0);
}
