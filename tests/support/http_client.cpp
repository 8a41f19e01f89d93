#include "support/http_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <strings.h>

namespace gw::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

std::optional<std::string> Reply::header(const std::string& name) const {
  for (const auto& [k, v] : headers)
    if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
  return std::nullopt;
}

nlohmann::json Reply::json() const { return nlohmann::json::parse(body, nullptr, false); }

std::string Reply::code() const { return header("Gateway-Status").value_or(""); }

struct HttpClient::Impl {
  std::uint16_t port;
  std::chrono::milliseconds timeout;
  asio::io_context io;
  std::optional<beast::tcp_stream> stream;
  beast::flat_buffer buffer;

  void connect() {
    stream.emplace(io);
    stream->expires_after(timeout);
    stream->connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  }

  // One blocking exchange with deadlines, driven by run_for on our own io.
  Reply exchange(bhttp::request<bhttp::string_body>& req) {
    if (!stream) connect();
    stream->expires_after(timeout);
    beast::error_code ec;
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(64 << 20);
    bool done = false;
    bhttp::async_write(*stream, req, [&](beast::error_code e, std::size_t) {
      if (e) {
        ec = e;
        done = true;
        return;
      }
      bhttp::async_read(*stream, buffer, parser, [&](beast::error_code e2, std::size_t) {
        ec = e2;
        done = true;
      });
    });
    io.restart();
    while (!done && io.run_one()) {
    }
    if (ec) {
      stream.reset();
      buffer.clear();
      throw beast::system_error(ec);
    }
    auto res = parser.release();
    Reply r;
    r.status = res.result_int();
    for (const auto& f : res) r.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    r.body = std::move(res.body());
    if (!res.keep_alive()) {
      stream.reset();
      buffer.clear();
    }
    return r;
  }
};

HttpClient::HttpClient(std::uint16_t port, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
  impl_->port = port;
  impl_->timeout = timeout;
}

HttpClient::~HttpClient() = default;
HttpClient::HttpClient(HttpClient&&) noexcept = default;

Reply HttpClient::request(const std::string& method, const std::string& target, const Headers& headers,
                          const std::string& body) {
  bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), target, 11};
  if (req.method() == bhttp::verb::unknown) req.method_string(method);
  req.set(bhttp::field::host, "127.0.0.1");
  for (const auto& [k, v] : headers) req.insert(k, v);
  req.body() = body;
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") req.prepare_payload();
  // One retry on a fresh connection when the server closed a kept-alive one.
  try {
    return impl_->exchange(req);
  } catch (const beast::system_error&) {
    return impl_->exchange(req);
  }
}

Reply HttpClient::post_json(const std::string& target, const nlohmann::json& body, const std::string& token) {
  Headers h{{"Content-Type", "application/json"}};
  if (!token.empty()) h.emplace_back("Authorization", "Bearer " + token);
  return request("POST", target, h, body.dump());
}

Reply HttpClient::get(const std::string& target, const std::string& token) {
  Headers h;
  if (!token.empty()) h.emplace_back("Authorization", "Bearer " + token);
  return request("GET", target, h);
}

std::string HttpClient::raw(const std::string& bytes) {
  asio::io_context io;
  beast::tcp_stream s(io);
  s.expires_after(impl_->timeout);
  s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), impl_->port));
  s.expires_after(impl_->timeout);
  beast::error_code ec;
  asio::write(s.socket(), asio::buffer(bytes), ec);
  std::string out;
  char chunk[4096];
  bool done = false;
  std::function<void()> read_more = [&] {
    s.async_read_some(asio::buffer(chunk), [&](beast::error_code e, std::size_t n) {
      out.append(chunk, n);
      if (e) {
        done = true;
        return;
      }
      read_more();
    });
  };
  read_more();
  while (!done && io.run_one()) {
  }
  return out;
}

}  // namespace gw::test
