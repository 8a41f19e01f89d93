// Request checks and defaults (see request_rules.hpp).
#include "upstream/request_rules.hpp"

#include "core/http_syntax.hpp"
#include "core/labels.hpp"

#include <algorithm>

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
  std::string head;
  std::size_t size = request.method.size() + request.target.size() + 64;
  for (const auto& header : request.headers) size += header.name.size() + header.value.size() + 4;
  head.reserve(size);
  head += request.method;
  head += ' ';
  head += request.target;
  head += " HTTP/1.1\r\n";
  const bool has_host = std::any_of(request.headers.begin(), request.headers.end(),
                                    [](const Header& h) { return iequals(h.name, "Host"); });
  if (!has_host) {
    head += "Host: ";
    head += default_host(endpoint);
    head += "\r\n";
  }
  for (const auto& header : request.headers) {
    if (is_framing_header(header.name)) continue;
    head += header.name;
    head += ": ";
    head += header.value;
    head += "\r\n";
  }
  if (needs_content_length(request.method, request.body.size())) {
    head += "Content-Length: ";
    head += std::to_string(request.body.size());
    head += "\r\n";
  }
  head += "\r\n";
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
