#include "core/trace_context.hpp"

#include <algorithm>
#include <set>

namespace gw {
namespace {

bool lower_hex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool all_zero(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == '0'; });
}

int hex_value(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

bool key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '*' || c == '/';
}

// simple-key = lcalpha 0*255(lcalpha / DIGIT / "_" / "-"/ "*" / "/")
// multi-tenant-key = tenant-id "@" system-id; tenant-id = (lcalpha / DIGIT)
// 0*240(...); system-id = lcalpha 0*13(...)
bool valid_key(std::string_view key) {
  auto at = key.find('@');
  auto chars = [](std::string_view s) { return std::all_of(s.begin(), s.end(), key_char); };
  if (at == std::string_view::npos) {
    return !key.empty() && key.size() <= 256 && key[0] >= 'a' && key[0] <= 'z' && chars(key);
  }
  auto tenant = key.substr(0, at), system = key.substr(at + 1);
  return !tenant.empty() && tenant.size() <= 241 && ((tenant[0] >= 'a' && tenant[0] <= 'z') ||
                                                      (tenant[0] >= '0' && tenant[0] <= '9')) &&
         chars(tenant) && !system.empty() && system.size() <= 14 && system[0] >= 'a' && system[0] <= 'z' &&
         chars(system);
}

// value = 0*255(chr) nblk-chr; chr = %x20 / nblk-chr;
// nblk-chr = %x21-2B / %x2D-3C / %x3E-7E (printable, not ',' or '=')
bool valid_value(std::string_view value) {
  if (value.empty() || value.size() > 256 || value.back() == ' ') return false;
  return std::all_of(value.begin(), value.end(), [](char c) { return c >= 0x20 && c <= 0x7e && c != ',' && c != '='; });
}

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<TraceParent> parse_traceparent(std::string_view v) {
  if (v.size() < 55) return std::nullopt;
  const auto version = v.substr(0, 2);
  if (!lower_hex(version) || version == "ff") return std::nullopt;
  if (version == "00" ? v.size() != 55 : (v.size() > 55 && v[55] != '-')) return std::nullopt;
  if (v[2] != '-' || v[35] != '-' || v[52] != '-') return std::nullopt;
  const auto trace_id = v.substr(3, 32), parent_id = v.substr(36, 16), flags = v.substr(53, 2);
  if (!lower_hex(trace_id) || !lower_hex(parent_id) || !lower_hex(flags)) return std::nullopt;
  if (all_zero(trace_id) || all_zero(parent_id)) return std::nullopt;
  return TraceParent{std::string(trace_id), std::string(parent_id),
                     static_cast<std::uint8_t>(hex_value(flags[0]) * 16 + hex_value(flags[1]))};
}

bool valid_tracestate(std::string_view value) {
  if (value.size() > max_tracestate_bytes) return false;
  std::set<std::string_view> keys;
  std::size_t members = 0;
  for (std::string_view rest = value;;) {
    const auto comma = rest.find(',');
    const auto member = trim_ows(rest.substr(0, comma));
    if (!member.empty()) {
      const auto eq = member.find('=');
      if (eq == std::string_view::npos) return false;
      const auto key = member.substr(0, eq);
      if (!valid_key(key) || !valid_value(member.substr(eq + 1))) return false;
      if (!keys.insert(key).second || ++members > 32) return false;
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return true;
}

TraceContext continue_trace(const std::vector<std::string_view>& traceparents,
                            const std::vector<std::string_view>& tracestates, std::string new_trace_id) {
  TraceContext t;
  std::optional<TraceParent> parent;
  if (traceparents.size() == 1) parent = parse_traceparent(traceparents[0]);
  if (!parent) {
    t.trace_id = std::move(new_trace_id);
    return t;
  }
  t.trace_id = std::move(parent->trace_id);
  t.parent_id = std::move(parent->parent_id);
  t.flags = parent->flags & 0x01;
  if (!tracestates.empty()) {
    std::string joined;
    for (const auto& s : tracestates) {
      if (!joined.empty()) joined += ',';
      joined += s;
    }
    if (valid_tracestate(joined)) t.tracestate = std::move(joined);
  }
  return t;
}

std::string format_traceparent(const TraceContext& trace, std::string_view span_id) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(3 + trace.trace_id.size() + 1 + span_id.size() + 3);
  out += "00-";
  out += trace.trace_id;
  out += '-';
  out += span_id;
  out += '-';
  out += digits[trace.flags >> 4];
  out += digits[trace.flags & 0x0f];
  return out;
}

}  // namespace gw
