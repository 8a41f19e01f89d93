// Which methods the proxy protects by default (docs/api.md, proxy): PUT,
// PATCH and DELETE need the protected headers and go through the ledger like
// POST; HEAD is passed through with the agent token only.
#include "proxy/proxy_fixture.hpp"

#include <sstream>

using namespace gw;
using namespace gw::test;

namespace {

// A claimed task with one booking (bk_1) made through the gateway: version 1.
struct Booked {
  Booked() : c(rig.gateway.port()) {
    rig.gateway.set_clock(0);
    grant = grant_token(rig.gateway.claim("tenant-a", "task-a", "region-a", 60000));
    Write w;
    w.grant = grant;
    w.key = "create";
    w.body = booking_body("slot-1");
    REQUIRE(send(c, w).code() == "committed");
  }
  std::string operations() const { return rig.gateway.db().scalar("SELECT count(*) FROM operations"); }

  ProxyRig rig;
  HttpClient c;
  std::string grant;
};

struct ParsedReply {
  std::string status_line;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string after_headers;  // bytes after the blank line
  std::optional<std::string> header(const std::string& name) const {
    for (const auto& [k, v] : headers)
      if (k == name) return v;
    return std::nullopt;
  }
};

// Splits raw reply bytes; names are compared as sent (the gateway's spelling).
ParsedReply parse_raw(const std::string& bytes) {
  ParsedReply out;
  const auto end = bytes.find("\r\n\r\n");
  REQUIRE_MESSAGE(end != std::string::npos, bytes);
  std::istringstream head(bytes.substr(0, end));
  std::string line;
  std::getline(head, out.status_line);
  if (!out.status_line.empty() && out.status_line.back() == '\r') out.status_line.pop_back();
  while (std::getline(head, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto colon = line.find(':');
    REQUIRE(colon != std::string::npos);
    auto value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    out.headers.emplace_back(line.substr(0, colon), value);
  }
  out.after_headers = bytes.substr(end + 4);
  return out;
}

}  // namespace

TEST_CASE("HEAD passes through unprotected: reaches the provider as HEAD, the provider's Content-Length, no body, no ledger row") {
  Booked b;
  auto& provider = b.rig.provider;
  const std::string path = task_path("tenant-a", "task-a", "providers/booking/bookings/bk_1");
  auto get = b.c.get(path, agent_a);
  REQUIRE(get.status == 200);
  REQUIRE(!get.body.empty());

  // Raw bytes: a HEAD reply has no body to read, and any stray body byte
  // would show here. Connection: close ends the exchange.
  const auto bytes = b.c.raw("HEAD " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + agent_a +
                             "\r\nConnection: close\r\n\r\n");
  CHECK(bytes.closed_by_peer);
  const ParsedReply head = parse_raw(bytes.bytes);
  CHECK(head.status_line == "HTTP/1.1 200 OK");
  CHECK(head.header("Content-Length") == std::to_string(get.body.size()));
  CHECK(head.after_headers.empty());
  CHECK(!head.header("Gateway-Status"));  // passed through, not decided

  const auto requests = provider.requests();
  REQUIRE(requests.size() == 3);  // the POST, the GET, the HEAD
  CHECK(requests[2]["method"] == "HEAD");
  CHECK(requests[2]["target"] == "/bookings/bk_1");
  CHECK(!requests[2]["headers"].contains("Idempotency-Key"));
  CHECK(b.operations() == "1");  // only the POST
  CHECK(provider.effect_count() == 1);
}

TEST_CASE("PUT, PATCH and DELETE are protected by default: without Fence-Grant nothing is forwarded, with it they go through the ledger") {
  Booked b;
  auto& g = b.rig.gateway;
  auto& provider = b.rig.provider;
  std::int64_t version = 1;
  for (const std::string method : {"PUT", "PATCH", "DELETE"}) {
    CAPTURE(method);
    Write w;
    w.method = method;
    w.rest = "/bookings/bk_1";
    w.key = "op-" + method;
    w.expected_version = version;
    if (method != "DELETE") w.body = nlohmann::json{{"customer", "by-" + method}}.dump();

    const auto before = provider.requests().size();
    check_problem(send(b.c, w), 400, "invalid_grant");  // no Fence-Grant
    CHECK(provider.requests().size() == before);
    CHECK(b.operations() == std::to_string(version));

    w.grant = b.grant;
    auto done = send(b.c, w);
    CHECK(done.status == 200);
    CHECK(done.code() == "committed");
    CHECK(done.header("Committed-Version") == std::to_string(version + 1));
    const auto key = upstream_key("tenant-a", "task-a", w.key);
    CHECK(provider.requests_with_key(key) == 1);
    CHECK(provider.effects_for(key) == 1);
    const auto sent = provider.requests().back();
    CHECK(sent["method"] == method);
    CHECK(sent["headers"]["Fence-Owner"] == "region-a");
    CHECK(g.db().scalar("SELECT method || ' ' || state FROM operations WHERE op_id = '" + w.key + "'") ==
          method + " succeeded");

    // The exact retry is a replay, not a second forward.
    CHECK(send(b.c, w).code() == "historical_retry");
    CHECK(provider.requests_with_key(key) == 1);
    ++version;
  }
  CHECK(b.rig.provider.effect_count() == 4);
}

TEST_CASE("methods fail closed: lower-case post, PURGE and extension methods are fenced, TRACE and CONNECT never forwarded") {
  Booked b;
  auto& provider = b.rig.provider;
  const auto seen = provider.requests().size();
  const std::string path = task_path("tenant-a", "task-a", "providers/booking/bookings/bk_1");
  const Headers agent_only{{"Authorization", "Bearer " + agent_a}};
  for (const char* method : {"post", "Delete", "PURGE", "X-CUSTOM", "OPTIONS"}) {
    CAPTURE(method);
    check_problem(b.c.request(method, path, agent_only, ""), 400, "invalid_grant");
  }
  for (const char* method : {"TRACE", "trace", "CONNECT"}) {
    CAPTURE(method);
    // Even with every protected header: never sent.
    auto r = b.c.request(method, path,
                         {{"Authorization", "Bearer " + agent_a}, {"Fence-Grant", b.grant},
                          {"Idempotency-Key", std::string("k-") + method}, {"Expected-Version", "1"}},
                         "");
    if (std::string(method) == "CONNECT") {
      CHECK(r.status >= 400);  // the origin-form CONNECT is already malformed HTTP
    } else {
      check_problem(r, 405, "method_not_allowed");
    }
  }
  CHECK(provider.requests().size() == seen);
  CHECK(b.operations() == "1");

  // A fenced extension method goes through the ledger like POST.
  auto purge = b.c.request("PURGE", path,
                           {{"Authorization", "Bearer " + agent_a}, {"Fence-Grant", b.grant},
                            {"Idempotency-Key", "purge-1"}, {"Expected-Version", "1"}},
                           "");
  CHECK(purge.header("Gateway-Status") != "passthrough");
  CHECK(b.operations() == "2");
  CHECK(provider.requests().size() == seen + 1);
}

TEST_CASE("a GET with a method-override header is refused before it reaches the provider") {
  Booked b;
  auto& provider = b.rig.provider;
  const auto seen = provider.requests().size();
  const std::string path = task_path("tenant-a", "task-a", "providers/booking/bookings/bk_1");
  auto r = b.c.request("GET", path, {{"Authorization", "Bearer " + agent_a}, {"X-HTTP-Method-Override", "DELETE"}}, "");
  check_problem(r, 400, "invalid_request");
  CHECK(provider.requests().size() == seen);
  CHECK(HttpClient(b.rig.gateway.port()).get(path, agent_a).status == 200);  // bk_1 still there
}

TEST_CASE("a read or a write with a target-override header (X-Original-URL, X-Rewrite-URL) never reaches the provider") {
  Booked b;
  auto& provider = b.rig.provider;
  const auto seen = provider.requests().size();
  const auto operations = b.operations();
  const std::string path = task_path("tenant-a", "task-a", "providers/booking/bookings/bk_1");
  for (const char* name : {"X-Original-URL", "X-Rewrite-URL", "X_Original_URL"}) {
    CAPTURE(name);
    auto get = HttpClient(b.rig.gateway.port()).request("GET", path, {{"Authorization", "Bearer " + agent_a}, {name, "/admin"}}, "");
    check_problem(get, 400, "invalid_request");
    Write w;
    w.grant = b.grant;
    w.key = std::string("override-") + name;
    w.expected_version = 1;
    w.body = booking_body("slot-override");
    HttpClient c(b.rig.gateway.port());
    check_problem(send(c, w, {{name, "/bookings/bk_1/cancel"}}), 400, "invalid_request");
  }
  CHECK(provider.requests().size() == seen);
  CHECK(b.operations() == operations);  // nothing admitted either
}

TEST_CASE("an agent's '_' spelling of a gateway-owned header never reaches the provider") {
  // CGI, WSGI and PHP read Fence_Epoch as Fence-Epoch (HTTP_FENCE_EPOCH): a planted one would be believed.
  Booked b;
  auto& provider = b.rig.provider;
  Write w;
  w.grant = b.grant;
  w.key = "underscores";
  w.expected_version = 1;
  w.body = booking_body("slot-underscores");
  const Headers planted{{"Fence_Epoch", "planted-epoch"}, {"Fence_Owner", "planted-owner"}, {"Fence_Realm", "planted-realm"},
                        {"Idempotency_Key", "planted-key"}, {"X_Request_Id", "planted-id"}, {"X_Forwarded_For", "6.6.6.6"},
                        {"X-Kept_Custom", "kept-value"}};
  HttpClient c(b.rig.gateway.port());
  REQUIRE(send(c, w, planted).code() == "committed");
  const auto sent = provider.requests().back();
  CHECK(sent["method"] == "POST");
  const auto headers = sent["headers"].dump();
  CAPTURE(headers);
  for (const char* value : {"planted", "6.6.6.6"}) CHECK(headers.find(value) == std::string::npos);
  for (const char* name : {"Fence_", "fence_", "Idempotency_", "idempotency_", "X_Request", "x_request", "X_Forwarded",
                           "x_forwarded"})
    CHECK(headers.find(name) == std::string::npos);
  CHECK(headers.find("kept-value") != std::string::npos);  // a header of the agent's own with '_' still passes
}

TEST_CASE("a provider cannot set the gateway's own reply headers") {
  Booked b;
  auto& provider = b.rig.provider;
  provider.set_reply_headers({{"Committed-Version", "99"}, {"Idempotent-Replayed", "true"},
                              {"Gateway-Status", "committed"}, {"X-Provider-Trace", "t-1"}});
  const std::string path = task_path("tenant-a", "task-a", "providers/booking/bookings/bk_1");
  auto get = b.c.get(path, agent_a);
  REQUIRE(get.status == 200);
  CHECK_FALSE(get.header("Committed-Version"));
  CHECK_FALSE(get.header("Idempotent-Replayed"));
  CHECK_FALSE(get.header("Gateway-Status"));
  CHECK(get.header("X-Provider-Trace") == "t-1");

  Write w;
  w.grant = b.grant;
  w.key = "second";
  w.expected_version = 1;
  w.body = booking_body("slot-2");
  auto committed = send(b.c, w);
  REQUIRE(committed.code() == "committed");
  CHECK(committed.header("Committed-Version") == "2");
  CHECK_FALSE(committed.header("Idempotent-Replayed"));
}

TEST_CASE("a chunked body's trailer fields never reach the provider: a method override there is not forwarded") {
  Booked b;
  auto& provider = b.rig.provider;
  const auto seen = provider.requests().size();
  const std::string path = task_path("tenant-a", "task-a", "providers/booking/bookings/bk_1");
  // The head passes every check; the override and a second Authorization
  // arrive after the body, as trailer fields, where no head check looks.
  const auto reply = b.c.raw("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + agent_a +
                             "\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                             "0\r\nX-HTTP-Method-Override: DELETE\r\nAuthorization: Bearer " +
                             agent_b + "\r\n\r\n");
  const ParsedReply parsed = parse_raw(reply.bytes);
  CHECK(parsed.status_line == "HTTP/1.1 200 OK");
  const auto requests = provider.requests();
  REQUIRE(requests.size() == seen + 1);
  const auto& sent = requests.back();
  CHECK(sent["method"] == "GET");
  for (const auto& [name, value] : sent["headers"].items()) {
    CAPTURE(name);
    CHECK(name != "X-HTTP-Method-Override");
    CHECK(value.dump().find(agent_b) == std::string::npos);
  }
  CHECK(HttpClient(b.rig.gateway.port()).get(path, agent_a).status == 200);  // bk_1 still there
}

TEST_CASE("unprotected reads survive a provider that closes kept-alive connections: answered, and each reaches it once") {
  Booked b;
  auto& provider = b.rig.provider;
  const std::string path = task_path("tenant-a", "task-a", "providers/booking/bookings/bk_1");
  // Every reply is followed by a close the gateway only learns of when it
  // next uses the connection: a read is sent again on a new one (it never
  // reached the provider), not failed and not answered 502.
  provider.set_fault("close_after_reply");
  for (int i = 0; i < 6; ++i) {
    CAPTURE(i);
    CHECK(b.c.get(path, agent_a).status == 200);
  }
  const auto requests = provider.requests();
  int reads = 0;
  for (const auto& r : requests) reads += r["method"] == "GET";
  CHECK(reads == 6);
  CHECK(b.operations() == "1");
  CHECK(provider.effect_count() == 1);
}

TEST_CASE("an unprotected read the provider dropped unanswered on a kept-alive connection is sent once more, a protected write never") {
  Booked b;
  auto& provider = b.rig.provider;
  const std::string path = task_path("tenant-a", "task-a", "providers/booking/bookings/bk_1");
  REQUIRE(b.c.get(path, agent_a).status == 200);  // the gateway now keeps a connection to the provider
  const auto before = provider.requests().size();
  provider.set_fault("drop_after_execute", 0, 1);
  auto read = b.c.get(path, agent_a);
  CHECK(read.status == 200);
  CHECK(provider.requests().size() == before + 2);  // the dropped GET, then the same GET on a new connection

  provider.set_fault("drop_after_execute", 0, 1);
  Write w;
  w.grant = b.grant;
  w.key = "second";
  w.expected_version = 1;
  w.body = booking_body("slot-2");
  CHECK(send(b.c, w).code() == "unknown_outcome");  // held, not resent
  CHECK(provider.requests().size() == before + 3);
  CHECK(provider.effect_count() == 2);
}

TEST_CASE("an unprotected read that reached the provider and got no reply is 502 saying it was sent, and nothing is held") {
  Booked b;
  auto& provider = b.rig.provider;
  const std::string path = task_path("tenant-a", "task-a", "providers/booking/bookings/bk_1");
  REQUIRE(b.c.get(path, agent_a).status == 200);  // a kept-alive connection to the provider
  const auto before = provider.requests().size();
  // The read on the kept-alive connection and its one resend on a new one.
  provider.set_fault("drop_after_execute", 0, 2);
  auto read = b.c.get(path, agent_a);
  check_problem(read, 502, "provider_unavailable");
  const auto problem = read.json();
  CHECK(problem["title"] == "Provider unavailable");
  const auto detail = problem["detail"].get<std::string>();
  CHECK(detail.find("failed_after_send") != std::string::npos);
  CHECK(detail.find("the request was sent and may have been processed") != std::string::npos);
  CHECK(detail.find("nothing was sent") == std::string::npos);
  CHECK(provider.requests().size() == before + 2);
  CHECK(b.operations() == "1");  // the booking's write only: a read is never recorded
  CHECK(b.c.get(path, agent_a).status == 200);  // and nothing blocks the next one
}
