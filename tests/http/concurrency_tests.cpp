#include "support/gateway_fixture.hpp"

#include <doctest/doctest.h>

#include <thread>

using namespace gw;
using namespace gw::test;

TEST_CASE("32 concurrent claims of one task at one authority time: exactly one granted") {
  Gateway g;
  g.set_clock(1000);
  std::atomic<int> granted{0}, busy{0}, other{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 32; ++i)
    threads.emplace_back([&, i] {
      HttpClient c(g.port());
      auto r = c.post_json(task_path("tenant-a", "hot-task", "claim"),
                           {{"owner", "worker-" + std::to_string(i)}, {"lease_ms", 60000}}, agent_a);
      if (r.code() == "granted") ++granted;
      else if (r.code() == "busy") ++busy;
      else ++other;
    });
  for (auto& t : threads) t.join();
  CHECK(granted == 1);
  CHECK(busy == 31);
  CHECK(other == 0);
  CHECK(g.db().scalar("SELECT count(*) FROM tasks") == "1");
}
