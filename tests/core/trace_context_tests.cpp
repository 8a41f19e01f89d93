// W3C Trace Context rules as tables: which traceparent values are accepted,
// which tracestate lists pass, and what the provider is sent.
#include "core/trace_context.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace gw;

namespace {
const std::string trace = "4bf92f3577b34da6a3ce929d0e0e4736";
const std::string parent = "00f067aa0ba902b7";
const std::string valid_header = "00-" + trace + "-" + parent + "-01";
const std::string fresh = "11111111111111111111111111111111";
}  // namespace

TEST_CASE("traceparent: the spec's example and its fields") {
  auto p = parse_traceparent(valid_header);
  REQUIRE(p);
  CHECK(p->trace_id == trace);
  CHECK(p->parent_id == parent);
  CHECK(p->flags == 1);
  CHECK(parse_traceparent("00-" + trace + "-" + parent + "-00")->flags == 0);
  CHECK(parse_traceparent("00-" + trace + "-" + parent + "-ff")->flags == 0xff);
}

TEST_CASE("traceparent: invalid values are refused") {
  const std::string zeros32(32, '0'), zeros16(16, '0');
  const char* why[] = {"empty", "all-zero trace id", "all-zero parent id", "version ff", "upper-case hex",
                       "version 00 with a suffix", "short trace id", "wrong separator", "non-hex flags",
                       "non-hex version", "missing flags", "later version, suffix without a dash"};
  const std::string values[] = {"",
                                "00-" + zeros32 + "-" + parent + "-01",
                                "00-" + trace + "-" + zeros16 + "-01",
                                "ff-" + trace + "-" + parent + "-01",
                                "00-4BF92F3577B34DA6A3CE929D0E0E4736-" + parent + "-01",
                                valid_header + "-extra",
                                "00-" + trace.substr(1) + "-" + parent + "-01",
                                "00_" + trace + "-" + parent + "-01",
                                "00-" + trace + "-" + parent + "-0g",
                                "0x-" + trace + "-" + parent + "-01",
                                "00-" + trace + "-" + parent,
                                "01-" + trace + "-" + parent + "-01x"};
  for (std::size_t i = 0; i < std::size(values); ++i) CHECK_MESSAGE(!parse_traceparent(values[i]), why[i]);
}

TEST_CASE("traceparent: a later version is read as 00, with or without fields after a dash") {
  CHECK(parse_traceparent("01-" + trace + "-" + parent + "-01"));
  CHECK(parse_traceparent("cc-" + trace + "-" + parent + "-01-what-the-future-holds"));
}

TEST_CASE("tracestate: well-formed lists pass, others and long ones do not") {
  CHECK(valid_tracestate("congo=t61rcWkgMzE"));
  CHECK(valid_tracestate("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"));
  CHECK(valid_tracestate("rojo=1 , \tcongo=2"));
  CHECK(valid_tracestate("rojo=1,,congo=2"));
  CHECK(valid_tracestate(""));
  CHECK(valid_tracestate("tenant1@vendor=x"));
  CHECK(valid_tracestate("a/b*c_d-e=v"));
  CHECK_FALSE(valid_tracestate("Rojo=1"));            // upper-case key
  CHECK_FALSE(valid_tracestate("rojo"));              // no value
  CHECK_FALSE(valid_tracestate("rojo="));             // empty value
  CHECK_FALSE(valid_tracestate("rojo=a=b"));          // '=' in the value
  CHECK_FALSE(valid_tracestate("rojo=1,rojo=2"));     // a key twice
  CHECK(valid_tracestate("rojo=inner space "));        // a trailing space is list whitespace
  CHECK_FALSE(valid_tracestate("rojo=caf\xc3\xa9"));  // not printable ASCII
  CHECK_FALSE(valid_tracestate("t@toolongsystemid=1"));
  std::string many;
  for (int i = 0; i < 33; ++i) {
    many += i ? ",k" : "k";
    many += std::to_string(i);
    many += "=v";
  }
  CHECK_FALSE(valid_tracestate(many));  // 33 members
  std::string at_limit = "k=";
  at_limit += std::string(255, 'v');
  at_limit += ",l=";
  at_limit += std::string(254, 'v');
  REQUIRE(at_limit.size() == 514);
  CHECK_FALSE(valid_tracestate(at_limit));
  CHECK(valid_tracestate(at_limit.substr(0, 510)));
}

TEST_CASE("continue_trace: one valid traceparent continues its trace with its tracestate") {
  auto t = continue_trace({valid_header}, {"rojo=1", "congo=2"}, fresh);
  CHECK(t.trace_id == trace);
  CHECK(t.parent_id == parent);
  CHECK(t.flags == 1);
  CHECK(t.tracestate == "rojo=1,congo=2");
  CHECK(format_traceparent(t, "b7ad6b7169203331") == "00-" + trace + "-b7ad6b7169203331-01");
  // Unknown flag bits are not passed on.
  CHECK(continue_trace({"00-" + trace + "-" + parent + "-fe"}, {}, fresh).flags == 0);
}

TEST_CASE("continue_trace: an invalid, missing or repeated traceparent starts a new trace without tracestate") {
  for (const auto& parents : {std::vector<std::string_view>{}, std::vector<std::string_view>{"garbage"},
                              std::vector<std::string_view>{valid_header, valid_header}}) {
    auto t = continue_trace(parents, {"rojo=1"}, fresh);
    CHECK(t.trace_id == fresh);
    CHECK_FALSE(t.parent_id);
    CHECK_FALSE(t.tracestate);
    CHECK(format_traceparent(t, "b7ad6b7169203331") == "00-" + fresh + "-b7ad6b7169203331-00");
  }
  // A malformed or oversized tracestate is dropped; the trace goes on.
  auto t = continue_trace({valid_header}, {"Bad=1"}, fresh);
  CHECK(t.trace_id == trace);
  CHECK_FALSE(t.tracestate);
  CHECK_FALSE(continue_trace({valid_header}, {"k=" + std::string(600, 'v')}, fresh).tracestate);
}
