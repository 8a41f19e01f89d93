// An unexpected exception is a 500 internal_error whose reply says nothing
// of it: the cause is real (the schema broken under the running gateway, in
// this test's own database), and the gateway keeps serving and recovers.
#include "support/gateway_fixture.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>

using namespace gw;
using namespace gw::test;

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

TEST_CASE("internal_error: an unexpected database error is a 500 that hides the exception text") {
  Gateway g;
  g.set_clock(1000);
  g.claim("tenant-a", "before", "o", 60000);
  // Every claim reads tasks.owner; PostgreSQL now answers 42703, which the
  // gateway has no rule for.
  g.db().exec("ALTER TABLE tasks RENAME COLUMN owner TO owner_renamed");

  auto r = g.client().post_json(task_path("tenant-a", "broken", "claim"), {{"owner", "o"}, {"lease_ms", 60000}},
                                agent_a);
  check_problem(r, 500, "internal_error");
  CHECK(r.header("X-Request-Id"));
  // The exception reads 'column t.owner does not exist' plus the statement.
  const auto body = lower(r.body);
  CAPTURE(r.body);
  for (const char* leak : {"owner", "column", "does not exist", "relation", "tasks", "select", "42703", "pqxx",
                           "line 1"})
    CHECK_MESSAGE(body.find(leak) == std::string::npos, leak);
  CHECK(g.db().scalar("SELECT count(*) FROM tasks") == "1");

  // Still serving: the probes, and a route that does not read the column.
  CHECK(g.client().get("/healthz", "").status == 200);
  CHECK(g.client().get("/readyz", "").status == 200);

  g.db().exec("ALTER TABLE tasks RENAME COLUMN owner_renamed TO owner");
  g.claim("tenant-a", "broken", "o", 60000);
  auto busy = g.client().post_json(task_path("tenant-a", "before", "claim"), {{"owner", "p"}, {"lease_ms", 1000}},
                                   agent_a);
  check_problem(busy, 409, "busy");
  CHECK(g.db().scalar("SELECT count(*) FROM tasks") == "2");
}
