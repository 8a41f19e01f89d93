#include "support/test_database.hpp"

#include "core/digest.hpp"
#include "store/migrations.hpp"

#include <pqxx/pqxx>

#include <cstdlib>
#include <memory>
#include <mutex>
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
// Two renames to the same name at once: the catalog's unique index stops the second.
constexpr const char* unique_violation = "23505";

// A PostgreSQL connection costs its server tens of milliseconds of CPU on
// this kind of machine (a backend's start and exit), and connections were
// most of the test cluster's work. So each process keeps one to the admin
// database, and each TestDatabase one to its own, opened on first use.
// A connection found broken (a test ended backends) is replaced and the
// statement sent again once: these are test setup and inspection, never
// the gateway's own decisions.
template <class Fn>
auto on_connection(std::unique_ptr<pqxx::connection>& connection, const std::string& url, Fn&& fn) {
  for (int attempt = 1;; ++attempt) {
    try {
      if (!connection || !connection->is_open()) connection = std::make_unique<pqxx::connection>(url);
      pqxx::nontransaction tx(*connection);
      return fn(tx);
    } catch (const pqxx::broken_connection&) {
      connection.reset();
      if (attempt == 2) throw;
    }
  }
}

std::mutex admin_mutex;
std::unique_ptr<pqxx::connection> admin_connection;

template <class Fn>
auto on_admin(Fn&& fn) {
  std::lock_guard lock(admin_mutex);
  return on_connection(admin_connection, admin_url(), std::forward<Fn>(fn));
}

void admin_exec(const std::string& sql) {
  on_admin([&](pqxx::nontransaction& tx) { return tx.exec(sql); });
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
    const bool exists = on_admin([&](pqxx::nontransaction& tx) {
      return !tx.exec_params("SELECT 1 FROM pg_database WHERE datname = $1", final_name).empty();
    });
    if (exists) return final_name;
    admin_exec("CREATE DATABASE " + building);
    {
      pqxx::connection c(admin_url() + " dbname=" + building);
      gw::migrate(c);
    }
    try {
      admin_exec("ALTER DATABASE " + building + " RENAME TO " + final_name);
    } catch (const pqxx::sql_error& e) {
      if (e.sqlstate() != duplicate_database && e.sqlstate() != unique_violation) throw;
      admin_exec("DROP DATABASE " + building);
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
    {
      std::lock_guard lock(mutex_);
      connection_.reset();
    }
    admin_exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
  } catch (const std::exception&) {
    // A database left behind is harmless: the test cluster is thrown away.
  }
}

void TestDatabase::exec(const std::string& sql) const {
  std::lock_guard lock(mutex_);
  on_connection(connection_, url_, [&](pqxx::nontransaction& tx) { return tx.exec(sql); });
}

std::string TestDatabase::scalar(const std::string& sql) const {
  std::lock_guard lock(mutex_);
  return on_connection(connection_, url_, [&](pqxx::nontransaction& tx) {
    auto r = tx.exec(sql);
    return r.empty() || r[0][0].is_null() ? std::string() : r[0][0].as<std::string>();
  });
}

}  // namespace gw::test
