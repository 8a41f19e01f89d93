// W3C trace context end to end: what the demo provider actually received.
// A valid traceparent continues its trace under a new span of the gateway's
// (same trace id, a new parent-id), with its tracestate when well-formed; an
// invalid one is ignored (never an error) and a new trace starts; an agent
// cannot choose the parent-id the provider sees.
#include "proxy/proxy_fixture.hpp"

#include "core/trace_context.hpp"

#include <strings.h>

using namespace gw;
using namespace gw::test;

namespace {

std::optional<std::string> header_of(const nlohmann::json& request, const std::string& name) {
  for (const auto& [k, v] : request["headers"].items())
    if (strcasecmp(k.c_str(), name.c_str()) == 0) return v.get<std::string>();
  return std::nullopt;
}

const std::string trace_id = "0af7651916cd43dd8448eb211c80319c";
const std::string agent_span = "b7ad6b7169203331";
const std::string traceparent = "00-" + trace_id + "-" + agent_span + "-01";

}  // namespace

TEST_CASE("trace context: the provider gets the caller's trace under the gateway's span, and its tracestate") {
  ProxyRig rig;
  auto& g = rig.gateway;
  g.set_clock(1000);
  auto c = g.client();
  Write w;
  w.grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 600000));
  w.key = "op-1";
  w.body = booking_body("slot-1");
  REQUIRE(send(c, w, {{"traceparent", traceparent}, {"tracestate", "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"}})
              .code() == "committed");
  // An unprotected read is traced too.
  Write get;
  get.method = "GET";
  get.rest = "/bookings/bk_1";
  get.expected_version.reset();
  send(c, get, {{"traceparent", traceparent}});

  auto seen = rig.provider.requests();
  REQUIRE(seen.size() == 2);
  std::set<std::string> spans;
  for (const auto& request : seen) {
    auto sent = header_of(request, "traceparent");
    REQUIRE(sent);
    auto parsed = parse_traceparent(*sent);
    REQUIRE(parsed);
    CHECK(sent->substr(0, 3) == "00-");
    CHECK(parsed->trace_id == trace_id);
    CHECK(parsed->parent_id != agent_span);
    CHECK(parsed->flags == 1);
    spans.insert(parsed->parent_id);
  }
  CHECK(spans.size() == 2);  // one span per forward
  CHECK(header_of(seen[0], "tracestate") == "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
  CHECK_FALSE(header_of(seen[1], "tracestate"));
}

TEST_CASE("trace context: an invalid traceparent is ignored and a new trace started, its tracestate dropped") {
  ProxyRig rig;
  auto& g = rig.gateway;
  g.set_clock(1000);
  auto c = g.client();
  Write w;
  w.grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 600000));
  const std::string invalid[] = {"00-" + std::string(32, '0') + "-" + agent_span + "-01",  // all-zero trace id
                                 "00-" + trace_id + "-" + std::string(16, '0') + "-01",    // all-zero parent id
                                 "ff-" + trace_id + "-" + agent_span + "-01",             // version ff
                                 "00-" + trace_id + "-" + agent_span + "-01-extra",       // 00 with a suffix
                                 "not a traceparent"};
  std::int64_t version = 0;
  for (const auto& value : invalid) {
    w.key = "op-" + std::to_string(version);
    w.body = booking_body("slot-" + std::to_string(version));
    w.expected_version = version;
    auto r = send(c, w, {{"traceparent", value}, {"tracestate", "rojo=1"}});
    REQUIRE_MESSAGE(r.code() == "committed", value);
    ++version;
  }
  // A well-formed traceparent with an oversized tracestate: the trace goes on, the state does not.
  std::string big = "k=" + std::string(255, 'v');
  big += ",l=";
  big += std::string(255, 'v');
  big += ",m=vv";
  REQUIRE(big.size() > 512);
  w.key = "op-big";
  w.body = booking_body("slot-big");
  w.expected_version = version;
  REQUIRE(send(c, w, {{"traceparent", traceparent}, {"tracestate", big}}).code() == "committed");

  auto seen = rig.provider.requests();
  REQUIRE(seen.size() == std::size(invalid) + 1);
  std::set<std::string> traces;
  for (std::size_t i = 0; i < std::size(invalid); ++i) {
    auto sent = header_of(seen[i], "traceparent");
    REQUIRE(sent);
    auto parsed = parse_traceparent(*sent);
    REQUIRE_MESSAGE(parsed, *sent);
    CHECK(parsed->trace_id != trace_id);
    CHECK(parsed->flags == 0);
    CHECK_FALSE(header_of(seen[i], "tracestate"));
    traces.insert(parsed->trace_id);
  }
  CHECK(traces.size() == std::size(invalid));  // each a new trace
  auto last = parse_traceparent(header_of(seen.back(), "traceparent").value());
  REQUIRE(last);
  CHECK(last->trace_id == trace_id);
  CHECK_FALSE(header_of(seen.back(), "tracestate"));
}
