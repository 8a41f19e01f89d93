#include "core/digest.hpp"
#include "core/fingerprint.hpp"
#include "core/outcome.hpp"

#include <doctest/doctest.h>

using namespace gw;

TEST_CASE("classify_outcome: spec section 3's table with default rules") {
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
      // The edges of every default range, and the statuses just outside them.
      {true, 100, OperationState::unknown},       {true, 101, OperationState::unknown},
      {true, 199, OperationState::unknown},       {true, 300, OperationState::unknown},
      {true, 399, OperationState::unknown},       {true, 407, OperationState::rejected},
      {true, 410, OperationState::rejected},      {true, 428, OperationState::rejected},
      {true, 430, OperationState::rejected},      {true, 499, OperationState::rejected},
      {true, 599, OperationState::unknown},       {true, 600, OperationState::unknown},
      {true, 999, OperationState::unknown},       {true, 0, OperationState::unknown},
      // A status says the request was read, whatever the socket counted.
      {false, 201, OperationState::succeeded},    {false, 409, OperationState::rejected},
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

// Known answers computed outside the project: tests/vectors/known_answers.py
// derives them with Python's hashlib from the documented framing alone.
// Fingerprints and upstream keys are stored with every operation and sent to
// providers: a change here breaks exact retries and provider de-duplication
// of everything recorded before an upgrade, so these values never change.
TEST_CASE("payload fingerprint: known-answer vectors") {
  CHECK(to_hex(payload_fingerprint({"POST", "booking", "/bookings?x=1", 0, R"({"slot":"a"})"})) ==
        "e22749abc62547abf756953f5b60b9711620e9435ffca2a4fd1ec102c3573779");
  CHECK(to_hex(payload_fingerprint({"DELETE", "crm", "/contacts/7", 9223372036854775807LL, ""})) ==
        "efc15d915f5165f94ad3f6302f297789fa5081d8ed6a4a59a056f00da7529570");
  std::string every_byte;
  for (int b = 0; b < 256; ++b) every_byte += static_cast<char>(b);
  CHECK(to_hex(payload_fingerprint({"PUT", "booking", "/b", 42, every_byte})) ==
        "5495a6832f835db5df811e136f6224f4963032e26bfaf1bc8168e6f26ad39f3f");
}

TEST_CASE("upstream idempotency key: known-answer vectors") {
  // "gw1-" + unpadded base64url of SHA-256 over the same framing.
  CHECK(upstream_idempotency_key("tenant-a", "task-a", "op-1") == "gw1-ERufnr0CkJVT8gT92m4nfw7BMv2cWn-fQFnXTGjrbxo");
  CHECK(upstream_idempotency_key("tenant-b", "trip-42", "book-slot-9am") ==
        "gw1-b7KNTIOlFFZRB6MLNS444TzGnM5N1ehVxoitmyB6Vcg");
}

TEST_CASE("upstream idempotency key is stable and scoped per tenant and task") {
  auto k = upstream_idempotency_key("tenant-a", "task-a", "op-1");
  CHECK(k == upstream_idempotency_key("tenant-a", "task-a", "op-1"));
  CHECK(k != upstream_idempotency_key("tenant-b", "task-a", "op-1"));
  CHECK(k != upstream_idempotency_key("tenant-a", "task-b", "op-1"));
  CHECK(k != upstream_idempotency_key("tenant-a", "task-a", "op-2"));
  CHECK(k.rfind("gw1-", 0) == 0);
}
