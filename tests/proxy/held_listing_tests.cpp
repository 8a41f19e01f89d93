// GET /v1/admin/held (spec section 4): the held operations an operator must
// act on, made by real provider faults, listed oldest first with why each is
// held and for how long; filters, keyset pagination, operator tokens only.
#include "proxy/proxy_fixture.hpp"

#include <future>

using namespace gw;
using namespace gw::test;
using nlohmann::json;

namespace {

struct HeldListing {
  HeldListing() : c(rig.gateway.port()) {}

  // A write whose provider answers 5xx: unknown, held as outcome_unknown.
  void unknown_at(std::int64_t now, const std::string& tenant, const std::string& task) {
    rig.gateway.set_clock(now);
    Write w;
    w.tenant = tenant;
    w.task = task;
    w.grant = grant_token(rig.gateway.claim(tenant, task, "region-a", 1'000'000));
    w.key = "op-" + task;
    w.body = booking_body("slot-" + task);
    rig.provider.set_fault("error_5xx", 0, 1);
    check_problem(send(c, w), 504, "unknown_outcome");
  }

  Reply list(const std::string& query, const std::string& token = operator_token) {
    return c.get("/v1/admin/held" + (query.empty() ? "" : "?" + query), token);
  }
  std::vector<std::string> tasks(const std::string& query) {
    auto r = list(query);
    REQUIRE_MESSAGE(r.status == 200, r.body);
    const auto body = r.json();  // the rows must outlive the loop over them
    std::vector<std::string> out;
    for (const auto& row : body["held"]) out.push_back(row["task"].get<std::string>());
    return out;
  }

  ProxyRig rig;
  HttpClient c;
};

}  // namespace

TEST_CASE("admin held: every held operation, oldest first, with its reason, age and the provider's key") {
  HeldListing h;
  h.unknown_at(10, "tenant-a", "task-1");
  h.unknown_at(20, "tenant-a", "task-2");
  h.unknown_at(30, "tenant-c", "task-3");
  // One more held at the provider right now: in flight, being forwarded.
  h.rig.gateway.set_clock(35);
  Write w;
  w.task = "task-4";
  w.grant = grant_token(h.rig.gateway.claim("tenant-a", "task-4", "region-a", 1'000'000));
  w.key = "op-task-4";
  w.body = booking_body("slot-task-4");
  h.rig.provider.hold_next(1);
  auto upstream = std::async(std::launch::async, [&] {
    HttpClient own(h.rig.gateway.port());
    return send(own, w);
  });
  ReleaseOnExit release_on_failure(h.rig.provider);
  REQUIRE(h.rig.provider.wait_for_held(1));
  h.rig.gateway.set_clock(40);

  auto r = h.list("");
  REQUIRE_MESSAGE(r.status == 200, r.body);
  CHECK(r.code() == "ok");
  auto body = r.json();
  CHECK(body["now_ms"] == 40);
  CHECK(body["next_cursor"].is_null());
  REQUIRE(body["held"].size() == 4);
  const auto& first = body["held"][0];
  CHECK(first["tenant"] == "tenant-a");
  CHECK(first["task"] == "task-1");
  CHECK(first["operation"] == "op-task-1");
  CHECK(first["state"] == "unknown");
  CHECK(first["reason"] == "outcome_unknown");
  CHECK(first["provider"] == "booking");
  CHECK(first["method"] == "POST");
  CHECK(first["target"] == "/bookings");
  CHECK(first["attempts"] == 1);
  CHECK(first["upstream_key"] == upstream_key("tenant-a", "task-1", "op-task-1"));
  CHECK(first["held_since_ms"] == 10);
  CHECK(first["held_for_ms"] == 30);
  const auto& last = body["held"][3];
  CHECK(last["task"] == "task-4");
  CHECK(last["state"] == "in_flight");
  CHECK(last["reason"] == "forwarding");
  CHECK(last["held_for_ms"] == 5);
  CHECK(last["forward_deadline_ms"].get<std::int64_t>() > 40);

  using V = std::vector<std::string>;
  CHECK(h.tasks("tenant=tenant-c") == V{"task-3"});
  CHECK(h.tasks("task=task-2") == V{"task-2"});
  CHECK(h.tasks("tenant=tenant-a&task=task-3").empty());
  CHECK(h.tasks("state=in_flight") == V{"task-4"});
  CHECK(h.tasks("state=unknown") == V{"task-1", "task-2", "task-3"});
  CHECK(h.tasks("reason=outcome_unknown") == V{"task-1", "task-2", "task-3"});
  CHECK(h.tasks("reason=forward_abandoned").empty());
  CHECK(h.tasks("older_than_ms=20") == V{"task-1", "task-2"});  // held since 20 or earlier at 40
  CHECK(h.tasks("provider=booking").size() == 4);
  CHECK(h.tasks("provider=crm").empty());

  // Pages of one, each cursor taking up after the last row, none repeated.
  V walked;
  std::string query = "limit=1";
  for (int page = 0; page < 10; ++page) {
    auto p = h.list(query).json();
    REQUIRE(p["held"].size() == 1);
    walked.push_back(p["held"][0]["task"].get<std::string>());
    if (p["next_cursor"].is_null()) break;
    query = "limit=1&cursor=" + p["next_cursor"].get<std::string>();
  }
  CHECK(walked == V{"task-1", "task-2", "task-3", "task-4"});

  // Past its forward deadline, the in-flight one is abandoned even before a sweep.
  h.rig.gateway.set_clock(last["forward_deadline_ms"].get<std::int64_t>() + 1);
  auto abandoned = h.list("task=task-4").json()["held"];
  REQUIRE(abandoned.size() == 1);
  CHECK(abandoned[0]["reason"] == "forward_abandoned");

  CHECK(h.rig.provider.release() == 1);
  upstream.get();
}

TEST_CASE("admin held: operator tokens only, and every bad parameter is a clear 400 that lists nothing") {
  HeldListing h;
  h.unknown_at(10, "tenant-a", "task-1");
  check_problem(h.list("", agent_a), 403, "forbidden");
  check_problem(h.list("", ""), 401, "unauthenticated");
  check_problem(h.list("", "not-a-token"), 401, "unauthenticated");
  for (const char* bad : {"limit=0", "limit=501", "limit=ten", "limit=-1", "state=succeeded", "state=",
                          "reason=swept", "older_than_ms=-5", "older_than_ms=1.5", "cursor=%21%21",
                          "cursor=WzEsMl0", "tenant=has%20space", "task=", "owner=x", "limit=1&limit=2",
                          "tenant"}) {
    CAPTURE(bad);
    auto r = h.list(bad);
    check_problem(r, 400, "invalid_request");
    CHECK(r.body.find("task-1") == std::string::npos);
  }
  auto wrong = h.c.request("POST", "/v1/admin/held", {{"Authorization", "Bearer " + operator_token}});
  check_problem(wrong, 405, "method_not_allowed");
  CHECK(wrong.header("Allow") == "GET");
  CHECK(h.tasks("limit=500") == std::vector<std::string>{"task-1"});
}
