// Database connections and the threads that own them. Each worker thread
// owns one Session (one libpqxx connection, libpqxx's threading model) and
// runs queued jobs on it, so no Asio I/O thread ever blocks on PostgreSQL
// (the I/O threads' own connections, service/db/direct_connections.hpp, never block).
#pragma once

#include <pqxx/pqxx>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>


namespace gw {

class AuthorityGuard;  // store/authority_guard.hpp

struct SessionOptions {
  std::string url;  // libpq keyword/value string or postgres:// URI
  unsigned connect_timeout_s = 2;
  std::chrono::milliseconds statement_timeout{2000};
  std::chrono::milliseconds lock_timeout{1000};
  // After a failed connect, other sessions fail fast for this long instead of
  // each waiting out connect_timeout against a database that is down.
  std::chrono::milliseconds reconnect_backoff{200};
  // libpq's TCP settings: a peer that vanished, or packets dropped, ends the
  // connection in seconds instead of the kernel's many minutes.
  unsigned keepalives_idle_s = 30;
  unsigned keepalives_interval_s = 5;
  unsigned keepalives_count = 3;
  std::chrono::milliseconds tcp_user_timeout{10000};  // 0: the kernel's default
  // What pg_stat_activity shows for these connections.
  std::string application_name = "write-gateway";
  // Checks every connection opened before its first decision, and retires
  // those of a primary the gateway has moved away from (null: none).
  AuthorityGuard* guard = nullptr;
};

// The libpq connection string for `o`: its url plus the timeouts above.
std::string connection_string(const SessionOptions& o);
// What every new connection runs first: isolation, timeouts, bytea format.
std::string session_setup_sql(const SessionOptions& o);

// Whether the server sent anything on an idle connection's `socket`: its
// goodbye (a FATAL notice from a shutdown or a terminated backend) or its
// end of stream. One non-blocking peek, no round trip.
bool spoke_while_idle(int socket);

// What the pool's sessions share for its gauges and its log: how many hold a
// connection, and whether the last connect succeeded. `changed` is called
// (from a worker thread) once per transition: lost, then regained.
struct SessionHealth {
  std::atomic<std::size_t> open{0};
  std::atomic<bool> reachable{true};
  std::function<void(bool reachable, const std::string& detail)> changed;
};

// One connection, opened on first use and replaced (never reused) after it
// breaks: a reconnect would lose session settings and prepared statements.
class Session {
 public:
  Session(const SessionOptions& options, std::shared_ptr<std::atomic<std::int64_t>> last_failure,
          SessionHealth* health = nullptr);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Throws pqxx::broken_connection when the database cannot be reached.
  pqxx::connection& connection();
  void discard();
  // Discards a kept connection that the server has already closed (or sent
  // anything to unasked), without a round trip: before a statement that
  // commits as it runs, whose broken connection would leave it in doubt.
  void drop_if_closed();
  // Cuts the connection's socket (shutdown, not close): a call blocked on it
  // returns at once as a broken connection. Safe from any thread.
  void interrupt();

 private:
  const SessionOptions& options_;
  std::shared_ptr<std::atomic<std::int64_t>> last_failure_;
  SessionHealth* health_;
  std::mutex socket_mutex_;  // connection_ replaced vs interrupt() reading its socket
  std::unique_ptr<pqxx::connection> connection_;
  std::uint64_t admitted_ = 0;  // the guard's generation connection_ was admitted under
};

// New work waits in the request lane, bounded by queue_limit and
// queue_timeout. The outcome of a forwarded request waits in its own lane,
// never refused for load and served first: shedding it could lose a record of
// what a provider did.
enum class Lane { request, outcome };

struct PoolOptions {
  SessionOptions session;
  unsigned size = 8;
  std::size_t queue_limit = 4096;
  std::chrono::milliseconds queue_timeout{3000};
  // A job still running after this has its connection cut (Session::interrupt),
  // again each second until it returns: the peer may acknowledge every
  // packet and never answer (a stalled proxy), which no TCP timeout sees.
  std::chrono::milliseconds call_timeout{10000};
  // Decisions waiting together share one transaction and one commit (one
  // WAL flush) on a worker, up to this many; 1 (the default) turns sharing off.
  unsigned group_max = 1;
  // Told when the database is lost (a connect failed) and regained.
  std::function<void(bool reachable, const std::string& detail)> on_reachability = nullptr;
};

class Pool {
 public:
  // Exactly one of `run` (on a worker, with its session) or `reject` (queue
  // full, waited too long, or shutting down; only shutting down for the
  // outcome lane) is called. Neither may throw.
  struct Job {
    std::function<void(Session&)> run;
    std::function<void()> reject;
    Lane lane = Lane::request;
    // Set for a decision that may share a transaction with others in its
    // lane: `stage` makes it inside the transaction the worker opened and
    // keeps its result, `deliver` hands that over once the shared commit
    // is done, `fail` reports a shared commit whose outcome is unknown.
    // If the group fails before its commit, nothing of it was committed and
    // each job runs alone instead (`run`).
    struct Shared {
      std::function<void(pqxx::dbtransaction&)> stage;
      std::function<void()> deliver;
      std::function<void(std::exception_ptr)> fail;
    };
    std::optional<Shared> shared = std::nullopt;
  };

  explicit Pool(PoolOptions options);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  void submit(Job job);
  // Stops taking jobs, rejects those queued, joins the workers.
  void stop();

  std::size_t queued() const;
  // Whether waiting decisions may share a transaction (group_max above 1).
  bool shares_commits() const { return options_.group_max > 1; }
  std::chrono::milliseconds queue_timeout() const { return options_.queue_timeout; }
  // Jobs waiting in each lane.
  std::size_t queued(Lane lane) const;
  // Workers running a job now: connections in use.
  std::size_t busy() const { return busy_.load(); }
  std::size_t size() const { return workers_.size(); }
  // Workers holding a database connection (idle ones included).
  std::size_t open_connections() const { return health_.open.load(); }
  // False from a failed connect until the next one succeeds.
  bool reachable() const { return health_.reachable.load(); }
  // Connections cut by the call_timeout watchdog since the start.
  std::size_t interrupted() const { return interrupted_.load(); }
  // Transactions that carried more than one decision, and the decisions in them.
  std::size_t groups_committed() const { return groups_committed_.load(); }
  std::size_t grouped_decisions() const { return grouped_decisions_.load(); }
  // Groups that failed before their commit, each job then run alone.
  std::size_t groups_split() const { return groups_split_.load(); }

 private:
  struct Queued {
    Job job;
    std::chrono::steady_clock::time_point since;
  };
  // A worker's job in progress, for the watchdog.
  struct Watch {
    Session* session = nullptr;  // null: idle
    std::chrono::steady_clock::time_point deadline;
  };
  void work(std::size_t index);
  // Runs `group` (two or more shared jobs) in one SERIALIZABLE transaction.
  void run_group(Session& session, std::vector<Job>& group);
  void watch();

  PoolOptions options_;
  std::shared_ptr<std::atomic<std::int64_t>> last_failure_;
  SessionHealth health_;
  mutable std::mutex mutex_;
  // Each worker waits on its own condition variable, and a new job wakes the
  // worker that went idle last (idle_ is a stack): at low load the same one
  // or two connections take every decision, their PostgreSQL backends warm,
  // instead of a queue of wake-ups rotating through all of them, each one a
  // connection opened on its first use. Under mutex_.
  std::vector<std::condition_variable> wakes_;
  std::vector<std::size_t> idle_;
  std::deque<Queued> queue_;     // Lane::request
  std::deque<Queued> outcomes_;  // Lane::outcome
  bool stopping_ = false;
  std::atomic<std::size_t> busy_{0};
  std::atomic<std::size_t> interrupted_{0};
  std::atomic<std::size_t> groups_committed_{0}, grouped_decisions_{0}, groups_split_{0};
  std::mutex watch_mutex_;
  std::condition_variable watch_changed_;
  std::vector<Watch> watches_;  // one per worker, under watch_mutex_
  // What the watchdog sleeps until (max: no call to watch), under
  // watch_mutex_. A call whose deadline is later needs no wake-up: the
  // watchdog looks again when it wakes.
  std::chrono::steady_clock::time_point watch_next_ = std::chrono::steady_clock::time_point::max();
  bool watch_stopping_ = false;
  std::thread watchdog_;
  std::vector<std::thread> workers_;
};

}  // namespace gw
