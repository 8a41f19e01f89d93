// Database work from coroutines. A job runs on a pool worker, which owns the
// connection; the coroutine waits without holding a thread. A decision that
// is one statement may instead be sent on a connection of the coroutine's
// own I/O thread and its answer awaited on the socket (decide_direct). A
// decision that conflicts (store/transaction.hpp) is tried again after a
// jittered pause on a timer, so no worker ever sleeps.
#pragma once

#include "service/db/direct_connections.hpp"
#include "service/ops/metrics.hpp"
#include "service/db/resume.hpp"
#include "store/pg_params.hpp"
#include "store/pool.hpp"
#include "store/transaction.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <exception>
#include <optional>
#include <random>
#include <type_traits>

namespace gw {

// What `make()` returns, without the optional it may come in.
template <class Made>
struct AskOf {
  using type = Made;
};
template <class T>
struct AskOf<std::optional<T>> {
  using type = T;
};
template <class MakeAsk>
using ask_of_t = typename AskOf<std::invoke_result_t<MakeAsk&>>::type;

class Database {
 public:
  // `metrics`, when given, counts conflict retries and give-ups.
  Database(Pool& pool, RetryPolicy retry, Metrics* metrics = nullptr)
      : pool_(pool), retry_(retry), metrics_(metrics) {}

  // Runs fn(Session&) once on a worker. A full or stopping pool throws
  // AuthorityUnavailable; whatever fn throws is rethrown here.
  template <class Fn, class R = std::invoke_result_t<Fn&, Session&>>
  asio::awaitable<R> once(Fn fn, Lane lane = Lane::request) {
    static_assert(!std::is_void_v<R>, "return a value from database work");
    co_return co_await submit<R>(fn, static_cast<NotShared*>(nullptr), lane);
  }

  // once(), trying a conflicting decision again up to the policy's attempts;
  // then AuthorityUnavailable.
  template <class Fn, class R = std::invoke_result_t<Fn&, Session&>>
  asio::awaitable<R> decide(Fn fn, Lane lane = Lane::request) {
    co_return co_await retried<R>([&] { return submit<R>(fn, static_cast<NotShared*>(nullptr), lane); });
  }

  // decide() for a decision that may share its transaction and commit with
  // others waiting at the same time (Pool::Job::Shared, database.group_max),
  // first tried as one statement alone on a connection this I/O thread
  // drives itself (service/db/direct_connections.hpp): one free, or, while
  // the pool does not share commits, the next one given back (take_direct);
  // if the pool shares commits, only while no decision is waiting there to
  // share one with. On the pool, `alone(Session&, tried)` makes it in a
  // transaction of its own and `in_tx(pqxx::dbtransaction&)` the same
  // decision inside a transaction the worker opened; either may run more
  // than once before one commits.
  // `ask()` makes the statement, a OneStatementDecision (store/prepared.hpp),
  // or an empty optional of it when it does not apply to this decision. The
  // pool makes the decision otherwise, `alone(session, tried)` told whether
  // the statement already ran and answered nullopt.
  template <class MakeAsk, class Alone, class InTx, class R = std::invoke_result_t<Alone&, Session&, bool>>
    requires OneStatementDecision<ask_of_t<MakeAsk>, PgRow> &&
             std::same_as<std::optional<R>, decltype(std::declval<ask_of_t<MakeAsk>&>().answer(std::declval<PgRow>()))>
  asio::awaitable<R> decide_direct(MakeAsk ask, Alone alone, InTx in_tx, Lane lane = Lane::request) {
    co_return co_await retried<R>([&]() -> asio::awaitable<R> {
      bool tried = false;
      if (direct_ && (!pool_.shares_commits() || pool_.queued(lane) == 0))
        if (auto connection = co_await take_direct(lane)) {
          auto made = ask();
          if (auto* a = asked(made))
            if (auto decided = co_await direct<R>(*connection, *a, tried)) co_return std::move(*decided);
        }
      auto alone_told = [&](Session& s) { return alone(s, tried); };
      co_return co_await submit<R>(alone_told, &in_tx, lane);
    });
  }

  // Gives decide_direct its connections (none until then).
  void attach(DirectConnections& direct) { direct_ = &direct; }
  std::size_t direct_open() const { return direct_ ? direct_->open() : 0; }
  std::size_t direct_waiting() const { return direct_ ? direct_->waiting() : 0; }
  std::size_t direct_lent() const { return direct_ ? direct_->lent() : 0; }

  const RetryPolicy& retry() const { return retry_; }

  // A uniformly distributed value for backoff_delay's jitter.
  static std::uint64_t jitter() {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    return rng();
  }

 private:
  template <class R>
  struct Completion {
    std::exception_ptr error;
    std::optional<R> value;
  };

  struct NotShared {};

  // An ask, or none when `ask()` said it does not apply (an empty optional).
  template <class T>
  static T* asked(T& ask) {
    return &ask;
  }
  template <class T>
  static T* asked(std::optional<T>& ask) {
    return ask ? &*ask : nullptr;
  }

  // A direct connection for a decision. While decisions do not share
  // commits, nothing is gained by handing one to a worker when the shelf is
  // busy: it waits its turn there, in its lane, as long as the pool's queue
  // would let it wait (then the pool decides).
  asio::awaitable<DirectConnections::Taken> take_direct(Lane lane) {
    if (!pool_.shares_commits()) co_return co_await direct_->take_in_turn(pool_.queue_timeout(), lane);
    co_return direct_->take(co_await asio::this_coro::executor);
  }

  // `a`'s statement on `connection`: the decision, or nullopt for the pool
  // to make (`tried` set when the statement ran and answered nullopt).
  template <class R, class Ask>
  asio::awaitable<std::optional<R>> direct(PgConnection& connection, Ask& a, bool& tried) {
    std::optional<R> decided;
    try {
      auto result = co_await connection.run(a.statement, PgParams::of(a.args()));
      decided = a.answer(result.at(0));
      tried = !decided;
    } catch (const PgNotSent&) {
      // Closed while idle: the pool decides it, as if none were free.
    } catch (const pqxx::sql_error& e) {
      decided = a.refused(e.sqlstate());
      if (!decided) throw;
    }
    if (decided && metrics_) metrics_->count_direct_decision();
    co_return decided;
  }

  // One job on the pool, awaited: `alone` on a worker, or, given `in_tx`,
  // possibly staged in a transaction shared with other jobs. `alone` and
  // `in_tx` must outlive the returned awaitable.
  template <class R, class Alone, class InTx>
  asio::awaitable<R> submit(Alone& alone, InTx* in_tx, Lane lane) {
    auto done = co_await resume_with<Completion<R>>([&](std::function<void(Completion<R>)> complete) {
      Pool::Job job{[&alone, complete](Session& session) {
                      Completion<R> c;
                      try {
                        c.value.emplace(alone(session));
                      } catch (...) {
                        c.error = std::current_exception();
                      }
                      complete(std::move(c));
                    },
                    [complete] {
                      complete(Completion<R>{std::make_exception_ptr(AuthorityUnavailable(
                                                 "no database connection became free in time (queue full or timed out)")),
                                             std::nullopt});
                    },
                    lane};
      if constexpr (!std::is_same_v<InTx, NotShared>) {
        // The result a shared transaction made, kept until its commit.
        auto staged = std::make_shared<std::optional<R>>();
        job.shared = Pool::Job::Shared{
            [in_tx, staged](pqxx::dbtransaction& tx) { staged->emplace((*in_tx)(tx)); },
            [complete, staged] { complete(Completion<R>{nullptr, std::move(*staged)}); },
            [complete](std::exception_ptr error) { complete(Completion<R>{error, std::nullopt}); }};
      }
      pool_.submit(std::move(job));
    });
    if (done.error) std::rethrow_exception(done.error);
    co_return std::move(*done.value);
  }

  // Awaits attempt() until it does not conflict, pausing on a timer between
  // tries, up to the policy's attempts; then AuthorityUnavailable.
  template <class R, class Attempt>
  asio::awaitable<R> retried(Attempt attempt_once) {
    for (unsigned attempt = 1;; ++attempt) {
      std::optional<Conflict> conflict;
      try {
        co_return co_await attempt_once();
      } catch (const Conflict& c) {
        conflict = c;
      }
      if (attempt >= retry_.max_attempts) {
        if (metrics_) metrics_->count_conflict_give_up();
        throw AuthorityUnavailable(std::string("gave up after retries: ") + conflict->what());
      }
      if (metrics_) metrics_->count_conflict_retry();
      co_await pause(backoff_delay(retry_, attempt, jitter()));
    }
  }

  static asio::awaitable<void> pause(std::chrono::milliseconds delay) {
    asio::steady_timer timer(co_await asio::this_coro::executor, delay);
    co_await timer.async_wait(asio::use_awaitable);
  }

  Pool& pool_;
  RetryPolicy retry_;
  Metrics* metrics_;
  DirectConnections* direct_ = nullptr;
};

// Database work of one request, its time added to `spent` (failures too):
// the "db_ms" of the request's log line.
class TimedDatabase {
 public:
  TimedDatabase(Database& database, std::chrono::nanoseconds& spent) : database_(database), spent_(spent) {}

  template <class Fn, class R = std::invoke_result_t<Fn&, Session&>>
  asio::awaitable<R> once(Fn fn, Lane lane = Lane::request) {
    return timed<R>(database_.once(std::move(fn), lane), spent_);
  }
  template <class Fn, class R = std::invoke_result_t<Fn&, Session&>>
  asio::awaitable<R> decide(Fn fn, Lane lane = Lane::request) {
    return timed<R>(database_.decide(std::move(fn), lane), spent_);
  }
  template <class Ask, class Alone, class InTx, class R = std::invoke_result_t<Alone&, Session&, bool>>
  asio::awaitable<R> decide_direct(Ask ask, Alone alone, InTx in_tx, Lane lane = Lane::request) {
    return timed<R>(database_.decide_direct(std::move(ask), std::move(alone), std::move(in_tx), lane), spent_);
  }

 private:
  template <class R>
  static asio::awaitable<R> timed(asio::awaitable<R> work, std::chrono::nanoseconds& spent) {
    struct Clock {
      std::chrono::nanoseconds& spent;
      std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
      ~Clock() { spent += std::chrono::steady_clock::now() - started; }
    } clock{spent};
    co_return co_await std::move(work);
  }

  Database& database_;
  std::chrono::nanoseconds& spent_;
};

}  // namespace gw
