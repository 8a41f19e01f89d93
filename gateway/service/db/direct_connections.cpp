#include "service/db/direct_connections.hpp"

#include "store/authority_guard.hpp"

#include <boost/asio/execution/context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/query.hpp>

#include <atomic>

namespace gw {
namespace {

// Told apart from the workers' in pg_stat_activity.
SessionOptions direct_session(SessionOptions o) {
  o.application_name = "write-gateway-direct";
  return o;
}

}  // namespace

// One I/O thread's connections. Used on that thread only, except `open_`,
// which the metrics read from anywhere.
class DirectConnections::Shelf {
 public:
  Shelf(asio::io_context& io, Pool& pool, const SessionOptions& session, unsigned limit,
       std::chrono::milliseconds call_timeout)
      : io_(io), pool_(pool), session_(direct_session(session)), limit_(limit), call_timeout_(call_timeout) {}

  asio::io_context& io() const { return io_; }
  std::size_t open() const { return open_.load(std::memory_order_relaxed); }

  Taken take() {
    // A connection to a primary the gateway has moved away from is never lent again.
    while (!idle_.empty() && session_.guard && !session_.guard->current(idle_.back()->admitted)) {
      idle_.pop_back();
      open_.fetch_sub(1, std::memory_order_relaxed);
    }
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      auto* raw = c.get();
      return Taken(raw, Returner{this, std::move(c)});
    }
    if (!opening_ && open() < limit_ && std::chrono::steady_clock::now() >= retry_at_) open_one();
    return Taken(nullptr, Returner{});
  }

  void give_back(std::shared_ptr<PgConnection> c) {
    if (c->broken())
      open_.fetch_sub(1, std::memory_order_relaxed);  // closed with its last owner
    else
      idle_.push_back(std::move(c));
  }

 private:
  // On a worker: connecting blocks. The result comes back to this thread.
  void open_one() {
    opening_ = true;
    pool_.submit(Pool::Job{[this](Session&) {
                             PgConnPtr c;
                             std::uint64_t admitted = 0;
                             try {
                               c = open_pg_connection(session_, &admitted);
                             } catch (const std::exception&) {
                               // The pool's own sessions report the database lost (or refused).
                             }
                             asio::post(io_, [this, c = std::move(c), admitted]() mutable { opened(std::move(c), admitted); });
                           },
                           [this] { asio::post(io_, [this] { opened(nullptr, 0); }); }});
  }

  void opened(PgConnPtr c, std::uint64_t admitted) {
    opening_ = false;
    if (!c) {
      // Not again for a while, longer after each failure (a connect to a
      // database that is away can hold a worker for connect_timeout):
      // meanwhile every decision goes to the pool.
      const auto pause = std::min(std::chrono::milliseconds(1000 << std::min(failures_, 5u)), std::chrono::milliseconds(30000));
      ++failures_;
      retry_at_ = std::chrono::steady_clock::now() + pause;
      return;
    }
    failures_ = 0;
    open_.fetch_add(1, std::memory_order_relaxed);
    idle_.push_back(std::make_shared<PgConnection>(io_.get_executor(), std::move(c), call_timeout_));
    idle_.back()->admitted = admitted;
  }

  asio::io_context& io_;
  Pool& pool_;
  const SessionOptions session_;
  unsigned limit_;
  std::chrono::milliseconds call_timeout_;
  std::vector<std::shared_ptr<PgConnection>> idle_;
  std::atomic<std::size_t> open_{0};
  bool opening_ = false;
  unsigned failures_ = 0;  // connects failed in a row
  std::chrono::steady_clock::time_point retry_at_{};
};

void DirectConnections::Returner::operator()(PgConnection*) {
  if (shelf) shelf->give_back(std::move(connection));
}

DirectConnections::DirectConnections(const std::vector<asio::io_context*>& ios, Pool& pool,
                                     const SessionOptions& session, unsigned per_thread,
                                     std::chrono::milliseconds call_timeout) {
  if (per_thread == 0) return;
  for (auto* io : ios) shelves_.push_back(std::make_unique<Shelf>(*io, pool, session, per_thread, call_timeout));
}

DirectConnections::~DirectConnections() = default;

DirectConnections::Taken DirectConnections::take(const asio::any_io_executor& executor) {
  auto& context = asio::query(executor, asio::execution::context);
  for (auto& shelf : shelves_)
    if (&shelf->io() == &context) return shelf->take();
  return Taken(nullptr, Returner{});
}

std::size_t DirectConnections::open() const {
  std::size_t n = 0;
  for (const auto& shelf : shelves_) n += shelf->open();
  return n;
}

}  // namespace gw
