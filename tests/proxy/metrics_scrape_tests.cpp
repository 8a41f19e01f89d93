// GET /metrics from a real gateway in front of a real demo provider, after
// real traffic: the per-provider outcome counter and upstream histogram, the
// admission and outcome decision histograms, the held-operation gauges (a
// 5xx holds an operation; an operator's resolve releases it; counted by
// the sweep loop), the pool's
// connections in use (0 at rest, and still 0 while a request waits at the
// provider: no connection is held across a forward), and build_info.
#include "proxy/proxy_fixture.hpp"

#include "support/eventually.hpp"

#include <future>
#include <regex>

using namespace gw;
using namespace gw::test;

namespace {

// The value of one exact series ("name{labels}" or "name"), or nullopt.
std::optional<double> sample(const std::string& text, const std::string& series) {
  const auto at = text.find("\n" + series + " ");
  if (at == std::string::npos) return std::nullopt;
  const auto start = at + 1 + series.size() + 1;
  return std::stod(text.substr(start, text.find('\n', start) - start));
}

std::string scrape(Gateway& g) {
  auto r = g.client().get("/metrics", "");
  REQUIRE(r.status == 200);
  return r.body;
}

// The held gauges come from the sweep loop's count: wait for a round that shows `value`.
bool shows(Gateway& g, const std::string& series, double value) {
  return eventually([&] { return sample(scrape(g), series) == value; }, std::chrono::seconds(20));
}

// The booking provider's gateway, sweeping (and counting held operations) every 50 ms.
GatewayOptions sweeping(const ProviderProcess& provider) {
  auto options = proxy_options(provider);
  options.edit = [edit = options.edit](nlohmann::json& c) {
    edit(c);
    c["recovery"]["sweep_interval_ms"] = 50;
  };
  return options;
}

}  // namespace

TEST_CASE("metrics: provider outcomes, upstream and decision latency, held gauges and the pool after real traffic") {
  ProviderProcess provider;
  Gateway g(sweeping(provider));
  g.set_clock(1000);
  auto c = g.client();

  REQUIRE(shows(g, "gateway_held_operations{state=\"unknown\"}", 0));
  // The sweep loop's own short jobs use a connection now and then: "at rest" is waited for.
  auto at_rest = [&] { return eventually([&] { return sample(scrape(g), "gateway_db_connections_in_use") == 0; }); };
  CHECK(at_rest());
  auto before = scrape(g);
  CHECK(sample(before, "gateway_held_oldest_age_seconds{state=\"unknown\"}") == 0);
  CHECK(sample(before, "gateway_db_up") == 1);
  CHECK(sample(before, "gateway_without_authority_seconds") == 0);  // wired to the guard, at 0 with authority
  CHECK(std::regex_search(before, std::regex("\ngateway_build_info\\{version=\"[0-9.]+\",commit=\"[^\"]+\",allocator=\"(lib[a-z]+\\.so[.0-9]*|built-in)\"\\} 1\n")));

  Write w;
  w.grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 600000));
  w.key = "op-1";
  w.body = booking_body("slot-1");
  REQUIRE(send(c, w).code() == "committed");

  // Held at the provider: the request is upstream, and no database
  // connection is held for it meanwhile.
  provider.hold_next(1);
  Write held = w;
  held.key = "op-2";
  held.body = booking_body("slot-2");
  held.expected_version = 1;
  std::future<Reply> upstream;
  {
    ReleaseOnExit release(provider);
    upstream = std::async(std::launch::async, [&, port = g.port()] {
      HttpClient own(port);
      return send(own, held);
    });
    REQUIRE(provider.wait_for_held(1));
    CHECK(shows(g, "gateway_held_operations{state=\"in_flight\"}", 1));
    CHECK(at_rest());
  }
  REQUIRE(upstream.get().code() == "committed");

  // A 5xx: the outcome is unknown and the operation is held.
  provider.set_fault("error_5xx", 0, 1);
  Write lost = w;
  lost.key = "op-3";
  lost.body = booking_body("slot-3");
  lost.expected_version = 2;
  REQUIRE(send(c, lost).code() == "unknown_outcome");
  g.set_clock(61000);

  // Held at authority time 1000, counted at 61000 or later.
  REQUIRE(shows(g, "gateway_held_oldest_age_seconds{state=\"unknown\"}", 60));
  auto after = scrape(g);
  CHECK(sample(after, "gateway_provider_outcomes_total{provider=\"booking\",outcome=\"succeeded\"}") == 2);
  CHECK(sample(after, "gateway_provider_outcomes_total{provider=\"booking\",outcome=\"unknown\"}") == 1);
  CHECK(sample(after, "gateway_upstream_request_seconds_count{provider=\"booking\"}") == 3);
  CHECK(sample(after, "gateway_upstream_request_seconds_bucket{provider=\"booking\",le=\"+Inf\"}") == 3);
  CHECK(sample(after, "gateway_db_decision_seconds_count{kind=\"admission\"}") == 3);
  CHECK(sample(after, "gateway_db_decision_seconds_count{kind=\"outcome\"}") == 3);
  CHECK(sample(after, "gateway_held_operations{state=\"unknown\"}") == 1);
  CHECK(sample(after, "gateway_held_operations{state=\"in_flight\"}") == 0);
  CHECK(sample(after, "gateway_replies_total{route=\"proxy\",code=\"unknown_outcome\"}") == 1);
  CHECK(at_rest());
  CHECK(sample(after, "gateway_db_connections_open") >= 1);

  // The operator settles it: the gauge goes back to 0 and the resolution is counted.
  auto resolved = c.post_json("/v1/admin/operations/tenant-a/task-a/op-3/resolve",
                              {{"outcome", "not_executed"}, {"evidence", "provider support ticket 42"}}, operator_token);
  REQUIRE(resolved.status == 200);
  CHECK(shows(g, "gateway_held_operations{state=\"unknown\"}", 0));
  CHECK(sample(scrape(g), "gateway_operations_resolved_total{source=\"operator\",outcome=\"not_executed\"}") == 1);
}
