// A small synchronous HTTP/1.1 client for tests: real sockets, keep-alive,
// and raw bytes for malformed-input tests. It never hides a failure: a
// request is resent only in the one case where it provably did no harm
// (see HttpClient::request), and a byte the server sent that no request
// asked for (a second reply to one request) is an error, not a reason to
// reconnect.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gw::test {

struct Reply {
  unsigned status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  std::optional<std::string> header(const std::string& name) const;
  nlohmann::json json() const;
  // The Gateway-Status header ("" when absent).
  std::string code() const;
};

// What HttpClient::raw received, and how the exchange ended.
struct RawReply {
  std::string bytes;
  bool closed_by_peer = false;  // EOF or reset: the server ended the connection
  bool timed_out = false;       // the client's deadline passed first
};

using Headers = std::vector<std::pair<std::string, std::string>>;

// Thrown by HttpClient::request when the server sent bytes no request asked
// for: after a whole reply, or on a kept-alive connection between requests.
// The client never pipelines, so these are a second reply to one request or
// garbage, and the connection can no longer be trusted to line replies up
// with requests. what() says how many bytes and shows the first ones.
class UnexpectedBytes : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The first bytes of `bytes`, quoted, with control and non-ASCII bytes
// escaped: enough of a stray reply to recognise it in a failure message.
std::string quoted_start(std::string_view bytes);

class HttpClient {
 public:
  explicit HttpClient(std::uint16_t port, std::chrono::milliseconds timeout = std::chrono::seconds(30));
  ~HttpClient();
  HttpClient(HttpClient&&) noexcept;

  // Throws boost::system::system_error on failure (beast::error::timeout when
  // the deadline passed), UnexpectedBytes when bytes follow the reply or wait
  // on the kept-alive connection before the request is sent. Resent once
  // only when all of these hold: GET or HEAD without Idempotency-Key or
  // Fence-Grant, on a reused keep-alive connection, which ended (EOF, reset,
  // broken pipe) before any response byte arrived: the server closed an idle
  // connection. Never after a timeout.
  Reply request(const std::string& method, const std::string& target, const Headers& headers = {},
                const std::string& body = {});
  Reply post_json(const std::string& target, const nlohmann::json& body, const std::string& token);
  Reply get(const std::string& target, const std::string& token);

  // Sends bytes as they are on a new connection; returns everything the
  // server sent until it closed the connection or the timeout passed.
  RawReply raw(const std::string& bytes);

  // Connections request() has opened so far: 1 while one keep-alive
  // connection carried every request (raw() does not count).
  std::size_t connections_opened() const;
  // Of those, how many silently replaced a kept-alive connection the server
  // had closed without saying so: found closed (EOF or reset) before the
  // next request was sent, or closed under a safe read that was resent. A
  // reply that said Connection: close is not counted (the test saw it), nor
  // a connection dropped after a failed request (request() threw). A test
  // that claims one connection survived something checks this is 0.
  std::size_t reconnects() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gw::test
