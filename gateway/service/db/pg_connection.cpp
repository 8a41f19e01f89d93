#include "service/db/pg_connection.hpp"

#include "store/authority_guard.hpp"
#include "store/transaction.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace gw {
namespace {

std::string pq_message(const char* message) {
  std::string s = message ? message : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

PgConnPtr open_pg_connection(const SessionOptions& options, std::uint64_t* admitted) {
  PgConnPtr c(PQconnectdb(connection_string(options).c_str()));
  if (!c || PQstatus(c.get()) != CONNECTION_OK)
    throw pqxx::broken_connection(c ? pq_message(PQerrorMessage(c.get())) : "out of memory");
  PgResultPtr setup(PQexec(c.get(), session_setup_sql(options).c_str()));
  if (PQresultStatus(setup.get()) != PGRES_COMMAND_OK)
    throw pqxx::broken_connection("session setup failed: " + pq_message(PQerrorMessage(c.get())));
  // Checked before it is lent to any decision, while it still blocks.
  if (options.guard) {
    const auto generation = options.guard->admit(c.get());
    if (admitted) *admitted = generation;
  }
  // A notice is of no use here, and libpq's default prints it to stderr.
  PQsetNoticeProcessor(c.get(), [](void*, const char*) {}, nullptr);
  if (PQsetnonblocking(c.get(), 1) != 0 || PQenterPipelineMode(c.get()) != 1)
    throw pqxx::broken_connection(pq_message(PQerrorMessage(c.get())));
  return c;
}

PgConnection::PgConnection(asio::any_io_executor executor, PgConnPtr connection,
                           std::chrono::milliseconds call_timeout)
    : connection_(std::move(connection)),
      socket_(executor, PQsocket(connection_.get())),
      // The oldest call's deadline. Only stored while it is later than the
      // one the timer waits for, so a decision neither re-arms the timer
      // nor queues a cancellation (deadline.hpp).
      deadline_(executor,
                [this] {
                  timed_out_ = true;
                  socket_.cancel();
                }),
      call_timeout_(call_timeout) {}

PgConnection::~PgConnection() {
  // libpq owns the socket and closes it (PQfinish): Asio only lets go.
  socket_.release();
}

bool PgConnection::closed_by_server() const {
  return PQstatus(connection_.get()) != CONNECTION_OK || spoke_while_idle(PQsocket(connection_.get()));
}

asio::awaitable<void> PgConnection::wait(Ready ready) {
  auto [ec] = co_await socket_.async_wait(
      ready == Ready::to_write ? asio::posix::descriptor_base::wait_write : asio::posix::descriptor_base::wait_read,
      asio::as_tuple(asio::use_awaitable));
  if (timed_out_) throw std::runtime_error("no answer within " + std::to_string(call_timeout_.count()) + " ms");
  if (ec) throw std::runtime_error(ec.message());
}

asio::awaitable<void> PgConnection::flush() {
  // Small statements leave in one write; a larger one waits for room.
  for (;;) {
    const int left = PQflush(connection_.get());
    if (left == 0) co_return;
    if (left < 0) throw std::runtime_error(pq_message(PQerrorMessage(connection_.get())));
    co_await wait(Ready::to_write);
  }
}

asio::awaitable<PgResultPtr> PgConnection::results(bool prepare, bool* prepare_failed) {
  // Each call is its statement (after its Prepare, at first use) and a
  // Sync, which commits it: an error at commit (a serialization failure
  // found then, a deferred constraint) arrives after its rows, as a result
  // of its own, and rolled it all back. An error wins over rows, as in
  // libpq's PQexec; a statement skipped after a failed Prepare is no answer.
  //
  // What libpq already holds is parsed first, and the socket is read only
  // once it is readable: read right after sending, it would nearly always
  // find nothing (one system call more per decision, docs/performance.md).
  // The wait re-arms the descriptor (epoll_ctl), so an answer that came
  // meanwhile is reported at once.
  PgResultPtr kept;
  bool ended = false;  // one statement's results ended (libpq's NULL); two in a row: nothing more is coming
  for (;;) {
    while (!PQisBusy(connection_.get())) {
      PgResultPtr next(PQgetResult(connection_.get()));
      if (!next) {
        if (ended) throw std::runtime_error("the server sent no end of the statement");
        ended = true;
        continue;
      }
      ended = false;
      const auto status = PQresultStatus(next.get());
      if (status == PGRES_PIPELINE_SYNC) {
        if (!kept) throw std::runtime_error("the server sent no result");
        co_return kept;
      }
      if (status == PGRES_PIPELINE_ABORTED) continue;
      if (prepare && !kept && status == PGRES_FATAL_ERROR) *prepare_failed = true;
      // The Prepare's answer, then the statement's, then a commit's error.
      if (!kept || PQresultStatus(kept.get()) != PGRES_FATAL_ERROR) kept = std::move(next);
    }
    co_await wait(Ready::to_read);
    if (!PQconsumeInput(connection_.get())) throw std::runtime_error(pq_message(PQerrorMessage(connection_.get())));
  }
}

std::chrono::steady_clock::time_point PgConnection::oldest_sent() const {
  return calls_.empty() ? std::chrono::steady_clock::time_point{} : calls_.front()->sent;
}

asio::awaitable<void> PgConnection::await_turn(Call& call) {
  // One coroutine per thread runs at a time: nothing changes between the
  // check and the wait, and done() cancels the timer of whoever is next.
  if (!lost_ && calls_.front() != &call) {
    boost::system::error_code ignored;
    co_await call.turn.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  }
  if (lost_) throw std::runtime_error("the connection broke before the answer");
  timed_out_ = false;
  deadline_.expires_after(call_timeout_);
}

void PgConnection::done(Call& call) {
  if (!calls_.empty() && calls_.front() == &call) deadline_.expires_never();
  std::erase(calls_, &call);
  // After a break every call still waiting learns it now.
  if (lost_)
    for (auto* waiting : calls_) waiting->turn.cancel();
  else if (!calls_.empty())
    calls_.front()->turn.cancel();
}

void PgConnection::fail(const PGresult* result, const Statement& statement, Sent sent) {
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const std::string message = pq_message(result ? PQresultErrorMessage(result) : PQerrorMessage(connection_.get()));
  if (PQstatus(connection_.get()) != CONNECTION_OK) broken_ = lost_ = true;
  if (!state) {
    broken_ = lost_ = true;
    if (sent == Sent::no) throw PgNotSent(message);
    throw AuthorityUnavailable("commit outcome in doubt: " + message);
  }
  switch (classify_sqlstate(state)) {
    case FailureKind::conflict:
      throw Conflict(message);
    case FailureKind::unavailable:
    case FailureKind::retry_on_new_connection:
    case FailureKind::in_doubt:
      broken_ = true;  // the calls behind it still read their answers: each ended at its Sync
      throw AuthorityUnavailable(message);
    case FailureKind::bug:
      break;
  }
  throw pqxx::sql_error(message, statement.name, state);
}

asio::awaitable<PgResult> PgConnection::run(const Statement& statement, const PgParams& params) {
  // Looked at only while nothing is on its way: an answer may be coming.
  if (broken_ || (calls_.empty() && closed_by_server())) {
    broken_ = true;
    throw PgNotSent("the database closed the connection");
  }
  PGconn* c = connection_.get();
  // Prepared with its first use, in the same Sync: a failed Prepare skips
  // the statement. Counted as prepared from now, so a call sent behind this
  // one does not prepare it again; forgotten if the Prepare fails.
  const bool prepare = !prepared_.contains(statement.name);
  if (prepare) {
    if (!PQsendPrepare(c, statement.name, statement.sql, 0, nullptr)) fail(nullptr, statement, Sent::no);
    prepared_.emplace(statement.name);
  }
  if (!PQsendQueryPrepared(c, statement.name, params.size(), params.values(), params.lengths(), params.formats(), 0))
    fail(nullptr, statement, Sent::no);
  // From here the statement may reach the server, and commit.
  if (!PQpipelineSync(c)) fail(nullptr, statement, Sent::maybe);

  Call call{asio::steady_timer(socket_.get_executor(), asio::steady_timer::time_point::max()),
            std::chrono::steady_clock::now()};
  calls_.push_back(&call);
  struct Leave {
    PgConnection& c;
    Call& call;
    ~Leave() { c.done(call); }
  } leave{*this, call};
  PgResultPtr result;
  try {
    co_await flush();
    co_await await_turn(call);
    bool prepare_failed = false;
    result = co_await results(prepare, &prepare_failed);
    if (prepare_failed) prepared_.erase(statement.name);
  } catch (const std::runtime_error& e) {
    broken_ = lost_ = true;
    throw AuthorityUnavailable(std::string("commit outcome in doubt: ") + e.what());
  }
  const auto status = PQresultStatus(result.get());
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) fail(result.get(), statement, Sent::maybe);
  co_return PgResult(std::move(result));
}

}  // namespace gw
