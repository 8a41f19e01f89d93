// The restore drill (docs/operations.md, "Restore drill") at store level,
// with the real pg_dump and pg_restore: grants issued before a backup and
// after it (which the backup never saw) are all refused once the restored
// database's realm is rotated, the tasks can be claimed at once, and the new
// epochs are above every epoch issued before, on either side of the backup.
#include "store/store_fixture.hpp"

#include "store/migrations.hpp"
#include "support/process.hpp"

#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

extern char** environ;

using namespace gw;
using namespace gw::test;

namespace {

std::string pg_binary(const std::string& name) {
  const char* dir = std::getenv("PGBIN");
  return std::string(dir && *dir ? dir : "/usr/lib/postgresql/15/bin") + "/" + name;
}

// Runs a program to completion; its exit status (-1: killed by a signal).
int run(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  if (int rc = ::posix_spawn(&pid, argv[0].c_str(), nullptr, nullptr, args.data(), environ); rc != 0)
    throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(rc));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The stores of one gateway on one database, under the manual clock.
struct RestoredGateway {
  explicit RestoredGateway(const std::string& url) : options{url} {}
  void at(std::int64_t now) { REQUIRE(authority.set_manual_clock(session, now) == Code::ok); }
  ClaimResult claim(const std::string& task, const std::string& owner) {
    return authority.claim(session, {"tenant-a", task}, owner, 1'000'000);
  }

  AuthorityClock clock{ClockSource::manual};
  AuthorityStore authority{clock};
  LedgerStore ledger{clock};
  OperatorStore operators{clock};
  SessionOptions options;
  Session session{options, no_failures()};
};

}  // namespace

TEST_CASE("restore drill: after restoring a backup and rotating the realm, no grant from before survives and epochs only grow") {
  StoreFixture f;
  // Before the backup: two tasks claimed, one operation committed on task-1.
  auto a = f.claim("tenant-a", "task-1", "region-a", 0, 1'000'000);
  auto b = f.claim("tenant-a", "task-2", "region-b", 0, 1'000'000);
  REQUIRE(f.commit(a, {"tenant-a", "task-1", "op-1", "v", 0}, 10) == Code::committed);

  f.at(20);
  TempDir dir;
  const auto dump = dir.path() + "/authority.dump";
  REQUIRE(run({pg_binary("pg_dump"), "--format=custom", "--file=" + dump, "--dbname=" + f.db.url()}) == 0);

  // After the backup, on the database that will be lost: more grants (with
  // higher epochs) and one more committed operation.
  auto c = f.claim("tenant-a", "task-3", "region-c", 30, 1'000'000);
  auto d = f.claim("tenant-a", "task-4", "region-d", 30, 1'000'000);
  REQUIRE(f.commit(a, {"tenant-a", "task-1", "op-2", "v", 1}, 31) == Code::committed);
  const auto highest_issued = std::max({a.identity.epoch, b.identity.epoch, c.identity.epoch, d.identity.epoch});
  REQUIRE(highest_issued == d.identity.epoch);

  // Restore into a fresh database, as an operator would after losing the first.
  TestDatabase restored(false);
  REQUIRE(run({pg_binary("pg_restore"), "--exit-on-error", "--no-owner", "--dbname=" + restored.url(), dump}) == 0);
  {
    pqxx::connection c(restored.url());
    gw::migrate(c);  // the gateway accepts the restored schema as its own
  }
  RestoredGateway g(restored.url());
  g.at(40);
  // Why the rotation is needed: the restored database still honours grants
  // issued before the backup, and its epoch sequence is behind grants
  // issued after it.
  CHECK(g.authority.renew(g.session, {"tenant-a", "task-1"}, a, 1'000).code == Code::renewed);
  CHECK(std::stoll(restored.scalar("SELECT last_value FROM epoch_seq")) < highest_issued);

  auto rotation = g.operators.rotate_realm(g.session, "drill", {.expected_realm = a.identity.realm});
  REQUIRE(rotation.code == Code::realm_rotated);
  CHECK(rotation.previous_realm == a.identity.realm);
  CHECK(rotation.realm != a.identity.realm);
  CHECK(rotation.next_epoch > highest_issued);
  CHECK(rotation.leases_ended == 2);  // task-1 and task-2, the ones the backup knew

  // Every grant, from before the backup and after it, is refused.
  for (const auto* grant : {&a, &b, &c, &d}) {
    const auto& scope = grant->identity.scope;
    CAPTURE(scope.task);
    CHECK(g.ledger.admit(g.session, f.admission(*grant, {scope.tenant, scope.task, "op-9", "v", 1})).decision.code ==
          Code::authority_generation_mismatch);
    CHECK(g.authority.renew(g.session, scope, *grant, 1'000).code == Code::authority_generation_mismatch);
  }

  // New claims work at once, in the new realm, above every epoch issued before.
  std::int64_t previous = highest_issued;
  for (const char* task : {"task-1", "task-2", "task-3", "task-4"}) {
    CAPTURE(task);
    auto fresh = g.claim(task, "region-e");
    REQUIRE(fresh.code == Code::granted);
    CHECK(fresh.grant.realm == rotation.realm);
    CHECK(fresh.grant.epoch > previous);
    previous = fresh.grant.epoch;
  }
  // The ledger is the backup's: task-1's operation after the backup is gone
  // (the provider has it; the operator reconciles it, docs/operations.md).
  CHECK(restored.scalar("SELECT version FROM task_ledger WHERE task = 'task-1'") == "1");
  CHECK(restored.scalar("SELECT count(*) FROM operations WHERE op_id = 'op-2'") == "0");
  CHECK(restored.scalar("SELECT actor FROM operator_actions WHERE action = 'rotate_realm'") == "drill");
}
