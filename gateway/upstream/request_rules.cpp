// Request checks and defaults (see request_rules.hpp).
#include "upstream/request_rules.hpp"

#include "core/http_syntax.hpp"
#include "core/labels.hpp"

#include <algorithm>
#include <cstring>

namespace gw::upstream::detail {
namespace {

bool is_target(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u > 0x20 && u != 0x7f;
  });
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) { return ascii_iequals(a, b); }

std::string request_problem(const Request& request) {
  if (!is_http_token(request.method)) return "invalid method";
  if (!is_target(request.target)) return "invalid request target";
  for (const auto& header : request.headers) {
    if (!is_http_token(header.name)) return "invalid header name";
    if (!is_field_value(header.value)) return "invalid value for header " + header.name;
  }
  return {};
}

std::string default_host(const Endpoint& endpoint) {
  std::string host = endpoint.host.find(':') != std::string::npos ? "[" + endpoint.host + "]" : endpoint.host;
  const std::string_view default_port = endpoint.tls ? "443" : "80";
  if (endpoint.port.empty() || endpoint.port == default_port) return host;
  return host + ":" + endpoint.port;
}

bool needs_content_length(std::string_view method, std::size_t body_size) {
  return body_size > 0 || method == "POST" || method == "PUT" || method == "PATCH";
}

bool is_framing_header(std::string_view name) {
  return iequals(name, "Content-Length") || iequals(name, "Transfer-Encoding");
}

std::string wire_head(const Request& request, const Endpoint& endpoint) {
  const bool has_host = std::any_of(request.headers.begin(), request.headers.end(),
                                    [](const Header& h) { return iequals(h.name, "Host"); });
  const std::string host = has_host ? std::string() : default_host(endpoint);
  const bool length = needs_content_length(request.method, request.body.size());
  const std::string length_digits = length ? std::to_string(request.body.size()) : std::string();

  // Sized once, then each piece copied in place: a head is a dozen or more
  // pieces, and appending them one by one checked the capacity for each.
  std::size_t size = request.method.size() + 1 + request.target.size() + 11 + 2;
  if (!has_host) size += 6 + host.size() + 2;
  for (const auto& header : request.headers) size += header.name.size() + 2 + header.value.size() + 2;
  if (length) size += 16 + length_digits.size() + 2;
  std::string head(size, '\0');
  char* at = head.data();
  const auto put = [&at](std::string_view piece) {
    std::memcpy(at, piece.data(), piece.size());
    at += piece.size();
  };
  put(request.method);
  put(" ");
  put(request.target);
  put(" HTTP/1.1\r\n");
  if (!has_host) {
    put("Host: ");
    put(host);
    put("\r\n");
  }
  for (const auto& header : request.headers) {
    if (is_framing_header(header.name)) continue;
    put(header.name);
    put(": ");
    put(header.value);
    put("\r\n");
  }
  if (length) {
    put("Content-Length: ");
    put(length_digits);
    put("\r\n");
  }
  put("\r\n");
  head.resize(static_cast<std::size_t>(at - head.data()));  // less the framing fields dropped
  return head;
}

bool asks_close(const std::vector<Header>& headers) {
  for (const auto& header : headers) {
    if (!iequals(header.name, "Connection")) continue;
    // A comma-separated list of tokens, with optional whitespace.
    std::string_view rest = header.value;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      std::string_view token = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) token.remove_prefix(1);
      while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
      if (iequals(token, "close")) return true;
    }
  }
  return false;
}

}  // namespace gw::upstream::detail
