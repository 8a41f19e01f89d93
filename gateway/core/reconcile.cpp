#include "core/reconcile.hpp"

#include "core/labels.hpp"
#include "core/utc_time.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace gw {
namespace {

constexpr std::string_view placeholder = "{key}";

bool listed(const std::vector<StatusRange>& ranges, unsigned status) {
  return std::any_of(ranges.begin(), ranges.end(), [status](auto r) { return r.contains(status); });
}

// The value at `pointer`, or nullptr when the body has none there. A
// pointer that does not fit the document (an array index that is not a
// number) is "none there", never an exception.
const nlohmann::json* at_pointer(const nlohmann::json& doc, const std::string& pointer) {
  try {
    nlohmann::json::json_pointer p(pointer);
    if (!doc.contains(p)) return nullptr;
    return &doc.at(p);
  } catch (const nlohmann::json::exception&) {
    return nullptr;
  }
}

LookupDecision hold(std::string detail) {
  LookupDecision d;
  d.detail = std::move(detail);
  return d;
}

LookupDecision decide_found(const LookupConfig& lookup, const OutcomeRules& outcomes, const LookupInput& in) {
  const std::string found = "lookup answered " + std::to_string(*in.status) + " (found)";
  LookupDecision d;
  if (lookup.status_pointer || lookup.body_pointer) {
    auto doc = nlohmann::json::parse(in.body, nullptr, false);
    if (doc.is_discarded()) return hold(found + " but its body is not JSON: the outcome stays unknown");
    if (lookup.status_pointer) {
      const auto* v = at_pointer(doc, *lookup.status_pointer);
      auto n = v ? json_integer(*v) : std::nullopt;
      if (!n || *n < 100 || *n > 599)
        return hold(found + " but " + *lookup.status_pointer +
                    " in its body is not a status: the outcome stays unknown");
      d.original_status = static_cast<unsigned>(*n);
    }
    if (lookup.body_pointer) {
      const auto* v = at_pointer(doc, *lookup.body_pointer);
      if (!v)
        return hold(found + " but its body has nothing at " + *lookup.body_pointer +
                    ": the outcome stays unknown");
      if (v->is_string()) d.original_body = v->get<std::string>();
      else if (v->is_null()) d.original_body = std::string();
      else d.original_body = v->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
  }
  if (!d.original_status) {
    d.outcome = OperationState::succeeded;
    d.detail = found + ": the provider executed the operation";
    return d;
  }
  // The request reached the provider: the original status settles it as a
  // reply would have, except that only succeeded and rejected are final
  // here (a provider that recorded "not processed" under the key, or a 5xx,
  // is for an operator to judge).
  const auto outcome = classify_outcome(outcomes, true, *d.original_status);
  const std::string original = found + " with original status " + std::to_string(*d.original_status);
  if (outcome != OperationState::succeeded && outcome != OperationState::rejected) {
    auto h = hold(original + ", which does not settle the outcome: it stays unknown");
    h.original_status = d.original_status;
    h.original_body = std::move(d.original_body);
    return h;
  }
  d.outcome = outcome;
  d.detail = original + ": " + std::string(name(outcome));
  return d;
}

LookupDecision decide_not_found(const LookupConfig& lookup, const LookupInput& in) {
  const std::string asked = "lookup answered " + std::to_string(*in.status) + " (not found) when asked at " +
                            utc_text(in.asked_at_ms);
  auto from = not_found_trusted_from(lookup, in.last_possible_send_ms);
  if (!from)
    return hold(asked + ", but the attempt has no forward deadline, so no settle window ever ends: "
                        "the outcome stays unknown");
  if (in.asked_at_ms < *from)
    return hold(asked + ", inside the settle window (trusted from " + utc_text(*from) +
                "): the outcome stays unknown");
  LookupDecision d;
  d.outcome = OperationState::not_executed;
  d.detail = asked + ", past the last possible send " + utc_text(*in.last_possible_send_ms) +
             " plus the settle window: not executed";
  return d;
}

}  // namespace

std::optional<std::string> lookup_path_problem(std::string_view t) {
  if (t.empty() || t.front() != '/') return "must start with '/'";
  auto at = t.find(placeholder);
  if (at == std::string_view::npos) return "must contain {key}";
  if (t.find(placeholder, at + 1) != std::string_view::npos) return "must contain {key} exactly once";
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (i == at) {
      i += placeholder.size() - 1;
      continue;
    }
    const auto c = static_cast<unsigned char>(t[i]);
    if (c == '{' || c == '}') return "must have no brace but those of {key}";
    if (c < 33 || c > 126 || c == '#') return "must be printable ASCII without spaces or '#'";
  }
  return std::nullopt;
}

std::string percent_encode(std::string_view bytes) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(bytes.size() * 3);
  for (unsigned char c : bytes) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 0xF];
    }
  }
  return out;
}

std::string lookup_target(std::string_view base_path, std::string_view path_template, std::string_view key) {
  const auto at = path_template.find(placeholder);
  std::string target(base_path);
  target += path_template.substr(0, at);
  target += percent_encode(key);
  target += path_template.substr(at + placeholder.size());
  return target;
}

std::optional<std::int64_t> not_found_trusted_from(const LookupConfig& lookup,
                                                   std::optional<std::int64_t> last_possible_send_ms) {
  if (!last_possible_send_ms) return std::nullopt;
  // Past 2^63-1 is never; a negative deadline (never written) counts from 0.
  return checked_add(std::max<std::int64_t>(*last_possible_send_ms, 0), lookup.settle_window.count());
}

LookupDecision decide_lookup(const LookupConfig& lookup, const OutcomeRules& outcomes, const LookupInput& in) {
  if (!in.status)
    return hold("lookup failed (" + std::string(in.failure.empty() ? "no reply" : in.failure) +
                "): the outcome stays unknown");
  if (listed(lookup.found, *in.status)) return decide_found(lookup, outcomes, in);
  if (listed(lookup.not_found, *in.status)) return decide_not_found(lookup, in);
  return hold("lookup answered " + std::to_string(*in.status) +
              ", which is neither found nor not found: the outcome stays unknown");
}

std::int64_t next_lookup_delay_ms(const LookupBackoff& backoff, int lookups, std::uint64_t draw) {
  const std::int64_t base = std::max<std::int64_t>(backoff.base.count(), 0);
  const std::int64_t cap = std::max<std::int64_t>(backoff.cap.count(), 0);
  const int doublings = std::max(lookups, 1) - 1;
  // base * 2^doublings without overflow: stop doubling once past the cap.
  std::int64_t ceiling = std::min(base, cap);
  for (int i = 0; i < doublings && ceiling > 0 && ceiling < cap; ++i) ceiling = ceiling > cap / 2 ? cap : ceiling * 2;
  ceiling = std::min(ceiling, cap);
  const std::int64_t span = ceiling / 100 * std::min(backoff.jitter_percent, 100u) +
                            ceiling % 100 * std::min(backoff.jitter_percent, 100u) / 100;
  return ceiling - static_cast<std::int64_t>(draw % (static_cast<std::uint64_t>(span) + 1));
}

}  // namespace gw
