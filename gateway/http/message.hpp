// Plain HTTP request and response values exchanged between the Beast server
// and the application, so that routing and handlers never include Beast.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gw::http {

using Fields = std::vector<std::pair<std::string, std::string>>;

bool iequals(std::string_view a, std::string_view b);

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

// Completes one request; may be called from any thread, exactly once.
using Responder = std::function<void(Response)>;
using Handler = std::function<void(Request, Responder)>;

}  // namespace gw::http
