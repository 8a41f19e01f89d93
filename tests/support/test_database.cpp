#include "support/test_database.hpp"

#include "core/digest.hpp"
#include "store/migrations.hpp"

#include <pqxx/pqxx>

#include <cstdlib>
#include <stdexcept>

namespace gw::test {

std::string admin_url() {
  const char* url = std::getenv("GATEWAY_TEST_PG");
  if (!url || !*url)
    throw std::runtime_error("GATEWAY_TEST_PG is not set: run the tests through scripts/test.sh");
  return url;
}

TestDatabase::TestDatabase(bool migrate) {
  name_ = "gw_test_" + to_hex(random_bytes(6));
  {
    pqxx::connection admin(admin_url());
    pqxx::nontransaction tx(admin);
    tx.exec("CREATE DATABASE " + name_);
  }
  url_ = admin_url() + " dbname=" + name_;
  if (migrate) {
    pqxx::connection c(url_);
    gw::migrate(c);
  }
}

TestDatabase::~TestDatabase() {
  try {
    pqxx::connection admin(admin_url());
    pqxx::nontransaction tx(admin);
    tx.exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
  } catch (const std::exception&) {
    // A database left behind is harmless: the test cluster is thrown away.
  }
}

void TestDatabase::exec(const std::string& sql) const {
  pqxx::connection c(url_);
  pqxx::nontransaction tx(c);
  tx.exec(sql);
}

std::string TestDatabase::scalar(const std::string& sql) const {
  pqxx::connection c(url_);
  pqxx::nontransaction tx(c);
  auto r = tx.exec(sql);
  return r.empty() || r[0][0].is_null() ? std::string() : r[0][0].as<std::string>();
}

}  // namespace gw::test
