// A real fault: the database stops while requests run, then comes back.
// Every reply meanwhile is a correct answer or authority_unavailable (never
// a 500, never a hang), and the same gateway recovers without a restart.
#include "support/gateway_fixture.hpp"
#include "support/private_cluster.hpp"

#include <doctest/doctest.h>

#include <map>
#include <mutex>
#include <thread>

using namespace gw;
using namespace gw::test;

TEST_CASE("database stopped while requests run: authority_unavailable or a correct answer, then recovery") {
  PrivateCluster pg;
  Gateway g(pg.url(), {.manual_clock = false, .edit = [](nlohmann::json& c) {
                         c["database"]["connect_timeout_s"] = 1;
                         c["database"]["statement_timeout_ms"] = 1000;
                         c["database"]["queue_timeout_ms"] = 2000;
                       }});

  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::map<std::string, int> seen;  // "status code" -> count
  std::vector<std::thread> agents;
  for (int a = 0; a < 6; ++a)
    agents.emplace_back([&, a] {
      HttpClient c(g.port(), std::chrono::seconds(20));
      for (int i = 0; !stop; ++i) {
        std::string key;
        try {
          auto task = "task-" + std::to_string(a) + "-" + std::to_string(i);
          auto r = c.post_json(task_path("tenant-a", task, "claim"), {{"owner", "o"}, {"lease_ms", 60000}}, agent_a);
          key = std::to_string(r.status) + " " + r.code();
          if (r.code() == "authority_unavailable") CHECK(r.header("Retry-After"));
        } catch (const std::exception& e) {
          key = std::string("no reply: ") + e.what();
        }
        std::lock_guard lock(mutex);
        ++seen[key];
      }
    });

  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  pg.stop();
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  auto down = g.client().get("/readyz", "");
  CHECK(down.status == 503);
  CHECK(down.code() == "authority_unavailable");
  pg.start();
  // The same gateway process must answer again by itself.
  bool recovered = false;
  for (int attempt = 0; attempt < 120 && !recovered; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    recovered = g.client().get("/readyz", "").status == 200;
  }
  CHECK(recovered);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  stop = true;
  for (auto& t : agents) t.join();

  int unavailable = 0, granted = 0;
  for (const auto& [key, n] : seen) {
    CAPTURE(key);
    CHECK((key == "200 granted" || key == "503 authority_unavailable"));
    if (key == "503 authority_unavailable") unavailable += n;
    if (key == "200 granted") granted += n;
  }
  CHECK(unavailable > 0);
  CHECK(granted > 0);
  auto after = g.claim("tenant-a", "after-restart", "o", 1000);
  CHECK(after["grant"]["epoch"].get<std::int64_t>() > 0);
}
