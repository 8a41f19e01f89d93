// A PostgreSQL cluster of one test's own (scripts/pg.sh, from
// GATEWAY_TEST_PG_SCRIPT), so the test can stop and start the database as a
// real fault without disturbing any other test. Destroyed afterwards. Its
// port is one of 26000-26999 (below the ephemeral range, so only another
// listener can take it); a start that loses its port goes on to the next.
#pragma once

#include <cstdint>
#include <string>

namespace gw::test {

class PrivateCluster {
 public:
  PrivateCluster();
  // A pg_basebackup of `source` (running), started on a port of its own: a
  // restored backup, or with `standby` a streaming standby of `source`.
  enum class Copy { backup, standby };
  PrivateCluster(const PrivateCluster& source, Copy copy);
  ~PrivateCluster();
  PrivateCluster(const PrivateCluster&) = delete;
  PrivateCluster& operator=(const PrivateCluster&) = delete;

  void stop() const;   // pg_ctl stop -m fast: connections are cut
  void start() const;  // on the same port and data directory
  std::string url() const;
  std::uint16_t port() const { return static_cast<std::uint16_t>(std::stoi(port_)); }

 private:
  // scripts/pg.sh VERB DIR ARGS, its stdout and stderr to `output`.
  int run(const std::string& verb, const std::string& args = "", const std::string& output = "/dev/null") const;
  void make_dir();
  void start_on_a_free_port();
  std::string script_, dir_, port_;
};

}  // namespace gw::test
