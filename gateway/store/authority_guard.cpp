#include "store/authority_guard.hpp"

#include "store/prepared.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

namespace gw {
namespace {

thread_local int overrides = 0;

// READ COMMITTED and read-only: the probe takes no SERIALIZABLE predicate
// lock on `authority`, so it can never make a decision or a rotation fail.
constexpr const char* begin_sql = "BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY";

nlohmann::json watermark_json(const Watermark& w) {
  if (w.empty()) return nullptr;
  return {{"realm", w.realm},
          {"max_epoch", w.max_epoch},
          {"system_identifier", w.system_identifier},
          {"timeline", w.timeline},
          {"lsn", format_lsn(w.lsn)}};
}

// One server in a primary change: where it was reached and which it is.
nlohmann::json change_json(const ServerIdentity& id, const std::string& address) {
  return {{"address", address}, {"system_identifier", id.system_identifier}, {"timeline", id.timeline},
          {"started", id.started}};
}

nlohmann::json server_json(const ServerState& s) {
  auto lsn = [](const std::optional<std::uint64_t>& v) { return v ? nlohmann::json(format_lsn(*v)) : nlohmann::json(nullptr); };
  return {{"address", s.address},
          {"system_identifier", s.system_identifier},
          {"timeline", s.timeline},
          {"started", s.started},
          {"flush_lsn", lsn(s.flush_lsn)},
          {"replay_lsn", lsn(s.replay_lsn)},
          {"history_read", s.history.has_value()},
          {"realm", s.realm},
          {"epoch_last", s.epoch_last}};
}

// Written whole to a new file, fsynced, renamed over the old one, and the
// directory fsynced: a crash leaves the old state or the new, never a torn one.
void write_durably(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    const auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(e));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int e = errno;
    ::close(fd);
    throw std::runtime_error("cannot fsync " + tmp + ": " + std::strerror(e));
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot rename " + tmp + ": " + std::strerror(errno));
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

std::vector<std::optional<std::string>> row_of(const pqxx::row& r) {
  std::vector<std::optional<std::string>> out;
  for (const auto& f : r) out.push_back(f.is_null() ? std::nullopt : std::optional<std::string>(f.c_str()));
  return out;
}

// The current timeline's history file, at connection start only.
std::string history_sql(std::uint32_t timeline) {
  char name[32];
  std::snprintf(name, sizeof name, "%08X", timeline);
  return std::string("SELECT pg_read_file('pg_wal/") + name + ".history', 0, 1048576, true)";
}

bool may_read_history(const std::vector<std::optional<std::string>>& row) { return row.at(6).value_or("f") == "t"; }

// Whether a read of the server's state includes its timeline history.
enum class History { skip, read };

ServerState read_state(pqxx::connection& c, History history) {
  pqxx::work tx(c);
  tx.exec("SET TRANSACTION ISOLATION LEVEL READ COMMITTED READ ONLY");
  // Prepared: planning it (pg_stat_replication is a view of several
  // functions) took 2.3 ms of the server's time per read, five reads a
  // second at the default guard_interval_ms; executing it, 0.6 ms.
  const auto r = exec_prepared(tx, Statement{"gw_server_state", server_state_sql});
  if (r.size() != 1) throw std::runtime_error("server state: expected one row");
  auto row = row_of(r[0]);
  auto s = server_state_from(row);
  s.address = server_address(c.hostname(), c.port());
  if (history == History::read && may_read_history(row)) {
    auto h = tx.exec1(history_sql(s.timeline));
    if (!h[0].is_null()) s.history = h[0].c_str();
  }
  tx.commit();
  return s;
}

std::string pq_error(PGconn* c) {
  std::string s = PQerrorMessage(c);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

ServerState read_state(PGconn* c) {  // at connection start: with the history
  auto run = [c](const char* sql, ExecStatusType want) {
    std::unique_ptr<PGresult, decltype(&PQclear)> r(PQexec(c, sql), &PQclear);
    if (PQresultStatus(r.get()) != want) {
      if (PQstatus(c) != CONNECTION_OK) throw pqxx::broken_connection(pq_error(c));
      const char* state = PQresultErrorField(r.get(), PG_DIAG_SQLSTATE);
      throw pqxx::sql_error(pq_error(c), sql, state ? state : "");
    }
    return r;
  };
  run(begin_sql, PGRES_COMMAND_OK);
  auto r = run(server_state_sql, PGRES_TUPLES_OK);
  if (PQntuples(r.get()) != 1) throw std::runtime_error("server state: expected one row");
  std::vector<std::optional<std::string>> row;
  for (int i = 0; i < PQnfields(r.get()); ++i)
    row.push_back(PQgetisnull(r.get(), 0, i) ? std::nullopt : std::optional<std::string>(PQgetvalue(r.get(), 0, i)));
  auto s = server_state_from(row);
  s.address = server_address(PQhost(c), PQport(c));
  if (may_read_history(row)) {
    auto h = run(history_sql(s.timeline).c_str(), PGRES_TUPLES_OK);
    if (PQntuples(h.get()) == 1 && !PQgetisnull(h.get(), 0, 0)) s.history = PQgetvalue(h.get(), 0, 0);
  }
  run("COMMIT", PGRES_COMMAND_OK);
  return s;
}

}  // namespace

// The timeline is the first eight hex digits of the current WAL file's name
// (PostgreSQL 15 names it after the insert timeline, so it is right at once
// after a promotion). The history file needs superuser or
// pg_read_server_files (without it the rule falls back on the replay end),
// and is read by a statement of its own: a function the role may not
// execute fails the whole statement, even in a CASE branch never taken.
// covered: what every commit acknowledged so far is at or below. With
// commits waiting for a synchronous standby, that standby's confirmed flush
// (so a promotion of it never looks behind); else the primary's flush (an
// acknowledged commit was flushed), or its insert position when commits do
// not even wait for the local flush.
const char* const server_state_sql = R"sql(
WITH r AS (SELECT pg_is_in_recovery() AS rec),
t AS (
  SELECT rec, CASE WHEN rec THEN NULL
                   ELSE ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int END AS tl
  FROM r)
SELECT (SELECT system_identifier::text FROM pg_control_system()),
       pg_postmaster_start_time()::text,
       t.rec,
       CASE WHEN t.rec THEN NULL ELSE pg_current_wal_flush_lsn()::text END,
       pg_last_wal_replay_lsn()::text,
       t.tl,
       t.tl > 1 AND (pg_has_role(current_user, 'pg_read_server_files', 'MEMBER')
                     OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)),
       CASE WHEN t.rec THEN NULL
            WHEN current_setting('synchronous_commit') = 'off' THEN pg_current_wal_insert_lsn()::text
            WHEN current_setting('synchronous_commit') IN ('on', 'remote_apply')
                 AND EXISTS (SELECT 1 FROM pg_stat_replication WHERE sync_state = 'sync' AND flush_lsn IS NOT NULL)
              THEN (SELECT min(flush_lsn) FROM pg_stat_replication WHERE sync_state = 'sync')::text
            ELSE pg_current_wal_flush_lsn()::text END,
       (SELECT realm FROM authority),
       (SELECT last_value FROM epoch_seq)
FROM t)sql";

ServerState server_state_from(const std::vector<std::optional<std::string>>& row) {
  if (row.size() != 10) throw std::runtime_error("server state: expected 10 columns");
  auto lsn = [&](std::size_t i) -> std::optional<std::uint64_t> {
    if (!row[i]) return std::nullopt;
    auto v = parse_lsn(*row[i]);
    if (!v) throw std::runtime_error("server state: not a WAL position: " + *row[i]);
    return v;
  };
  ServerState s;
  s.system_identifier = row[0].value_or("");
  s.started = row[1].value_or("");
  s.in_recovery = row[2].value_or("f") == "t";
  s.flush_lsn = lsn(3);
  s.replay_lsn = lsn(4);
  s.timeline = row[5] ? static_cast<std::uint32_t>(std::stoul(*row[5])) : 0;
  s.history.reset();  // read after, when column 6 says it may be (history_sql)
  s.covered_lsn = lsn(7);
  s.realm = row[8].value_or("");
  s.epoch_last = row[9] ? std::stoll(*row[9]) : 0;
  return s;
}

AuthorityGuard::Override::Override() { ++overrides; }
bool AuthorityGuard::Override::active() { return overrides > 0; }
AuthorityGuard::Override::~Override() { --overrides; }

AuthorityGuard::AuthorityGuard(std::string state_file, Reporter report)
    : state_file_(std::move(state_file)), report_(std::move(report)) {
  if (state_file_.empty()) return;
  std::ifstream in(state_file_, std::ios::binary);
  if (!in) {
    if (errno != ENOENT) throw std::runtime_error("cannot read " + state_file_ + ": " + std::strerror(errno));
    return;  // first start: nothing acted on yet
  }
  std::stringstream text;
  text << in.rdbuf();
  auto decoded = decode_memory(text.str());
  if (!decoded.memory) throw std::runtime_error(state_file_ + ": " + decoded.error);
  memory_ = std::move(*decoded.memory);
}

std::uint64_t AuthorityGuard::admit(pqxx::connection& c) { return decide(read_state(c, History::read)); }
std::uint64_t AuthorityGuard::admit(PGconn* c) { return decide(read_state(c)); }

std::uint64_t AuthorityGuard::decide(const ServerState& s) {
  std::lock_guard lock(mutex_);
  const auto id = identity_of(s);
  if (accepted_ && *accepted_ == id && !s.in_recovery) {
    refusal_.reset();
    regained(id);
    return generation_.load();
  }
  GuardDecision d{GuardVerdict::accept, std::nullopt};
  bool remembered = false;
  for (const auto& r : memory_.refused)
    if (r.server == id && r.realm == s.realm) {
      d.verdict = r.verdict;
      remembered = true;
    }
  if (!remembered) d = judge(memory_.watermark, s);
  if (!accepted(d.verdict)) {
    if (overrides > 0 && d.verdict != GuardVerdict::standby) {
      report_("authority_guard_overridden", {{"server", server_json(s)}, {"verdict", name(d.verdict)}});
      return 0;  // never current: the session reconnects after the operator's statement
    }
    const std::string detail = std::string("authority_regressed: ") + std::string(name(d.verdict)) + ": the primary (" +
                               describe(id) + ") does not hold what this gateway acted on; reconcile, then rotate-realm";
    refusal_.emplace(d.verdict, d.verdict == GuardVerdict::standby ? "connected to a standby, not a primary" : detail);
    outage_.lost(std::chrono::steady_clock::now());
    if (d.verdict != GuardVerdict::standby && !remembered) {
      memory_.refused.push_back({id, s.realm, d.verdict});
      persist();
      report_("authority_guard_tripped",
              {{"verdict", name(d.verdict)},
               {"server", server_json(s)},
               {"held_lsn", d.held_lsn ? nlohmann::json(format_lsn(*d.held_lsn)) : nlohmann::json(nullptr)},
               {"watermark", watermark_json(memory_.watermark)}});
    } else {
      report_("authority_guard_refused", {{"verdict", name(d.verdict)}});
    }
    throw *refusal_;
  }
  const auto before = memory_.watermark;
  const auto old = accepted_;
  const auto old_address = accepted_address_;
  memory_.watermark = advance(before, s);
  accepted_ = id;
  accepted_address_ = s.address;
  refusal_.reset();
  persist();
  const auto generation = generation_.fetch_add(1) + 1;
  report_("authority_primary_changed",
          {{"old", old ? change_json(*old, old_address) : nlohmann::json(nullptr)},
           {"new", change_json(id, s.address)},
           {"verdict", name(d.verdict)},
           {"held_lsn", d.held_lsn ? nlohmann::json(format_lsn(*d.held_lsn)) : nlohmann::json(nullptr)},
           {"watermark_before", watermark_json(before)},
           {"watermark", watermark_json(memory_.watermark)}});
  regained(id);
  return generation;
}

void AuthorityGuard::regained(const ServerIdentity& id) {
  const auto ms = outage_.regained(std::chrono::steady_clock::now());
  if (!ms) return;
  report_("authority_regained", {{"server", describe(id)}, {"address", accepted_address_}, {"without_authority_ms", *ms}});
}

void AuthorityGuard::observe(pqxx::connection& c) {
  const auto s = read_state(c, History::skip);
  std::lock_guard lock(mutex_);
  if (!accepted_ || !(*accepted_ == identity_of(s)) || s.in_recovery) return;
  auto next = advance(memory_.watermark, s);
  if (next == memory_.watermark) return;
  memory_.watermark = std::move(next);
  persist();
}

void AuthorityGuard::lost() {
  std::lock_guard lock(mutex_);
  outage_.lost(std::chrono::steady_clock::now());
}

double AuthorityGuard::seconds_without_authority() const {
  std::lock_guard lock(mutex_);
  return outage_.seconds(std::chrono::steady_clock::now());
}

std::optional<AuthorityRefused> AuthorityGuard::refusal() const {
  std::lock_guard lock(mutex_);
  return refusal_;
}

Watermark AuthorityGuard::watermark() const {
  std::lock_guard lock(mutex_);
  return memory_.watermark;
}

void AuthorityGuard::persist() {
  if (state_file_.empty()) return;
  // A watermark that cannot be kept is reported, not fatal: the check of
  // this process still holds; only a restart would start from the older file.
  try {
    write_durably(state_file_, encode(memory_));
  } catch (const std::exception& e) {
    report_("authority_guard_state_unwritten", {{"file", state_file_}, {"error", e.what()}});
  }
}

}  // namespace gw
