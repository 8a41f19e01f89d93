// Parsing, counting down and reporting of injected faults.
#include "fault_plan.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <string_view>
#include <utility>

namespace demo_provider {
namespace {

constexpr std::array<std::pair<fault_mode, std::string_view>, 6> mode_names{{
    {fault_mode::none, "none"},
    {fault_mode::delay, "delay"},
    {fault_mode::drop_after_execute, "drop_after_execute"},
    {fault_mode::late_reply, "late_reply"},
    {fault_mode::error_5xx, "error_5xx"},
    {fault_mode::refuse, "refuse"},
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
  if (!mode) return "mode must be one of none, delay, drop_after_execute, late_reply, error_5xx, refuse";

  bool bad = false;
  const auto delay_ms = integer_field(request, "delay_ms", 0, max_delay_ms, 0, bad);
  if (bad) return "delay_ms must be an integer from 0 to 86400000";
  const auto count = integer_field(request, "count", 1, INT64_MAX, std::nullopt, bad);
  if (bad) return "count must be an integer >= 1";
  // No business request reaches a closed listener, so nothing could count down.
  if (count && *mode == fault_mode::refuse) return "count does not apply to refuse";

  current_ = fault{*mode, std::chrono::milliseconds(*delay_ms)};
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
  return out;
}

plain_reply injected_unavailable_reply() {
  return json_reply(503, {{"error", "injected_fault"}});
}

}  // namespace demo_provider
