// The demo provider's echo switch: each form, its control route, and reset.
#include "control_api.hpp"
#include "echo.hpp"
#include "provider_core.hpp"
#include "provider_core_fixture.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace demo_provider;
using namespace demo_provider::test;
using nlohmann::json;

namespace {

const std::string echo_secret = "demo-provider-credential-5c1e0b7d9a";

plain_request echoed_booking() {
  auto request = booking("s1", "k1");
  request.headers.emplace_back("Authorization", "Bearer " + echo_secret);
  return request;
}

plain_reply echo_reply(const std::vector<echo_form>& forms) {
  plain_reply reply = json_reply(201, {{"booking_id", "bk_1"}});
  apply_echo(forms, echoed_booking(), reply);
  return reply;
}

std::vector<std::string> values_of(const plain_reply& r, const std::string& name) {
  std::vector<std::string> out;
  for (const auto& [k, v] : r.headers)
    if (iequals(k, name)) out.push_back(v);
  return out;
}

}  // namespace

TEST_CASE("echo: each form carries the request's headers back") {
  // No forms: the reply is untouched.
  CHECK(echo_reply({}).body == R"({"booking_id":"bk_1"})");
  CHECK(echo_reply({}).headers.empty());

  auto body = json::parse(echo_reply({echo_form::body}).body);
  CHECK(body["booking_id"] == "bk_1");  // the reply's own members are kept
  CHECK(body["echo"]["method"] == "POST");
  CHECK(body["echo"]["headers"]["Authorization"] == "Bearer " + echo_secret);

  const auto escaped = echo_reply({echo_form::json_escaped}).body;
  CHECK(escaped.find(echo_secret) == std::string::npos);
  CHECK(escaped.find(R"(\u0042\u0065\u0061\u0072\u0065\u0072)") != std::string::npos);  // "Bearer"
  CHECK(json::parse(escaped)["echo_escaped"]["Authorization"] == "Bearer " + echo_secret);
  CHECK(json::parse(escaped)["booking_id"] == "bk_1");

  CHECK(values_of(echo_reply({echo_form::upper}), "X-Echo-Upper-Authorization") ==
        std::vector<std::string>{"BEARER DEMO-PROVIDER-CREDENTIAL-5C1E0B7D9A"});

  const auto halves = values_of(echo_reply({echo_form::split}), "X-Echo-Split-Authorization");
  REQUIRE(halves.size() == 2);
  CHECK(halves[0] + halves[1] == "Bearer " + echo_secret);
  CHECK(halves[0].find(echo_secret) == std::string::npos);
  CHECK(halves[1].find(echo_secret) == std::string::npos);

  const auto percent = values_of(echo_reply({echo_form::percent}), "X-Echo-Percent-Authorization");
  REQUIRE(percent.size() == 1);
  CHECK(percent[0].starts_with("%42%65%61%72%65%72%20"));  // "Bearer "
  CHECK(percent_decode(percent[0]) == "Bearer " + echo_secret);

  CHECK(values_of(echo_reply({echo_form::name}), echo_secret) == std::vector<std::string>{"Authorization"});

  CHECK(values_of(echo_reply({echo_form::base64}), "X-Echo-Base64-Authorization") ==
        std::vector<std::string>{"QmVhcmVyIGRlbW8tcHJvdmlkZXItY3JlZGVudGlhbC01YzFlMGI3ZDlh"});
  CHECK(values_of(echo_reply({echo_form::base64url}), "X-Echo-Base64url-Authorization") ==
        std::vector<std::string>{"QmVhcmVyIGRlbW8tcHJvdmlkZXItY3JlZGVudGlhbC01YzFlMGI3ZDlh"});

  // Every header is valid on the wire.
  const auto all = echo_reply({echo_form::body, echo_form::json_escaped, echo_form::upper, echo_form::split,
                               echo_form::percent, echo_form::name, echo_form::base64, echo_form::base64url});
  for (const auto& [name, value] : all.headers) {
    CAPTURE(name);
    CHECK(valid_header_name(name));
    CHECK(valid_header_value(value));
  }
  CHECK(json::parse(all.body)["echo_escaped"]["Idempotency-Key"] == "k1");
}

TEST_CASE("echo: set, read and reset through the control API, bad bodies refused") {
  provider_core core({});
  const auto set = handle_control(plain_request{"POST", "/__test/echo", {}, R"({"forms":["upper","body"]})"}, core);
  CHECK(set.status == 200);
  CHECK(json::parse(set.body) == json{{"forms", {"upper", "body"}}});
  CHECK(json::parse(handle_control(plain_request{"GET", "/__test/echo", {}, {}}, core).body) ==
        json{{"forms", {"upper", "body"}}});
  const auto served = serve(core, echoed_booking());
  CHECK(served.status == 201);
  CHECK(json::parse(served.body)["echo"]["headers"]["Authorization"] == "Bearer " + echo_secret);
  CHECK(values_of(served, "X-Echo-Upper-Idempotency-Key") == std::vector<std::string>{"K1"});

  for (const std::string bad : {R"([])", R"({"forms":"body"})", R"({"forms":["nope"]})", R"({"forms":[1]})",
                                R"({"forms":[],"extra":1})", "not json"}) {
    CAPTURE(bad);
    const auto r = handle_control(plain_request{"POST", "/__test/echo", {}, bad}, core);
    CHECK(r.status == 400);
  }
  CHECK(core.echo().size() == 2);  // a bad body keeps the forms
  CHECK(handle_control(plain_request{"PUT", "/__test/echo", {}, {}}, core).status == 405);

  handle_control(plain_request{"POST", "/__test/reset", {}, {}}, core);
  CHECK(core.echo().empty());
  CHECK(serve(core, echoed_booking()).headers.empty());
}
