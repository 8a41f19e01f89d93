// The demo provider's signed webhooks without sockets: the signature against
// the Standard Webhooks known answer and a vector computed outside the
// project (tests/vectors/webhook_known_answers.py), what an execution queues,
// the control route and the command-line options.
#include "control_api.hpp"
#include "options.hpp"
#include "provider_core.hpp"
#include "provider_core_fixture.hpp"
#include "webhooks.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <array>

using namespace demo_provider;
using namespace demo_provider::test;
using nlohmann::json;

namespace {

// The standard's own vector ("sign function works" in its libraries).
const std::string standard_secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
// tests/vectors/webhook_known_answers.py, second vector.
const std::string rotated_secret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

webhook_settings settings(const std::string& secret = rotated_secret) {
  return webhook_settings{*parse_webhook_url("http://127.0.0.1:8080/v1/webhooks/booking"),
                          *decode_webhook_secret(secret)};
}

core_config with_webhooks() {
  core_config config;
  config.webhooks = settings();
  config.webhook_id_prefix = "msg_t_";
  return config;
}

json call(provider_core& core, const std::string& method, const std::string& body, unsigned expected_status) {
  const plain_reply r = handle_control(plain_request{method, "/__test/webhooks", {}, body}, core);
  CHECK_MESSAGE(r.status == expected_status, r.body);
  return json::parse(r.body);
}

std::optional<std::string> header(const outgoing_webhook& w, const std::string& name) {
  const auto v = find_header(w.headers, name);
  return v ? std::optional<std::string>(std::string(*v)) : std::nullopt;
}

}  // namespace

TEST_CASE("demo webhooks: the signature matches the standard's known answer") {
  CHECK(webhook_signature(*decode_webhook_secret(standard_secret), "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330",
                          R"({"test": 2432232314})") == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
}

TEST_CASE("demo webhooks: a built webhook is the vector computed outside the project") {
  webhook_event event{"msg_rotation_1", "gw1-abc", "executed", 201};
  const outgoing_webhook w = build_webhook(settings(), event, 1700000000);
  CHECK(w.body == R"({"type":"operation.settled","idempotency_key":"gw1-abc","state":"executed","status":201})");
  CHECK(w.id == "msg_rotation_1");
  CHECK(w.timestamp == "1700000000");
  CHECK(header(w, "webhook-id") == "msg_rotation_1");
  CHECK(header(w, "webhook-timestamp") == "1700000000");
  CHECK(header(w, "webhook-signature") == "v1,hfmG8xh/YEQJhml/sDbNJ6bhmm46v1D9H86n617lsaI=");
  CHECK(header(w, "Content-Type") == "application/json");
}

TEST_CASE("demo webhooks: a bad signature is well formed but wrong, a missing one leaves the header out") {
  webhook_event event{"msg_1", "gw1-abc", "executed", 201};
  event.signing = webhook_signing::bad;
  const outgoing_webhook bad = build_webhook(settings(), event, 1700000000);
  REQUIRE(header(bad, "webhook-signature"));
  CHECK(header(bad, "webhook-signature")->starts_with("v1,"));
  CHECK(header(bad, "webhook-signature")->size() == std::string("v1,").size() + 44);
  CHECK(header(bad, "webhook-signature") != webhook_signature(settings().key, "msg_1", "1700000000", bad.body));

  event.signing = webhook_signing::missing;
  const outgoing_webhook missing = build_webhook(settings(), event, 1700000000);
  CHECK_FALSE(header(missing, "webhook-signature"));
  CHECK(header(missing, "webhook-id") == "msg_1");

  event.signing = webhook_signing::valid;
  event.timestamp_offset_s = -301;
  CHECK(build_webhook(settings(), event, 1700000000).timestamp == "1699999699");
}

TEST_CASE("demo webhooks: URLs and secrets") {
  auto u = parse_webhook_url("http://127.0.0.1:8080/v1/webhooks/booking?x=1");
  REQUIRE(u);
  CHECK(u->host == "127.0.0.1");
  CHECK(u->port == "8080");
  CHECK(u->target == "/v1/webhooks/booking?x=1");
  u = parse_webhook_url("http://gateway");
  REQUIRE(u);
  CHECK(u->port == "80");
  CHECK(u->target == "/");
  for (const char* bad : {"https://x/", "x:80/", "http://", "http://:80/", "http://h:0/", "http://h:99999/",
                          "http://h:8x/", "http://u@h/", "http://h/a b"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_webhook_url(bad));
  }
  CHECK(decode_webhook_secret(rotated_secret)->size() == 32);
  CHECK(decode_webhook_secret(standard_secret)->size() == 24);
  CHECK_FALSE(decode_webhook_secret("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"));
  CHECK_FALSE(decode_webhook_secret("whsec_"));
  CHECK_FALSE(decode_webhook_secret("whsec_not*base64"));
}

TEST_CASE("demo webhooks: an executed keyed mutation queues one webhook, a replay or a keyless one none") {
  provider_core core(with_webhooks());
  CHECK(serve(core, booking("s1", "k1")).status == 201);
  auto queued = core.take_webhooks();
  REQUIRE(queued.size() == 1);
  CHECK(queued[0].id == "msg_t_1");
  CHECK(queued[0].key == "k1");
  CHECK(queued[0].state == "executed");
  CHECK(queued[0].status == 201);
  CHECK(queued[0].signing == webhook_signing::valid);
  CHECK(core.take_webhooks().empty());

  CHECK(serve(core, booking("s1", "k1")).status == 201);  // replayed under the key
  CHECK(core.take_webhooks().empty());
  CHECK(serve(core, booking("s2", "")).status == 201);    // no key: nothing to report about
  CHECK(core.take_webhooks().empty());
  // A processed rejection is an execution too.
  CHECK(serve(core, booking("s1", "k2")).status == 409);
  queued = core.take_webhooks();
  REQUIRE(queued.size() == 1);
  CHECK(queued[0].id == "msg_t_2");
  CHECK(queued[0].status == 409);

  provider_core quiet({});
  serve(quiet, booking("s1", "k1"));
  CHECK(quiet.take_webhooks().empty());
}

TEST_CASE("demo webhooks: POST /__test/webhooks queues one on demand, with a bad signature if asked") {
  provider_core core(with_webhooks());
  serve(core, booking("s1", "k1"));
  core.take_webhooks();

  auto q = call(core, "POST", R"({"key":"k1"})", 202);
  CHECK(q["queued"]["key"] == "k1");
  auto events = core.take_webhooks();
  REQUIRE(events.size() == 1);
  CHECK(events[0].status == 201);  // the status k1's execution produced
  CHECK(events[0].id == q["queued"]["id"].get<std::string>());

  call(core, "POST",
       json{{"key", "gw1-nobody"}, {"status", 409}, {"state", "executed"}, {"id", "msg_fixed"},
            {"signature", "bad"}, {"timestamp_offset_s", -400}}
           .dump(),
       202);
  events = core.take_webhooks();
  REQUIRE(events.size() == 1);
  CHECK(events[0].id == "msg_fixed");
  CHECK(events[0].status == 409);
  CHECK(events[0].signing == webhook_signing::bad);
  CHECK(events[0].timestamp_offset_s == -400);

  call(core, "POST", R"({"key":"never-ran"})", 400);  // no status to report
  call(core, "POST", R"({"key":""})", 400);
  call(core, "POST", R"({"key":"k1","signature":"forged"})", 400);
  call(core, "POST", R"({"key":"k1","status":42})", 400);
  call(core, "POST", R"({"key":"k1","color":"red"})", 400);
  call(core, "POST", R"({"key":"k1","id":""})", 400);
  call(core, "POST", "[]", 400);
  call(core, "POST", "{", 400);
  CHECK(core.take_webhooks().empty());
  call(core, "DELETE", "", 405);

  provider_core quiet({});
  CHECK(call(quiet, "POST", R"({"key":"k1","status":201})", 409)["error"] == "webhooks_not_configured");
}

TEST_CASE("demo webhooks: GET /__test/webhooks lists deliveries until reset") {
  provider_core core(with_webhooks());
  const outgoing_webhook sent = build_webhook(settings(), webhook_event{"msg_1", "k1", "executed", 201}, 1700000000);
  core.webhook_delivered(webhook_delivery{sent, 200, R"({"code":"ok"})", ""});
  core.webhook_delivered(webhook_delivery{sent, std::nullopt, "", "connect: Connection refused"});
  auto list = call(core, "GET", "", 200);
  REQUIRE(list["delivered"].size() == 2);
  CHECK(list["delivered"][0]["id"] == "msg_1");
  CHECK(list["delivered"][0]["receiver_status"] == 200);
  CHECK(list["delivered"][0]["body"] == sent.body);
  CHECK(list["delivered"][1]["error"] == "connect: Connection refused");
  CHECK_FALSE(list["delivered"][1].contains("receiver_status"));
  CHECK(list["queued"] == 0);
  core.reset();
  CHECK(call(core, "GET", "", 200)["delivered"].empty());
  // Ids keep counting after a reset: a receiver drops a repeated id.
  serve(core, booking("s1", "k9"));
  CHECK(core.take_webhooks().at(0).id == "msg_t_1");
  call(core, "POST", R"({"key":"k9"})", 202);
  CHECK(core.take_webhooks().at(0).id == "msg_t_2");
}

TEST_CASE("demo webhooks: --webhook-url and --webhook-secret go together and are checked") {
  auto parse = [](std::vector<std::string> extra) {
    std::vector<std::string> args{"--kind", "booking", "--port", "0", "--control-port", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    return parse_options(argv);
  };
  auto ok = parse({"--webhook-url", "http://127.0.0.1:9/v1/webhooks/booking", "--webhook-secret", rotated_secret});
  REQUIRE(ok.value);
  REQUIRE(ok.value->webhooks);
  CHECK(ok.value->webhooks->url.port == "9");
  CHECK(ok.value->webhooks->key.size() == 32);
  CHECK_FALSE(parse({}).value->webhooks);
  CHECK(parse({"--webhook-url", "http://h/"}).error == "--webhook-url and --webhook-secret go together");
  CHECK(parse({"--webhook-secret", rotated_secret}).error == "--webhook-url and --webhook-secret go together");
  CHECK(parse({"--webhook-url", "https://h/", "--webhook-secret", rotated_secret}).error.starts_with("--webhook-url"));
  CHECK(parse({"--webhook-url", "http://h/", "--webhook-secret", "secret"}).error.starts_with("--webhook-secret"));
}
