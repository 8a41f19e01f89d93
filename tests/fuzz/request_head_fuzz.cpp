// Raw bytes as what a client sends on one connection, read the way
// gateway/http/server.cpp reads it: a fresh gw::http::RequestParser (Beast's
// basic_parser filling the application's Request) per request with the
// default header and body limits, the head checked by
// gw::http::head_problem before any body byte is read, then the body, then the
// next request on a kept-alive connection (so pipelined and smuggled requests
// are parsed as the server would). A complete request's target goes through
// the routing helpers gw::split_target and gw::percent_decode.
//
// Traps when a head that head_problem lets through still has ambiguous
// framing (by its documented rules, or by disagreeing with what Beast reads),
// when a field arrives after the head (a chunked body's trailer must never
// reach the application), or when the routing helpers contradict their own
// contract.
#include "http/framing.hpp"
#include "http/message.hpp"
#include "http/request_parser.hpp"
#include "service/api/path.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

using gw::http::Fields;
using gw::http::RequestParser;

// gw::http::ServerLimits' defaults (also the config's http defaults).
constexpr std::size_t max_header_bytes = 16 << 10;
constexpr std::size_t max_body_bytes = 1 << 20;
// A connection with more pipelined requests than this adds nothing new.
constexpr int max_requests = 8;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

std::size_t count(const Fields& fields, std::string_view name) {
  std::size_t n = 0;
  for (const auto& [k, v] : fields) n += gw::http::iequals(k, name) ? 1 : 0;
  return n;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// What head_problem promises about a head it lets through (framing.hpp).
void check_accepted_head(std::string_view target, const Fields& fields, const RequestParser& parser) {
  for (unsigned char c : target) check(c >= 0x21 && c <= 0x7e);
  const auto te = count(fields, "Transfer-Encoding");
  check(te <= 1);
  if (te == 1) {
    check(gw::http::iequals(trim(*gw::http::find_header(fields, "Transfer-Encoding")), "chunked"));
    check(count(fields, "Content-Length") == 0);
  }
  for (auto name : {"Content-Length", "Host", "Authorization", "Fence-Grant", "Idempotency-Key", "Expected-Version",
                    "Content-Type", "Expect", "X-Request-Id"})
    check(count(fields, name) <= 1);
  for (auto name : {"X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override"}) check(count(fields, name) == 0);
  // Beast frames the body the way those headers say: chunked exactly when
  // Transfer-Encoding is there, a length only from a Content-Length.
  check(parser.chunked() == (te == 1));
  if (parser.content_length()) check(!parser.chunked() && count(fields, "Content-Length") == 1);
}

void check_percent_decode(std::string_view text) {
  const auto decoded = gw::percent_decode(text);
  if (text.find('%') == std::string_view::npos) {
    check(decoded && *decoded == text);
    return;
  }
  if (!decoded) return;
  std::size_t escapes = 0;
  for (char c : text) escapes += c == '%' ? 1 : 0;
  check(decoded->size() == text.size() - 2 * escapes);
  // Every byte escaped decodes back to the same bytes.
  static constexpr char hex[] = "0123456789abcdef";
  std::string encoded;
  for (unsigned char c : *decoded) {
    encoded += '%';
    encoded += hex[c >> 4];
    encoded += hex[c & 15];
  }
  const auto again = gw::percent_decode(encoded);
  check(again && *again == *decoded);
}

void check_routing(std::string_view target) {
  check_percent_decode(target);
  const auto split = gw::split_target(target);
  if (!split) return;
  check(!target.empty() && target.front() == '/');
  // raw_path, then '?' and the query when there is one: the target, byte for byte.
  check(split->raw_path.find('?') == std::string_view::npos);
  std::string rebuilt(split->raw_path);
  if (rebuilt.size() < target.size()) rebuilt.append(1, '?').append(split->query);
  check(rebuilt == target);
  check_percent_decode(split->query);
  // One decoded segment per '/'-separated piece of the path; none for "/".
  if (split->raw_path == "/") {
    check(split->segments.empty());
    return;
  }
  std::string_view rest = split->raw_path.substr(1);
  std::size_t i = 0;
  for (;; ++i) {
    const auto slash = rest.find('/');
    const auto piece = rest.substr(0, slash);
    check(i < split->segments.size());
    const auto decoded = gw::percent_decode(piece);
    check(decoded && *decoded == split->segments[i]);
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  check(i + 1 == split->segments.size());
}

// One request from the front of `input`, as server.cpp's session loop reads
// it. Returns the bytes it used when the connection would go on to read
// another request, 0 when the server would close it.
std::size_t one_request(std::string_view input) {
  RequestParser parser;
  parser.header_limit(static_cast<std::uint32_t>(max_header_bytes));
  parser.body_limit(max_body_bytes);
  boost::beast::error_code ec;

  // async_read_header: the whole head must be in the buffer.
  std::size_t used = parser.put(boost::asio::buffer(input.data(), input.size()), ec);
  if (ec || !parser.is_header_done()) return 0;  // malformed, too large, or incomplete: 400/413 or wait
  if (used > max_header_bytes) return 0;        // 413, as the server counts the head

  const gw::http::Request& request = parser.request;
  const std::string_view target_view = request.target;
  const Fields fields = request.headers;
  if (gw::http::head_problem(target_view, fields)) return 0;  // 400, connection closed
  check_accepted_head(target_view, fields, parser);
  if (auto length = parser.content_length(); length && *length > max_body_bytes) return 0;  // 413

  // async_read: the rest of the message, eagerly.
  parser.eager(true);
  while (!parser.is_done()) {
    const auto n = parser.put(boost::asio::buffer(input.data() + used, input.size() - used), ec);
    used += n;
    if (ec || n == 0) return 0;  // malformed, over the limit, or the connection ends mid-body
  }
  check(used <= input.size());

  check(request.body.size() <= max_body_bytes);
  check(request.headers == fields);  // the head's fields, no trailer among them
  check_routing(request.target);
  return parser.keep_alive() ? used : 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  for (int i = 0; i < max_requests && !input.empty(); ++i) {
    const auto used = one_request(input);
    if (used == 0) break;
    input.remove_prefix(used);
  }
  return 0;
}
