#include "service/api/query.hpp"

#include "core/base64url.hpp"
#include "core/labels.hpp"
#include "service/api/path.hpp"
#include "service/api/refusal.hpp"

#include <algorithm>

namespace gw {

Query parse_query(std::string_view query, std::initializer_list<std::string_view> allowed) {
  Query out;
  if (query.empty()) return out;
  for (bool last = false; !last;) {
    const auto amp = query.find('&');
    last = amp == std::string_view::npos;
    const auto pair = query.substr(0, amp);
    query = last ? std::string_view() : query.substr(amp + 1);
    const auto eq = pair.find('=');
    if (eq == std::string_view::npos)
      throw Refusal(Code::invalid_request, "query parameters must be name=value pairs");
    auto name = percent_decode(pair.substr(0, eq));
    auto value = percent_decode(pair.substr(eq + 1));
    if (!name || !value) throw Refusal(Code::invalid_request, "the query has a bad percent-escape");
    if (std::find(allowed.begin(), allowed.end(), *name) == allowed.end()) {
      std::string known;
      for (auto a : allowed) known += (known.empty() ? "" : ", ") + std::string(a);
      throw Refusal(Code::invalid_request, "unknown query parameter; known here: " + known);
    }
    if (!out.emplace(std::move(*name), std::move(*value)).second)
      throw Refusal(Code::invalid_request, "a query parameter is given twice");
  }
  return out;
}

std::string label_param(const std::string& value, const char* what) {
  if (!is_label(value))
    throw Refusal(Code::invalid_request, std::string(what) + " must be a label: 1 to 80 printable ASCII characters");
  return value;
}

unsigned page_limit(const Query& q) {
  auto it = q.find("limit");
  if (it == q.end()) return default_page;
  auto n = decimal_integer(it->second);
  if (!n || *n < 1 || *n > max_page)
    throw Refusal(Code::invalid_request, "limit must be an integer from 1 to " + std::to_string(max_page));
  return static_cast<unsigned>(*n);
}

void bad_cursor() { throw Refusal(Code::invalid_request, "cursor is not one this gateway returned"); }

std::string encode_cursor(const nlohmann::json& fields) { return base64url_encode(fields.dump()); }

nlohmann::json cursor_fields(const std::string& cursor, std::size_t count) {
  auto raw = base64url_decode(cursor);
  if (!raw) bad_cursor();
  auto j = nlohmann::json::parse(*raw, nullptr, false);
  if (!j.is_array() || j.size() != count) bad_cursor();
  return j;
}

}  // namespace gw
