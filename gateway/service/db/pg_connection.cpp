#include "service/db/pg_connection.hpp"

#include "store/authority_guard.hpp"
#include "store/transaction.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

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
  if (PQsetnonblocking(c.get(), 1) != 0) throw pqxx::broken_connection(pq_message(PQerrorMessage(c.get())));
  return c;
}

PgConnection::PgConnection(asio::any_io_executor executor, PgConnPtr connection,
                           std::chrono::milliseconds call_timeout)
    : connection_(std::move(connection)),
      socket_(executor, PQsocket(connection_.get())),
      deadline_(executor),
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

asio::awaitable<PgResultPtr> PgConnection::results() {
  // A statement sent alone commits after its rows are sent: an error at
  // commit (a serialization failure found then, a deferred constraint)
  // arrives after them, as a result of its own, and rolled it all back.
  // An error wins over rows, as in libpq's PQexec.
  PgResultPtr kept;
  for (;;) {
    if (!PQconsumeInput(connection_.get())) throw std::runtime_error(pq_message(PQerrorMessage(connection_.get())));
    while (!PQisBusy(connection_.get())) {
      PgResultPtr next(PQgetResult(connection_.get()));
      if (!next) {
        if (!kept) throw std::runtime_error("the server sent no result");
        co_return kept;
      }
      const bool error = PQresultStatus(next.get()) == PGRES_FATAL_ERROR;
      if (!kept || (error && PQresultStatus(kept.get()) != PGRES_FATAL_ERROR)) kept = std::move(next);
    }
    co_await wait(Ready::to_read);
  }
}

void PgConnection::fail(const PGresult* result, const Statement& statement, Sent sent) {
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const std::string message = pq_message(result ? PQresultErrorMessage(result) : PQerrorMessage(connection_.get()));
  if (PQstatus(connection_.get()) != CONNECTION_OK) broken_ = true;
  if (!state) {
    broken_ = true;
    if (sent == Sent::no) throw PgNotSent(message);
    throw AuthorityUnavailable("commit outcome in doubt: " + message);
  }
  switch (classify_sqlstate(state)) {
    case FailureKind::conflict:
      throw Conflict(message);
    case FailureKind::unavailable:
    case FailureKind::retry_on_new_connection:
    case FailureKind::in_doubt:
      broken_ = true;
      throw AuthorityUnavailable(message);
    case FailureKind::bug:
      break;
  }
  throw pqxx::sql_error(message, statement.name, state);
}

asio::awaitable<PgResult> PgConnection::run(const Statement& statement, const PgParams& params) {
  if (broken_ || closed_by_server()) {
    broken_ = true;
    throw PgNotSent("the database closed the connection");
  }
  timed_out_ = false;
  const unsigned call = ++call_;
  deadline_.expires_after(call_timeout_);
  deadline_.async_wait([weak = weak_from_this(), call](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || self->call_ != call) return;
    self->timed_out_ = true;
    self->socket_.cancel();
  });
  struct Disarm {
    PgConnection& c;
    ~Disarm() {
      ++c.call_;
      c.deadline_.cancel();
    }
  } disarm{*this};

  PGconn* c = connection_.get();
  // Preparing commits nothing: a break while at it is "not sent".
  if (!prepared_.contains(statement.name)) {
    PgResultPtr prepared;
    try {
      if (!PQsendPrepare(c, statement.name, statement.sql, 0, nullptr)) throw std::runtime_error("");
      co_await flush();
      prepared = co_await results();
    } catch (const std::runtime_error&) {
      fail(nullptr, statement, Sent::no);
    }
    if (PQresultStatus(prepared.get()) != PGRES_COMMAND_OK) fail(prepared.get(), statement, Sent::no);
    prepared_.emplace(statement.name);
  }
  if (!PQsendQueryPrepared(c, statement.name, params.size(), params.values(), params.lengths(), params.formats(), 0))
    fail(nullptr, statement, Sent::no);
  // From here the statement may have reached the server, and committed.
  PgResultPtr result;
  try {
    co_await flush();
    result = co_await results();
  } catch (const std::runtime_error& e) {
    broken_ = true;
    throw AuthorityUnavailable(std::string("commit outcome in doubt: ") + e.what());
  }
  const auto status = PQresultStatus(result.get());
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) fail(result.get(), statement, Sent::maybe);
  co_return PgResult(std::move(result));
}

}  // namespace gw
