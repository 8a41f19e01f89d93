// tools/gatewayctl/render.hpp: each reply kind as text, exactly, and the
// shapes refused as bad replies.
#include "gatewayctl/render.hpp"

#include <doctest/doctest.h>

using namespace gwctl;

namespace {

Json held_row(const char* task, const char* state, const char* reason, std::int64_t since, std::int64_t for_ms) {
  return Json{{"tenant", "tenant-a"},  {"task", task},         {"operation", std::string("op-") + task},
              {"state", state},        {"reason", reason},     {"provider", "booking"},
              {"method", "POST"},      {"target", "/bookings"}, {"upstream_key", std::string("gw1-") + task},
              {"attempts", 1},         {"held_since_ms", since}, {"held_for_ms", for_ms},
              {"forward_deadline_ms", nullptr}};
}

Json operation() {
  return Json::parse(R"({
    "tenant": "tenant-a", "task": "trip-42", "id": "book-9am", "state": "unknown",
    "held_reason": "outcome_unknown", "method": "POST", "provider": "booking", "target": "/bookings",
    "fingerprint": "f00d", "expected_version": 3, "committed_version": null, "upstream_key": "gw1-abc",
    "response": null,
    "attempts": [{"attempt": 1, "realm": "r1", "owner": "region-eu", "epoch": 7, "admitted_ms": 1764547200000,
                  "outcome": "unknown", "outcome_ms": 1764547201500, "upstream_status": 503,
                  "detail": "provider answered 503"}],
    "evidence": []})");
}

}  // namespace

TEST_CASE("held: one aligned row per operation, durations and UTC times") {
  Json rows = Json::array({held_row("task-1", "unknown", "outcome_unknown", 1764547200000, 252000),
                           held_row("task-22", "in_flight", "forwarding", 1764547440000, 12000)});
  CHECK(render_held(rows) ==
        "TENANT    TASK     OPERATION   STATE      REASON           HELD_FOR  HELD_SINCE                PROVIDER  "
        "REQUEST         ATTEMPTS  UPSTREAM_KEY\n"
        "tenant-a  task-1   op-task-1   unknown    outcome_unknown  4m12s     2025-12-01T00:00:00.000Z  booking   "
        "POST /bookings  1         gw1-task-1\n"
        "tenant-a  task-22  op-task-22  in_flight  forwarding       12s       2025-12-01T00:04:00.000Z  booking   "
        "POST /bookings  1         gw1-task-22\n");
  CHECK(render_held(Json::array()) == "no held operations\n");
}

TEST_CASE("held: integers as the parser reads them from text (unsigned when not negative)") {
  auto rows = Json::parse(R"([{"held_since_ms": 1764547200000, "held_for_ms": 252000},
                              {"held_since_ms": -1, "held_for_ms": -5},
                              {"held_since_ms": 18446744073709551615, "held_for_ms": 0}])");
  const auto text = render_held(rows);
  CHECK(text.find("4m12s     2025-12-01T00:00:00.000Z") != std::string::npos);
  CHECK(text.find("-5ms      1969-12-31T23:59:59.999Z") != std::string::npos);
  CHECK(text.find("0ms       18446744073709551615") != std::string::npos);  // past int64: the number itself
}

TEST_CASE("held: absent or null members show '-', other types their JSON, control bytes escaped") {
  Json rows = Json::array({Json{{"tenant", "t"}, {"task", nullptr}, {"attempts", "two"}, {"held_for_ms", 1.5},
                                {"target", "/x\x1b[2J"}}});
  const auto text = render_held(rows);
  CHECK(text.find("t       -     -") != std::string::npos);
  CHECK(text.find("1.5") != std::string::npos);
  CHECK(text.find("\"two\"") == std::string::npos);  // a string is shown as text
  CHECK(text.find("two") != std::string::npos);
  CHECK(text.find("- /x\\x1b[2J") != std::string::npos);
  CHECK(text.find('\x1b') == std::string::npos);
}

TEST_CASE("rejections: what each refused attempt presented") {
  Json rows = Json::array({Json{{"tenant", "tenant-a"}, {"task", "trip-42"}, {"operation", "book-10am"},
                                {"realm", "r1"}, {"owner", "region-eu"}, {"epoch", 1}, {"code", "stale_owner"},
                                {"method", "POST"}, {"provider", "booking"}, {"target", "/bookings"},
                                {"fingerprint", "ff"}, {"authority_ms", 1764547200000}}});
  CHECK(render_rejections(rows) ==
        "AT                        TENANT    TASK     OPERATION  CODE         OWNER      EPOCH  REALM  PROVIDER  "
        "REQUEST\n"
        "2025-12-01T00:00:00.000Z  tenant-a  trip-42  book-10am  stale_owner  region-eu  1      r1     booking   "
        "POST /bookings\n");
  CHECK(render_rejections(Json::array()) == "no rejections\n");
}

TEST_CASE("show: the operation, its attempts, its evidence") {
  CHECK(render_operation(operation()) ==
        "tenant             tenant-a\n"
        "task               trip-42\n"
        "operation          book-9am\n"
        "state              unknown\n"
        "held_reason        outcome_unknown\n"
        "provider           booking\n"
        "request            POST /bookings\n"
        "fingerprint        f00d\n"
        "expected_version   3\n"
        "committed_version  -\n"
        "upstream_key       gw1-abc\n"
        "response           -\n"
        "\n"
        "attempts (1):\n"
        "ATTEMPT  ADMITTED                  OWNER      EPOCH  REALM  OUTCOME  OUTCOME_AT                "
        "UPSTREAM_STATUS  DETAIL\n"
        "1        2025-12-01T00:00:00.000Z  region-eu  7      r1     unknown  2025-12-01T00:00:01.500Z  "
        "503              provider answered 503\n"
        "\n"
        "evidence: none\n");

  auto settled = operation();
  settled["state"] = "succeeded";
  settled["response"] = Json{{"status", 201}, {"sha256", "abcd"}, {"length", 57}};
  settled["evidence"] = Json::array({Json{{"id", 4}, {"source", "operator"}, {"outcome", "succeeded"},
                                          {"upstream_status", nullptr}, {"detail", "seen in the provider console"},
                                          {"sha256", nullptr}, {"length", nullptr}, {"reference", "INC-7"},
                                          {"actor", "ops"}, {"recorded_ms", 1764547260000}}});
  const auto text = render_operation(settled);
  CHECK(text.find("response           201, 57 bytes, sha256 abcd\n") != std::string::npos);
  CHECK(text.find("evidence (1):\n"
                  "ID  RECORDED                  REPEATED  LAST  SOURCE    OUTCOME    UPSTREAM_STATUS  ACTOR  "
                  "REFERENCE  DETAIL\n"
                  "4   2025-12-01T00:01:00.000Z  -         -     operator  succeeded  -                ops    "
                  "INC-7      seen in the provider console\n") != std::string::npos);

  // A run of identical lookups, folded by the gateway: said 500 times, last at 08:19.
  auto held = operation();
  held["evidence"] = Json::array({Json{{"id", 9}, {"source", "lookup"}, {"outcome", nullptr},
                                       {"upstream_status", 500}, {"detail", "lookup answered 500"},
                                       {"reference", nullptr}, {"actor", nullptr}, {"recorded_ms", 1764547200000},
                                       {"count", 500}, {"last_id", 508}, {"last_recorded_ms", 1764577140000}}});
  const auto folded = render_operation(held);
  CHECK(folded.find("evidence (1):\n") != std::string::npos);
  CHECK(folded.find("9   2025-12-01T00:00:00.000Z  500x      2025-12-01T08:19:00.000Z  lookup") != std::string::npos);

  auto bad = operation();
  bad["attempts"] = "none";
  CHECK_THROWS_AS(render_operation(bad), BadReply);
}

TEST_CASE("reconcile: the lookup's decision above the operation") {
  Json reply{{"lookup", {{"status", 404}, {"decision", "held"}, {"outcome", nullptr},
                         {"detail", "not found; within the settle window"}}},
             {"operation", operation()},
             {"code", "ok"}};
  const auto text = render_reconcile(reply);
  CHECK(text.starts_with("lookup           held\n"
                         "provider_status  404\n"
                         "outcome          -\n"
                         "detail           not found; within the settle window\n"
                         "\n"
                         "tenant             tenant-a\n"));
  CHECK_THROWS_AS(render_reconcile(Json{{"operation", operation()}}), BadReply);
  CHECK_THROWS_AS(render_reconcile(Json{{"lookup", Json::object()}}), BadReply);
}

TEST_CASE("resolve, revoke, rotate-realm") {
  CHECK(render_resolve(Json{{"operation", operation()}, {"code", "resolved"}}) == render_operation(operation()));
  CHECK_THROWS_AS(render_resolve(Json{{"code", "resolved"}}), BadReply);

  Json revoked{{"revoked", {{"realm", "r1"}, {"owner", "region-eu"}, {"epoch", 7}}},
               {"expires_at_ms", 1764547200000},
               {"code", "revoked"}};
  CHECK(render_revoke(revoked) ==
        "revoked_owner  region-eu\n"
        "epoch          7\n"
        "realm          r1\n"
        "lease_ends     2025-12-01T00:00:00.000Z\n");
  CHECK_THROWS_AS(render_revoke(Json{{"code", "revoked"}}), BadReply);

  CHECK(render_rotate(Json{{"realm", "new"}, {"previous_realm", "old"}, {"code", "ok"}}) ==
        "realm           new\n"
        "previous_realm  old\n"
        "every grant of the previous realm is now refused (authority_generation_mismatch): agents claim again\n");
  CHECK_THROWS_AS(render_rotate(Json{{"code", "ok"}}), BadReply);
}

TEST_CASE("member_array and member_object name what is missing") {
  CHECK_THROWS_WITH_AS(member_array(Json{{"held", Json::object()}}, "held"), "the reply has no \"held\" array",
                       BadReply);
  CHECK_THROWS_WITH_AS(member_object(Json::array(), "operation"), "the reply has no \"operation\" object", BadReply);
  CHECK(member_array(Json{{"held", Json::array()}}, "held").empty());
}
