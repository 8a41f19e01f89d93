// Statements the request path runs on every decision, prepared once per
// connection: PostgreSQL then parses and plans each once instead of on
// every call (docs/performance.md has the measured difference).
#pragma once

#include <pqxx/pqxx>

#include <concepts>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
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

template <class T>
inline constexpr bool is_optional_v = false;
template <class T>
inline constexpr bool is_optional_v<std::optional<T>> = true;

// A decision made by one statement sent alone (autocommit): it states its
// SQL (`statement`), its arguments in order (`args()`, a tuple), what its
// one row means (`answer(row)`: nullopt when the full decision in a
// transaction is needed) and what a failure with a SQLSTATE means instead
// (`refused(sqlstate)`: nullopt when the error stands). `Row` is libpqxx's
// row or store/pg_result.hpp's PgRow: the same ask is sent through either.
template <class S, class Row>
concept OneStatementDecision = requires(S& s, const S& read, const Row& row, const std::string& sqlstate) {
  { read.statement } -> std::convertible_to<const Statement&>;
  { std::tuple_size<std::remove_cvref_t<decltype(read.args())>>::value } -> std::convertible_to<std::size_t>;
  { s.answer(row) } -> std::same_as<decltype(S::refused(sqlstate))>;
  requires is_optional_v<decltype(S::refused(sqlstate))>;
};

// A decision's one statement, sent through libpqxx; service/db/pg_connection.hpp
// sends the same ask itself.
template <class Ask>
pqxx::result exec_ask(pqxx::transaction_base& tx, const Ask& ask) {
  return std::apply([&](const auto&... args) { return exec_prepared(tx, ask.statement, args...); }, ask.args());
}

}  // namespace gw
