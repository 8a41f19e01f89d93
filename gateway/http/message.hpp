// Plain HTTP request and response values exchanged between the Beast server
// and the application, so that routing and handlers never include Beast
// (only Asio's awaitable, to answer as a coroutine).
#pragma once

#include "core/header_field.hpp"
#include "core/labels.hpp"

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gw::http {

using Fields = std::vector<HeaderField>;

inline bool iequals(std::string_view a, std::string_view b) { return ascii_iequals(a, b); }

// First value of a header, names compared case-insensitively.
std::optional<std::string_view> find_header(const Fields& fields, std::string_view name);

struct Request {
  std::string method;
  std::string target;  // origin-form: path and query exactly as received
  Fields headers;      // in order, original spelling
  std::string body;
  std::string remote;  // peer address, for Forwarded and logs
  bool keep_alive = true;

  std::optional<std::string_view> header(std::string_view name) const {
    return find_header(headers, name);
  }
};

struct Response {
  unsigned status = 200;
  Fields headers;
  std::string body;
  bool close = false;  // close the connection after this reply
  // HEAD replies keep the provider's Content-Length without a body.
  std::optional<std::string> content_length_override;

  void set(std::string name, std::string value);
  std::optional<std::string_view> header(std::string_view name) const {
    return find_header(headers, name);
  }
};

// Answers one request. The coroutine runs on the connection's strand and
// must not throw: every failure is a reply.
using Handler = std::function<boost::asio::awaitable<Response>(Request)>;

}  // namespace gw::http
