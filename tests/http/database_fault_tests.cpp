// A real fault: the database stops while requests run, then comes back.
// Every reply meanwhile is a correct answer or authority_unavailable (never
// a 500, never a hang), and the same gateway recovers without a restart.
// Each phase waits for what the agents actually saw, never for a fixed time.
#include "support/eventually.hpp"
#include "support/gateway_fixture.hpp"
#include "support/parallel.hpp"
#include "support/private_cluster.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <map>
#include <mutex>

using namespace gw;
using namespace gw::test;

TEST_CASE("database stopped while requests run: authority_unavailable or a correct answer, then recovery") {
  PrivateCluster pg;
  Gateway g(pg.url(), {.manual_clock = false, .edit = fail_fast_database});

  std::mutex mutex;
  std::map<std::string, int> seen;  // "status code" -> count
  std::atomic<int> granted{0}, unavailable{0};
  Workers agents;
  for (int a = 0; a < 6; ++a)
    agents.spawn([&, a](std::stop_token stop) {
      HttpClient c(g.port(), std::chrono::seconds(20));
      for (int i = 0; !stop.stop_requested(); ++i) {
        std::string key;
        try {
          auto task = "task-" + std::to_string(a) + "-" + std::to_string(i);
          auto r = c.post_json(task_path("tenant-a", task, "claim"), {{"owner", "o"}, {"lease_ms", 60000}}, agent_a);
          key = std::to_string(r.status) + " " + r.code();
          if (r.code() == "authority_unavailable") CHECK(r.header("Retry-After"));
        } catch (const std::exception& e) {
          key = std::string("no reply: ") + e.what();
        }
        if (key == "200 granted") ++granted;
        if (key == "503 authority_unavailable") ++unavailable;
        std::lock_guard lock(mutex);
        ++seen[key];
      }
    });
  auto ready_status = [&] { return g.client().get("/readyz", "").status; };

  REQUIRE(eventually([&] { return granted > 0; }));
  pg.stop();
  Reply down;
  CHECK(eventually([&] {
    down = g.client().get("/readyz", "");
    return down.status == 503;
  }));
  CHECK(down.code() == "authority_unavailable");
  const int unavailable_before = unavailable;  // normally 0; the database was up
  CHECK(eventually([&] { return unavailable > unavailable_before; }));

  pg.start();
  // The same gateway process must answer again by itself.
  CHECK(eventually([&] { return ready_status() == 200; }));
  const int granted_at_recovery = granted;
  CHECK(eventually([&] { return granted > granted_at_recovery; }));
  agents.request_stop();
  agents.join();

  int unavailable_replies = 0, granted_replies = 0;
  for (const auto& [key, n] : seen) {
    CAPTURE(key);
    CHECK((key == "200 granted" || key == "503 authority_unavailable"));
    if (key == "503 authority_unavailable") unavailable_replies += n;
    if (key == "200 granted") granted_replies += n;
  }
  CHECK(unavailable_replies > 0);
  CHECK(granted_replies > 0);
  // A pooled connection from before the restart is found broken only when
  // next used, and one whose reconnect meets the 200 ms reconnect backoff
  // answers 503 once; the claim is the agent's to retry.
  auto c = g.client();
  Reply after;
  CHECK(eventually([&] {
    after = c.post_json(task_path("tenant-a", "after-restart", "claim"), {{"owner", "o"}, {"lease_ms", 1000}}, agent_a);
    if (after.code() != "granted") CHECK(after.code() == "authority_unavailable");
    return after.code() == "granted";
  }));
  CHECK(after.json()["grant"]["epoch"].get<std::int64_t>() > 0);
}
