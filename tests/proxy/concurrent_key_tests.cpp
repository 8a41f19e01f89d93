// One Idempotency-Key sent by several agents at once: the admission
// transaction lets exactly one through; while it is held at the provider,
// every other copy is refused as in flight (or, if the database gave up on
// its serialization retries, authority_unavailable), and none is forwarded.
#include "proxy/proxy_fixture.hpp"

#include "support/eventually.hpp"

#include <future>

using namespace gw;
using namespace gw::test;

TEST_CASE("eight concurrent requests with one key: exactly one effect, the others in flight") {
  ProxyRig rig;
  auto& g = rig.gateway;
  auto& provider = rig.provider;
  g.set_clock(0);
  Write w;
  w.grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 60000));
  w.key = "op-1";
  w.body = booking_body("slot-1");
  provider.hold_next(1);

  std::vector<std::future<Reply>> agents;
  for (int i = 0; i < 8; ++i)
    agents.push_back(std::async(std::launch::async, [&] {
      HttpClient c(g.port());
      return send(c, w);
    }));
  ReleaseOnExit release_on_failure(provider);
  // One copy is admitted and held upstream; the other seven are answered
  // while it is held, so none of them can have seen its outcome.
  REQUIRE(provider.wait_for_held(1));
  auto answered = [&] {
    int n = 0;
    for (auto& a : agents) n += a.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    return n;
  };
  REQUIRE(eventually([&] { return answered() == 7; }));
  CHECK(provider.requests().size() == 1);
  CHECK(provider.release() == 1);

  int committed = 0, in_flight = 0, unavailable = 0;
  for (auto& a : agents) {
    auto r = a.get();
    CAPTURE(r.body);
    if (r.code() == "committed") {
      ++committed;
      CHECK(r.status == 201);
    } else if (r.code() == "operation_in_flight") {
      ++in_flight;
      check_problem(r, 409, "operation_in_flight");
    } else {
      check_problem(r, 503, "authority_unavailable");
      ++unavailable;
    }
  }
  CHECK(committed == 1);
  CHECK(in_flight + unavailable == 7);
  if (unavailable > 0) MESSAGE(unavailable << " copies were refused after serialization retries ran out");

  const auto key = upstream_key("tenant-a", "task-a", "op-1");
  CHECK(provider.effects_for(key) == 1);
  CHECK(provider.effect_count() == 1);
  CHECK(provider.requests_with_key(key) == 1);
  CHECK(g.db().scalar("SELECT count(*) FROM operation_attempts") == "1");
  // Afterwards every copy is a replay of the one result.
  HttpClient c(g.port());
  auto replay = send(c, w);
  CHECK(replay.code() == "historical_retry");
  CHECK(provider.requests_with_key(key) == 1);
}
