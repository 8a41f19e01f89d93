// Which requests leave a log line and at which level, the shape of a line,
// and the logger's queue writing whole lines in order.
#include "service/ops/logger.hpp"
#include "service/ops/request_log.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <thread>

#include <unistd.h>

using namespace gw;

TEST_CASE("request log: levels by code and route") {
  CHECK(request_line_level("proxy", "internal_error") == LogLevel::error);
  CHECK(request_line_level("proxy", "unknown_outcome") == LogLevel::warn);
  CHECK(request_line_level("claim", "authority_unavailable") == LogLevel::warn);
  CHECK(request_line_level("readyz", "authority_unavailable") == LogLevel::warn);
  CHECK(request_line_level("proxy", "provider_unavailable") == LogLevel::warn);
  CHECK(request_line_level("proxy", "committed") == LogLevel::info);
  CHECK(request_line_level("claim", "busy") == LogLevel::info);
  for (auto probe : {"healthz", "readyz", "metrics", "openapi"}) CHECK(request_line_level(probe, "ok") == LogLevel::debug);
}

TEST_CASE("request log: the access switch never hides a warn line, the level hides what is below it") {
  const LogConfig on{LogLevel::info, true}, off{LogLevel::info, false}, errors{LogLevel::error, true},
      debug{LogLevel::debug, true};
  CHECK(request_line_wanted(LogLevel::info, on));
  CHECK_FALSE(request_line_wanted(LogLevel::info, off));
  CHECK(request_line_wanted(LogLevel::warn, off));
  CHECK(request_line_wanted(LogLevel::error, off));
  CHECK_FALSE(request_line_wanted(LogLevel::debug, on));
  CHECK(request_line_wanted(LogLevel::debug, debug));
  CHECK_FALSE(request_line_wanted(LogLevel::warn, errors));
  CHECK(request_line_wanted(LogLevel::error, errors));
}

TEST_CASE("log line: time, level and event first, then the fields, one line of JSON") {
  const auto at = std::chrono::system_clock::time_point(std::chrono::milliseconds(1700000000123));
  CHECK(utc_timestamp(at) == "2023-11-14T22:13:20.123Z");
  auto line = log_line(at, LogLevel::warn, "operation_held",
                       {{"tenant", "t\"1"}, {"event", "forged"}, {"level", "debug"}, {"n", 2}});
  CHECK(line ==
        "{\"time\":\"2023-11-14T22:13:20.123Z\",\"level\":\"warn\",\"event\":\"operation_held\",\"n\":2,"
        "\"tenant\":\"t\\\"1\"}\n");
  CHECK(log_line(at, LogLevel::info, "x", nlohmann::json::object()) ==
        "{\"time\":\"2023-11-14T22:13:20.123Z\",\"level\":\"info\",\"event\":\"x\"}\n");
  // Bytes that are not UTF-8 are replaced, never thrown on.
  auto odd = log_line(at, LogLevel::info, "x", {{"detail", std::string("bad \xff byte")}});
  CHECK(nlohmann::json::parse(odd)["detail"] == "bad \xef\xbf\xbd byte");
}

TEST_CASE("logger: lines below the level are not written, the rest arrive whole and in order") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  {
    Logger logger(fds[1]);
    logger.configure({LogLevel::info, true});
    logger.write(LogLevel::debug, "hidden", {{"n", 0}});
    for (int i = 1; i <= 3; ++i) logger.write(LogLevel::info, "shown", {{"n", i}});
    logger.flush();
  }
  ::close(fds[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
  ::close(fds[0]);
  CHECK(text.find("hidden") == std::string::npos);
  std::vector<int> seen;
  for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1)
    seen.push_back(nlohmann::json::parse(text.substr(at, nl - at))["n"].get<int>());
  CHECK(seen == std::vector<int>{1, 2, 3});
}

TEST_CASE("logger: a batch is full at 256 KiB or at half the queue's lines, whichever comes first") {
  // The request lines of a busy gateway (about 400 bytes): by their bytes.
  CHECK_FALSE(log_batch_full(256 * 1024 - 1, 655, 8192));
  CHECK(log_batch_full(256 * 1024, 656, 8192));
  // Short lines: by their count, before the queue is full and drops them.
  CHECK_FALSE(log_batch_full(4095 * 40, 4095, 8192));
  CHECK(log_batch_full(4096 * 40, 4096, 8192));
  // A small queue is written at half its lines, whatever their size.
  CHECK_FALSE(log_batch_full(100, 31, 64));
  CHECK(log_batch_full(100, 32, 64));
}

TEST_CASE("logger: two threads' floods, several batches' worth, arrive whole, each in its order, none dropped") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::string text;
  // A pipe holds 64 KiB: the reader drains it while the writer writes batches of up to 256 KiB.
  std::thread reader([&] {
    char buffer[65536];
    for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
  });
  constexpr int per_thread = 3000;  // 6,000 lines of about 300 bytes: 1.8 MB, under the queue's 8,192 lines
  std::uint64_t dropped = 0;
  {
    Logger logger(fds[1]);
    logger.configure({LogLevel::info, true});
    const std::string padding(250, 'x');
    auto flood = [&](int thread) {
      for (int i = 0; i < per_thread; ++i)
        logger.write(LogLevel::info, "flood", {{"thread", thread}, {"n", i}, {"padding", padding}});
    };
    std::thread a(flood, 0), b(flood, 1);
    a.join();
    b.join();
    logger.flush();
    dropped = logger.dropped();
  }
  ::close(fds[1]);
  reader.join();
  ::close(fds[0]);
  CHECK(dropped == 0);
  std::array<int, 2> next{0, 0};
  int lines = 0;
  bool whole = true, ordered = true;
  for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
    const auto line = nlohmann::json::parse(text.substr(at, nl - at), nullptr, false);
    if (line.is_discarded() || line.value("event", "") != "flood") {
      whole = false;
      continue;
    }
    auto& expected = next.at(line["thread"].get<std::size_t>());
    ordered = ordered && line["n"].get<int>() == expected;
    ++expected;
    ++lines;
  }
  CHECK(whole);
  CHECK(ordered);
  CHECK(lines == 2 * per_thread);
  CHECK((!text.empty() && text.back() == '\n'));
}
