#include "pg_client.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <unistd.h>

#include <stdexcept>

namespace bench {

namespace asio = boost::asio;

namespace {

constexpr auto no_throw = asio::as_tuple(asio::use_awaitable);

std::string message_of(PGconn* c) {
  std::string m = PQerrorMessage(c);
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  return m;
}

PGconn* connect(const std::string& conninfo, const std::vector<PgStatement>& statements) {
  PGconn* c = PQconnectdb(conninfo.c_str());
  if (PQstatus(c) != CONNECTION_OK) {
    const std::string m = message_of(c);
    PQfinish(c);
    throw std::runtime_error("cannot connect to PostgreSQL: " + m);
  }
  for (const PgStatement& s : statements) {
    PGresult* r = PQprepare(c, s.name, s.sql, 0, nullptr);
    const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    const std::string m = ok ? std::string() : message_of(c);
    PQclear(r);
    if (!ok) {
      PQfinish(c);
      throw std::runtime_error(std::string("cannot prepare ") + s.name + ": " + m);
    }
  }
  // The server's notices (a ROLLBACK with nothing to roll back) are not the bench's output.
  PQsetNoticeProcessor(c, [](void*, const char*) {}, nullptr);
  if (PQsetnonblocking(c, 1) != 0) {
    const std::string m = message_of(c);
    PQfinish(c);
    throw std::runtime_error("cannot make the PostgreSQL connection non-blocking: " + m);
  }
  return c;
}

int duplicate(PGconn* c) {
  const int fd = ::dup(PQsocket(c));
  if (fd < 0) {
    PQfinish(c);
    throw std::runtime_error("cannot duplicate the PostgreSQL socket");
  }
  return fd;
}

}  // namespace

PgClient::PgClient(asio::io_context& io, const std::string& conninfo, const std::vector<PgStatement>& statements)
    : connection_(connect(conninfo, statements)), socket_(io, duplicate(connection_)) {}

PgClient::~PgClient() {
  boost::system::error_code ignored;
  socket_.close(ignored);
  PQfinish(connection_);
}

asio::awaitable<PgAnswer> PgClient::run(const char* name, const std::vector<const char*>& params) {
  PgAnswer answer;
  PGconn* c = connection_;
  if (!PQsendQueryPrepared(c, name, static_cast<int>(params.size()), params.data(), nullptr, nullptr, 0)) {
    answer.error = message_of(c);
    co_return answer;
  }
  for (int left; (left = PQflush(c)) != 0;) {
    if (left < 0) {
      answer.error = message_of(c);
      co_return answer;
    }
    auto [ec] = co_await socket_.async_wait(asio::posix::stream_descriptor::wait_write, no_throw);
    if (ec) {
      answer.error = ec.message();
      co_return answer;
    }
  }
  for (;;) {
    if (!PQconsumeInput(c)) {
      answer.error = message_of(c);
      co_return answer;
    }
    while (!PQisBusy(c)) {
      PGresult* r = PQgetResult(c);
      if (!r) co_return answer;
      const ExecStatusType status = PQresultStatus(r);
      if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && answer.ok()) {
        const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        answer.sqlstate = state ? state : "";
        answer.error = PQresultErrorMessage(r);
        if (answer.error.empty()) answer.error = "failed";
      } else if (status == PGRES_TUPLES_OK && PQntuples(r) > 0 && !answer.has_row) {
        answer.has_row = true;
        for (int i = 0; i < PQnfields(r); ++i) answer.row.emplace_back(PQgetvalue(r, 0, i));
      }
      PQclear(r);
    }
    auto [ec] = co_await socket_.async_wait(asio::posix::stream_descriptor::wait_read, no_throw);
    if (ec) {
      answer.error = ec.message();
      co_return answer;
    }
  }
}

}  // namespace bench
