// The authority regression guard against real servers (store/authority_guard.hpp):
// a lagging asynchronous standby promoted while behind, and a restore from a
// pg_basebackup taken before the last decisions, are refused before any
// decision is written there; the same primary restarted is not; rotate-realm
// is the way out. Each test runs private clusters (scripts/pg.sh, clone).
#include "core/grant.hpp"
#include "store/authority_guard.hpp"
#include "store/authority_store.hpp"
#include "store/migrations.hpp"
#include "store/operator_store.hpp"
#include "store/pool.hpp"
#include "support/eventually.hpp"
#include "support/private_cluster.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>

using namespace gw;
using namespace gw::test;

namespace {

// The events a guard reported, in order.
struct GuardEvents {
  std::mutex mutex;
  std::vector<std::string> names;
  std::vector<nlohmann::json> fields;  // each event's, in the same order
  std::string log;  // every event with its fields, shown when a check fails
  AuthorityGuard::Reporter reporter() {
    return [this](const std::string& event, const nlohmann::json& f) {
      std::lock_guard lock(mutex);
      names.push_back(event);
      fields.push_back(f);
      log += event + " " + f.dump() + "\n";
    };
  }
  // The fields of the last `name` event (null if there was none).
  nlohmann::json last(const std::string& name) {
    std::lock_guard lock(mutex);
    for (auto i = names.size(); i-- > 0;)
      if (names[i] == name) return fields[i];
    return nullptr;
  }
  std::size_t count(const std::string& name) {
    std::lock_guard lock(mutex);
    return static_cast<std::size_t>(std::count(names.begin(), names.end(), name));
  }
};

// A state file of the test's own, removed afterwards.
struct StateDir {
  StateDir() {
    auto pattern = (std::filesystem::temp_directory_path() / "gw-guard-state-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()));
    dir = pattern;
  }
  ~StateDir() { std::filesystem::remove_all(dir); }
  std::string file() const { return dir + "/authority-guard.state"; }
  std::string dir;
};

std::string guard_sql(const std::string& url, const std::string& sql) {
  pqxx::connection c(url);
  pqxx::nontransaction tx(c);
  auto r = tx.exec(sql);  // a statement may return no row (ALTER SYSTEM)
  return r.empty() || r[0][0].is_null() ? "" : r[0][0].c_str();
}

// Whether `standby` has replayed everything `primary` has inserted so far.
// The insert position, not pg_current_wal_lsn (the write position): the test
// clusters run with synchronous_commit off, so a commit just acknowledged can
// still sit in the WAL buffers, past the write position (the CI failure of
// stop 36: the standby was "caught up" without task-1's grant).
bool caught_up(const std::string& primary, const std::string& standby) {
  const auto at = guard_sql(primary, "SELECT pg_current_wal_insert_lsn()::text");
  return eventually([&] {
    return guard_sql(standby, "SELECT (pg_last_wal_replay_lsn() >= '" + at + "'::pg_lsn)::text") == "true";
  });
}

bool task_exists(const std::string& url, const std::string& task) {
  return guard_sql(url, "SELECT count(*) FROM tasks WHERE task = '" + task + "'") == "1";
}

std::optional<GuardVerdict> refusal_of(Session& s) {
  try {
    s.connection();
  } catch (const AuthorityRefused& e) {
    return e.verdict;
  }
  return std::nullopt;
}

SessionOptions guarded(const std::string& url, AuthorityGuard& guard) {
  SessionOptions o{url};
  o.guard = &guard;
  o.reconnect_backoff = std::chrono::milliseconds(0);  // each check in the test connects again
  return o;
}

std::shared_ptr<std::atomic<std::int64_t>> never_failed() {
  return std::make_shared<std::atomic<std::int64_t>>(-1'000'000'000);
}

void migrate_cluster(const PrivateCluster& c) {
  pqxx::connection conn(c.url());
  migrate(conn);
}

}  // namespace

TEST_CASE("authority guard: a lagging asynchronous standby promoted while behind is refused, and so is the old primary after a rotation") {
  PrivateCluster primary;
  migrate_cluster(primary);
  PrivateCluster standby(primary, PrivateCluster::Copy::standby);
  StateDir state;
  GuardEvents events;
  AuthorityGuard guard(state.file(), events.reporter());
  AuthorityClock clock(ClockSource::database);
  AuthorityStore authority(clock);
  OperatorStore operators(clock);

  const auto on_primary = guarded(primary.url(), guard);
  Session primary_session(on_primary, never_failed());
  const auto first = authority.claim(primary_session, {"tenant-a", "task-1"}, "region-a", 60'000);
  REQUIRE(first.code == Code::granted);
  REQUIRE(caught_up(primary.url(), standby.url()));

  // A standby is not a primary: refused, and nothing remembered of it.
  const auto on_standby = guarded(standby.url(), guard);
  Session standby_session(on_standby, never_failed());
  CHECK(refusal_of(standby_session) == GuardVerdict::standby);
  CHECK(events.count("authority_guard_tripped") == 0);

  // The standby stops receiving (asynchronous, and now lagging); the primary
  // acknowledges one more decision alone: a renewal, which draws no epoch, so
  // only the commit position can tell.
  guard_sql(standby.url(), "ALTER SYSTEM SET primary_conninfo = ''");
  guard_sql(standby.url(), "SELECT pg_reload_conf()::text");
  REQUIRE(eventually([&] { return guard_sql(standby.url(), "SELECT count(*) FROM pg_stat_wal_receiver") == "0"; }));
  const auto token = decode_grant_token(first.token);
  REQUIRE(token);
  REQUIRE(authority.renew(primary_session, {"tenant-a", "task-1"}, *token, 600'000).code == Code::renewed);
  guard.observe(primary_session.connection());  // the timer's read: after the acknowledgement

  // Promoted while behind: it lacks the renewal the gateway acknowledged.
  REQUIRE(guard_sql(standby.url(), "SELECT pg_promote(true, 60)::text") == "true");
  REQUIRE(task_exists(standby.url(), "task-1"));
  const std::string lease = "SELECT expires_at_ms FROM tasks WHERE task = 'task-1'";
  REQUIRE(std::stoll(guard_sql(standby.url(), lease)) < std::stoll(guard_sql(primary.url(), lease)));
  INFO(events.log);
  CHECK(refusal_of(standby_session) == GuardVerdict::position_behind);
  CHECK(events.count("authority_guard_tripped") == 1);
  // No grant is written there: the claim is refused before any statement.
  CHECK_THROWS_AS(authority.claim(standby_session, {"tenant-a", "task-2"}, "region-b", 60'000), AuthorityUnavailable);
  CHECK_FALSE(task_exists(standby.url(), "task-2"));
  // The refusal is kept: a second connection does not trip again.
  CHECK(refusal_of(standby_session) == GuardVerdict::position_behind);
  CHECK(events.count("authority_guard_tripped") == 1);

  // The gateway restarted: the state file remembers the watermark and the refusal.
  {
    GuardEvents restarted_events;
    AuthorityGuard restarted(state.file(), restarted_events.reporter());
    CHECK(restarted.watermark() == guard.watermark());
    auto options = guarded(standby.url(), restarted);
    Session again(options, never_failed());
    CHECK(refusal_of(again) == GuardVerdict::position_behind);
  }

  // The way out, once what was in flight is reconciled: rotate the realm
  // there. The guard lets the operator's rotation through, and then accepts
  // the rotated authority.
  const auto primary_changes = events.count("authority_primary_changed");
  {
    AuthorityGuard::Override through_guard;
    CHECK(operators.rotate_realm(standby_session, "operator").code == Code::realm_rotated);
  }
  CHECK(events.count("authority_guard_overridden") == 1);
  CHECK_NOTHROW(standby_session.connection());
  CHECK(events.count("authority_primary_changed") == primary_changes + 1);
  CHECK(guard.watermark().realm == guard_sql(standby.url(), "SELECT realm FROM authority"));

  // The old primary, still up and writable, holds the old realm below the
  // rotated epochs: the gateway's connection to it is retired and refused.
  CHECK(refusal_of(primary_session) == GuardVerdict::realm_behind);
  CHECK_THROWS_AS(authority.claim(primary_session, {"tenant-a", "task-3"}, "region-a", 60'000), AuthorityUnavailable);
  CHECK_FALSE(task_exists(primary.url(), "task-3"));
}

TEST_CASE("authority guard: a restore from a pg_basebackup taken before the last decisions is refused, also by a restarted gateway") {
  PrivateCluster primary;
  migrate_cluster(primary);
  StateDir state;
  GuardEvents events;
  AuthorityGuard guard(state.file(), events.reporter());
  AuthorityClock clock(ClockSource::database);
  AuthorityStore authority(clock);

  const auto on_primary = guarded(primary.url(), guard);
  Session primary_session(on_primary, never_failed());
  REQUIRE(authority.claim(primary_session, {"tenant-a", "task-1"}, "region-a", 60'000).code == Code::granted);
  PrivateCluster restored(primary, PrivateCluster::Copy::backup);
  // Decisions after the backup, then the timer's read of the position.
  REQUIRE(authority.claim(primary_session, {"tenant-a", "task-2"}, "region-a", 60'000).code == Code::granted);
  REQUIRE(authority.claim(primary_session, {"tenant-a", "task-3"}, "region-a", 60'000).code == Code::granted);
  guard.observe(primary_session.connection());
  primary.stop();  // the machine is lost

  REQUIRE(task_exists(restored.url(), "task-1"));
  REQUIRE_FALSE(task_exists(restored.url(), "task-3"));
  // The restored copy goes on writing (another gateway without a state file,
  // say): its WAL passes the watermark, yet what it held at its start did not.
  guard_sql(restored.url(), "CREATE TABLE filler AS SELECT g FROM generate_series(1, 20000) g");
  const auto options = guarded(restored.url(), guard);
  Session restored_session(options, never_failed());
  INFO(events.log);
  // The grants issued after the backup drew epochs the copy's sequence is below.
  CHECK(refusal_of(restored_session) == GuardVerdict::epoch_behind);
  CHECK(events.count("authority_guard_tripped") == 1);

  // A gateway restarted from its state file refuses it by the same rule.
  StateDir copy;
  std::filesystem::copy_file(state.file(), copy.file());
  GuardEvents fresh_events;
  AuthorityGuard restarted(copy.file(), fresh_events.reporter());
  const auto restarted_options = guarded(restored.url(), restarted);
  Session restarted_session(restarted_options, never_failed());
  CHECK(refusal_of(restarted_session) == GuardVerdict::epoch_behind);
  CHECK_THROWS_AS(authority.claim(restarted_session, {"tenant-a", "task-3"}, "region-b", 60'000), AuthorityUnavailable);
  CHECK_FALSE(task_exists(restored.url(), "task-3"));
  // Without a state file a restarted gateway could not tell: it trusts the
  // first primary (docs/deployment.md says to give every gateway one).
  GuardEvents blank_events;
  AuthorityGuard blank("", blank_events.reporter());
  const auto blank_options = guarded(restored.url(), blank);
  Session blank_session(blank_options, never_failed());
  CHECK_NOTHROW(blank_session.connection());
}

TEST_CASE("authority guard: the same primary restarted is accepted, and a corrupt state file stops the gateway") {
  PrivateCluster primary;
  migrate_cluster(primary);
  StateDir state;
  GuardEvents events;
  AuthorityGuard guard(state.file(), events.reporter());
  AuthorityClock clock(ClockSource::database);
  AuthorityStore authority(clock);
  const auto options = guarded(primary.url(), guard);
  Session session(options, never_failed());
  REQUIRE(authority.claim(session, {"tenant-a", "task-1"}, "region-a", 60'000).code == Code::granted);
  guard.observe(session.connection());
  const auto before = guard.watermark();
  CHECK(before.lsn > 0);

  primary.stop();
  primary.start();
  CHECK(authority.claim(session, {"tenant-a", "task-2"}, "region-a", 60'000).code == Code::granted);
  CHECK(events.count("authority_guard_tripped") == 0);
  CHECK(events.count("authority_primary_changed") == 2);  // first start, then the restarted server
  {
    // The change event names both servers: where each was reached, and which it is.
    INFO(events.log);
    const auto change = events.last("authority_primary_changed");
    const auto address = "127.0.0.1:" + std::to_string(primary.port());
    REQUIRE(change.is_object());
    CHECK(change["old"]["address"] == address);
    CHECK(change["new"]["address"] == address);
    CHECK(change["old"]["system_identifier"] == change["new"]["system_identifier"]);
    CHECK(change["old"]["timeline"] == change["new"]["timeline"]);
    CHECK(change["old"]["started"] != change["new"]["started"]);  // a restart is a server not used yet
  }
  guard.observe(session.connection());
  CHECK(guard.watermark().lsn > before.lsn);
  CHECK(guard.watermark().max_epoch >= 2);

  {
    std::ofstream out(state.file(), std::ios::trunc);
    out << "write-gateway authority guard v1\nlsn=garbage\n";
  }
  CHECK_THROWS_WITH_AS(AuthorityGuard(state.file(), events.reporter()), doctest::Contains("lsn is not a WAL position"),
                       std::runtime_error);
}
