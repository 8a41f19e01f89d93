#include "store/authority_store.hpp"

#include "core/digest.hpp"
#include "core/ownership.hpp"
#include "store/pg_result.hpp"
#include "store/prepared.hpp"
#include "store/task_snapshot.hpp"

#include <pqxx/pqxx>

namespace gw {
namespace {

// Grant and fence are published together: the owner row this writes is what
// every later admission compares against.
constexpr Statement publish_grant{"gw_publish_grant", R"(
WITH e AS (SELECT nextval('epoch_seq') AS epoch),
     t AS (INSERT INTO tasks (tenant, task, owner, epoch, secret_hash, expires_at_ms, granted_at_ms)
           SELECT $1, $2, $3, e.epoch, $4, $5, $6 FROM e
           ON CONFLICT (tenant, task) DO UPDATE
             SET owner = excluded.owner, epoch = excluded.epoch, secret_hash = excluded.secret_hash,
                 expires_at_ms = excluded.expires_at_ms, granted_at_ms = excluded.granted_at_ms
             WHERE tasks.epoch < excluded.epoch
           RETURNING epoch),
     l AS (INSERT INTO task_ledger (tenant, task) VALUES ($1, $2) ON CONFLICT DO NOTHING)
SELECT epoch FROM t)"};

// The first claim of a task: the grant is inserted without the task being
// looked up first. A lookup of a missing key is a SERIALIZABLE read lock on
// the index page where the key would be, the page every other new task is
// inserted into; ON CONFLICT's own check takes no such lock (the unique index
// still settles two claims of one task: the later one waits, then fails to
// serialize and is tried again). No row back: the task exists (the full
// decision follows), or its lease would end past the largest time.
std::string claim_fresh_sql(const AuthorityClock& clock) {
  return R"(
WITH a AS (SELECT a.realm, )" + clock.now_sql(6) + R"( AS now_ms FROM authority a),
     t AS (INSERT INTO tasks (tenant, task, owner, epoch, secret_hash, expires_at_ms, granted_at_ms)
           SELECT $1, $2, $3, nextval('epoch_seq'), $4, a.now_ms + $5, a.now_ms FROM a
           WHERE a.now_ms <= 9223372036854775807 - $5 AND )" + std::string(serializable_guard) + R"(
           ON CONFLICT (tenant, task) DO NOTHING
           RETURNING epoch),
     l AS (INSERT INTO task_ledger (tenant, task) SELECT $1, $2 FROM t ON CONFLICT DO NOTHING)
SELECT a.realm, a.now_ms, t.epoch FROM a LEFT JOIN t ON true)";
}

constexpr const char* sequence_exhausted = "2200H";

// Every gateway runs it every few hundred milliseconds: prepared, it is planned once per connection.
constexpr Statement advance_floor_sql{"gw_advance_floor",
                                      "UPDATE authority SET clock_floor_ms = GREATEST(clock_floor_ms,"
                                      " floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)"
                                      " RETURNING clock_floor_ms"};

}  // namespace

FreshClaim AuthorityStore::fresh_claim(const TaskScope& scope, const std::string& owner, std::int64_t lease_ms) {
  static const std::string wall = claim_fresh_sql(AuthorityClock(ClockSource::database)),
                           manual = claim_fresh_sql(AuthorityClock(ClockSource::manual));
  FreshClaim ask{.statement = clock_.manual() ? Statement{"gw_claim_fresh_manual", manual.c_str()}
                                             : Statement{"gw_claim_fresh", wall.c_str()},
                 .lease_ms = lease_ms,
                 .high_water = clock_.high_water(),
                 .secret_hash = pqxx::binarystring(std::string()),
                 .clock = &clock_};
  ask.token.identity.scope = scope;
  ask.token.identity.owner = owner;
  ask.token.secret = new_grant_secret();
  ask.secret_hash = pqxx::binarystring(sha256(ask.token.secret));
  return ask;
}

template <class Row>
std::optional<ClaimResult> FreshClaim::answer(const Row& row) {
  auto& ask = *this;
  const auto now_ms = row[1].template as<std::int64_t>();
  clock->observe(now_ms);
  if (row[2].is_null()) return std::nullopt;
  // Inserted: nobody held the task, and the rules say so too. Sent alone it
  // is committed already: the exception means its token is never handed out.
  const auto decision = decide_claim(std::nullopt, now_ms, ask.lease_ms);
  if (decision.code != Code::granted) throw std::logic_error("a fresh claim the rules refuse");
  ask.token.identity.realm = row[0].template as<std::string>();
  ask.token.identity.epoch = row[2].template as<std::int64_t>();
  ClaimResult r;
  r.code = decision.code;
  r.grant = ask.token.identity;
  r.expires_at_ms = decision.expires_at_ms;
  r.token = encode_grant_token(ask.token);
  return r;  // a new task's version is 0
}
template std::optional<ClaimResult> FreshClaim::answer(const pqxx::row&);
template std::optional<ClaimResult> FreshClaim::answer(const PgRow&);

std::optional<ClaimResult> FreshClaim::refused(const std::string& sqlstate) {
  if (sqlstate == sequence_exhausted) return ClaimResult{.code = Code::epoch_exhausted};
  return std::nullopt;
}

std::optional<ClaimResult> AuthorityStore::claim_fresh(pqxx::transaction_base& t, const TaskScope& scope,
                                                       const std::string& owner, std::int64_t lease_ms) {
  auto ask = fresh_claim(scope, owner, lease_ms);
  return ask.answer(exec_ask(t, ask).at(0));
}

ClaimResult AuthorityStore::claim(Session& s, const TaskScope& scope, const std::string& owner,
                                  std::int64_t lease_ms, bool fresh_tried) {
  try {
    // The first claim of a task commits as its one statement answers
    // (autocommit); any other claim is decided in a transaction.
    if (lease_ms > 0 && !fresh_tried)
      if (auto fresh = autocommit(s, [&](pqxx::transaction_base& t) { return claim_fresh(t, scope, owner, lease_ms); }))
        return std::move(*fresh);
    return serializable(s, [&](pqxx::dbtransaction& tx) { return claim(tx, scope, owner, lease_ms); });
  } catch (const pqxx::sql_error& e) {
    if (auto r = FreshClaim::refused(e.sqlstate())) return std::move(*r);
    throw;
  }
}

ClaimResult AuthorityStore::claim(pqxx::dbtransaction& tx, const TaskScope& scope, const std::string& owner,
                                  std::int64_t lease_ms) {
  if (lease_ms > 0)
    if (auto fresh = claim_fresh(tx, scope, owner, lease_ms)) return std::move(*fresh);
  auto snap = read_task(tx, clock_, scope, std::nullopt);
  auto decision = decide_claim(snap.owner, snap.now_ms, lease_ms);
  ClaimResult r;
  r.code = decision.code;
  if (decision.code != Code::granted) return r;
  // Built member by member: GCC 12 at -O3 warns (maybe-uninitialized) on
  // the nested aggregate initializer's temporaries.
  GrantToken token;
  token.identity.realm = snap.realm;
  token.identity.scope = scope;
  token.identity.owner = owner;
  token.secret = new_grant_secret();
  auto rows = exec_prepared(tx, publish_grant, scope.tenant, scope.task, owner,
                            pqxx::binarystring(sha256(token.secret)), decision.expires_at_ms, snap.now_ms);
  // The sequence is strictly increasing, so this never fails; if it did,
  // no grant may be issued.
  if (rows.size() != 1) throw std::logic_error("new epoch not above the task's fence");
  token.identity.epoch = rows[0][0].as<std::int64_t>();
  r.grant = token.identity;
  r.expires_at_ms = decision.expires_at_ms;
  r.token = encode_grant_token(token);
  r.version = snap.ledger.version;
  return r;
}

LeaseResult AuthorityStore::renew(Session& s, const TaskScope& scope, const GrantToken& token,
                                  std::int64_t lease_ms) {
  return serializable(s, [&](pqxx::dbtransaction& tx) {
    auto snap = read_task(tx, clock_, scope, std::nullopt);
    auto check = check_grant(token, snap.realm, scope, snap.owner, snap.now_ms);
    if (check != Code::ok) return LeaseResult{check, 0};
    auto decision = decide_renew(check, *snap.owner, snap.now_ms, lease_ms);
    if (decision.code == Code::renewed)
      tx.exec_params0("UPDATE tasks SET expires_at_ms = $3 WHERE tenant = $1 AND task = $2 AND epoch = $4",
                      scope.tenant, scope.task, decision.expires_at_ms, token.identity.epoch);
    return LeaseResult{decision.code, decision.expires_at_ms};
  });
}

LeaseResult AuthorityStore::release(Session& s, const TaskScope& scope, const GrantToken& token) {
  return serializable(s, [&](pqxx::dbtransaction& tx) {
    auto snap = read_task(tx, clock_, scope, std::nullopt);
    auto check = check_grant(token, snap.realm, scope, snap.owner, snap.now_ms);
    auto decision = decide_release(check, snap.now_ms);
    if (decision.code == Code::released)
      tx.exec_params0("UPDATE tasks SET expires_at_ms = $3 WHERE tenant = $1 AND task = $2 AND epoch = $4",
                      scope.tenant, scope.task, decision.expires_at_ms, token.identity.epoch);
    return LeaseResult{decision.code, decision.expires_at_ms};
  });
}

std::optional<TaskView> AuthorityStore::view(Session& s, const TaskScope& scope) {
  return read_committed(s, [&](pqxx::dbtransaction& tx) -> std::optional<TaskView> {
    auto snap = read_task(tx, clock_, scope, std::nullopt);
    if (!snap.owner) return std::nullopt;
    TaskView v{snap.realm, snap.now_ms, snap.owner->owner, snap.owner->epoch,
               snap.owner->expires_at_ms, snap.ledger.version, snap.ledger.open_operation, {}};
    if (v.unresolved_operation) {
      auto state = tx.exec_params(
          "SELECT state FROM operations WHERE tenant = $1 AND task = $2 AND op_id = $3",
          scope.tenant, scope.task, *v.unresolved_operation);
      if (!state.empty()) v.unresolved_state = state[0][0].as<std::string>();
    }
    return v;
  });
}

Code AuthorityStore::set_manual_clock(Session& s, std::int64_t now_ms) {
  return read_committed(s, [&](pqxx::dbtransaction& tx) {
    auto r = tx.exec_params(
        "UPDATE authority SET manual_now_ms = $1 WHERE manual_now_ms <= $1 RETURNING manual_now_ms",
        now_ms);
    return r.empty() ? Code::authority_clock_rollback : Code::ok;
  });
}

void AuthorityStore::advance_floor(Session& s) {
  read_committed(s, [&](pqxx::dbtransaction& tx) {
    auto r = exec_prepared(tx, advance_floor_sql);
    clock_.observe(r[0][0].as<std::int64_t>());
    return 0;
  });
}

void AuthorityStore::ping(Session& s) {
  read_committed(s, [&](pqxx::dbtransaction& tx) { return tx.exec("SELECT 1").size(); });
}

}  // namespace gw
