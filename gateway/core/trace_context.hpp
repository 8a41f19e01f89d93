// W3C Trace Context (https://www.w3.org/TR/trace-context/) as pure rules:
// which traceparent and tracestate a request carries, and what the gateway
// sends on. An invalid traceparent is never an error: the request starts a
// new trace, and its tracestate is dropped with it (the spec ties the two).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gw {

struct TraceParent {
  std::string trace_id;   // 32 lower-case hex digits, not all zero
  std::string parent_id;  // 16 lower-case hex digits, not all zero
  std::uint8_t flags = 0;
};

// Version 00: exactly 55 characters. A later version (not ff) is read as 00
// when its first 55 characters have 00's shape and anything after them
// starts with '-', as the spec asks of a version-00 reader.
std::optional<TraceParent> parse_traceparent(std::string_view value);

// The tracestate the gateway passes on is at most this long.
inline constexpr std::size_t max_tracestate_bytes = 512;

// A tracestate list: at most 32 members, each key=value with the spec's key
// and value grammar, no key twice; empty members and spaces or tabs around
// commas allowed. Also false above max_tracestate_bytes.
bool valid_tracestate(std::string_view value);

// The trace a request belongs to, from the headers it carried.
struct TraceContext {
  std::string trace_id;
  std::optional<std::string> parent_id;  // the caller's span; none for a new trace
  std::uint8_t flags = 0;                // only the sampled bit is kept
  std::optional<std::string> tracestate;
  bool continued() const { return parent_id.has_value(); }
};

// `traceparents` and `tracestates`: every such header, in order. Exactly one
// valid traceparent continues its trace (several are invalid); otherwise
// `new_trace_id` (32 hex digits) starts one. Several tracestate headers are
// one list joined by commas.
TraceContext continue_trace(const std::vector<std::string_view>& traceparents,
                            const std::vector<std::string_view>& tracestates, std::string new_trace_id);

// "00-<trace id>-<span id>-<flags>": what the provider receives, with the
// gateway's own span (16 hex digits) as its parent.
std::string format_traceparent(const TraceContext& trace, std::string_view span_id);

}  // namespace gw
