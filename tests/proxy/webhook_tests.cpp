// Signed provider webhooks through the running gateway: a valid one about a
// held operation resolves it from the provider's word; every verification
// failure is 401 and stores nothing; a repeated id changes nothing; one about
// an operation the gateway does not know is kept and listed for operators.
// The test signs with OpenSSL directly, not with the gateway's code.
#include "proxy/proxy_fixture.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <chrono>
#include <functional>
#include <optional>

using namespace gw;
using namespace gw::test;

namespace {

// 32 bytes 0x00..0x1f, as whsec_ + standard base64.
const std::string secret_env = "GW_TEST_BOOKING_WEBHOOK_SECRET";
const std::string secret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

std::string key_bytes() {
  std::string k;
  for (int i = 0; i < 32; ++i) k.push_back(static_cast<char>(i));
  return k;
}

std::string base64(const unsigned char* data, int n) {
  std::string out(static_cast<std::size_t>(4 * ((n + 2) / 3)), '\0');
  const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, n);
  out.resize(static_cast<std::size_t>(written));
  return out;
}

std::string signature(const std::string& key, const std::string& id, const std::string& ts, const std::string& body) {
  const std::string signed_text = id + "." + ts + "." + body;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(signed_text.data()),
       signed_text.size(), mac, &n);
  return "v1," + base64(mac, static_cast<int>(n));
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The wall clock the gateway judges a webhook-timestamp by, in milliseconds.
std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The config's default (config/config.hpp), which with_webhooks keeps.
constexpr std::int64_t tolerance_ms = 300'000;

GatewayOptions with_webhooks(const ProviderProcess& provider) {
  ::setenv(secret_env.c_str(), secret.c_str(), 1);
  auto options = proxy_options(provider);
  auto providers = options.edit;
  options.edit = [providers](nlohmann::json& c) {
    providers(c);
    c["providers"][0]["webhooks"] = {{"secret_envs", {secret_env}},
                                     {"key_pointer", "/idempotency_key"},
                                     {"outcome_pointer", "/status"},
                                     {"outcomes", {{"201", "succeeded"}, {"409", "rejected"}}}};
  };
  return options;
}

struct Delivery {
  std::string id = "msg_1";
  std::int64_t timestamp = unix_now();
  std::string body;
  std::optional<std::string> signature_override;
  bool without_signature = false;
};

Reply deliver(HttpClient& c, const Delivery& d) {
  const auto ts = std::to_string(d.timestamp);
  Headers h{{"Content-Type", "application/json"}, {"webhook-id", d.id}, {"webhook-timestamp", ts}};
  if (!d.without_signature) h.push_back({"webhook-signature", d.signature_override.value_or(signature(key_bytes(), d.id, ts, d.body))});
  return c.request("POST", "/v1/webhooks/booking", h, d.body);
}

}  // namespace

TEST_CASE("webhooks: a valid signature resolves the held operation, and failures are 401 and change nothing") {
  ProviderProcess provider;
  Gateway g(with_webhooks(provider));
  g.set_clock(1000);
  Write w;
  w.grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 10'000'000));
  w.key = "op-1";
  w.body = booking_body("slot-1");
  const auto key = upstream_key("tenant-a", "task-a", "op-1");
  provider.set_fault("drop_after_execute", 0, 1);
  auto c = g.client();
  check_problem(send(c, w), 504, "unknown_outcome");
  auto count = [&](const std::string& table) { return g.db().scalar("SELECT count(*) FROM " + table); };

  Delivery good;
  good.body = nlohmann::json{{"type", "operation.settled"}, {"idempotency_key", key}, {"status", 201}}.dump();

  Delivery wrong = good;
  wrong.signature_override = signature(std::string(32, 'x'), good.id, std::to_string(good.timestamp), good.body);
  Delivery tampered = good;
  tampered.signature_override = signature(key_bytes(), good.id, std::to_string(good.timestamp), good.body + " ");
  // Far enough out that no clock reading can bring them in; the edge itself
  // is the next test's.
  Delivery stale = good;
  stale.timestamp -= 301;
  Delivery future = good;
  future.timestamp += 3600;
  Delivery unsigned_one = good;
  unsigned_one.without_signature = true;
  for (const auto& bad : {wrong, tampered, stale, future, unsigned_one}) {
    auto r = deliver(c, bad);
    check_problem(r, 401, "unauthenticated");
    CHECK(r.body.find(key) == std::string::npos);
  }
  auto no_id = c.request("POST", "/v1/webhooks/booking",
                         {{"webhook-timestamp", std::to_string(unix_now())}, {"webhook-signature", "v1,AAAA"}}, good.body);
  check_problem(no_id, 401, "unauthenticated");
  CHECK(count("webhook_deliveries") == "0");
  CHECK(g.db().scalar("SELECT state FROM operations WHERE op_id = 'op-1'") == "unknown");
  auto accepted = deliver(c, good);
  REQUIRE(accepted.status == 200);
  CHECK(accepted.json()["delivery"] == "accepted");
  // It resolved the operation from the provider's word.
  CHECK(count("webhook_deliveries") == "1");
  CHECK(g.db().scalar("SELECT state FROM operations WHERE op_id = 'op-1'") == "succeeded");
  CHECK(g.db().scalar("SELECT (resolution).source FROM operations WHERE op_id = 'op-1'") == "webhook");
  const auto evidence = count("operation_evidence");

  // The same id again: acknowledged, nothing changes.
  auto again = deliver(c, good);
  CHECK(again.status == 200);
  CHECK(again.json()["delivery"] == "duplicate");
  CHECK(count("webhook_deliveries") == "1");
  CHECK(count("operation_evidence") == evidence);

  Write next = w;
  next.key = "op-2";
  next.body = booking_body("slot-2");
  next.expected_version = 1;
  CHECK(send(c, next).header("Gateway-Status") == "committed");
  CHECK(provider.effects_for(key) == 1);
}

namespace {

// One signed delivery about no operation, stamped stamp_for(t) for the wall
// clock t read just before it is built. `accepted`: what the gateway made of
// it. `expected`: what |now - stamp| <= tolerance says for every now the
// gateway can have read, from t to the reply; nullopt when that span
// straddles the edge, so that either verdict would be right.
struct EdgeProbe {
  bool accepted = false;
  std::optional<bool> expected;
};

EdgeProbe probe_edge(HttpClient& c, const std::string& id, const std::function<std::int64_t(std::int64_t)>& stamp_for) {
  const auto before = wall_ms();
  Delivery d;
  d.id = id;
  d.timestamp = stamp_for(before);
  d.body = R"({"idempotency_key":"gw1-not-ours","status":201})";
  const auto r = deliver(c, d);
  const auto after = wall_ms();
  EdgeProbe p;
  p.accepted = r.status == 200;
  if (p.accepted) CHECK(r.json()["delivery"] == "accepted");
  else check_problem(r, 401, "unauthenticated");
  const auto earliest = d.timestamp * 1000 - tolerance_ms, latest = d.timestamp * 1000 + tolerance_ms;
  if (before >= earliest && after <= latest) p.expected = true;
  else if (after < earliest || before > latest) p.expected = false;
  return p;
}

}  // namespace

TEST_CASE("webhooks: on the gateway's wall clock, tolerance + 1 s either way is refused and the tolerance accepted") {
  // The sender stamps whole seconds, the gateway measures milliseconds: each
  // stamp is picked from the test's clock reading so that, read a moment
  // later by the gateway, it lies just past the tolerance (by less than a
  // second) or just inside it. Each edge is probed until a probe's span does
  // not straddle the instant its verdict changes (a request rarely does), so
  // no timing assumption decides the outcome.
  ProviderProcess provider;
  Gateway g(with_webhooks(provider));
  auto c = g.client();
  const auto floor_s = [](std::int64_t ms) { return ms / 1000; };
  const auto ceil_s = [](std::int64_t ms) { return (ms + 999) / 1000; };
  const std::int64_t tolerance_s = tolerance_ms / 1000;
  const auto edge = [&](const std::string& name, const std::function<std::int64_t(std::int64_t)>& stamp_for,
                        bool accepted) {
    for (int attempt = 1; attempt <= 20; ++attempt) {
      const auto p = probe_edge(c, name + "-" + std::to_string(attempt), stamp_for);
      if (!p.expected) continue;
      CAPTURE(name);
      REQUIRE(*p.expected == accepted);  // the stamp is on the side this probe means it to be
      CHECK(p.accepted == accepted);
      return;
    }
    FAIL(name << ": every probe straddled its edge");
  };
  // Ahead: 301 s from the current second is 300.x s from now, out; 300 s
  // from it is at most 300 s from now, in.
  edge("ahead-out", [&](std::int64_t t) { return floor_s(t) + tolerance_s + 1; }, false);
  edge("ahead-in", [&](std::int64_t t) { return floor_s(t) + tolerance_s; }, true);
  // Behind: 301 s before the current second is out; 300 s before the next
  // second is at most 300 s ago, in.
  edge("behind-out", [&](std::int64_t t) { return floor_s(t) - tolerance_s - 1; }, false);
  edge("behind-in", [&](std::int64_t t) { return ceil_s(t) - tolerance_s; }, true);
}

TEST_CASE("webhooks: one about an unknown operation is kept and listed, and an unknown provider is 404") {
  ProviderProcess provider;
  Gateway g(with_webhooks(provider));
  auto c = g.client();
  Delivery d;
  d.id = "msg_stray";
  d.body = R"({"idempotency_key":"gw1-not-ours","status":201})";
  auto r = deliver(c, d);
  REQUIRE(r.status == 200);
  CHECK(r.json()["delivery"] == "accepted");
  Delivery garbage;
  garbage.id = "msg_garbage";
  garbage.body = "not json at all";
  CHECK(deliver(c, garbage).status == 200);

  check_problem(c.get("/v1/admin/webhooks", agent_a), 403, "forbidden");
  auto listed = c.get("/v1/admin/webhooks?provider=booking", operator_token);
  REQUIRE(listed.status == 200);
  const auto rows = listed.json()["webhooks"];
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["webhook_id"] == "msg_stray");
  CHECK(rows[0]["status"] == "unmatched");
  CHECK(rows[1]["webhook_id"] == "msg_garbage");
  CHECK(rows[1]["status"] == "unparsable");
  CHECK(g.db().scalar("SELECT encode(body, 'escape') FROM webhook_deliveries WHERE webhook_id = 'msg_garbage'") ==
        "not json at all");

  check_problem(c.request("POST", "/v1/webhooks/crm", {{"webhook-id", "x"}}, "{}"), 404, "not_found");
}
