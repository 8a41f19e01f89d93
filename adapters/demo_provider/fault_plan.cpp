// Parsing, counting down and reporting of injected faults.
#include "fault_plan.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <string_view>
#include <utility>

namespace demo_provider {
namespace {

constexpr std::array<std::pair<fault_mode, std::string_view>, 9> mode_names{{
    {fault_mode::none, "none"},
    {fault_mode::delay, "delay"},
    {fault_mode::drop_after_execute, "drop_after_execute"},
    {fault_mode::late_reply, "late_reply"},
    {fault_mode::error_5xx, "error_5xx"},
    {fault_mode::refuse, "refuse"},
    {fault_mode::hold, "hold"},
    {fault_mode::reply_status, "reply_status"},
    {fault_mode::close_after_reply, "close_after_reply"},
}};

// A day is far beyond any test, and keeps the millisecond arithmetic of
// timers away from overflow.
constexpr std::int64_t max_delay_ms = 86'400'000;

std::string_view name_of(fault_mode mode) {
  for (const auto& [m, name] : mode_names)
    if (m == mode) return name;
  return "none";
}

std::optional<fault_mode> mode_from(std::string_view name) {
  for (const auto& [mode, n] : mode_names)
    if (n == name) return mode;
  return std::nullopt;
}

// JSON integers only: 1.5, "3" or true in a test's fault body is a mistake
// worth reporting, not guessing at. Absent or null gives `fallback`.
std::optional<std::int64_t> integer_field(const nlohmann::json& body, const char* name,
                                          std::int64_t min, std::int64_t max,
                                          std::optional<std::int64_t> fallback, bool& bad) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return fallback;
  // Unsigned values above INT64_MAX would wrap to negatives in get<int64_t>.
  const bool fits = it->is_number_integer() &&
                    !(it->is_number_unsigned() && it->get<std::uint64_t>() > INT64_MAX);
  if (fits && it->get<std::int64_t>() >= min && it->get<std::int64_t>() <= max)
    return it->get<std::int64_t>();
  bad = true;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> fault_plan::set(const nlohmann::json& request) {
  if (!request.is_object()) return "the body must be a JSON object";
  const auto mode_it = request.find("mode");
  if (mode_it == request.end() || !mode_it->is_string()) return "mode must be a string";
  const auto mode = mode_from(mode_it->get_ref<const std::string&>());
  if (!mode)
    return "mode must be one of none, delay, drop_after_execute, late_reply, error_5xx, refuse, hold, "
           "reply_status, close_after_reply";

  bool bad = false;
  const auto delay_ms = integer_field(request, "delay_ms", 0, max_delay_ms, 0, bad);
  if (bad) return "delay_ms must be an integer from 0 to 86400000";
  const auto count = integer_field(request, "count", 1, INT64_MAX, std::nullopt, bad);
  if (bad) return "count must be an integer >= 1";
  // No business request reaches a closed listener, so nothing could count down.
  if (count && *mode == fault_mode::refuse) return "count does not apply to refuse";

  // A final reply only: a 1xx would leave the client waiting for one. Beast
  // cannot send a status above 999.
  const auto status = integer_field(request, "status", 200, 999, std::nullopt, bad);
  if (bad) return "status must be an integer from 200 to 999";
  if (*mode == fault_mode::reply_status && !status) return "reply_status needs a status";
  if (*mode != fault_mode::reply_status && status) return "status applies only to reply_status";

  std::string retry_after;
  if (const auto it = request.find("retry_after"); it != request.end() && !it->is_null()) {
    if (*mode != fault_mode::reply_status) return "retry_after applies only to reply_status";
    if (!it->is_string() || !valid_header_value(it->get_ref<const std::string&>()))
      return "retry_after must be a non-empty string of visible ASCII";
    retry_after = it->get<std::string>();
  }

  current_ = fault{*mode, std::chrono::milliseconds(*delay_ms), status ? static_cast<unsigned>(*status) : 0u,
                   std::move(retry_after)};
  remaining_ = *mode == fault_mode::none ? std::nullopt : count;
  return std::nullopt;
}

void fault_plan::clear() {
  current_ = fault{};
  remaining_.reset();
}

fault fault_plan::take() {
  if (current_.mode == fault_mode::none || current_.mode == fault_mode::refuse) return fault{};
  const fault applied = current_;
  if (remaining_ && --*remaining_ == 0) clear();
  return applied;
}

nlohmann::json fault_plan::to_json() const {
  nlohmann::json out{{"mode", name_of(current_.mode)}, {"delay_ms", current_.delay.count()}};
  out["count"] = remaining_ ? nlohmann::json(*remaining_) : nlohmann::json(nullptr);
  if (current_.mode == fault_mode::reply_status) {
    out["status"] = current_.status;
    out["retry_after"] = current_.retry_after.empty() ? nlohmann::json(nullptr) : nlohmann::json(current_.retry_after);
  }
  return out;
}

plain_reply injected_unavailable_reply() {
  return json_reply(503, {{"error", "injected_fault"}});
}

plain_reply injected_status_reply(const fault& f) {
  plain_reply reply = json_reply(f.status, {{"error", "injected_status"}, {"status", f.status}});
  if (!f.retry_after.empty()) reply.headers.emplace_back("Retry-After", f.retry_after);
  return reply;
}

}  // namespace demo_provider
