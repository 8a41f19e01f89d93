#include "store/migrations.hpp"
#include "support/test_database.hpp"

#include <doctest/doctest.h>
#include <pqxx/pqxx>

#include <thread>

using namespace gw;
using namespace gw::test;

TEST_CASE("migrations from two gateways at once apply each file exactly once") {
  TestDatabase db(/*migrate=*/false);
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i)
    threads.emplace_back([&] {
      pqxx::connection c(db.url());
      migrate(c);
      ++ok;
    });
  for (auto& t : threads) t.join();
  CHECK(ok == 2);
  CHECK(db.scalar("SELECT count(*) FROM schema_migrations") == std::to_string(embedded_migrations().size()));
  CHECK(db.scalar("SELECT count(*) FROM authority") == "1");
}

TEST_CASE("migrations again are a no-op") {
  TestDatabase db;
  auto realm = db.scalar("SELECT realm FROM authority");
  pqxx::connection c(db.url());
  migrate(c);
  CHECK(db.scalar("SELECT realm FROM authority") == realm);
}

TEST_CASE("a changed or unknown applied migration stops the gateway") {
  TestDatabase db;
  db.exec("UPDATE schema_migrations SET sha256 = 'edited' WHERE name = '001_authority.sql'");
  pqxx::connection c(db.url());
  CHECK_THROWS_WITH_AS(migrate(c), doctest::Contains("changed"), std::runtime_error);
  TestDatabase db2;
  db2.exec("INSERT INTO schema_migrations (name, sha256) VALUES ('999_future.sql', 'x')");
  pqxx::connection c2(db2.url());
  CHECK_THROWS_WITH_AS(migrate(c2), doctest::Contains("999_future.sql"), std::runtime_error);
}
