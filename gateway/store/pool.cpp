#include "store/pool.hpp"

#include <pqxx/pqxx>

namespace gw {
namespace {

std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string with_connection_options(const SessionOptions& o) {
  const std::string timeout = std::to_string(o.connect_timeout_s);
  if (o.url.rfind("postgres://", 0) == 0 || o.url.rfind("postgresql://", 0) == 0) {
    const char* sep = o.url.find('?') == std::string::npos ? "?" : "&";
    return o.url + sep + "connect_timeout=" + timeout +
           "&keepalives=1&keepalives_idle=30&application_name=write-gateway";
  }
  return o.url + " connect_timeout=" + timeout +
         " keepalives=1 keepalives_idle=30 application_name=write-gateway";
}

}  // namespace

Session::Session(const SessionOptions& options,
                 std::shared_ptr<std::atomic<std::int64_t>> last_failure)
    : options_(options), last_failure_(std::move(last_failure)) {}

Session::~Session() = default;

pqxx::connection& Session::connection() {
  if (connection_ && connection_->is_open()) return *connection_;
  connection_.reset();
  if (steady_ms() - last_failure_->load() < options_.reconnect_backoff.count())
    throw pqxx::broken_connection("database unreachable (recent connect failed)");
  try {
    auto c = std::make_unique<pqxx::connection>(with_connection_options(options_));
    pqxx::nontransaction setup(*c);
    // Per-statement deadlines keep a stuck database from holding a worker.
    setup.exec("SET statement_timeout = " + std::to_string(options_.statement_timeout.count()) +
               "; SET lock_timeout = " + std::to_string(options_.lock_timeout.count()) +
               "; SET idle_in_transaction_session_timeout = " +
               std::to_string(options_.statement_timeout.count() * 4));
    setup.commit();
    connection_ = std::move(c);
  } catch (const pqxx::failure&) {
    last_failure_->store(steady_ms());
    throw;
  }
  return *connection_;
}

void Session::discard() { connection_.reset(); }

Pool::Pool(PoolOptions options)
    : options_(std::move(options)),
      last_failure_(std::make_shared<std::atomic<std::int64_t>>(-1'000'000'000)) {
  for (unsigned i = 0; i < options_.size; ++i) workers_.emplace_back([this] { work(); });
}

Pool::~Pool() { stop(); }

void Pool::submit(Job job) {
  {
    std::lock_guard lock(mutex_);
    auto& lane = job.lane == Lane::outcome ? outcomes_ : queue_;
    if (!stopping_ && (job.lane == Lane::outcome || queue_.size() < options_.queue_limit)) {
      lane.push_back({std::move(job), std::chrono::steady_clock::now()});
      ready_.notify_one();
      return;
    }
  }
  job.reject();
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
    ready_.notify_all();
  }
  for (auto& q : dropped) q.job.reject();
  for (auto& w : workers_)
    if (w.joinable()) w.join();
  workers_.clear();
}

std::size_t Pool::queued() const {
  std::lock_guard lock(mutex_);
  return queue_.size() + outcomes_.size();
}

void Pool::work() {
  Session session(options_.session, last_failure_);
  for (;;) {
    Queued next;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty() || !outcomes_.empty(); });
      auto& lane = !outcomes_.empty() ? outcomes_ : queue_;
      if (lane.empty()) return;  // stopping
      next = std::move(lane.front());
      lane.pop_front();
    }
    if (next.job.lane == Lane::request && std::chrono::steady_clock::now() - next.since > options_.queue_timeout) {
      next.job.reject();
      continue;
    }
    ++busy_;
    next.job.run(session);
    --busy_;
  }
}

}  // namespace gw
