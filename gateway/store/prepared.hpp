// Statements the request path runs on every decision, prepared once per
// connection: PostgreSQL then parses and plans each once instead of on
// every call (docs/performance.md has the measured difference).
#pragma once

#include <pqxx/pqxx>

#include <string>
#include <tuple>
#include <utility>

namespace gw {

struct Statement {
  const char* name;  // unique per definition; "gw_" keeps it apart from libpqxx's own
  const char* sql;
};

// libpqxx 6.4 registers a definition per connection and prepares it on the
// server at its first use; registering the same text again is a lookup, so
// a connection that was replaced simply prepares it anew.
template <class... Args>
pqxx::result exec_prepared(pqxx::transaction_base& tx, const Statement& statement, Args&&... args) {
  tx.conn().prepare(statement.name, statement.sql);
  return tx.exec_prepared(statement.name, std::forward<Args>(args)...);
}

// A decision's one statement (`ask.statement`, `ask.args()`: a tuple), sent
// through libpqxx; service/db/pg_connection.hpp sends the same ask itself.
template <class Ask>
pqxx::result exec_ask(pqxx::transaction_base& tx, const Ask& ask) {
  return std::apply([&](const auto&... args) { return exec_prepared(tx, ask.statement, args...); }, ask.args());
}

}  // namespace gw
