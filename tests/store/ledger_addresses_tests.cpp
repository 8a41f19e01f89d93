// The table of ledger row addresses (store/ledger_addresses.hpp): a hint per
// task, bounded, whose misses only cost a decision by key. Pure: no database.
#include "store/ledger_addresses.hpp"

#include <doctest/doctest.h>

using namespace gw;

TEST_CASE("ledger addresses: a task never seen has none") {
  LedgerAddresses table;
  CHECK(table.find({"tenant-a", "task-1"}) == std::nullopt);
}

TEST_CASE("ledger addresses: the last address remembered for a task is found, for that task only") {
  LedgerAddresses table;
  table.remember({"tenant-a", "task-1"}, "(0,2)");
  table.remember({"tenant-a", "task-1"}, "(3,7)");
  CHECK(table.find({"tenant-a", "task-1"}) == "(3,7)");
  CHECK(table.find({"tenant-b", "task-1"}) == std::nullopt);
  CHECK(table.find({"tenant-a", "task-2"}) == std::nullopt);
}

TEST_CASE("ledger addresses: tenant and task are told apart where they join") {
  // Labels hold no spaces, so "ab"+"c" and "a"+"bc" are different keys.
  LedgerAddresses table(1);
  table.remember({"ab", "c"}, "(0,2)");
  CHECK(table.find({"a", "bc"}) == std::nullopt);
  CHECK(table.find({"ab", "c"}) == "(0,2)");
}

TEST_CASE("ledger addresses: bounded, a task sharing a slot replaces the one there") {
  LedgerAddresses table(1);
  table.remember({"tenant-a", "task-1"}, "(0,2)");
  table.remember({"tenant-a", "task-2"}, "(0,4)");
  CHECK(table.find({"tenant-a", "task-1"}) == std::nullopt);
  CHECK(table.find({"tenant-a", "task-2"}) == "(0,4)");
}

TEST_CASE("ledger addresses: a task is forgotten, and a table needs a slot") {
  LedgerAddresses table;
  table.remember({"tenant-a", "task-1"}, "(0,2)");
  table.remember({"tenant-a", "task-1"}, std::nullopt);
  CHECK(table.find({"tenant-a", "task-1"}) == std::nullopt);
  CHECK_THROWS_AS(LedgerAddresses(0), std::invalid_argument);
}
