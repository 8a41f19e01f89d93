#include "support/gateway_fixture.hpp"
#include "support/parallel.hpp"

#include <doctest/doctest.h>

#include <atomic>

using namespace gw;
using namespace gw::test;

TEST_CASE("32 concurrent claims of one task at one authority time: exactly one granted") {
  Gateway g;
  g.set_clock(1000);
  std::atomic<int> granted{0}, busy{0}, unavailable{0}, other{0};
  run_parallel(32, [&](int i) {
    HttpClient c(g.port());
    auto r = c.post_json(task_path("tenant-a", "hot-task", "claim"),
                         {{"owner", "worker-" + std::to_string(i)}, {"lease_ms", 60000}}, agent_a);
    if (r.code() == "granted") ++granted;
    else if (r.code() == "busy") ++busy;
    // A claim whose serialization retries ran out is refused, never granted.
    else if (r.code() == "authority_unavailable" && r.status == 503) ++unavailable;
    else ++other;
  });
  CHECK(granted == 1);
  CHECK(busy + unavailable == 31);
  CHECK(other == 0);
  CHECK(g.db().scalar("SELECT count(*) FROM tasks") == "1");
}
