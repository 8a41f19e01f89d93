// The demo provider's fault plan as a table: every mode parses, bad bodies
// are refused with a reason (and change nothing), counts count down.
#include "fault_plan.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace demo_provider;
using nlohmann::json;

namespace {

std::optional<std::string> set(fault_plan& plan, const std::string& body) { return plan.set(json::parse(body)); }

}  // namespace

TEST_CASE("fault plan: every mode parses and is reported back by name") {
  for (const char* mode : {"none", "delay", "drop_after_execute", "late_reply", "error_5xx", "refuse", "hold"}) {
    CAPTURE(mode);
    fault_plan plan;
    CHECK(plan.set(json{{"mode", mode}}) == std::nullopt);
    CHECK(plan.to_json()["mode"] == mode);
  }
  fault_plan plan;
  CHECK(set(plan, R"({"mode":"reply_status","status":429,"retry_after":"7"})") == std::nullopt);
  CHECK(plan.to_json() == json{{"mode", "reply_status"}, {"delay_ms", 0}, {"count", nullptr},
                               {"status", 429}, {"retry_after", "7"}});
}

TEST_CASE("fault plan: take() hands out the mode with its parameters") {
  fault_plan plan;
  CHECK(plan.take().mode == fault_mode::none);
  REQUIRE(set(plan, R"({"mode":"delay","delay_ms":250})") == std::nullopt);
  const fault f = plan.take();
  CHECK(f.mode == fault_mode::delay);
  CHECK(f.delay == std::chrono::milliseconds(250));

  REQUIRE(set(plan, R"({"mode":"reply_status","status":408})") == std::nullopt);
  const fault s = plan.take();
  CHECK(s.mode == fault_mode::reply_status);
  CHECK(s.status == 408);
  CHECK(s.retry_after.empty());

  // refuse acts on the listener: requests that still get in see no fault.
  REQUIRE(set(plan, R"({"mode":"refuse"})") == std::nullopt);
  CHECK(plan.refusing());
  CHECK(plan.take().mode == fault_mode::none);
  CHECK(plan.refusing());
}

TEST_CASE("fault plan: count counts down to none, without count the fault stays") {
  fault_plan plan;
  REQUIRE(set(plan, R"({"mode":"hold","count":2})") == std::nullopt);
  CHECK(plan.to_json()["count"] == 2);
  CHECK(plan.take().mode == fault_mode::hold);
  CHECK(plan.to_json()["count"] == 1);
  CHECK(plan.take().mode == fault_mode::hold);
  CHECK(plan.to_json()["mode"] == "none");
  CHECK(plan.take().mode == fault_mode::none);

  REQUIRE(set(plan, R"({"mode":"error_5xx"})") == std::nullopt);
  for (int i = 0; i < 5; ++i) CHECK(plan.take().mode == fault_mode::error_5xx);
  CHECK(plan.to_json()["count"] == nullptr);
  plan.clear();
  CHECK(plan.take().mode == fault_mode::none);
}

TEST_CASE("fault plan: bad bodies are refused with the reason, and the plan is unchanged") {
  struct bad_case {
    const char* body;
    const char* reason;
  };
  const bad_case cases[] = {
      {R"([])", "the body must be a JSON object"},
      {R"({})", "mode must be a string"},
      {R"({"mode":7})", "mode must be a string"},
      {R"({"mode":"explode"})",
       "mode must be one of none, delay, drop_after_execute, late_reply, error_5xx, refuse, hold, reply_status, "
       "close_after_reply"},
      {R"({"mode":"delay","delay_ms":-1})", "delay_ms must be an integer from 0 to 86400000"},
      {R"({"mode":"delay","delay_ms":86400001})", "delay_ms must be an integer from 0 to 86400000"},
      {R"({"mode":"delay","delay_ms":1.5})", "delay_ms must be an integer from 0 to 86400000"},
      {R"({"mode":"delay","delay_ms":"5"})", "delay_ms must be an integer from 0 to 86400000"},
      {R"({"mode":"hold","count":0})", "count must be an integer >= 1"},
      {R"({"mode":"hold","count":true})", "count must be an integer >= 1"},
      {R"({"mode":"hold","count":18446744073709551615})", "count must be an integer >= 1"},
      {R"({"mode":"refuse","count":1})", "count does not apply to refuse"},
      {R"({"mode":"reply_status"})", "reply_status needs a status"},
      {R"({"mode":"reply_status","status":199})", "status must be an integer from 200 to 999"},
      {R"({"mode":"reply_status","status":1000})", "status must be an integer from 200 to 999"},
      {R"({"mode":"reply_status","status":"429"})", "status must be an integer from 200 to 999"},
      {R"({"mode":"hold","status":429})", "status applies only to reply_status"},
      {R"({"mode":"error_5xx","retry_after":"1"})", "retry_after applies only to reply_status"},
      {R"({"mode":"reply_status","status":429,"retry_after":""})",
       "retry_after must be a non-empty string of visible ASCII"},
      {R"({"mode":"reply_status","status":429,"retry_after":5})",
       "retry_after must be a non-empty string of visible ASCII"},
      {"{\"mode\":\"reply_status\",\"status\":429,\"retry_after\":\"1\\r\\nX-Evil: 1\"}",
       "retry_after must be a non-empty string of visible ASCII"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.body);
    fault_plan plan;
    REQUIRE(set(plan, R"({"mode":"delay","delay_ms":5,"count":3})") == std::nullopt);
    const json before = plan.to_json();
    CHECK(set(plan, c.body) == std::optional<std::string>(c.reason));
    CHECK(plan.to_json() == before);
  }
}

TEST_CASE("fault plan: the injected replies") {
  CHECK(injected_unavailable_reply().status == 503);
  fault f;
  f.mode = fault_mode::reply_status;
  f.status = 429;
  f.retry_after = "3";
  const plain_reply r = injected_status_reply(f);
  CHECK(r.status == 429);
  CHECK(json::parse(r.body) == json{{"error", "injected_status"}, {"status", 429}});
  CHECK(r.headers == header_list{{"Retry-After", "3"}});
  f.retry_after.clear();
  CHECK(injected_status_reply(f).headers.empty());
}
