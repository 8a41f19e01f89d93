// The demo provider's control API and core switches without sockets:
// provider_core plus handle_control, as the server drives them.
#include "control_api.hpp"
#include "provider_core.hpp"
#include "provider_core_fixture.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace demo_provider;
using namespace demo_provider::test;
using nlohmann::json;

namespace {

plain_request control(const std::string& method, const std::string& target, const std::string& body = {}) {
  return plain_request{method, target, {}, body};
}

json call(provider_core& core, const std::string& method, const std::string& target, const std::string& body = {},
          unsigned expected_status = 200) {
  const plain_reply r = handle_control(control(method, target, body), core);
  CHECK_MESSAGE(r.status == expected_status, r.body);
  return json::parse(r.body);
}

}  // namespace

TEST_CASE("control: reply_status answers the status and Retry-After without executing, then runs out") {
  provider_core core({});
  call(core, "POST", "/__test/faults", R"({"mode":"reply_status","status":429,"retry_after":"3","count":1})");
  const plain_reply refused = serve(core, booking("s1", "k1"));
  CHECK(refused.status == 429);
  CHECK(refused.headers == header_list{{"Retry-After", "3"}});
  CHECK(call(core, "GET", "/__test/effects") == json{{"effects", 0}, {"by_key", json::object()}});
  CHECK(call(core, "GET", "/__test/faults")["mode"] == "none");

  // Not remembered under the key either: the retry executes.
  const plain_reply retried = serve(core, booking("s1", "k1"));
  CHECK(retried.status == 201);
  CHECK(call(core, "GET", "/__test/effects")["by_key"] == json{{"k1", 1}});
  CHECK(call(core, "GET", "/__test/requests")["requests"].size() == 2);
}

TEST_CASE("control: error_5xx answers 503 without executing") {
  provider_core core({});
  call(core, "POST", "/__test/faults", R"({"mode":"error_5xx","count":1})");
  CHECK(serve(core, booking("s1", "k1")).status == 503);
  CHECK(call(core, "GET", "/__test/effects")["effects"] == 0);
}

TEST_CASE("control: release wakes held requests, its reply counts them, bad bodies are refused") {
  provider_core core({});
  call(core, "POST", "/__test/faults", R"({"mode":"hold","count":2})");
  std::vector<hold_end> woken;
  for (int i = 0; i < 2; ++i) {
    core.record(booking("s" + std::to_string(i), "k"));
    REQUIRE(core.faults().take().mode == fault_mode::hold);
    core.holds().park([&](hold_end how) { woken.push_back(how); });
  }
  CHECK(core.faults().take().mode == fault_mode::none);  // the count ran out
  CHECK(call(core, "GET", "/__test/activity") == json{{"in_progress", 2}, {"held", 2}});

  call(core, "POST", "/__test/release", R"({"count":0})", 400);
  call(core, "POST", "/__test/release", R"({"count":-1})", 400);
  call(core, "POST", "/__test/release", R"({"count":"1"})", 400);
  call(core, "POST", "/__test/release", R"([1])", 400);
  call(core, "POST", "/__test/release", "{", 400);
  CHECK(woken.empty());

  CHECK(call(core, "POST", "/__test/release", R"({"count":1})") == json{{"released", 1}, {"held", 1}});
  CHECK(woken == std::vector<hold_end>{hold_end::released});
  CHECK(call(core, "POST", "/__test/release") == json{{"released", 1}, {"held", 0}});
  CHECK(woken == std::vector<hold_end>{hold_end::released, hold_end::released});
  // Held counts only what waits; in progress lasts until each is answered.
  CHECK(call(core, "GET", "/__test/activity") == json{{"in_progress", 2}, {"held", 0}});
  core.finished();
  core.finished();
  CHECK(call(core, "GET", "/__test/activity") == json{{"in_progress", 0}, {"held", 0}});
}

TEST_CASE("control: reset cancels held requests and keeps counting those in progress") {
  provider_core core({});
  std::vector<hold_end> woken;
  core.record(booking("s1", "k1"));
  core.holds().park([&](hold_end how) { woken.push_back(how); });
  call(core, "POST", "/__test/reset", "{}");
  CHECK(woken == std::vector<hold_end>{hold_end::cancelled});
  CHECK(call(core, "GET", "/__test/activity") == json{{"in_progress", 1}, {"held", 0}});
  CHECK(call(core, "GET", "/__test/requests")["requests"].empty());
}

TEST_CASE("control: reply_headers are added to every business reply, in order, duplicates kept") {
  provider_core core({});
  const json headers = json::array({json::array({"Set-Cookie", "a=1"}), json::array({"Set-Cookie", "b=2"}),
                                    json::array({"X-Provider-Trace", "t-1"}),
                                    json::array({"Date", "Tue, 01 Dec 2026 09:00:00 GMT"})});
  CHECK(call(core, "POST", "/__test/reply_headers", json{{"headers", headers}}.dump()) == json{{"headers", headers}});
  CHECK(call(core, "GET", "/__test/reply_headers") == json{{"headers", headers}});

  const header_list expected{{"Set-Cookie", "a=1"}, {"Set-Cookie", "b=2"}, {"X-Provider-Trace", "t-1"},
                             {"Date", "Tue, 01 Dec 2026 09:00:00 GMT"}};
  CHECK(serve(core, booking("s1", "k1")).headers == expected);
  // Also on a replay and on an injected status, after the reply's own headers.
  header_list replayed{{"Idempotent-Replayed", "true"}};
  replayed.insert(replayed.end(), expected.begin(), expected.end());
  CHECK(serve(core, booking("s1", "k1")).headers == replayed);
  call(core, "POST", "/__test/faults", R"({"mode":"reply_status","status":408,"count":1})");
  CHECK(serve(core, booking("s2", "k2")).headers == expected);

  call(core, "POST", "/__test/reply_headers", R"({"headers":[]})");
  CHECK(serve(core, booking("s3", "k3")).headers.empty());
}

TEST_CASE("control: reply_headers values given as hex carry bytes 0x80-0xFF, and are reported back as hex") {
  provider_core core({});
  const json headers = json::array({json::array({"X-Latin1", json{{"hex", "636166e9"}}}),
                                    json::array({"X-Plain", "p"})});
  CHECK(call(core, "POST", "/__test/reply_headers", json{{"headers", headers}}.dump()) == json{{"headers", headers}});
  CHECK(serve(core, booking("s1", "k1")).headers == header_list{{"X-Latin1", "caf\xe9"}, {"X-Plain", "p"}});
  for (const char* bad : {R"({"headers":[["X-A",{"hex":"0d0a"}]]})", R"({"headers":[["X-A",{"hex":"6"}]]})",
                          R"({"headers":[["X-A",{"hex":"ZZ"}]]})", R"({"headers":[["X-A",{"hex":""}]]})",
                          R"({"headers":[["X-A",{"bytes":"61"}]]})"}) {
    CAPTURE(bad);
    const json r = call(core, "POST", "/__test/reply_headers", bad, 400);
    CHECK(r["error"] == "invalid_reply_headers");
    CHECK(core.reply_headers().size() == 2);
  }
}

TEST_CASE("control: bad reply_headers bodies are refused with the reason and change nothing") {
  const std::pair<const char*, const char*> cases[] = {
      {R"([])", "the body must be a JSON object"},
      {R"({"headers":{}})", "headers must be an array of [name, value] pairs"},
      {R"({"headers":[["X-A"]]})", "each header must be a [name, value] pair of strings"},
      {R"({"headers":[["X-A",1]]})", "each header must be a [name, value] pair of strings"},
      {R"({"headers":[["X A","v"]]})", "header name 'X A' is not an HTTP token"},
      {R"({"headers":[["","v"]]})", "header name '' is not an HTTP token"},
      {R"({"headers":[["content-length","1"]]})", "header content-length is set by the server itself"},
      {R"({"headers":[["Connection","close"]]})", "header Connection is set by the server itself"},
      {"{\"headers\":[[\"X-A\",\"v\\r\\nX-B: 1\"]]}", "the value of X-A must be non-empty visible ASCII"},
      {R"({"headers":[["X-A",""]]})", "the value of X-A must be non-empty visible ASCII"},
  };
  for (const auto& [body, reason] : cases) {
    CAPTURE(body);
    provider_core core({});
    call(core, "POST", "/__test/reply_headers", R"({"headers":[["X-Keep","1"]]})");
    const json r = call(core, "POST", "/__test/reply_headers", body, 400);
    CHECK(r == json{{"error", "invalid_reply_headers"}, {"detail", reason}});
    CHECK(core.reply_headers() == header_list{{"X-Keep", "1"}});
  }
}

TEST_CASE("control: a bad fault body is 400 invalid_fault with the reason") {
  provider_core core({});
  CHECK(call(core, "POST", "/__test/faults", R"({"mode":"hold","count":0})", 400) ==
        json{{"error", "invalid_fault"}, {"detail", "count must be an integer >= 1"}});
  CHECK(call(core, "POST", "/__test/faults", "not json", 400) == json{{"error", "invalid_json"}});
}

TEST_CASE("control: routes and methods") {
  provider_core core({});
  for (const char* path : {"/__test/requests", "/__test/effects", "/__test/activity"}) {
    CAPTURE(path);
    call(core, "POST", path, "{}", 405);
  }
  call(core, "GET", "/__test/release", {}, 405);
  call(core, "GET", "/__test/reset", {}, 405);
  call(core, "DELETE", "/__test/reply_headers", {}, 405);
  call(core, "GET", "/__test/nope", {}, 404);
}

TEST_CASE("business: HEAD reads like GET without executing, PUT and PATCH change the customer") {
  provider_core core({});
  REQUIRE(serve(core, booking("s1", "k1")).status == 201);
  const plain_reply get = serve(core, plain_request{"GET", "/bookings/bk_1", {}, {}});
  const plain_reply head = serve(core, plain_request{"HEAD", "/bookings/bk_1", {}, {}});
  CHECK(head.status == 200);
  CHECK(head.body == get.body);  // the server sends its length, not the bytes
  CHECK(call(core, "GET", "/__test/effects")["effects"] == 1);

  for (const char* method : {"PUT", "PATCH"}) {
    CAPTURE(method);
    const plain_reply r = serve(core, plain_request{method, "/bookings/bk_1", {{"Idempotency-Key", method}},
                                                    json{{"customer", method}}.dump()});
    CHECK(r.status == 200);
    CHECK(json::parse(r.body)["customer"] == method);
  }
  CHECK(call(core, "GET", "/__test/effects")["by_key"] == json{{"k1", 1}, {"PUT", 1}, {"PATCH", 1}});
  CHECK(serve(core, plain_request{"PATCH", "/bookings/bk_9", {}, R"({"customer":"x"})"}).status == 404);
}
