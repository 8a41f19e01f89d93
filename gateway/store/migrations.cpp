#include "store/migrations.hpp"

#include "core/digest.hpp"

#include <pqxx/pqxx>

#include <map>
#include <stdexcept>
#include <string>

namespace gw {

void migrate(pqxx::connection& connection) {
  pqxx::work tx(connection);
  // READ COMMITTED whatever the session's default (store/pool.cpp): the
  // rows read after the lock must be the ones its last holder committed,
  // not a snapshot taken before it was granted.
  tx.exec0("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
  // Any constant works; it only has to be the same for every gateway.
  tx.exec("SELECT pg_advisory_xact_lock(7215532110)");
  tx.exec(R"(CREATE TABLE IF NOT EXISTS schema_migrations (
               name       text PRIMARY KEY,
               sha256     text NOT NULL,
               applied_at timestamptz NOT NULL DEFAULT clock_timestamp()))");
  std::map<std::string, std::string> applied;
  for (const auto& row : tx.exec("SELECT name, sha256 FROM schema_migrations"))
    applied.emplace(row[0].as<std::string>(), row[1].as<std::string>());
  std::map<std::string, bool> known;
  for (const auto& m : embedded_migrations()) {
    const std::string name(m.name);
    known[name] = true;
    const std::string digest = sha256_hex(m.sql);
    if (auto it = applied.find(name); it != applied.end()) {
      if (it->second != digest)
        throw std::runtime_error("migration " + name + " was changed after it was applied");
      continue;
    }
    tx.exec(std::string(m.sql));
    tx.exec_params("INSERT INTO schema_migrations (name, sha256) VALUES ($1, $2)", name, digest);
  }
  for (const auto& [name, _] : applied)
    if (!known.count(name))
      throw std::runtime_error("database has migration " + name + " that this gateway does not know");
  tx.commit();
}

}  // namespace gw
