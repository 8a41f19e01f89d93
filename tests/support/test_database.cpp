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

namespace {

constexpr const char* duplicate_database = "42P04";

void admin_exec(const std::string& sql) {
  pqxx::connection admin(admin_url());
  pqxx::nontransaction tx(admin);
  tx.exec(sql);
}

// A migrated database to copy, one per schema: named for the digest of every
// embedded migration, so a changed schema gets a new one. Built under a name
// of its own and renamed into place, so a test never copies a half-migrated
// one; a process that loses that race drops its copy. Copying it is several
// times cheaper than migrating each test's database (measured: 0.2 s against
// 0.47 s a database), and a test run makes hundreds.
const std::string& migrated_template() {
  static const std::string name = [] {
    std::string all;
    for (const auto& m : embedded_migrations()) all.append(m.name).append(m.sql);
    const std::string final_name = "gw_template_" + sha256_hex(all).substr(0, 16);
    const std::string building = "gw_building_" + to_hex(random_bytes(6));
    pqxx::connection admin(admin_url());
    pqxx::nontransaction tx(admin);
    if (!tx.exec_params("SELECT 1 FROM pg_database WHERE datname = $1", final_name).empty()) return final_name;
    tx.exec("CREATE DATABASE " + building);
    {
      pqxx::connection c(admin_url() + " dbname=" + building);
      gw::migrate(c);
    }
    try {
      tx.exec("ALTER DATABASE " + building + " RENAME TO " + final_name);
    } catch (const pqxx::sql_error& e) {
      if (e.sqlstate() != duplicate_database) throw;
      tx.exec("DROP DATABASE " + building);
    }
    return final_name;
  }();
  return name;
}

}  // namespace

TestDatabase::TestDatabase(bool migrate) {
  name_ = "gw_test_" + to_hex(random_bytes(6));
  // FILE_COPY copies the template's files instead of writing every page to
  // the WAL: the cheaper of the two for a small database (measured).
  admin_exec("CREATE DATABASE " + name_ +
             (migrate ? " TEMPLATE " + migrated_template() + " STRATEGY FILE_COPY" : std::string()));
  url_ = admin_url() + " dbname=" + name_;
  // Its own realm, as a migration of its own would have given it: tests of
  // grants from another realm need every database to be a different authority.
  if (migrate) exec("UPDATE authority SET realm = gen_random_uuid()::text, realm_since = clock_timestamp()");
}

TestDatabase::~TestDatabase() {
  try {
    admin_exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
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
