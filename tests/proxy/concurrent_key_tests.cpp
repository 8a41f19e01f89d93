// One Idempotency-Key sent by several agents at once: the admission
// transaction lets exactly one through; the rest wait out or replay it.
#include "proxy/proxy_fixture.hpp"

#include <latch>
#include <mutex>
#include <thread>

using namespace gw;
using namespace gw::test;

TEST_CASE("eight concurrent requests with one key: exactly one effect, the others in flight or replayed") {
  ProxyRig rig;
  auto& g = rig.gateway;
  auto& provider = rig.provider;
  g.set_clock(0);
  Write w;
  w.grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 60000));
  w.key = "op-1";
  w.body = booking_body("slot-1");
  // Widens the window in which the others find the operation in flight;
  // the assertions hold with or without it.
  provider.set_fault("delay", 300, 1);

  std::latch start(8);
  std::mutex mutex;
  std::vector<Reply> replies;
  std::vector<std::thread> agents;
  for (int i = 0; i < 8; ++i)
    agents.emplace_back([&] {
      HttpClient c(g.port());
      start.arrive_and_wait();
      auto r = send(c, w);
      std::lock_guard lock(mutex);
      replies.push_back(std::move(r));
    });
  for (auto& t : agents) t.join();

  int committed = 0, in_flight = 0, replayed = 0;
  std::string committed_body;
  for (const auto& r : replies)
    if (r.code() == "committed") {
      ++committed;
      committed_body = r.body;
    }
  for (const auto& r : replies) {
    CAPTURE(r.code());
    if (r.code() == "operation_in_flight") {
      ++in_flight;
      CHECK(r.status == 409);
    } else if (r.code() == "historical_retry") {
      ++replayed;
      CHECK(r.status == 201);
      CHECK(r.body == committed_body);
    } else {
      CHECK(r.code() == "committed");
    }
  }
  CHECK(committed == 1);
  CHECK(committed + in_flight + replayed == 8);
  const auto key = upstream_key("tenant-a", "task-a", "op-1");
  CHECK(provider.effects_for(key) == 1);
  CHECK(provider.effect_count() == 1);
  CHECK(provider.requests_with_key(key) == 1);
  CHECK(g.db().scalar("SELECT count(*) FROM operation_attempts") == "1");
}
