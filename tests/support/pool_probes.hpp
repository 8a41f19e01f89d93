// What tests of the gateway's database paths hold and read: a lock that
// makes a claim wait inside PostgreSQL until the test lets go, and one
// series of GET /metrics.
#pragma once

#include "support/gateway_fixture.hpp"

#include <pqxx/pqxx>

#include <string>

namespace gw::test {

// A claim by owner "o" for a minute: long enough to outlast any test here.
inline const nlohmann::json minute_claim{{"owner", "o"}, {"lease_ms", 60000}};

// LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE, held by an open transaction
// until release() (or destruction, so a failing test never leaves the
// gateway's connection blocked).
class TasksLock {
 public:
  explicit TasksLock(const std::string& url) : connection_(url), tx_(connection_) {
    tx_.exec("LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE");
  }
  void release() { tx_.abort(); }

 private:
  pqxx::connection connection_;
  pqxx::work tx_;
};

// One exact series' value in a scrape, or -1 when absent.
inline double metric(HttpClient client, const std::string& series) {
  auto m = client.get("/metrics", "").body;
  auto at = m.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  auto start = at + series.size() + 2;
  return std::stod(m.substr(start, m.find('\n', start) - start));
}
inline double metric(const Gateway& g, const std::string& series) { return metric(g.client(), series); }

}  // namespace gw::test
