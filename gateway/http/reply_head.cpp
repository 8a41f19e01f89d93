// Reply heads (see reply_head.hpp).
#include "http/reply_head.hpp"

#include "core/http_syntax.hpp"

#include <boost/beast/http/status.hpp>

#include <algorithm>

namespace gw::http {
namespace {

bool writable(const std::string& name, const std::string& value) {
  return is_http_token(name) && is_field_value(value);
}

// Written by the server from the reply itself, never copied from its fields.
bool is_framing(std::string_view name) {
  return iequals(name, "Connection") || iequals(name, "Content-Length") || iequals(name, "Transfer-Encoding");
}

// The status line's reason phrase. The standard one, except where it would
// misstate what happened: unknown_outcome is 504 (spec section 5) also when
// the provider answered at once (a 5xx), where "Gateway Timeout" is false.
std::string_view reason_phrase(const Response& reply) {
  namespace bhttp = boost::beast::http;
  if (reply.status == 504) {
    const auto code = reply.header("Gateway-Status");
    if (code && *code == "unknown_outcome") return "Outcome Unknown";
  }
  const auto reason = bhttp::obsolete_reason(bhttp::int_to_status(reply.status));
  return {reason.data(), reason.size()};
}

}  // namespace

bool reply_has_body(unsigned status) { return !(status < 200 || status == 204 || status == 304); }

std::string reply_head(const Response& reply, unsigned version, bool keep_alive, bool head) {
  const auto reason = reason_phrase(reply);
  std::size_t size = 64 + reason.size();
  for (const auto& [name, value] : reply.headers) size += name.size() + value.size() + 4;
  std::string out;
  out.reserve(size);
  out += version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
  out += std::to_string(reply.status);
  out += ' ';
  out.append(reason.data(), reason.size());
  out += "\r\n";
  for (const auto& [name, value] : reply.headers) {
    if (is_framing(name) || !writable(name, value)) continue;
    out += name;
    out += ": ";
    out += value;
    out += "\r\n";
  }
  // HTTP/1.1 keeps the connection unless told; HTTP/1.0 closes it unless told.
  if (version == 10 && keep_alive) out += "Connection: keep-alive\r\n";
  if (version != 10 && !keep_alive) out += "Connection: close\r\n";
  if (reply_has_body(reply.status)) {
    out += "Content-Length: ";
    const auto& length = reply.content_length_override;
    if (head && length && !length->empty() && std::all_of(length->begin(), length->end(), [](char c) {
          return c >= '0' && c <= '9';
        }))
      out += *length;
    else
      out += std::to_string(reply.body.size());
    out += "\r\n";
  }
  out += "\r\n";
  return out;
}

}  // namespace gw::http
