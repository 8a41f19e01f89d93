// A fresh, migrated PostgreSQL database per test, made on the server named
// by GATEWAY_TEST_PG (scripts/test.sh starts a private one) and dropped after.
#pragma once

#include <pqxx/connection>

#include <memory>
#include <mutex>
#include <string>

namespace gw::test {

// The admin connection string; fails the test run when unset.
std::string admin_url();

class TestDatabase {
 public:
  explicit TestDatabase(bool migrate = true);
  ~TestDatabase();
  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;

  const std::string& url() const { return url_; }
  const std::string& name() const { return name_; }
  // Runs SQL directly (setup the API cannot reach, and inspection).
  void exec(const std::string& sql) const;
  std::string scalar(const std::string& sql) const;

 private:
  std::string name_;
  std::string url_;
  // One connection for exec() and scalar(), opened on first use
  // (test_database.cpp says why); calls from several threads take turns.
  mutable std::mutex mutex_;
  mutable std::unique_ptr<pqxx::connection> connection_;
};

}  // namespace gw::test
