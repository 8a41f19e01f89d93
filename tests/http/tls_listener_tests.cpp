// Inbound TLS (issue #8): the listener serves HTTPS with the certificate
// from listen.tls, optionally requires client certificates (mutual TLS),
// enforces its minimum version, bounds the handshake by header_timeout, and
// reloads its files without dropping a connection. Every case is a real
// handshake against a real gateway, with certificates made by the openssl
// CLI for the test.
#include "support/gateway_fixture.hpp"
#include "support/process.hpp"
#include "support/tls_certs.hpp"
#include "support/tls_client.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <doctest/doctest.h>

#include <openssl/ssl.h>

#include <csignal>
#include <sys/wait.h>

using namespace gw;
using namespace gw::test;
using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace beast = boost::beast;

namespace {

// A server certificate and the CA that signed it.
struct ServerCert {
  CertFiles ca;
  CertFiles cert;
};

ServerCert make_server_cert(const CertDir& dir, const std::string& name, std::uint32_t serial) {
  auto ca = dir.ca("ca-" + name);
  return {ca, dir.issue(ca, "server-" + name, serial)};
}

nlohmann::json tls_json(const CertFiles& server) {
  return {{"cert_file", server.cert}, {"key_file", server.key}};
}

// A gateway config edit that serves HTTPS with `tls`.
std::function<void(nlohmann::json&)> with_tls(nlohmann::json tls) {
  return [tls](nlohmann::json& c) { c["listen"]["tls"] = tls; };
}

TlsClientOptions trusting(const CertFiles& ca) { return TlsClientOptions{ca.cert, std::nullopt, 0}; }

// GET /healthz on a new connection: the status, or 0 when no reply came.
unsigned healthz(std::uint16_t port, const TlsClientOptions& options) {
  auto r = https_request(port, options, "GET", "/healthz");
  INFO(r.describe());
  return r.reply ? r.reply->status : 0;
}

unsigned healthz(TlsConnection& c) {
  auto r = c.request("GET", "/healthz");
  INFO(r.describe());
  return r.reply ? r.reply->status : 0;
}

}  // namespace

TEST_CASE("tls: HTTPS over a verified handshake, while plain HTTP to the TLS port gets no HTTP reply and serving goes on") {
  CertDir dir;
  auto server = make_server_cert(dir, "a", 0x1001);
  Gateway g({.manual_clock = true, .edit = with_tls(tls_json(server.cert))});

  TlsConnection c(g.port(), trusting(server.ca));
  CHECK(healthz(c) == 200);
  CHECK(c.peer_serial() == 0x1001);
  CHECK(healthz(c) == 200);  // keep-alive over TLS
  // A reply that closes the connection is followed by close_notify: the
  // client can tell the end of the stream from a cut.
  auto last = c.request("GET", "/healthz", {{"Connection", "close"}});
  REQUIRE_MESSAGE(last.reply, last.describe());
  CHECK(last.reply->status == 200);
  CHECK(c.wait_for_close() == asio::error::eof);

  // The bytes of a plain request are no ClientHello: the handshake fails and
  // the connection closes without a byte of HTTP.
  auto raw = HttpClient(g.port(), 10s).raw("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n");
  CHECK(raw.closed_by_peer);
  CHECK(raw.bytes.find("HTTP/") == std::string::npos);
  bool refused = false;
  try {
    refused = HttpClient(g.port(), 10s).get("/healthz", "").status != 200;
  } catch (const std::exception&) {
    refused = true;
  }
  CHECK(refused);

  // A client that trusts another CA refuses the gateway's certificate.
  auto other = dir.ca("other");
  auto untrusted = https_request(g.port(), trusting(other), "GET", "/healthz");
  CHECK_FALSE(untrusted.reply);
  CHECK(untrusted.in_handshake);

  CHECK(healthz(g.port(), trusting(server.ca)) == 200);
}

TEST_CASE("tls: a protected flow over TLS: a claim is granted") {
  CertDir dir;
  auto server = make_server_cert(dir, "a", 0x1001);
  Gateway g({.manual_clock = true, .edit = with_tls(tls_json(server.cert))});
  auto r = https_request(g.port(), trusting(server.ca), "POST", task_path("tenant-a", "t1", "claim"),
                         {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + agent_a}},
                         nlohmann::json{{"owner", "o"}, {"lease_ms", 60000}}.dump());
  REQUIRE_MESSAGE(r.reply, r.describe());
  CHECK_MESSAGE(r.reply->status == 200, r.reply->body);
  CHECK(r.reply->code() == "granted");
  CHECK(r.reply->json()["grant"]["owner"] == "o");
  CHECK(r.reply->json()["grant"]["task"] == "t1");
}

TEST_CASE("tls: with client_ca_file, only a client certificate from that CA gets through") {
  CertDir dir;
  auto server = make_server_cert(dir, "a", 0x1001);
  auto agents_ca = dir.ca("agents");
  auto stranger_ca = dir.ca("stranger");
  auto tls = tls_json(server.cert);
  tls["client_ca_file"] = agents_ca.cert;
  Gateway g({.manual_clock = true, .edit = with_tls(tls)});

  auto options = trusting(server.ca);
  // No certificate. Under TLS 1.3 the client's side of the handshake ends
  // before the server has checked it, so the refusal (an alert) may only
  // show at the first read: either way no request is served.
  auto none = https_request(g.port(), options, "GET", "/healthz");
  CHECK_MESSAGE(!none.reply, none.describe());

  options.certificate = dir.issue(agents_ca, "agent-1", 0x3001, false);
  CHECK(healthz(g.port(), options) == 200);

  options.certificate = dir.issue(stranger_ca, "agent-2", 0x3002, false);
  auto stranger = https_request(g.port(), options, "GET", "/healthz");
  CHECK_MESSAGE(!stranger.reply, stranger.describe());

  // Refusals end only their own connections.
  options.certificate = dir.issue(agents_ca, "agent-3", 0x3003, false);
  CHECK(healthz(g.port(), options) == 200);
}

TEST_CASE("tls: a reload serves new connections with the new files and never drops an open one") {
  CertDir dir;
  auto a = make_server_cert(dir, "a", 0x1001);
  auto b = make_server_cert(dir, "b", 0x2002);
  CertFiles live{dir.copy(a.cert.cert, "live.pem"), dir.copy(a.cert.key, "live.key")};
  Gateway g({.manual_clock = true, .edit = with_tls(tls_json(live))});

  TlsConnection old(g.port(), trusting(a.ca));
  CHECK(healthz(old) == 200);
  CHECK(old.peer_serial() == 0x1001);

  dir.copy(b.cert.cert, "live.pem");
  dir.copy(b.cert.key, "live.key");
  auto reloaded = g.runtime().reload_tls();
  REQUIRE_MESSAGE(reloaded.ok, reloaded.error);

  // The open connection goes on with what it started with.
  CHECK(healthz(old) == 200);
  // A new one gets certificate B: verified against CA B alone, and no longer against CA A.
  TlsConnection fresh(g.port(), trusting(b.ca));
  CHECK(healthz(fresh) == 200);
  CHECK(fresh.peer_serial() == 0x2002);
  CHECK(fresh.peer_issuer() == "/CN=Test CA ca-b");
  auto with_a = https_request(g.port(), trusting(a.ca), "GET", "/healthz");
  CHECK_FALSE(with_a.reply);
  CHECK(with_a.in_handshake);

  // A broken key: the reload fails, says why, and B stays in use.
  dir.write("live.key", "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n");
  auto broken = g.runtime().reload_tls();
  CHECK_FALSE(broken.ok);
  CHECK_MESSAGE(broken.error.find("listen.tls.key_file: ") == 0, broken.error);
  TlsConnection after_broken(g.port(), trusting(b.ca));
  CHECK(healthz(after_broken) == 200);
  CHECK(after_broken.peer_serial() == 0x2002);

  // A key that belongs to another certificate: refused the same way.
  dir.copy(a.cert.key, "live.key");
  auto mismatched = g.runtime().reload_tls();
  CHECK_FALSE(mismatched.ok);
  CHECK_MESSAGE(mismatched.error.find("does not match the certificate") != std::string::npos, mismatched.error);
  CHECK(healthz(g.port(), trusting(b.ca)) == 200);

  // Through all of it the first connection was never dropped.
  CHECK(healthz(old) == 200);
  CHECK(healthz(fresh) == 200);
}

TEST_CASE("tls: the minimum version: 1.2 by default refuses a TLS 1.1 client, and 1.3 refuses a TLS 1.2 client") {
  CertDir dir;
  auto server = make_server_cert(dir, "a", 0x1001);
  {
    Gateway g({.manual_clock = true, .edit = with_tls(tls_json(server.cert))});
    auto options = trusting(server.ca);
    options.max_version = TLS1_1_VERSION;
    auto old = https_request(g.port(), options, "GET", "/healthz");
    CHECK_FALSE(old.reply);
    CHECK(old.in_handshake);
    // The server's refusal, not a client that could not offer TLS 1.1 at all.
    CHECK_MESSAGE(old.error.message().find("alert protocol version") != std::string::npos, old.error.message());
    options.max_version = TLS1_2_VERSION;
    CHECK(healthz(g.port(), options) == 200);
  }
  auto tls = tls_json(server.cert);
  tls["min_version"] = "1.3";
  Gateway g({.manual_clock = true, .edit = with_tls(tls)});
  auto options = trusting(server.ca);
  options.max_version = TLS1_2_VERSION;
  auto old = https_request(g.port(), options, "GET", "/healthz");
  CHECK_FALSE(old.reply);
  CHECK(old.in_handshake);
  CHECK_MESSAGE(old.error.message().find("alert protocol version") != std::string::npos, old.error.message());
  options.max_version = TLS1_3_VERSION;
  CHECK(healthz(g.port(), options) == 200);
}

TEST_CASE("tls: a client that never sends its ClientHello is cut at header_timeout, not idle_timeout") {
  CertDir dir;
  auto server = make_server_cert(dir, "a", 0x1001);
  Gateway g({.manual_clock = true, .edit = [&](nlohmann::json& c) {
               c["listen"]["tls"] = tls_json(server.cert);
               c["http"]["header_timeout_ms"] = 500;
               c["http"]["idle_timeout_ms"] = 600000;
             }});
  asio::io_context io;
  beast::tcp_stream s(io);
  s.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), g.port()));
  const auto start = std::chrono::steady_clock::now();
  // Our own deadline only bounds a hang; the server's close is what is checked.
  s.expires_after(30s);
  char byte;
  std::optional<beast::error_code> ended;
  s.async_read_some(asio::buffer(&byte, 1), [&](beast::error_code ec, std::size_t) { ended = ec; });
  while (!ended && io.run_one()) {
  }
  const auto waited = std::chrono::steady_clock::now() - start;
  REQUIRE(ended);
  CHECK_MESSAGE((*ended == asio::error::eof || *ended == asio::error::connection_reset), ended->message());
  CHECK(waited >= 400ms);
  CHECK(waited < 30s);
  // The gateway still serves a client that does speak.
  CHECK(healthz(g.port(), trusting(server.ca)) == 200);
}

TEST_CASE("tls: SIGHUP to the write-gateway process reloads the files named in its config") {
  TestDatabase db;
  CertDir dir;
  auto a = make_server_cert(dir, "a", 0x1001);
  auto b = make_server_cert(dir, "b", 0x2002);
  CertFiles live{dir.copy(a.cert.cert, "live.pem"), dir.copy(a.cert.key, "live.key")};
  auto config = test_config_json(db.url());
  config["listen"]["tls"] = tls_json(live);
  GatewayProcess gateway(config, true);

  TlsConnection old(gateway.port(), trusting(a.ca));
  CHECK(healthz(old) == 200);

  dir.copy(b.cert.cert, "live.pem");
  dir.copy(b.cert.key, "live.key");
  gateway.signal(SIGHUP);
  gateway.wait_for_line("write-gateway reloaded its TLS files", 30s);
  TlsConnection fresh(gateway.port(), trusting(b.ca));
  CHECK(healthz(fresh) == 200);
  CHECK(fresh.peer_serial() == 0x2002);
  CHECK(healthz(old) == 200);

  dir.write("live.pem", "not a certificate\n");
  gateway.signal(SIGHUP);
  auto line = gateway.wait_for_line("TLS reload failed", 30s);
  CHECK_MESSAGE(line.find("listen.tls.cert_file") != std::string::npos, line);
  CHECK(healthz(gateway.port(), trusting(b.ca)) == 200);

  const int status = gateway.terminate(10s);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
