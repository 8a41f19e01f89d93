// Credentials stay on their side of the gateway: the agent's token never
// reaches the provider, and the provider's credential (injected by the
// gateway) never reaches an agent, in any reply the agent can provoke.
#include "proxy/proxy_fixture.hpp"

#include "core/base64url.hpp"
#include "core/digest.hpp"

#include <strings.h>

#include <cctype>

using namespace gw;
using namespace gw::test;

TEST_CASE("credentials: the agent's token never reaches the provider, and the provider's never reaches the agent") {
  ProxyRig rig;
  auto& provider = rig.provider;
  auto& g = rig.gateway;
  auto c = g.client();
  g.set_clock(0);
  auto grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 60000));

  std::vector<Reply> agent_replies;
  auto keep = [&](Reply r) {
    agent_replies.push_back(r);
    return r;
  };
  Write w;
  w.grant = grant;
  w.key = "op-1";
  w.body = booking_body("slot-1");
  // The agent's token in another credential header is not passed along either.
  const Headers smuggled{{"Proxy-Authorization", "Bearer " + agent_a}};
  CHECK(keep(send(c, w, smuggled)).code() == "committed");                    // executed
  CHECK(keep(send(c, w, smuggled)).code() == "historical_retry");             // replayed from the ledger
  Write taken = w;
  taken.key = "op-2";
  taken.expected_version = 1;
  CHECK(keep(send(c, taken)).code() == "rejected_by_provider");               // the provider's 409
  Write get;
  get.method = "GET";
  get.expected_version.reset();
  get.rest = "/bookings/bk_1";
  CHECK(keep(send(c, get, smuggled)).status == 200);                          // unprotected
  get.rest = "/bookings/by-key/" + upstream_key("tenant-a", "task-a", "op-1");
  CHECK(keep(send(c, get)).status == 200);
  get.rest = "/bookings/no-such-booking";
  CHECK(keep(send(c, get)).status == 404);
  keep(c.request("GET", task_path("tenant-a", "task-a", "operations/op-1"),
                 {{"Authorization", "Bearer " + agent_a}, {"Fence-Grant", grant}}));
  provider.set_fault("error_5xx", 0, 1);
  Write held = w;
  held.key = "op-3";
  held.expected_version = 1;
  held.body = booking_body("slot-3");
  CHECK(keep(send(c, held)).code() == "unknown_outcome");

  auto seen = provider.requests();
  REQUIRE(seen.size() == 6);
  for (const auto& r : seen) {
    CAPTURE(r.dump());
    bool authorization = false;
    for (const auto& [name, value] : r["headers"].items()) {
      CHECK(value.get<std::string>().find(agent_a) == std::string::npos);
      if (strcasecmp(name.c_str(), "Authorization") == 0) {
        authorization = true;
        CHECK(value == "Bearer " + provider_credential);
      }
    }
    CHECK(authorization);
  }
  for (const auto& r : agent_replies) {
    CAPTURE(r.body);
    CHECK(r.body.find(provider_credential) == std::string::npos);
    for (const auto& [name, value] : r.headers) CHECK(value.find(provider_credential) == std::string::npos);
  }
  // Nor is it kept where a replay could bring it back.
  CHECK(g.db().scalar("SELECT count(*) FROM operations WHERE response_headers::text LIKE '%" + provider_credential +
                      "%' OR position('" + provider_credential + "'::bytea in response_body) > 0") == "0");
}

// Issue 29 finding 3: a provider that echoes the request sends the injected
// credential back, in its body or its headers, in forms an exact match
// misses. The demo provider's echo switch (adapters/demo_provider/echo.hpp)
// does it one form at a time. Whatever the form, the agent gets the
// provider's status and the gateway's own withheld reply, for the first
// reply, for an exact retry (from the ledger) and for a GET; the ledger holds
// no form of any credential; and the outcome still counts.
namespace {

const std::vector<std::string> every_credential{provider_credential, provider_credential_b, provider_credential_c};

std::string cred_fold(std::string_view text) {
  std::string out;
  for (unsigned char c : text)
    if (std::isalnum(c)) out += static_cast<char>(std::tolower(c));
  return out;
}

std::string cred_alnum(std::string_view text) {
  std::string out;
  for (unsigned char c : text)
    if (std::isalnum(c)) out += static_cast<char>(c);
  return out;
}

int cred_hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX and \u00XX decoded wherever they are well-formed.
std::string cred_unescaped(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && cred_hex(text[i + 1]) >= 0 && cred_hex(text[i + 2]) >= 0) {
      out += static_cast<char>(cred_hex(text[i + 1]) * 16 + cred_hex(text[i + 2]));
      i += 2;
    } else if (text.substr(i, 4) == "\\u00" && i + 5 < text.size() && cred_hex(text[i + 4]) >= 0 &&
               cred_hex(text[i + 5]) >= 0) {
      out += static_cast<char>(cred_hex(text[i + 4]) * 16 + cred_hex(text[i + 5]));
      i += 5;
    } else {
      out += text[i];
    }
  }
  return out;
}

// Which form of which credential `text` holds, or "" for none: checked
// independently of the gateway's scan, by plain searches.
std::string credential_form_in(std::string_view text) {
  const auto folded = cred_fold(text), unescaped = cred_fold(cred_unescaped(text)), alnum = cred_alnum(text);
  for (const auto& credential : every_credential) {
    if (text.find(credential) != std::string_view::npos) return "exact " + credential;
    if (folded.find(cred_fold(credential)) != std::string::npos) return "case or split " + credential;
    if (unescaped.find(cred_fold(credential)) != std::string::npos) return "escaped " + credential;
    for (std::size_t align = 0; align < 3; ++align) {
      // The middle of its base64 at this alignment: the first and last group may mix in other bytes.
      const auto encoded = cred_alnum(base64_encode(std::string(align, 'x') + credential));
      const auto middle = encoded.substr(4, encoded.size() - 8);
      if (alnum.find(middle) != std::string::npos) return "base64 " + credential;
    }
  }
  return "";
}

// The same over a reply's header values alone, run together: a value split
// across two headers reads whole there.
std::string credential_form_in(const Headers& headers, std::string_view body) {
  std::string all, values;
  for (const auto& [k, v] : headers) {
    all += k + ": " + v + "\r\n";
    values += v;
  }
  all += body;
  if (auto form = credential_form_in(all); !form.empty()) return form;
  return credential_form_in(values);
}

struct RawSeen {
  unsigned status = 0;
  Headers headers;
  std::string body;
  std::string bytes;  // the whole reply as the wire carried it
  std::string header(const std::string& name) const {
    for (const auto& [k, v] : headers)
      if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
    return "";
  }
};

// One request on a connection of its own, the reply read as raw bytes.
RawSeen raw_request(Gateway& g, const Write& w) {
  std::string request = w.method + " " + proxy_path(w) + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  request += "Authorization: Bearer " + w.agent + "\r\n";
  if (!w.grant.empty()) request += "Fence-Grant: " + w.grant + "\r\n";
  if (!w.key.empty()) request += "Idempotency-Key: " + w.key + "\r\n";
  if (w.expected_version) request += "Expected-Version: " + std::to_string(*w.expected_version) + "\r\n";
  if (!w.body.empty()) request += "Content-Type: application/json\r\n";
  request += "Content-Length: " + std::to_string(w.body.size()) + "\r\n\r\n" + w.body;
  RawSeen seen;
  seen.bytes = g.client().raw(request).bytes;
  const auto end = seen.bytes.find("\r\n\r\n");
  REQUIRE(end != std::string::npos);
  seen.body = seen.bytes.substr(end + 4);
  std::string_view head(seen.bytes.data(), end);
  auto line_end = head.find("\r\n");
  seen.status = static_cast<unsigned>(std::stoul(std::string(head.substr(9, 3))));
  while (line_end != std::string_view::npos) {
    head.remove_prefix(line_end + 2);
    line_end = head.find("\r\n");
    const auto line = head.substr(0, line_end);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    auto value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    seen.headers.emplace_back(std::string(line.substr(0, colon)), std::string(value));
  }
  return seen;
}

std::string cred_from_hex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(cred_hex(hex[i]) * 16 + cred_hex(hex[i + 1]));
  return out;
}

void cred_set_echo(const ProviderProcess& provider, const std::vector<std::string>& forms) {
  const auto r = provider.control_raw("POST", "/__test/echo", nlohmann::json{{"forms", forms}}.dump());
  REQUIRE_MESSAGE(r.status == 200, r.body);
}

// What the provider itself sends back for `form`, asked directly with the
// credential: the form is really there, and the check above sees it.
void provider_really_echoes(const ProviderProcess& provider) {
  HttpClient direct(provider.port());
  const auto r = direct.request("GET", "/bookings/no-such-booking", {{"Authorization", "Bearer " + provider_credential}});
  CAPTURE(r.body);
  REQUIRE(credential_form_in(r.headers, r.body) != "");
}

void check_withheld(const RawSeen& seen, unsigned status) {
  CAPTURE(seen.bytes);
  CHECK(seen.status == status);
  CHECK(credential_form_in(seen.bytes) == "");
  CHECK(credential_form_in(seen.headers, seen.body) == "");
  CHECK(seen.header("Gateway-Reply-Withheld") == "credential");
  CHECK(seen.header("Content-Type") == "application/json");
  CHECK(!seen.header("X-Request-Id").empty());
  const auto body = nlohmann::json::parse(seen.body);
  CHECK(body["provider_reply"] == "withheld");
  CHECK(body["provider"] == "booking");
  // Nothing of the provider's own reply: neither its headers nor its body.
  CHECK(seen.header("X-Echo-Upper-Authorization").empty());
  CHECK(seen.body.find("booking_id") == std::string::npos);
}

// The clock at 0, task-a claimed by agent A, and a booking under key op-1.
Write booking_on_task_a(Gateway& g) {
  g.set_clock(0);
  Write w;
  w.grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 60000));
  w.key = "op-1";
  w.body = booking_body("slot-1");
  return w;
}

// The whole finding for one echo form.
void check_echo_form(const std::string& form) {
  CAPTURE(form);
  ProxyRig rig;
  auto& provider = rig.provider;
  auto& g = rig.gateway;
  cred_set_echo(provider, {form});
  provider_really_echoes(provider);
  const Write w = booking_on_task_a(g);

  // A protected write: the provider acted, the outcome counts, the reply is withheld.
  const auto first = raw_request(g, w);
  check_withheld(first, 201);
  CHECK(first.header("Gateway-Status") == "committed");
  CHECK(first.header("Committed-Version") == "1");
  CHECK(provider.effects_for(upstream_key("tenant-a", "task-a", "op-1")) == 1);
  CHECK(g.db().scalar("SELECT state || ' ' || committed_version FROM operations WHERE op_id = 'op-1'") == "succeeded 1");

  // An exact retry replays what the ledger kept: the withheld reply, byte for byte.
  const auto again = raw_request(g, w);
  check_withheld(again, 201);
  CHECK(again.header("Gateway-Status") == "historical_retry");
  CHECK(again.header("Idempotent-Replayed") == "true");
  CHECK(again.header("Committed-Version") == "1");
  CHECK(again.body == first.body);
  CHECK(provider.effects_for(upstream_key("tenant-a", "task-a", "op-1")) == 1);

  // The ledger never held the credential.
  const auto stored_headers = g.db().scalar("SELECT response_headers::text FROM operations WHERE op_id = 'op-1'");
  const auto stored_body = cred_from_hex(g.db().scalar("SELECT encode(response_body, 'hex') FROM operations WHERE op_id = 'op-1'"));
  CAPTURE(stored_headers);
  CAPTURE(stored_body);
  CHECK(credential_form_in(stored_headers) == "");
  CHECK(credential_form_in(stored_body) == "");
  CHECK(stored_body == first.body);
  CHECK(g.db().scalar("SELECT encode(response_sha256, 'hex') FROM operations WHERE op_id = 'op-1'") ==
        sha256_hex(first.body));

  // A pass-through read is withheld the same way.
  Write get;
  get.method = "GET";
  get.expected_version.reset();
  get.rest = "/bookings/bk_1";
  const auto read = raw_request(g, get);
  check_withheld(read, 200);
  CHECK(read.header("Gateway-Status").empty());

  // Counted, and logged by name of provider only.
  const auto metrics = g.client().get("/metrics", "").body;
  CHECK(metrics.find("gateway_events_total{event=\"provider_reply_withheld\"} 2") != std::string::npos);
}

}  // namespace

TEST_CASE("credentials: a provider echoing the credential in its JSON body") { check_echo_form("body"); }
TEST_CASE("credentials: a provider echoing the credential JSON-escaped (\\u00XX) in its body") {
  check_echo_form("json_escaped");
}
TEST_CASE("credentials: a provider echoing the credential upper-cased in a header") { check_echo_form("upper"); }
TEST_CASE("credentials: a provider echoing the credential split across two headers") { check_echo_form("split"); }
TEST_CASE("credentials: a provider echoing the credential percent-encoded in a header") { check_echo_form("percent"); }
TEST_CASE("credentials: a provider echoing the credential as a header name") { check_echo_form("name"); }
TEST_CASE("credentials: a provider echoing the credential in base64 in a header") { check_echo_form("base64"); }
TEST_CASE("credentials: a provider echoing the credential in base64url in a header") { check_echo_form("base64url"); }

TEST_CASE("credentials: a reply to one tenant revealing another tenant's credential is withheld too") {
  ProxyRig rig;
  auto& g = rig.gateway;
  std::string upper = provider_credential_b;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  rig.provider.set_reply_headers({{"X-Debug-Other-Account", upper}});
  const Write w = booking_on_task_a(g);
  const auto first = raw_request(g, w);
  check_withheld(first, 201);
  CHECK(first.header("Committed-Version") == "1");
  CHECK(first.header("X-Debug-Other-Account").empty());
  check_withheld(raw_request(g, w), 201);
}

TEST_CASE("credentials: a clean reply passes through unchanged, with no withheld marker") {
  ProxyRig rig;
  auto& g = rig.gateway;
  const Write w = booking_on_task_a(g);
  const auto first = raw_request(g, w);
  CHECK(first.status == 201);
  CHECK(first.header("Gateway-Reply-Withheld").empty());
  CHECK(nlohmann::json::parse(first.body)["booking_id"] == "bk_1");
}

TEST_CASE("credentials: a provider lookup that echoes the credential is kept as evidence without it") {
  ProviderProcess provider;
  auto options = proxy_options(provider);
  auto providers = options.edit;
  options.edit = [providers](nlohmann::json& c) {
    providers(c);
    c["providers"][0]["lookup"] = {{"path", "/bookings/by-key/{key}"}, {"status_pointer", "/status"}, {"body_pointer", "/body"}};
    c["recovery"] = {{"reconcile", {{"interval_ms", 3600000}}}};
  };
  Gateway g(options);
  g.set_clock(1000);
  Write w;
  w.grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 10'000'000));
  w.key = "op-1";
  w.body = booking_body("slot-1");
  // Executed, then the connection dropped: held, and looked up.
  provider.set_fault("drop_after_execute", 0, 1);
  auto c = g.client();
  check_problem(send(c, w), 504, "unknown_outcome");
  cred_set_echo(provider, {"body", "upper"});
  const auto looked = c.post_json("/v1/admin/operations/tenant-a/task-a/op-1/reconcile", nlohmann::json::object(),
                                  operator_token);
  REQUIRE(looked.status == 200);
  CHECK(looked.json()["lookup"]["status"] == 200);
  CHECK(looked.json()["operation"]["state"] == "succeeded");  // the decision read the provider's reply
  const auto evidence_headers =
      g.db().scalar("SELECT string_agg(coalesce(response_headers::text, ''), ' ') FROM operation_evidence WHERE op_id = 'op-1'");
  const auto evidence_body = cred_from_hex(
      g.db().scalar("SELECT string_agg(encode(coalesce(response_body, ''::bytea), 'hex'), '') FROM operation_evidence WHERE op_id = 'op-1'"));
  CAPTURE(evidence_headers);
  CAPTURE(evidence_body);
  CHECK(evidence_headers.find("Gateway-Reply-Withheld") != std::string::npos);
  CHECK(credential_form_in(evidence_headers) == "");
  CHECK(credential_form_in(evidence_body) == "");
  // Nor does the operator's view of it, or the replay of the settled operation.
  const auto detail = c.get("/v1/admin/operations/tenant-a/task-a/op-1", operator_token);
  CHECK(credential_form_in(detail.body) == "");
  const auto replayed = send(c, w);
  CHECK(credential_form_in(replayed.headers, replayed.body) == "");
}
