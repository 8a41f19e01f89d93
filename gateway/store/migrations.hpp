// Numbered SQL migrations from schema/, embedded at build time and applied
// at start exactly once, under an advisory lock so two gateways starting
// together apply each file once.
#pragma once

#include <pqxx/pqxx>

#include <span>
#include <string_view>


namespace gw {

struct Migration {
  std::string_view name;  // "001_authority.sql": applied in name order
  std::string_view sql;
};

std::span<const Migration> embedded_migrations();

// Applies the pending migrations in one transaction. Refuses (throws) when an
// applied migration's text has changed or the database has one this binary
// does not know: a schema it did not write is not one it can reason about.
void migrate(pqxx::connection& connection);

}  // namespace gw
