// The Prometheus text GET /metrics sends, without a server: each family's
// HELP and TYPE exactly once and before its samples, label values escaped,
// histograms cumulative, and the counters moving as they are counted.
#include "service/ops/metrics.hpp"
#include "service/ops/prometheus_text.hpp"

#include <doctest/doctest.h>

#include <map>
#include <set>
#include <sstream>

using namespace gw;

namespace {

// Checks the exposition's shape; returns the sample lines by series.
std::map<std::string, std::string> parse_exposition(const std::string& text) {
  std::map<std::string, std::string> samples;
  std::set<std::string> helped, typed;
  std::string current;  // the family whose TYPE came last
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("# HELP ")) {
      auto name = line.substr(7, line.find(' ', 7) - 7);
      CHECK_MESSAGE(helped.insert(name).second, "HELP twice: " << name);
    } else if (line.starts_with("# TYPE ")) {
      auto name = line.substr(7, line.find(' ', 7) - 7);
      CHECK_MESSAGE(typed.insert(name).second, "TYPE twice: " << name);
      CHECK_MESSAGE(helped.count(name) == 1, "TYPE without HELP: " << name);
      current = name;
    } else {
      REQUIRE(!line.empty());
      auto space = line.rfind(' ');
      auto series = line.substr(0, space);
      auto metric = series.substr(0, series.find('{'));
      CHECK_MESSAGE(metric.starts_with(current), "sample outside its family: " << line);
      CHECK_MESSAGE(samples.emplace(series, line.substr(space + 1)).second, "series twice: " << series);
    }
  }
  return samples;
}

}  // namespace

TEST_CASE("prometheus text: label values escape backslash, quote and newline") {
  CHECK(escape_label_value(R"(a"b\c)") == R"(a\"b\\c)");
  CHECK(escape_label_value("line\nbreak") == "line\\nbreak");
  CHECK(escape_label_value("plain-label_1") == "plain-label_1");
  PromText t;
  t.family("x_total", "counter", "Help with a \\ backslash\nand a newline.");
  t.sample("x_total", {{"provider", "we\"ird\\"}}, std::uint64_t{3});
  CHECK(t.text() ==
        "# HELP x_total Help with a \\\\ backslash\\nand a newline.\n"
        "# TYPE x_total counter\n"
        "x_total{provider=\"we\\\"ird\\\\\"} 3\n");
}

TEST_CASE("prometheus text: values and histograms") {
  CHECK(format_sample_value(0.25) == "0.25");
  CHECK(format_sample_value(60) == "60");
  CHECK(format_sample_value(1.0 / 0.0) == "+Inf");
  constexpr double bounds[] = {0.125, 1.0};
  Histogram h(bounds);
  h.observe(0.0625);
  h.observe(0.125);  // on a bound: in that bucket
  h.observe(0.5);
  h.observe(7);
  PromText t;
  t.family("d_seconds", "histogram", "D.");
  t.histogram("d_seconds", {{"kind", "k"}}, h);
  CHECK(t.text() ==
        "# HELP d_seconds D.\n# TYPE d_seconds histogram\n"
        "d_seconds_bucket{kind=\"k\",le=\"0.125\"} 2\n"
        "d_seconds_bucket{kind=\"k\",le=\"1\"} 3\n"
        "d_seconds_bucket{kind=\"k\",le=\"+Inf\"} 4\n"
        "d_seconds_sum{kind=\"k\"} 7.6875\n"
        "d_seconds_count{kind=\"k\"} 4\n");
}

TEST_CASE("metrics: every family once, with the counted values, whatever was counted") {
  Metrics m;
  Metrics::Gauges g;
  g.pool_size = 8;
  g.in_use = 2;
  g.open = 3;
  g.queued_requests = 4;
  g.queued_outcomes = 1;
  g.interrupted = 5;
  g.version = "0.1.0";
  g.commit = "abc123";
  g.allocator = "libmimalloc.so.2.0";
  // Nothing counted yet: still well formed, held families absent until the first count.
  auto empty = parse_exposition(m.render(g));
  CHECK(empty.count("gateway_held_operations{state=\"unknown\"}") == 0);
  CHECK(empty.at("gateway_build_info{version=\"0.1.0\",commit=\"abc123\",allocator=\"libmimalloc.so.2.0\"}") == "1");

  using namespace std::chrono_literals;
  m.count_reply("proxy", "committed", 3ms);
  m.count_reply("proxy", "committed", 2s);
  m.count_reply("claim", "granted", 1ms);
  m.count_event("authority_unavailable");
  m.observe_upstream("booking", 20ms);
  m.observe_upstream("we\"ird", 20ms);
  m.count_outcome("booking", "succeeded");
  m.count_outcome("booking", "unknown");
  m.observe_decision("admission", 2ms);
  m.observe_decision("outcome", 2ms);
  m.count_conflict_retry();
  m.count_conflict_retry();
  m.count_conflict_give_up();
  m.count_sweep_done(2);
  m.count_sweep_failed();
  m.count_lookup("booking", "settled");
  m.count_resolved("lookup", "succeeded");
  m.set_held({{"unknown", 3, 90.5}});
  auto s = parse_exposition(m.render(g));
  CHECK(s.at("gateway_replies_total{route=\"proxy\",code=\"committed\"}") == "2");
  CHECK(s.at("gateway_request_seconds_count{route=\"proxy\"}") == "2");
  CHECK(s.at("gateway_request_seconds_bucket{route=\"proxy\",le=\"0.005\"}") == "1");
  CHECK(s.at("gateway_request_seconds_bucket{route=\"proxy\",le=\"+Inf\"}") == "2");
  CHECK(s.at("gateway_provider_outcomes_total{provider=\"booking\",outcome=\"unknown\"}") == "1");
  CHECK(s.at("gateway_upstream_request_seconds_count{provider=\"we\\\"ird\"}") == "1");
  CHECK(s.at("gateway_db_decision_seconds_count{kind=\"admission\"}") == "1");
  CHECK(s.at("gateway_db_serialization_retries_total") == "2");
  CHECK(s.at("gateway_db_serialization_give_ups_total") == "1");
  CHECK(s.at("gateway_db_connections_in_use") == "2");
  CHECK(s.at("gateway_db_connections_open") == "3");
  CHECK(s.at("gateway_db_pool_size") == "8");
  CHECK(s.at("gateway_db_queue_depth{lane=\"request\"}") == "4");
  CHECK(s.at("gateway_db_queue_depth{lane=\"outcome\"}") == "1");
  CHECK(s.at("gateway_db_watchdog_interrupts_total") == "5");
  CHECK(s.at("gateway_held_operations{state=\"unknown\"}") == "3");
  CHECK(s.at("gateway_held_operations{state=\"in_flight\"}") == "0");
  CHECK(s.at("gateway_held_oldest_age_seconds{state=\"unknown\"}") == "90.5");
  CHECK(s.at("gateway_sweeps_total{result=\"failed\"}") == "1");
  CHECK(s.at("gateway_swept_operations_total") == "2");
  CHECK(s.at("gateway_reconcile_lookups_total{provider=\"booking\",result=\"settled\"}") == "1");
  CHECK(s.at("gateway_operations_resolved_total{source=\"lookup\",outcome=\"succeeded\"}") == "1");
  CHECK(s.at("gateway_events_total{event=\"authority_unavailable\"}") == "1");
}

TEST_CASE("metrics: every event and each provider's outcomes are exported at zero before the first count") {
  // An alert's increase() needs the series before its first event, or the first one never pages
  // (docs/operations.md, "Alert rules": outcome_record_failed, authority_guard_tripped, ...).
  Metrics m;
  m.declare_providers({"booking", "crm"});
  const auto s = parse_exposition(m.render({}));
  for (const auto event : Metrics::events)
    CHECK_MESSAGE(s.at("gateway_events_total{event=\"" + std::string(event) + "\"}") == "0", event);
  for (const char* alerted : {"outcome_record_failed", "outcome_unrecorded_at_stop", "authority_guard_tripped"})
    CHECK(s.count("gateway_events_total{event=\"" + std::string(alerted) + "\"}") == 1);
  for (const char* provider : {"booking", "crm"})
    for (const auto outcome : Metrics::outcomes)
      CHECK(s.at("gateway_provider_outcomes_total{provider=\"" + std::string(provider) + "\",outcome=\"" +
                 std::string(outcome) + "\"}") == "0");
  // Counting moves the declared series; declaring again resets nothing.
  m.count_event("outcome_record_failed");
  m.count_outcome("booking", "unknown");
  m.declare_providers({"booking"});
  const auto after = parse_exposition(m.render({}));
  CHECK(after.at("gateway_events_total{event=\"outcome_record_failed\"}") == "1");
  CHECK(after.at("gateway_provider_outcomes_total{provider=\"booking\",outcome=\"unknown\"}") == "1");
}

TEST_CASE("metrics: time without authority is a gauge at zero from the start, read from its source at scrape time") {
  Metrics m;
  // No source yet (before the guard exists): exported, at 0, so an alert has a series to watch.
  CHECK(parse_exposition(m.render({})).at("gateway_without_authority_seconds") == "0");
  double without = 0;
  m.watch_authority([&without] { return without; });
  CHECK(parse_exposition(m.render({})).at("gateway_without_authority_seconds") == "0");
  without = 12.5;  // the guard's running stretch, read at each scrape
  CHECK(parse_exposition(m.render({})).at("gateway_without_authority_seconds") == "12.5");
  // The source may count events while it is read (the guard reports under its own lock):
  // the gauge is read before the metrics' lock is taken, so this does not deadlock.
  m.watch_authority([&m] {
    m.count_event("authority_guard_refused");
    return 3.0;
  });
  const auto s = parse_exposition(m.render({}));
  CHECK(s.at("gateway_without_authority_seconds") == "3");
  CHECK(s.at("gateway_events_total{event=\"authority_guard_refused\"}") == "1");
}
