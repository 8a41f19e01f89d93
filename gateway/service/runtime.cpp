#include "service/runtime.hpp"

#include "http/server.hpp"
#include "service/app.hpp"
#include "store/migrations.hpp"
#include "upstream/client.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <nlohmann/json.hpp>

#include <condition_variable>
#include <iostream>
#include <thread>

namespace gw {

namespace asio = boost::asio;

namespace {

// Declares abandoned forwards unknown, logging each one.
void sweep(LedgerStore& ledger, Session& session, unsigned batch, Metrics& metrics) {
  try {
    for (const auto& op : ledger.sweep_abandoned(session, batch)) {
      metrics.count_event("operations_swept");
      // One line per operation that becomes held, for the operator on call.
      nlohmann::json line{{"event", "operation_swept"},
                          {"tenant", op.scope.tenant},
                          {"task", op.scope.task},
                          {"operation", op.operation_id},
                          {"attempt", op.attempt},
                          {"provider", op.provider},
                          {"state", "unknown"},
                          {"reason", "forward_abandoned"},
                          {"forward_deadline_ms", op.forward_deadline_ms ? nlohmann::json(*op.forward_deadline_ms)
                                                                         : nlohmann::json(nullptr)},
                          {"authority_ms", op.swept_at_ms}};
      std::cerr << line.dump() << std::endl;
    }
  } catch (const std::exception&) {
    // The database is away: the next round tries again, and nothing was swept.
    metrics.count_event("sweep_failed");
  }
}

}  // namespace

struct Runtime::Impl {
  Impl(Config c, RuntimeOptions o)
      : config(std::move(c)),
        options(o),
        clock(o.manual_clock),
        retry{config.database.max_attempts},
        authority(clock, retry),
        ledger(clock, retry),
        held(clock) {}

  Config config;
  RuntimeOptions options;
  AuthorityClock clock;
  RetryPolicy retry;
  AuthorityStore authority;
  LedgerStore ledger;
  HeldStore held;
  Metrics metrics;
  std::unique_ptr<Pool> pool;
  std::unique_ptr<App> app;
  asio::io_context io;
  std::unique_ptr<upstream::Client> upstream;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::unique_ptr<http::Server> server;
  std::vector<std::thread> io_threads;

  // The clock floor ticker: one pending tick at most, so a slow database
  // never accumulates a backlog of them.
  std::thread ticker;
  std::mutex ticker_mutex;
  std::condition_variable ticker_wake;
  bool ticker_stop = false;
  std::atomic<bool> tick_pending{false};

  // The sweep of abandoned forwards: a timer on the I/O context hands one
  // job at a time to the pool; nothing waits by sleeping.
  std::optional<asio::steady_timer> sweep_timer;
  std::atomic<bool> sweep_pending{false};

  void schedule_sweep() {
    sweep_timer->expires_after(config.recovery.sweep_interval);
    sweep_timer->async_wait([this](boost::system::error_code ec) {
      if (ec) return;  // cancelled: the runtime is stopping
      if (!sweep_pending.exchange(true))
        pool->submit(Pool::Job{[this](Session& s) {
                                 sweep(ledger, s, config.recovery.sweep_batch, metrics);
                                 sweep_pending = false;
                               },
                               [this] { sweep_pending = false; }});
      schedule_sweep();
    });
  }

  SessionOptions session_options() const {
    const auto& d = config.database;
    return SessionOptions{d.url, d.connect_timeout_s, d.statement_timeout, d.lock_timeout,
                          std::chrono::milliseconds(200)};
  }

  void migrate() {
    auto deadline = std::chrono::steady_clock::now() + options.database_wait;
    auto session_opts = session_options();
    for (;;) {
      try {
        Session session(session_opts, std::make_shared<std::atomic<std::int64_t>>(-1'000'000'000));
        gw::migrate(session.connection());
        return;
      } catch (const pqxx::broken_connection& e) {
        if (std::chrono::steady_clock::now() > deadline) throw;
        std::cerr << "waiting for the database: " << e.what() << std::endl;
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
    }
  }

  void run_ticker() {
    std::unique_lock lock(ticker_mutex);
    while (!ticker_wake.wait_for(lock, config.database.clock_tick, [this] { return ticker_stop; })) {
      if (tick_pending.exchange(true)) continue;
      pool->submit(Pool::Job{[this](Session& s) {
                               try {
                                 authority.advance_floor(s);
                               } catch (const std::exception&) {
                                 // The next tick tries again; decisions still read the old floor.
                               }
                               tick_pending = false;
                             },
                             [this] { tick_pending = false; }});
    }
  }
};

Runtime::Runtime(Config config, RuntimeOptions options)
    : impl_(std::make_unique<Impl>(std::move(config), options)) {}

Runtime::~Runtime() { stop(std::chrono::milliseconds(0)); }

std::uint16_t Runtime::start() {
  auto& m = *impl_;
  m.migrate();
  const auto& d = m.config.database;
  m.pool = std::make_unique<Pool>(PoolOptions{m.session_options(), d.pool_size, d.queue_limit, d.queue_timeout});
  m.upstream = std::make_unique<upstream::Client>(m.io);
  m.app = std::make_unique<App>(App::Deps{m.config, *m.pool, m.authority, m.ledger, m.held, m.metrics, m.upstream.get()});
  const auto& h = m.config.http;
  http::ServerLimits limits{h.max_header_bytes, h.max_body_bytes, h.read_timeout, h.idle_timeout,
                            h.read_timeout};
  m.server = std::make_unique<http::Server>(
      m.io, limits, [app = m.app.get()](http::Request r, http::Responder done) {
        app->handle(std::move(r), std::move(done));
      });
  auto port = m.server->listen(m.config.listen.address, m.config.listen.port);
  m.work.emplace(m.io.get_executor());
  for (unsigned i = 0; i < h.io_threads; ++i) m.io_threads.emplace_back([&m] { m.io.run(); });
  if (!m.clock.manual()) m.ticker = std::thread([&m] { m.run_ticker(); });
  m.sweep_timer.emplace(m.io);
  asio::post(m.io, [&m] { m.schedule_sweep(); });
  return port;
}

void Runtime::migrate_only() { impl_->migrate(); }

void Runtime::stop(std::chrono::milliseconds drain) {
  auto& m = *impl_;
  if (!m.server) return;
  m.server->stop_accepting();
  auto settle = [&m](std::chrono::milliseconds within) {
    auto deadline = std::chrono::steady_clock::now() + within;
    while (m.server->active_requests() > 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  };
  settle(drain);
  // Requests still waiting for a provider connection fail as unsent; give
  // their not_executed outcomes a moment to be recorded before the
  // database workers stop. Anything still in flight after that stays
  // in_flight in the ledger, for reconciliation.
  m.upstream->shutdown();
  settle(std::min(drain, std::chrono::milliseconds(2000)));
  {
    std::lock_guard lock(m.ticker_mutex);
    m.ticker_stop = true;
  }
  m.ticker_wake.notify_all();
  if (m.ticker.joinable()) m.ticker.join();
  asio::post(m.io, [&m] { m.sweep_timer->cancel(); });
  m.pool->stop();
  m.work.reset();
  m.io.stop();
  for (auto& t : m.io_threads) t.join();
  m.io_threads.clear();
  m.server.reset();
}

}  // namespace gw
