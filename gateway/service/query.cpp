#include "service/query.hpp"

#include "service/path.hpp"
#include "service/rejection.hpp"

#include <algorithm>

namespace gw {

std::map<std::string, std::string, std::less<>> parse_query(std::string_view query,
                                                            std::initializer_list<std::string_view> allowed) {
  std::map<std::string, std::string, std::less<>> out;
  if (query.empty()) return out;
  for (bool last = false; !last;) {
    const auto amp = query.find('&');
    last = amp == std::string_view::npos;
    const auto pair = query.substr(0, amp);
    query = last ? std::string_view() : query.substr(amp + 1);
    const auto eq = pair.find('=');
    if (eq == std::string_view::npos)
      throw Rejection(Code::invalid_request, "query parameters must be name=value pairs");
    auto name = percent_decode(pair.substr(0, eq));
    auto value = percent_decode(pair.substr(eq + 1));
    if (!name || !value) throw Rejection(Code::invalid_request, "the query has a bad percent-escape");
    if (std::find(allowed.begin(), allowed.end(), *name) == allowed.end()) {
      std::string known;
      for (auto a : allowed) known += (known.empty() ? "" : ", ") + std::string(a);
      throw Rejection(Code::invalid_request, "unknown query parameter; known here: " + known);
    }
    if (!out.emplace(std::move(*name), std::move(*value)).second)
      throw Rejection(Code::invalid_request, "a query parameter is given twice");
  }
  return out;
}

}  // namespace gw
