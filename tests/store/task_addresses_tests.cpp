// The table of task row addresses (store/task_addresses.hpp): a hint per
// task, bounded, whose misses only cost an index read. Pure: no database.
#include "store/task_addresses.hpp"

#include <doctest/doctest.h>

using namespace gw;

TEST_CASE("task addresses: a task never seen has none") {
  TaskAddresses table;
  CHECK(table.find({"tenant-a", "task-1"}) == TaskRowAddresses{});
}

TEST_CASE("task addresses: the last addresses remembered for a task are found, for that task only") {
  TaskAddresses table;
  table.remember({"tenant-a", "task-1"}, {"(0,1)", "(0,2)"});
  table.remember({"tenant-a", "task-1"}, {"(0,1)", "(3,7)"});
  CHECK(table.find({"tenant-a", "task-1"}) == TaskRowAddresses{"(0,1)", "(3,7)"});
  CHECK(table.find({"tenant-b", "task-1"}) == TaskRowAddresses{});
  CHECK(table.find({"tenant-a", "task-2"}) == TaskRowAddresses{});
}

TEST_CASE("task addresses: tenant and task are told apart where they join") {
  // Labels hold no spaces, so "ab"+"c" and "a"+"bc" are different keys.
  TaskAddresses table(1);
  table.remember({"ab", "c"}, {"(0,1)", "(0,2)"});
  CHECK(table.find({"a", "bc"}) == TaskRowAddresses{});
  CHECK(table.find({"ab", "c"}) == TaskRowAddresses{"(0,1)", "(0,2)"});
}

TEST_CASE("task addresses: bounded, a task sharing a slot replaces the one there") {
  TaskAddresses table(1);
  table.remember({"tenant-a", "task-1"}, {"(0,1)", "(0,2)"});
  table.remember({"tenant-a", "task-2"}, {"(0,3)", "(0,4)"});
  CHECK(table.find({"tenant-a", "task-1"}) == TaskRowAddresses{});
  CHECK(table.find({"tenant-a", "task-2"}) == TaskRowAddresses{"(0,3)", "(0,4)"});
}

TEST_CASE("task addresses: a row not found is forgotten, and a table needs a slot") {
  TaskAddresses table;
  table.remember({"tenant-a", "task-1"}, {"(0,1)", "(0,2)"});
  table.remember({"tenant-a", "task-1"}, {"(0,1)", std::nullopt});
  CHECK(table.find({"tenant-a", "task-1"}) == TaskRowAddresses{"(0,1)", std::nullopt});
  CHECK_THROWS_AS(TaskAddresses(0), std::invalid_argument);
}
