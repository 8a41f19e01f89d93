// Lines formatted in place give the bytes nlohmann's dump gives (integers,
// doubles, null, the request line's key order; strings are checked in
// tests/core/json_text_tests.cpp), and the logger's batched writer loses no
// line and keeps each thread's order.
#include "service/ops/log_line.hpp"
#include "service/ops/logger.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <ctime>
#include <limits>
#include <random>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

using namespace gw;

namespace {

const auto log_line_at = std::chrono::system_clock::time_point(std::chrono::milliseconds(1700000000123));
constexpr std::string_view log_line_head =
    "{\"time\":\"2023-11-14T22:13:20.123Z\",\"level\":\"info\",\"event\":\"request\"";

// A duration as the line said it when it was a double of milliseconds.
double ms(std::chrono::microseconds d) { return static_cast<double>(d.count()) / 1000.0; }

// What the request line was when App::log_request built it as a JSON object.
std::string request_line_as_object(const RequestLine& r) {
  nlohmann::json line{{"request_id", r.request_id},   {"trace_id", r.trace_id}, {"method", r.method},
                      {"route", r.route},             {"code", r.code},         {"status", r.status},
                      {"duration_ms", ms(r.duration)}, {"db_ms", ms(r.db_time)}};
  if (r.tenant && r.task) {
    line["tenant"] = *r.tenant;
    line["task"] = *r.task;
  }
  if (!r.operation.empty()) line["operation"] = r.operation;
  if (r.attempt) line["attempt"] = *r.attempt;
  if (r.epoch) line["epoch"] = *r.epoch;
  if (!r.provider.empty()) line["provider"] = r.provider;
  if (r.forwarded) {
    line["upstream_ms"] = ms(r.forwarded->upstream_time);
    line["provider_status"] =
        r.forwarded->provider_status ? nlohmann::json(*r.forwarded->provider_status) : nlohmann::json(nullptr);
    line["span_id"] = r.forwarded->span_id;
  }
  if (r.parent_span_id) line["parent_span_id"] = *r.parent_span_id;
  if (!r.error.empty()) line["error"] = r.error;
  const auto fields = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return std::string(log_line_head) + "," + fields.substr(1) + "\n";
}

// Everything in the pipe now, without waiting for more.
std::string read_available(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  std::string text;
  char buffer[65536];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
  ::fcntl(fd, F_SETFL, flags);
  return text;
}

// Each line's {"t":thread,"n":i}, in the order written.
std::vector<std::pair<int, int>> logged_numbers(const std::string& text) {
  std::vector<std::pair<int, int>> out;
  for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
    const auto j = nlohmann::json::parse(text.substr(at, nl - at));
    out.emplace_back(j["t"].get<int>(), j["n"].get<int>());
  }
  return out;
}

// Keys longer than the one-append buffer, built at compile time (LogKey takes literals).
template <std::size_t N>
struct Key {
  char text[N + 1];
};
template <std::size_t N>
constexpr Key<N + 2> with_suffix(const Key<N>& key, const char (&suffix)[3]) {
  Key<N + 2> out{};
  for (std::size_t i = 0; i < N; ++i) out.text[i] = key.text[i];
  out.text[N] = suffix[0];
  out.text[N + 1] = suffix[1];
  return out;
}
constexpr Key<130> make_long_key() {
  Key<130> key{};
  for (std::size_t i = 0; i < 130; ++i) key.text[i] = 'n';
  return key;
}
constexpr auto long_key = make_long_key();
constexpr auto long_key_d = with_suffix(long_key, "-d"), long_key_i = with_suffix(long_key, "-i"),
               long_key_t = with_suffix(long_key, "-t"), long_key_u = with_suffix(long_key, "-u"),
               long_key_z = with_suffix(long_key, "-z");

}  // namespace

TEST_CASE("log line: integers, doubles and null as nlohmann prints them") {
  auto line = LogLine(log_line_at, LogLevel::info, "request")
                        .field("a", std::numeric_limits<std::int64_t>::min())
                        .field("b", std::numeric_limits<std::uint64_t>::max())
                        .field("c", -1)
                        .field("d", 0u)
                        .field("e", nullptr)
                        .field("f", std::numeric_limits<int>::max());
  const nlohmann::json fields{{"a", std::numeric_limits<std::int64_t>::min()},
                              {"b", std::numeric_limits<std::uint64_t>::max()},
                              {"c", -1},
                              {"d", 0u},
                              {"e", nullptr},
                              {"f", std::numeric_limits<int>::max()}};
  CHECK(line.finish() == std::string(log_line_head) + "," + fields.dump().substr(1) + "\n");

  std::vector<double> values{0.0,  -0.0,  1.0,     0.001, 0.1,     12.345,   1e15,       1e16,    1e-5,
                             1e-4, 1e300, 5e-324, -2.5,  1.0 / 3, 123456.789, 9007199254740993.0,
                             std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()};
  // What a duration in the log is: whole microseconds over 1000.
  std::mt19937_64 random(30);
  for (int i = 0; i < 2000; ++i)
    values.push_back(static_cast<double>(random() % (std::uint64_t(1) << (i % 50))) / 1000.0);
  for (const double value : values) {
    auto ours = LogLine(log_line_at, LogLevel::info, "request").field("x", value);
    CHECK(ours.finish() == std::string(log_line_head) + ",\"x\":" + nlohmann::json(value).dump() + "}\n");
  }
}

TEST_CASE("log line: the time is UTC with milliseconds, before 1970 too") {
  std::mt19937_64 random(30);
  for (int i = 0; i < 2000; ++i) {
    // From 1900 to 2200.
    const auto ms = static_cast<std::int64_t>(random() % 9'467'280'000'000ULL) - 2'208'988'800'000LL;
    std::time_t seconds = static_cast<std::time_t>(ms / 1000);
    if (ms < 0 && ms % 1000 != 0) --seconds;
    std::tm tm{};
    gmtime_r(&seconds, &tm);
    char expected[64];
    std::snprintf(expected, sizeof expected, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<int>(((ms % 1000) + 1000) % 1000));
    const auto at = std::chrono::system_clock::time_point(std::chrono::milliseconds(ms));
    CHECK(utc_timestamp(at) == expected);
  }
  CHECK(utc_timestamp(std::chrono::system_clock::time_point(std::chrono::milliseconds(-1))) ==
        "1969-12-31T23:59:59.999Z");
  CHECK(utc_timestamp(std::chrono::system_clock::time_point(std::chrono::milliseconds(951782400000))) ==
        "2000-02-29T00:00:00.000Z");
}

TEST_CASE("log line: each thread's last second is reused only within that second") {
  // The date and time to the second are kept per thread; every millisecond
  // of a second, the next second, and a clock stepped back all read right.
  const auto at = [](std::int64_t ms) { return std::chrono::system_clock::time_point(std::chrono::milliseconds(ms)); };
  CHECK(utc_timestamp(at(951782399998)) == "2000-02-28T23:59:59.998Z");
  CHECK(utc_timestamp(at(951782399999)) == "2000-02-28T23:59:59.999Z");
  CHECK(utc_timestamp(at(951782400000)) == "2000-02-29T00:00:00.000Z");
  CHECK(utc_timestamp(at(951782400001)) == "2000-02-29T00:00:00.001Z");
  CHECK(utc_timestamp(at(951782399500)) == "2000-02-28T23:59:59.500Z");
  CHECK(utc_timestamp(at(-1)) == "1969-12-31T23:59:59.999Z");
  CHECK(utc_timestamp(at(-1000)) == "1969-12-31T23:59:59.000Z");
  CHECK(utc_timestamp(at(-1001)) == "1969-12-31T23:59:58.999Z");
  std::string other_thread;
  std::thread([&] { other_thread = utc_timestamp(at(1700000000123)); }).join();
  CHECK(other_thread == "2023-11-14T22:13:20.123Z");
  CHECK(utc_timestamp(at(-1001)) == "1969-12-31T23:59:58.999Z");
}

namespace {

// What every request's line has, and nothing more.
RequestLine minimal_request_line() {
  return {.request_id = "0123456789ab",
          .trace_id = "4bf92f3577b34da6a3ce929d0e0e4736",
          .method = "GET",
          .route = "unmatched",
          .code = "not_found",
          .status = 404,
          .duration = std::chrono::microseconds(12)};
}

}  // namespace

TEST_CASE("log line: a recycled buffer gives the same line, whatever it held") {
  const auto line = minimal_request_line();
  const auto fresh = request_line(log_line_at, LogLevel::info, line);
  std::string buffer(1000, 'x');
  buffer = request_line(std::move(buffer), log_line_at, LogLevel::info, line);
  CHECK(buffer == fresh);
  const auto* storage = buffer.data();
  buffer = request_line(std::move(buffer), log_line_at, LogLevel::info, line);
  CHECK(buffer == fresh);
  CHECK(buffer.data() == storage);  // the same storage, not a new allocation
}

TEST_CASE("log line: the request line has the bytes of the JSON object it replaced") {
  const RequestLine minimal = minimal_request_line();
  CHECK(request_line(log_line_at, LogLevel::info, minimal) == request_line_as_object(minimal));

  RequestLine full = minimal;
  full.route = "proxy";
  full.code = "committed";
  full.status = 201;
  full.duration = std::chrono::microseconds(12345);
  full.db_time = std::chrono::milliseconds(3);
  full.tenant = "tenant-a";
  full.task = "task-1";
  full.operation = "op-\"quoted\"";
  full.provider = "booking";
  full.error = "bad \xff byte\nand a newline";
  full.attempt = 2;
  full.epoch = std::numeric_limits<std::int64_t>::max();
  full.forwarded = RequestLine::Forwarded{.upstream_time = std::chrono::microseconds(7500), .provider_status = 201u, .span_id = "00f067aa0ba902b7"};
  full.parent_span_id = "b7ad6b7169203331";
  CHECK(request_line(log_line_at, LogLevel::info, full) == request_line_as_object(full));

  RequestLine no_reply = full;
  no_reply.forwarded->provider_status.reset();
  no_reply.parent_span_id = "";
  no_reply.attempt = -1;
  no_reply.epoch = 0;
  CHECK(request_line(log_line_at, LogLevel::info, no_reply) == request_line_as_object(no_reply));

  // A tenant without a task says neither.
  RequestLine half = minimal;
  half.tenant = "tenant-a";
  CHECK(request_line(log_line_at, LogLevel::info, half) == request_line_as_object(half));
}

TEST_CASE("log line: durations are the milliseconds nlohmann prints for us / 1000.0, written from the integer") {
  // Whole microseconds below 10^15 are written digit by digit; beyond, as the double.
  std::vector<std::int64_t> values{0,       1,        9,         10,        99,         100,         999,
                                   1000,    1001,     1010,      1100,      12345,      3000000,     -1,
                                   -1500,   -1000,    999'999'999'999'999,  -999'999'999'999'999,
                                   1'000'000'000'000'000,  -1'000'000'000'000'000,
                                   std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()};
  std::mt19937_64 random(30);
  for (int i = 0; i < 20000; ++i) {
    const auto magnitude = static_cast<std::int64_t>(random() % (std::uint64_t(1) << (i % 51)));
    values.push_back(i % 7 == 0 ? -magnitude : magnitude);
  }
  for (const std::int64_t us : values) {
    CAPTURE(us);
    auto ours = LogLine(log_line_at, LogLevel::info, "request").field("x", std::chrono::microseconds(us)).finish();
    const double as_double = static_cast<double>(us) / 1000.0;
    CHECK(ours == std::string(log_line_head) + ",\"x\":" + nlohmann::json(as_double).dump() + "}\n");
    // And a reader gets that very double back.
    CHECK(nlohmann::json::parse(ours)["x"].get<double>() == as_double);
  }
}

TEST_CASE("log line: a field is the same whether it fits the short path or not") {
  // Short plain values are written in one piece with their name; a long one,
  // or one that needs an escape, piece by piece. Both give dump's bytes.
  // (A name that would need an escape does not compile: LogKey.)
  const std::string long_value(300, 'v');
  for (const std::string& value : {std::string(), std::string("plain"), long_value, std::string("tab\there"),
                                   std::string(119, 'x'), std::string(120, 'x'), std::string(122, 'x'), std::string(123, 'x'),
                                   std::string("caf\xc3\xa9"), std::string("bad \xff")}) {
    CAPTURE(value);
    nlohmann::json expected{{"a-long-name-for-a-field-to-push-it-past-the-room", value},
                            {"k-d", 1.5},
                            {"k-i", -42},
                            {"k-s", value},
                            {"k-u", 42u},
                            {"k-z", nullptr}};
    auto line = LogLine(log_line_at, LogLevel::info, "request")
                    .field("a-long-name-for-a-field-to-push-it-past-the-room", value)
                    .field("k-d", 1.5)
                    .field("k-i", -42)
                    .field("k-s", value)
                    .field("k-u", 42u)
                    .field("k-z", nullptr);
    const auto fields = expected.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    CHECK(line.finish() == std::string(log_line_head) + "," + fields.substr(1) + "\n");
  }

  // Numbers and null past the room too: a key too long for it takes the long way.
  const std::string long_name(long_key.text);
  REQUIRE(long_name.size() + 6 > 128);
  nlohmann::json expected{{long_name + "-d", 1.5}, {long_name + "-i", -42}, {long_name + "-u", 42u},
                          {long_name + "-t", 12.5}, {long_name + "-z", nullptr}};
  auto line = LogLine(log_line_at, LogLevel::info, "request")
                  .field(long_key_d.text, 1.5)
                  .field(long_key_i.text, -42)
                  .field(long_key_t.text, std::chrono::microseconds(12500))
                  .field(long_key_u.text, 42u)
                  .field(long_key_z.text, nullptr);
  CHECK(line.finish() == std::string(log_line_head) + "," + expected.dump().substr(1) + "\n");
}

TEST_CASE("logger: lines from two threads all arrive in each thread's order, and flush waits for them") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  // Room for every line, so the writer never blocks on a pipe nobody reads yet.
  REQUIRE(::fcntl(fds[1], F_SETPIPE_SZ, 1 << 20) >= (1 << 20));
  constexpr int per_thread = 3000;
  auto write_lines = [](Logger& logger, int thread, int from, int to) {
    for (int n = from; n < to; ++n) {
      if (n % 2 == 0)
        logger.write(LogLevel::info, "line", {{"t", thread}, {"n", n}});
      else
        logger.write_line(LogLevel::info, LogLine(std::chrono::system_clock::now(), LogLevel::info, "line")
                                              .field("n", n)
                                              .field("t", thread)
                                              .finish());
    }
  };
  auto check_order = [](const std::vector<std::pair<int, int>>& seen, int from, int to) {
    std::vector<int> next{from, from};
    bool in_order = true;
    for (const auto& [thread, n] : seen) {
      in_order = in_order && n == next[static_cast<std::size_t>(thread)];
      ++next[static_cast<std::size_t>(thread)];
    }
    CHECK(in_order);
    CHECK(next == std::vector<int>{to, to});
  };
  {
    Logger logger(fds[1], 4 * per_thread);
    std::thread a(write_lines, std::ref(logger), 0, 0, per_thread), b(write_lines, std::ref(logger), 1, 0, per_thread);
    a.join();
    b.join();
    logger.flush();
    check_order(logged_numbers(read_available(fds[0])), 0, per_thread);
    CHECK(logger.dropped() == 0);

    // A line on its own is written without a flush, after at most the gathering time.
    write_lines(logger, 0, per_thread, per_thread + 1);
    pollfd readable{fds[0], POLLIN, 0};
    REQUIRE(::poll(&readable, 1, 5000) == 1);
    logger.flush();
    CHECK(logged_numbers(read_available(fds[0])).size() == 1);

    // Queued and not flushed: the destructor writes them.
    std::thread c(write_lines, std::ref(logger), 0, 0, per_thread), d(write_lines, std::ref(logger), 1, 0, per_thread);
    c.join();
    d.join();
  }
  ::close(fds[1]);
  check_order(logged_numbers(read_available(fds[0])), 0, per_thread);
  ::close(fds[0]);
}
