#include "service/db/direct_connections.hpp"

#include "store/authority_guard.hpp"

#include <boost/asio/execution/context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <atomic>
#include <deque>

namespace gw {
namespace {

// Told apart from the workers' in pg_stat_activity.
SessionOptions direct_session(SessionOptions o) {
  o.application_name = "write-gateway-direct";
  return o;
}

}  // namespace

// The connections all shelves may hold together: per_thread times the
// threads. A shelf serving most of the connections (the listener packs them,
// http/server.cpp) holds most of them, rather than queue its decisions on
// per_thread connections while another shelf's slots stay unused. When a
// shelf finds none free and the budget spent, the other shelves are asked to
// close a connection idle for a second (left from an earlier load), and if
// it holds fewer than per_thread it says so: a shelf holding more then closes
// one the next time it is given one back.
struct DirectConnections::Budget {
  explicit Budget(std::size_t total) : total(total) {}
  bool reserve() {
    auto n = held.load(std::memory_order_relaxed);
    while (n < total)
      if (held.compare_exchange_weak(n, n + 1, std::memory_order_relaxed)) return true;
    return false;
  }
  void release() { held.fetch_sub(1, std::memory_order_relaxed); }
  bool exhausted() const { return held.load(std::memory_order_relaxed) >= total; }

  const std::size_t total;
  std::atomic<std::size_t> held{0};  // open or being opened, on all shelves
  std::atomic<bool> wanted{false};   // a shelf below its share found none left
  std::vector<Shelf*> shelves;       // set once, before any is used
};

// One I/O thread's connections. Used on that thread only, except the
// counts the metrics read from anywhere.
class DirectConnections::Shelf {
 public:
  Shelf(asio::io_context& io, Pool& pool, Budget& budget, const SessionOptions& session, unsigned share,
        unsigned pipeline, std::chrono::milliseconds call_timeout)
      : io_(io),
        pool_(pool),
        budget_(budget),
        session_(direct_session(session)),
        share_(share),
        pipeline_(pipeline),
        call_timeout_(call_timeout) {}

  asio::io_context& io() const { return io_; }
  std::size_t open() const { return open_.load(std::memory_order_relaxed); }
  std::size_t waiting() const { return waiting_count_.load(std::memory_order_relaxed); }
  std::size_t lends() const { return lends_.load(std::memory_order_relaxed); }

  Taken take() {
    // A connection to a primary the gateway has moved away from is never lent again.
    while (!idle_.empty() && !lendable(*idle_.back().connection)) {
      idle_.pop_back();
      closed();
    }
    if (!idle_.empty()) {
      auto c = std::move(idle_.back().connection);
      idle_.pop_back();
      return lent(std::move(c));
    }
    if (!opening_ && std::chrono::steady_clock::now() >= retry_at_ && budget_.reserve()) open_one();
    if (may_grow()) return Taken(nullptr, Returner{});
    // All open and lent: the statement is sent behind those of the
    // connection with the fewest on their way (pipelined), never behind one
    // on its way longer than a statement normally takes (a lock wait, a
    // stalled server).
    const auto now = std::chrono::steady_clock::now();
    Lent* best = nullptr;
    for (auto& l : lent_)
      if (l.lends < pipeline_ && !l.connection->broken() && lendable(*l.connection) &&
          now - l.connection->oldest_sent() <= pipeline_window && (!best || l.lends < best->lends))
        best = &l;
    if (!best) return Taken(nullptr, Returner{});
    ++best->lends;
    lends_.fetch_add(1, std::memory_order_relaxed);
    auto* raw = best->connection.get();
    return Taken(raw, Returner{this, best->connection});
  }

  asio::awaitable<Taken> take_in_turn(std::chrono::milliseconds wait, Lane lane) {
    // Only behind connections that are open and lent: one is sure to come
    // back (each call has call_timeout), unless it breaks, which wakes all.
    if (auto c = take(); c || may_grow() || lent_.empty()) co_return c;
    Waiter w(*this, wait, lane == Lane::outcome ? waiting_outcomes_ : waiting_requests_);
    boost::system::error_code ignored;
    co_await w.timer.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    if (!w.handed) co_return Taken(nullptr, Returner{});
    auto* raw = w.handed.get();  // still counted as lent: it only changed hands
    co_return Taken(raw, Returner{this, std::move(w.handed)});
  }

  void give_back(std::shared_ptr<PgConnection> c) {
    auto at = std::find_if(lent_.begin(), lent_.end(), [&](const Lent& l) { return l.connection == c; });
    if (c->broken() || !lendable(*c)) {
      lends_.fetch_sub(1, std::memory_order_relaxed);
      if (--at->lends == 0) {
        lent_.erase(at);
        closed();  // with its last owner
      }
      // One fewer to wait for: those waiting go to the pool rather than
      // wait on a shelf whose database may be going away.
      while (anyone_waiting()) wake_first(nullptr);
      return;
    }
    if (anyone_waiting()) {
      wake_first(std::move(c));  // from one owner to the next: still lent
      return;
    }
    lends_.fetch_sub(1, std::memory_order_relaxed);
    if (--at->lends == 0) {
      lent_.erase(at);
      if (open() > share_ && budget_.wanted.exchange(false, std::memory_order_relaxed))
        closed();  // the connection goes with `c`: its slot is another shelf's to take
      else
        idle_.push_back({std::move(c), std::chrono::steady_clock::now()});
    }
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
      budget_.release();
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
    idle_.push_back({std::make_shared<PgConnection>(io_.get_executor(), std::move(c), call_timeout_),
                     std::chrono::steady_clock::now()});
    idle_.back().connection->admitted = admitted;
  }

  // A decision waiting its turn, on its coroutine's frame; in its lane's
  // queue until handed a connection or its timer runs out.
  struct Waiter {
    Waiter(Shelf& shelf, std::chrono::milliseconds wait, std::deque<Waiter*>& queue)
        : shelf(shelf), queue(queue), timer(shelf.io_, wait) {
      queue.push_back(this);
      shelf.waiting_count_.fetch_add(1, std::memory_order_relaxed);
    }
    ~Waiter() {
      shelf.waiting_count_.fetch_sub(1, std::memory_order_relaxed);
      if (auto at = std::find(queue.begin(), queue.end(), this); at != queue.end()) queue.erase(at);
      if (handed) shelf.give_back(std::move(handed));  // handed, then abandoned (shutdown)
    }
    Waiter(const Waiter&) = delete;
    Waiter& operator=(const Waiter&) = delete;

    Shelf& shelf;
    std::deque<Waiter*>& queue;
    asio::steady_timer timer;
    std::shared_ptr<PgConnection> handed;
  };

  // While a connection is being opened, or the budget has room for one, a
  // decision that finds none free goes to the pool rather than queue behind
  // those on their way. A shelf left below its share says so.
  bool may_grow() {
    if (opening_ || !budget_.exhausted()) return true;
    if (open() < share_) budget_.wanted.store(true, std::memory_order_relaxed);
    ask_idle_shelves();
    return false;
  }

  // A shelf whose connections all sat idle since an earlier load (a thread
  // no agent uses now) gets no give_back to act on: it is asked, on its own
  // thread, to close one idle for long_idle, and this shelf opens that slot
  // on a later take. Asked at most every ask_interval.
  void ask_idle_shelves() {
    const auto now = std::chrono::steady_clock::now();
    if (now - asked_at_ < ask_interval) return;
    asked_at_ = now;
    for (Shelf* other : budget_.shelves)
      if (other != this) asio::post(other->io_, [other] { other->close_long_idle(); });
  }

  void close_long_idle() {
    if (idle_.empty() || std::chrono::steady_clock::now() - idle_.front().since < long_idle) return;
    idle_.erase(idle_.begin());
    closed();
  }

  void closed() {
    open_.fetch_sub(1, std::memory_order_relaxed);
    budget_.release();
  }

  bool anyone_waiting() const { return !waiting_outcomes_.empty() || !waiting_requests_.empty(); }
  bool lendable(const PgConnection& c) const { return !session_.guard || session_.guard->current(c.admitted); }

  Taken lent(std::shared_ptr<PgConnection> c) {
    lent_.push_back(Lent{c, 1});
    lends_.fetch_add(1, std::memory_order_relaxed);
    auto* raw = c.get();
    return Taken(raw, Returner{this, std::move(c)});
  }

  // Outcome records first, as in the pool.
  void wake_first(std::shared_ptr<PgConnection> c) {
    auto& q = waiting_outcomes_.empty() ? waiting_requests_ : waiting_outcomes_;
    Waiter* w = q.front();
    q.pop_front();
    w->handed = std::move(c);
    w->timer.cancel();
  }

  asio::io_context& io_;
  Pool& pool_;
  Budget& budget_;
  const SessionOptions session_;
  unsigned share_;  // per_thread: what a shelf is sure to get back from the others
  unsigned pipeline_;  // decisions on one connection at once
  std::chrono::milliseconds call_timeout_;
  // A connection taken and not yet given back, by as many decisions as `lends`.
  struct Lent {
    std::shared_ptr<PgConnection> connection;
    unsigned lends = 0;
  };
  static constexpr auto pipeline_window = std::chrono::milliseconds(10);
  static constexpr auto long_idle = std::chrono::milliseconds(1000);
  static constexpr auto ask_interval = std::chrono::milliseconds(50);
  std::chrono::steady_clock::time_point asked_at_{};
  // Given back and not taken since: the last given back is lent first.
  struct Idle {
    std::shared_ptr<PgConnection> connection;
    std::chrono::steady_clock::time_point since;
  };
  std::vector<Idle> idle_;
  std::vector<Lent> lent_;
  std::deque<Waiter*> waiting_outcomes_, waiting_requests_;  // take_in_turn's, by lane
  std::atomic<std::size_t> open_{0};
  std::atomic<std::size_t> waiting_count_{0};  // both queues' sizes, for the metrics
  std::atomic<std::size_t> lends_{0};          // lent_'s lends summed, for the metrics
  bool opening_ = false;
  unsigned failures_ = 0;  // connects failed in a row
  std::chrono::steady_clock::time_point retry_at_{};
};

void DirectConnections::Returner::operator()(PgConnection*) {
  if (shelf) shelf->give_back(std::move(connection));
}

DirectConnections::DirectConnections(const std::vector<asio::io_context*>& ios, Pool& pool,
                                     const SessionOptions& session, unsigned per_thread, unsigned pipeline,
                                     std::chrono::milliseconds call_timeout) {
  if (per_thread == 0) return;
  budget_ = std::make_unique<Budget>(std::size_t{per_thread} * ios.size());
  for (auto* io : ios) {
    shelves_.push_back(std::make_unique<Shelf>(*io, pool, *budget_, session, per_thread, pipeline, call_timeout));
    budget_->shelves.push_back(shelves_.back().get());
  }
}

DirectConnections::~DirectConnections() = default;

DirectConnections::Shelf* DirectConnections::shelf_of(const asio::any_io_executor& executor) const {
  auto& context = asio::query(executor, asio::execution::context);
  for (const auto& shelf : shelves_)
    if (&shelf->io() == &context) return shelf.get();
  return nullptr;
}

DirectConnections::Taken DirectConnections::take(const asio::any_io_executor& executor) {
  auto* shelf = shelf_of(executor);
  return shelf ? shelf->take() : Taken(nullptr, Returner{});
}

asio::awaitable<DirectConnections::Taken> DirectConnections::take_in_turn(std::chrono::milliseconds wait, Lane lane) {
  auto* shelf = shelf_of(co_await asio::this_coro::executor);
  if (!shelf) co_return Taken(nullptr, Returner{});
  co_return co_await shelf->take_in_turn(wait, lane);
}

std::size_t DirectConnections::open() const {
  std::size_t n = 0;
  for (const auto& shelf : shelves_) n += shelf->open();
  return n;
}

std::size_t DirectConnections::lent() const {
  std::size_t n = 0;
  for (const auto& shelf : shelves_) n += shelf->lends();
  return n;
}

std::size_t DirectConnections::waiting() const {
  std::size_t n = 0;
  for (const auto& shelf : shelves_) n += shelf->waiting();
  return n;
}

}  // namespace gw
