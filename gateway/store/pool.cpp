#include "store/pool.hpp"

#include "store/authority_guard.hpp"
#include "store/transaction.hpp"

#include <pqxx/pqxx>

#include <algorithm>
#include <cerrno>

#include <sys/socket.h>

namespace gw {
namespace {

std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string connection_string(const SessionOptions& o) {
  const std::pair<const char*, std::string> options[] = {
      {"connect_timeout", std::to_string(o.connect_timeout_s)},
      {"keepalives", "1"},
      {"keepalives_idle", std::to_string(o.keepalives_idle_s)},
      {"keepalives_interval", std::to_string(o.keepalives_interval_s)},
      {"keepalives_count", std::to_string(o.keepalives_count)},
      {"tcp_user_timeout", std::to_string(o.tcp_user_timeout.count())},
      {"application_name", o.application_name},
  };
  const bool uri = o.url.rfind("postgres://", 0) == 0 || o.url.rfind("postgresql://", 0) == 0;
  std::string out = o.url;
  char sep = uri ? (o.url.find('?') == std::string::npos ? '?' : '&') : ' ';
  for (const auto& [key, value] : options) {
    out += sep;
    out += key;
    out += '=';
    out += value;
    if (uri) sep = '&';
  }
  return out;
}

std::string session_setup_sql(const SessionOptions& o) {
  // Per-statement deadlines keep a stuck database from holding a worker.
  // SERIALIZABLE unless said otherwise: a statement sent outside a
  // transaction block (store/transaction.hpp, autocommit) is a
  // SERIALIZABLE transaction of its own; READ COMMITTED work says so.
  // bytea in hex, the one text form store/pg_result.hpp reads.
  // No sequential scan unless nothing else can answer: SERIALIZABLE locks
  // what a sequential scan read as the whole relation, so every write to the
  // table by any task conflicts with it. Once a fresh database's small tables
  // are analyzed (64 ledger rows on two pages), a point read by primary key
  // costs more than the scan, and the planner flipped to it: each decision
  // then conflicted with every other, and the retries fed on themselves
  // (docs/performance.md, "Protected writes under contention"). READ
  // COMMITTED work takes no predicate locks and turns it back on
  // (store/read_committed.ipp). And no JIT: the statements are point reads,
  // and the penalty a disabled scan adds to a plan's cost (the one-row
  // authority has no other path) put every one of them past jit_above_cost,
  // compiling each execution for a second.
  return "SET default_transaction_isolation = 'serializable'; SET enable_seqscan = off; SET jit = off; "
         "SET statement_timeout = " +
         std::to_string(o.statement_timeout.count()) + "; SET lock_timeout = " + std::to_string(o.lock_timeout.count()) +
         "; SET idle_in_transaction_session_timeout = " + std::to_string(o.statement_timeout.count() * 4) +
         "; SET bytea_output = 'hex'";
}

Session::Session(const SessionOptions& options,
                 std::shared_ptr<std::atomic<std::int64_t>> last_failure, SessionHealth* health)
    : options_(options), last_failure_(std::move(last_failure)), health_(health) {}

Session::~Session() { discard(); }

pqxx::connection& Session::connection() {
  auto* guard = options_.guard;
  if (connection_ && connection_->is_open() && (!guard || guard->current(admitted_))) return *connection_;
  discard();
  // An operator's rotation through the guard tries at once (AuthorityGuard::Override).
  const bool overridden = guard && AuthorityGuard::Override::active();
  if (!overridden && steady_ms() - last_failure_->load() < options_.reconnect_backoff.count()) {
    if (guard)
      if (auto refused = guard->refusal()) throw *refused;
    throw pqxx::broken_connection("database unreachable (recent connect failed)");
  }
  try {
    auto c = std::make_unique<pqxx::connection>(connection_string(options_));
    pqxx::nontransaction setup(*c);
    setup.exec(session_setup_sql(options_));
    setup.commit();
    std::uint64_t admitted = 0;
    try {
      if (guard) admitted = guard->admit(*c);
    } catch (const AuthorityRefused&) {
      // Not again at once: every job would reconnect to the refused server.
      last_failure_->store(steady_ms());
      throw;
    }
    {
      std::lock_guard lock(socket_mutex_);
      connection_ = std::move(c);
      admitted_ = admitted;
    }
    if (health_) {
      ++health_->open;
      if (!health_->reachable.exchange(true) && health_->changed) health_->changed(true, "");
    }
  } catch (const pqxx::failure& e) {
    last_failure_->store(steady_ms());
    if (health_ && health_->reachable.exchange(false) && health_->changed) health_->changed(false, e.what());
    throw;
  }
  return *connection_;
}

void Session::discard() {
  std::unique_ptr<pqxx::connection> gone;
  std::lock_guard lock(socket_mutex_);
  gone.swap(connection_);
  if (gone && health_) --health_->open;
}

bool spoke_while_idle(int socket) {
  char byte = 0;
  const auto n = ::recv(socket, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return !(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
}

void Session::drop_if_closed() {
  if (!connection_ || connection_->sock() < 0) return;
  if (spoke_while_idle(connection_->sock())) discard();
}

void Session::interrupt() {
  // Under the lock the socket cannot be closed (and its number reused) meanwhile.
  std::lock_guard lock(socket_mutex_);
  if (connection_ && connection_->sock() >= 0) ::shutdown(connection_->sock(), SHUT_RDWR);
}

Pool::Pool(PoolOptions options)
    : options_(std::move(options)),
      last_failure_(std::make_shared<std::atomic<std::int64_t>>(-1'000'000'000)) {
  health_.changed = options_.on_reachability;
  wakes_ = std::vector<std::condition_variable>(options_.size);
  idle_.reserve(options_.size);
  watches_.resize(options_.size);
  watchdog_ = std::thread([this] { watch(); });
  for (unsigned i = 0; i < options_.size; ++i) workers_.emplace_back([this, i] { work(i); });
}

Pool::~Pool() { stop(); }

void Pool::submit(Job job) {
  bool queued = false;
  std::condition_variable* wake = nullptr;
  {
    std::lock_guard lock(mutex_);
    auto& lane = job.lane == Lane::outcome ? outcomes_ : queue_;
    if (!stopping_ && (job.lane == Lane::outcome || queue_.size() < options_.queue_limit)) {
      lane.push_back({std::move(job), std::chrono::steady_clock::now()});
      queued = true;
      if (!idle_.empty()) {
        wake = &wakes_[idle_.back()];
        idle_.pop_back();
      }
    }
  }
  // Notified once the lock is released: a worker woken while it is held
  // only blocks again on the mutex (two more futex calls and a thread switch
  // per decision, measured). Taken off the idle stack under the lock, it is
  // already waiting, so the wake-up cannot be missed.
  if (wake) wake->notify_one();
  if (!queued) job.reject();
}

void Pool::stop() {
  std::deque<Queued> dropped;
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
    dropped.swap(queue_);
    for (auto& q : outcomes_) dropped.push_back(std::move(q));
    outcomes_.clear();
    for (auto& wake : wakes_) wake.notify_one();
    idle_.clear();
  }
  for (auto& q : dropped) q.job.reject();
  for (auto& w : workers_)
    if (w.joinable()) w.join();
  workers_.clear();
  {
    std::lock_guard lock(watch_mutex_);
    watch_stopping_ = true;
  }
  watch_changed_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
}

std::size_t Pool::queued() const {
  std::lock_guard lock(mutex_);
  return queue_.size() + outcomes_.size();
}

std::size_t Pool::queued(Lane lane) const {
  std::lock_guard lock(mutex_);
  return lane == Lane::outcome ? outcomes_.size() : queue_.size();
}

void Pool::work(std::size_t index) {
  Session session(options_.session, last_failure_, &health_);
  const auto expired = [this](const Queued& q) {
    return q.job.lane == Lane::request && std::chrono::steady_clock::now() - q.since > options_.queue_timeout;
  };
  // Whether this worker just finished a job: it goes on top of the idle
  // stack. One woken for a job another worker took first goes to the
  // bottom, so a wake-up that found nothing does not make it the next one.
  bool worked = false;
  for (;;) {
    std::vector<Job> group;
    std::vector<Job> late;  // waited past queue_timeout: refused, not run
    {
      std::unique_lock lock(mutex_);
      while (!stopping_ && queue_.empty() && outcomes_.empty()) {
        idle_.insert(worked ? idle_.end() : idle_.begin(), index);
        worked = false;
        wakes_[index].wait(lock);
        // Woken by submit() or stop(), which took it off the stack, or
        // spuriously, still on it.
        if (auto it = std::find(idle_.begin(), idle_.end(), index); it != idle_.end()) idle_.erase(it);
      }
      auto& lane = !outcomes_.empty() ? outcomes_ : queue_;
      if (lane.empty()) return;  // stopping
      // The first job, and the shareable ones queued behind it in its lane.
      while (!lane.empty() && group.size() < std::max(1u, options_.group_max)) {
        if (!group.empty() && !(group.front().shared && lane.front().job.shared)) break;
        if (expired(lane.front()))
          late.push_back(std::move(lane.front().job));
        else
          group.push_back(std::move(lane.front().job));
        lane.pop_front();
      }
    }
    for (auto& job : late) job.reject();
    if (group.empty()) continue;
    ++busy_;
    bool wake_watchdog = false;
    {
      std::lock_guard lock(watch_mutex_);
      watches_[index] = {&session, std::chrono::steady_clock::now() + options_.call_timeout};
      // Every call has the same timeout, so a busy pool's new deadline is
      // later than the one the watchdog sleeps until: only a watchdog with
      // nothing to watch is woken (not a thread switch per decision).
      wake_watchdog = watches_[index].deadline < watch_next_;
    }
    if (wake_watchdog) watch_changed_.notify_one();
    if (group.size() == 1)
      group.front().run(session);
    else
      run_group(session, group);
    {
      std::lock_guard lock(watch_mutex_);
      watches_[index].session = nullptr;
    }
    --busy_;
    worked = true;
  }
}

void Pool::run_group(Session& session, std::vector<Job>& group) {
  try {
    pqxx::transaction<pqxx::serializable> tx(session.connection());
    for (auto& job : group) job.shared->stage(tx);
    tx.commit();
  } catch (const std::exception& e) {
    if (classify_failure(e) == FailureKind::in_doubt) {
      // Perhaps committed, perhaps not: none of them may be made again.
      session.discard();
      const auto error = std::make_exception_ptr(
          AuthorityUnavailable(std::string("shared commit outcome in doubt: ") + e.what()));
      for (auto& job : group) job.shared->fail(error);
      return;
    }
    // Nothing committed. Alone, each meets its own conflict, reconnect or
    // error (a conflict one of them caused need not recur without the others).
    ++groups_split_;
    for (auto& job : group) job.run(session);
    return;
  }
  ++groups_committed_;
  grouped_decisions_ += group.size();
  for (auto& job : group) job.shared->deliver();
}

void Pool::watch() {
  using clock = std::chrono::steady_clock;
  std::unique_lock lock(watch_mutex_);
  while (!watch_stopping_) {
    auto next = clock::time_point::max();
    const auto now = clock::now();
    for (auto& w : watches_) {
      if (!w.session) continue;
      if (w.deadline <= now) {
        w.session->interrupt();
        ++interrupted_;
        w.deadline = now + std::chrono::seconds(1);  // again, should a reconnect stall too
      }
      next = std::min(next, w.deadline);
    }
    // A timed wait on the nearest deadline: the watchdog's timer.
    watch_next_ = next;
    if (next == clock::time_point::max())
      watch_changed_.wait(lock);
    else
      watch_changed_.wait_until(lock, next);
  }
}

}  // namespace gw
