#include "service/runtime/runtime.hpp"

#include "http/server.hpp"
#include "tls/server_context.hpp"
#include "service/ops/allocator.hpp"
#include "service/api/app.hpp"
#include "service/ops/build_info.hpp"
#include "service/db/direct_connections.hpp"
#include "service/ops/event_log.hpp"
#include "service/ops/logger.hpp"
#include "store/authority_guard.hpp"
#include "store/migrations.hpp"
#include "store/retention_store.hpp"
#include "upstream/client.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <mutex>
#include <thread>

namespace gw {

namespace asio = boost::asio;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

// Waits up to `pause` for SIGINT or SIGTERM and takes it; returns the
// signal, or 0 when none came. main.cpp blocks both in every thread, so one
// sent before this wait began is queued and taken here too, not lost.
int stop_signal_within(std::chrono::milliseconds pause) {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  const timespec limit{static_cast<time_t>(pause.count() / 1000), static_cast<long>(pause.count() % 1000) * 1'000'000};
  const int signal = sigtimedwait(&stop, nullptr, &limit);
  return signal > 0 ? signal : 0;
}

// Declares abandoned forwards unknown, logging each one for the operator on call.
void report_swept(const std::vector<SweptOperation>& swept, Metrics& metrics) {
  for (const auto& op : swept) {
    metrics.count_event("operations_swept");
    log_event(LogLevel::warn, "operation_swept",
              {{"tenant", op.scope.tenant},
               {"task", op.scope.task},
               {"operation", op.operation_id},
               {"attempt", op.attempt},
               {"provider", op.provider},
               {"state", "unknown"},
               {"reason", "forward_abandoned"},
               {"forward_deadline_ms",
                op.forward_deadline_ms ? nlohmann::json(*op.forward_deadline_ms) : nlohmann::json(nullptr)},
               {"authority_ms", op.swept_at_ms}});
  }
}

// Rows removed by one retention pass, by kind.
struct RetentionTotals {
  std::int64_t operations = 0, attempts = 0, evidence = 0, webhooks = 0, rejections = 0;
  std::int64_t now_ms = 0;  // authority time of the pass's last batch
  bool any() const { return operations + rejections + webhooks > 0; }
};

void report_retention(const RetentionTotals& t) {
  if (!t.any()) return;
  log_event("retention_pass", {{"operations", t.operations},
                               {"attempts", t.attempts},
                               {"evidence", t.evidence},
                               {"webhooks", t.webhooks},
                               {"rejections", t.rejections},
                               {"authority_ms", t.now_ms}});
}

// An io_context that can be shut down before it is destroyed. Objects of
// one io_context (a session's coroutine frame, queued on its thread's
// io_context) may own objects of another (the listener, on the first;
// pooled upstream connections): destroying the io_contexts one by one
// would let such an owner outlive the services its members belong to.
// Shutting all of them down first destroys every pending handler, and with
// them those owners, while every service still exists.
class IoContext : public asio::io_context {
 public:
  using asio::io_context::io_context;
  void shut_down() { shutdown(); }
};

}  // namespace

struct Runtime::Impl {
  Impl(Config c, RuntimeOptions o)
      : config(std::move(c)),
        options(o),
        clock(o.manual_clock ? ClockSource::manual : ClockSource::database),
        retry{config.database.max_attempts},
        authority(clock),
        ledger(clock),
        held(clock),
        operators(clock),
        resolutions(clock),
        rejections(clock),
        reconcile(clock),
        webhooks(clock),
        retention(clock) {}

  Config config;
  RuntimeOptions options;
  AuthorityClock clock;
  RetryPolicy retry;
  AuthorityStore authority;
  LedgerStore ledger;
  HeldStore held;
  OperatorStore operators;
  ResolutionStore resolutions;
  RejectionStore rejections;
  ReconcileStore reconcile;
  WebhookStore webhooks;
  RetentionStore retention;
  Metrics metrics;
  // Checks every connection the pool and the direct lanes open (store/authority_guard.hpp).
  std::unique_ptr<AuthorityGuard> guard;
  std::unique_ptr<Pool> pool;
  std::unique_ptr<Database> database;
  std::unique_ptr<App> app;
  // One io_context per I/O thread (http.io_threads), each run by its thread
  // alone: a connection, its requests and their forwards stay on one thread,
  // as in an nginx worker, instead of waking another thread at every step.
  // The first also runs the listener, the duties and the upstream pools'
  // housekeeping.
  std::vector<std::unique_ptr<IoContext>> ios;
  // The I/O threads' own database connections: after `ios`, so destroyed
  // before them (and after ~Impl's shutdown, which ends every request that
  // holds one).
  std::unique_ptr<DirectConnections> direct;
  std::unique_ptr<upstream::Client> upstream;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::unique_ptr<http::Server> server;
  std::vector<std::thread> io_threads;

  asio::io_context& io() { return *ios.front(); }

  // Background duties, each a loop on its own timer that awaits its database
  // job before it arms the timer again: never two at once, nothing sleeps.
  // The clock floor ticker (real clock only), the sweep of abandoned
  // forwards, the reconciler and retention. All on one strand, where stop()
  // cancels their timers.
  std::optional<asio::strand<asio::io_context::executor_type>> duties;
  std::optional<asio::steady_timer> tick_timer, sweep_timer, reconcile_timer, retention_timer, guard_timer;
  FailureStreak sweep_streak, retention_streak;  // each owned by its duty's loop
  std::atomic<bool> stopping{false};

  // A drain waits on `drained`; the server (last request answered) and the
  // outcome lane (last record settled) wake it. The empty critical section
  // orders a wake after the waiter's check of the counts, so none is lost.
  std::mutex drain_mutex;
  std::condition_variable drained;
  void drain_changed() {
    { std::lock_guard lock(drain_mutex); }
    drained.notify_all();
  }

  ~Impl() {
    // Workers first (stop() already did, unless start() failed part-way): a
    // job still running posts its completion to an io_context, which must
    // still exist then (the direct lanes' connects too).
    if (pool) pool->stop();
    // The members below that own I/O objects (server, upstream) are
    // destroyed after this body, against services shut down but not yet
    // destroyed, which Asio allows.
    for (auto& io : ios) io->shut_down();
  }

  asio::awaitable<void> tick_loop() {
    while (!stopping) {
      tick_timer->expires_after(config.database.clock_tick);
      if (auto [ec] = co_await tick_timer->async_wait(use_tuple); ec) co_return;  // stopping
      try {
        co_await database->once([this](Session& s) {
          authority.advance_floor(s);
          return true;
        });
      } catch (const std::exception&) {
        // The next tick tries again; decisions still read the old floor.
      }
    }
  }

  // The guard's watermark read again on a connection in use: it covers every
  // decision acknowledged before the read, without a round trip in any of them.
  asio::awaitable<void> guard_loop() {
    while (!stopping) {
      guard_timer->expires_after(config.database.guard_interval);
      if (auto [ec] = co_await guard_timer->async_wait(use_tuple); ec) co_return;  // stopping
      try {
        co_await database->once([this](Session& s) {
          guard->observe(s.connection());
          return true;
        });
      } catch (const std::exception&) {
        // Away or refused: the connection's own check reports it.
      }
    }
  }

  asio::awaitable<void> sweep_loop() {
    while (!stopping) {
      sweep_timer->expires_after(config.recovery.sweep_interval);
      if (auto [ec] = co_await sweep_timer->async_wait(use_tuple); ec) co_return;  // stopping
      try {
        auto swept = co_await database->once([this](Session& s) {
          return ledger.sweep_abandoned(s, config.recovery.sweep_batch);
        });
        metrics.count_sweep_done(swept.size());
        report_swept(swept, metrics);
        sweep_streak.succeeded();
      } catch (const std::exception& e) {
        // The database is away or busy: the next round tries again, and
        // nothing was swept.
        metrics.count_event("sweep_failed");
        metrics.count_sweep_failed();
        sweep_streak.failed("sweep_failed", e);
        continue;
      }
      try {
        // The held gauges, one READ COMMITTED count per round (GET /metrics
        // shows the last one and never waits for the database itself).
        const auto summary = co_await database->once([this](Session& s) { return held.summary(s); });
        std::vector<Metrics::Held> gauges;
        for (const auto& st : summary.states)
          gauges.push_back({std::string(name(st.state)), st.count,
                            static_cast<double>(std::max<std::int64_t>(0, summary.now_ms - st.oldest_since_ms)) /
                                1000.0});
        metrics.set_held(std::move(gauges));
      } catch (const std::exception&) {
        // The gauges keep the last count; the next round counts again.
      }
    }
  }

  // One kind of record in batches until a batch comes back short. Each batch
  // is its own short transaction on one pooled connection, so admissions
  // interleave with a long pass instead of waiting behind it. Counted per
  // batch, so the metric moves during a long pass.
  template <class Batch, class Add>
  asio::awaitable<void> remove_all(const char* metric, Batch batch, Add add) {
    for (;;) {
      auto removed = co_await database->once(batch);
      metrics.count_event(metric, static_cast<std::uint64_t>(removed.rows));
      add(removed);
      if (removed.rows < config.retention.batch || stopping) co_return;
    }
  }

  asio::awaitable<void> retention_loop() {
    const auto& p = config.retention;
    while (!stopping) {
      retention_timer->expires_after(p.interval);
      if (auto [ec] = co_await retention_timer->async_wait(use_tuple); ec) co_return;  // stopping
      RetentionTotals t;
      try {
        co_await remove_all("retention_operations_removed",
                            [&](Session& s) { return retention.remove_operations(s, p.operations, p.batch); },
                            [&](const RemovedBatch& b) {
                              t.operations += b.rows;
                              t.attempts += b.attempts;
                              t.evidence += b.evidence;
                              t.webhooks += b.webhooks;
                              t.now_ms = std::max(t.now_ms, b.now_ms);
                            });
        co_await remove_all("retention_rejections_removed",
                            [&](Session& s) { return retention.remove_rejections(s, p.rejections, p.batch); },
                            [&](const RemovedBatch& b) {
                              t.rejections += b.rows;
                              t.now_ms = std::max(t.now_ms, b.now_ms);
                            });
        co_await remove_all("retention_webhooks_removed",
                            [&](Session& s) { return retention.remove_webhooks(s, p.webhooks, p.batch); },
                            [&](const RemovedBatch& b) {
                              t.webhooks += b.rows;
                              t.now_ms = std::max(t.now_ms, b.now_ms);
                            });
        retention_streak.succeeded();
      } catch (const std::exception& e) {
        // The database is away or busy: what was removed stays removed, and
        // the next pass goes on from there.
        metrics.count_event("retention_failed");
        retention_streak.failed("retention_failed", e);
      }
      report_retention(t);
    }
  }

  SessionOptions session_options() const {
    const auto& d = config.database;
    SessionOptions o{d.url, d.connect_timeout_s, d.statement_timeout, d.lock_timeout,
                     std::chrono::milliseconds(200)};
    o.keepalives_idle_s = d.keepalives_idle_s;
    o.keepalives_interval_s = d.keepalives_interval_s;
    o.keepalives_count = d.keepalives_count;
    o.tcp_user_timeout = d.tcp_user_timeout;
    return o;
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
        log_event(LogLevel::warn, "database_waiting", {{"error", e.what()}});
        if (const int signal = stop_signal_within(std::chrono::milliseconds(500)))
          throw StoppedBeforeStart(std::string("stopped (") + strsignal(signal) + ") while waiting for the database");
      }
    }
  }
};

Runtime::Runtime(Config config, RuntimeOptions options)
    : impl_(std::make_unique<Impl>(std::move(config), options)) {}

Runtime::~Runtime() { stop(std::chrono::milliseconds(0)); }

std::uint16_t Runtime::start() {
  auto& m = *impl_;
  Logger::process().configure(m.config.log);
  // Loaded at config time too; read again here, as a reload will, before
  // anything else starts.
  std::shared_ptr<asio::ssl::context> tls;
  if (const auto& files = m.config.listen.tls) {
    auto loaded = tls::make_server_tls_context(*files);
    if (!loaded.context) throw ConfigError("$.listen.tls." + loaded.field + ": " + loaded.error);
    tls = std::move(loaded.context);
    log_event("tls_loaded", {{"certificate", loaded.certificate}});
  }
  m.migrate();
  {
    std::vector<std::string> providers;
    for (const auto& provider : m.config.providers) providers.push_back(provider.name);
    m.metrics.declare_providers(providers);
  }
  const auto& d = m.config.database;
  m.guard = std::make_unique<AuthorityGuard>(d.guard_state_file, [&metrics = m.metrics](const std::string& event,
                                                                                         const nlohmann::json& fields) {
    metrics.count_event(event);
    if (event == "authority_regained")
      metrics.count_event("without_authority_ms", fields.value("without_authority_ms", std::uint64_t{0}));
    const bool bad = event == "authority_guard_tripped" || event == "authority_guard_overridden" ||
                     event == "authority_guard_state_unwritten";
    // A refusal repeats with every connection tried: counted, not logged each time.
    if (event != "authority_guard_refused") log_event(bad ? LogLevel::error : LogLevel::warn, event, fields);
  });
  m.metrics.watch_authority([guard = m.guard.get()] { return guard->seconds_without_authority(); });
  auto guarded = m.session_options();
  guarded.guard = m.guard.get();
  PoolOptions pool_options{guarded, d.pool_size, d.queue_limit, d.queue_timeout, d.call_timeout, d.group_max, {}};
  // Once per transition, from the worker whose connect failed or succeeded.
  pool_options.on_reachability = [&metrics = m.metrics, guard = m.guard.get()](bool reachable, const std::string& detail) {
    if (!reachable) guard->lost();
    if (reachable) {
      metrics.count_event("database_regained");
      log_event(LogLevel::info, "database_regained", nlohmann::json::object());
    } else {
      metrics.count_event("database_lost");
      log_event(LogLevel::error, "database_lost", {{"error", detail}});
    }
  };
  m.pool = std::make_unique<Pool>(std::move(pool_options));
  m.database = std::make_unique<Database>(*m.pool, m.retry, &m.metrics);
  for (unsigned i = 0; i < std::max(1u, m.config.http.io_threads); ++i)
    m.ios.push_back(std::make_unique<IoContext>(1));
  m.upstream = std::make_unique<upstream::Client>(m.io());
  m.app = std::make_unique<App>(
      App::Deps{m.config, *m.database, *m.pool, m.authority, m.ledger, m.held, m.operators, m.resolutions,
                m.rejections, m.reconcile, m.webhooks, m.metrics, m.upstream.get()});
  const auto& h = m.config.http;
  const http::ServerLimits limits{.max_header_bytes = h.max_header_bytes,
                                  .max_body_bytes = h.max_body_bytes,
                                  .read_timeout = h.read_timeout,
                                  .idle_timeout = h.idle_timeout,
                                  .header_timeout = h.header_timeout,
                                  // No setting of its own: read_timeout_ms bounds each reply's
                                  // write too (docs/configuration.md).
                                  .write_timeout = h.read_timeout,
                                  .max_connections = h.max_connections};
  std::vector<asio::io_context*> ios;
  for (auto& io : m.ios) ios.push_back(io.get());
  m.direct = std::make_unique<DirectConnections>(ios, *m.pool, guarded, d.direct_connections, d.direct_pipeline,
                                                 d.call_timeout);
  m.database->attach(*m.direct);
  m.server = std::make_unique<http::Server>(
      std::move(ios), limits, [app = m.app.get()](http::Request r) { return app->handle(std::move(r)); },
      [app = m.app.get()](const http::Request& head) { return app->screen(head); });
  if (tls) m.server->set_tls_context(std::move(tls));
  m.server->on_idle([&m] { m.drain_changed(); });
  m.app->on_outcomes_settled([&m] { m.drain_changed(); });
  auto port = m.server->listen(m.config.listen.address, m.config.listen.port);
  log_event("gateway_started", {{"port", port},
                                {"version", build_version()},
                                {"commit", build_commit()},
                                {"allocator", malloc_library()},
                                {"clock", m.clock.manual() ? "manual" : "database"}});
  for (auto& io : m.ios) {
    m.work.push_back(asio::make_work_guard(*io));
    m.io_threads.emplace_back([&io = *io] { io.run(); });
  }
  m.duties.emplace(asio::make_strand(m.io()));
  m.tick_timer.emplace(*m.duties);
  m.sweep_timer.emplace(*m.duties);
  if (!m.clock.manual()) asio::co_spawn(*m.duties, m.tick_loop(), asio::detached);
  asio::co_spawn(*m.duties, m.sweep_loop(), asio::detached);
  m.reconcile_timer.emplace(*m.duties);
  asio::co_spawn(*m.duties, m.app->reconciler().run(*m.reconcile_timer), asio::detached);
  m.guard_timer.emplace(*m.duties);
  asio::co_spawn(*m.duties, m.guard_loop(), asio::detached);
  m.retention_timer.emplace(*m.duties);
  if (m.config.retention.enabled) asio::co_spawn(*m.duties, m.retention_loop(), asio::detached);
  return port;
}

TlsReload Runtime::reload_tls() {
  auto& m = *impl_;
  const auto& tls = m.config.listen.tls;
  if (!tls) return {false, "listen.tls is not configured: nothing to reload"};
  if (!m.server) return {false, "the gateway is not running"};
  auto loaded = tls::make_server_tls_context(*tls);
  if (!loaded.context) {
    TlsReload failed{false, "listen.tls." + loaded.field + ": " + loaded.error};
    log_event(LogLevel::error, "tls_reload_failed", {{"reason", failed.error}});
    return failed;
  }
  m.server->set_tls_context(std::move(loaded.context));
  log_event("tls_reloaded", {{"certificate", loaded.certificate}});
  return {true, {}};
}

void Runtime::reload(const Config& config, const std::vector<std::string>& changed) {
  if (!impl_->app) return;  // not started: nothing authenticates or forwards yet
  impl_->app->reload(config);
  auto providers = nlohmann::json::array();
  for (const auto& p : config.providers) providers.push_back(p.name);
  // Paths only: a credential's value never reaches the log.
  log_event("config_reloaded", {{"agents", config.agents.size()},
                                {"operators", config.operators.size()},
                                {"providers", std::move(providers)},
                                {"changed", changed}});
}

void Runtime::migrate_only() { impl_->migrate(); }

void Runtime::stop(std::chrono::milliseconds drain) {
  auto& m = *impl_;
  if (!m.server) return;
  m.server->stop_accepting();
  log_event("drain_started", {{"active_requests", m.server->active_requests()},
                              {"pending_outcomes", m.app->pending_outcomes()},
                              {"drain_ms", drain.count()}});
  // The stopping thread waits until the last request and the last outcome
  // record are done (each wakes it: Impl::drain_changed) or `within` passes.
  auto settle = [&m](std::chrono::milliseconds within) {
    std::unique_lock lock(m.drain_mutex);
    m.drained.wait_for(lock, within,
                       [&m] { return m.server->active_requests() == 0 && m.app->pending_outcomes() == 0; });
  };
  settle(drain);
  // Requests still waiting for a provider connection fail as unsent; give
  // their not_executed outcomes a moment to be recorded before the
  // database workers stop. Anything still in flight after that stays
  // in_flight in the ledger, for reconciliation.
  m.upstream->shutdown();
  settle(std::min(drain, std::chrono::milliseconds(2000)));
  // Outcome records still waiting for the database stop here (each logged);
  // the sweep holds their attempts once their forward deadlines pass.
  const auto left_active = m.server->active_requests();
  const auto left_outcomes = m.app->pending_outcomes();
  log_event(left_active + left_outcomes > 0 ? LogLevel::warn : LogLevel::info, "drain_finished",
            {{"active_requests", left_active}, {"pending_outcomes", left_outcomes}});
  m.app->stop();
  m.app->reconciler().stop();
  m.stopping = true;
  // A start() that failed part-way (the port taken) started no duties.
  if (m.duties)
    asio::post(*m.duties, [&m] {
      for (auto* timer : {&m.tick_timer, &m.sweep_timer, &m.reconcile_timer, &m.retention_timer, &m.guard_timer})
        if (*timer) (*timer)->cancel();
    });
  m.pool->stop();
  m.work.clear();
  for (auto& io : m.ios) io->stop();
  for (auto& t : m.io_threads) t.join();
  m.io_threads.clear();
  m.server.reset();
  log_event("gateway_stopped", nlohmann::json::object());
  Logger::process().flush();
}

}  // namespace gw
