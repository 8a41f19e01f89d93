// What the client tests share: an io_context run by one thread with a Client
// on it, an endpoint for a scripted server, and checks of a Result. Names
// here are shared by every file of upstream_tests (a unity build), so they
// live in the header once.
#pragma once

#include "upstream/client.hpp"

#include "test_server.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/thread_pool.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace gw::upstream::test {

using namespace std::chrono_literals;

inline Result wait(std::future<Result> future) {
  REQUIRE(future.wait_for(60s) == std::future_status::ready);
  return future.get();
}

// Polls for a condition the test needs before its next step (the server
// noticed a close, a connection is in flight); fails after a generous bound.
template <class Condition>
void eventually(Condition condition) {
  for (int i = 0; i < 3000 && !condition(); ++i) std::this_thread::sleep_for(10ms);
  REQUIRE(condition());
}

// With GW_UPSTREAM_AWAITED set (ctest runs the suite a second time so), the
// harnesses send through Client::exchange, awaited by a coroutine on the
// io_context, instead of Client::send: both ways pass the same tests.
inline bool awaited() {
  static const bool set = std::getenv("GW_UPSTREAM_AWAITED") != nullptr;
  return set;
}

// Client::exchange, awaited on `on`; done(result) on `on`'s thread.
template <class Done>
void exchange_on(Client& client, net::io_context& on, const Endpoint& endpoint, Request request, Done done) {
  net::co_spawn(on, client.exchange(endpoint, std::move(request)),
                [done = std::move(done)](std::exception_ptr error, Result r) mutable {
                  REQUIRE_FALSE(error);
                  done(std::move(r));
                });
}

// An io_context run by one thread, as the client requires, and a Client on
// it; the test thread sends from outside it.
class Harness {
 public:
  Harness() : work_(net::make_work_guard(io_)) {
    thread_ = std::thread([this] { io_.run(); });
    client_.emplace(io_);
  }
  ~Harness() {
    client_.reset();  // shuts down; what is in flight runs to its deadline
    work_.reset();
    thread_.join();
  }
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  Client& client() { return *client_; }

  std::future<Result> start(const Endpoint& endpoint, Request request) {
    auto promise = std::make_shared<std::promise<Result>>();
    auto future = promise->get_future();
    // set_value throws if done() ever ran twice.
    auto done = [promise](Result r) { promise->set_value(std::move(r)); };
    if (awaited())
      exchange_on(*client_, io_, endpoint, std::move(request), std::move(done));
    else
      client_->send(endpoint, std::move(request), std::move(done));
    return future;
  }
  Result send(const Endpoint& endpoint, Request request) { return wait(start(endpoint, std::move(request))); }

 private:
  net::io_context io_;
  net::executor_work_guard<net::io_context::executor_type> work_;
  std::thread thread_;
  std::optional<Client> client_;
};

// Two io_contexts (a_, b_), each run by one thread, as the gateway runs its I/O
// threads; the client's own housekeeping runs on a third.
class PerThreadHarness {
 public:
  PerThreadHarness() {
    for (auto* io : {&home_, &a_, &b_}) {
      work_.push_back(net::make_work_guard(*io));
      threads_.emplace_back([io] { io->run(); });
    }
    client_.emplace(home_);
  }
  ~PerThreadHarness() {
    client_.reset();
    work_.clear();
    for (auto& t : threads_) t.join();
  }

  // Sends on `on`; the future holds the result and whether done() ran on
  // `on`'s own thread.
  std::future<std::pair<Result, bool>> start(net::io_context& on, const Endpoint& e, Request request) {
    auto promise = std::make_shared<std::promise<std::pair<Result, bool>>>();
    auto future = promise->get_future();
    auto done = [promise, &on](Result r) {
      promise->set_value({std::move(r), on.get_executor().running_in_this_thread()});
    };
    if (awaited())
      exchange_on(*client_, on, e, std::move(request), std::move(done));
    else
      client_->send(on, e, std::move(request), std::move(done));
    return future;
  }
  std::pair<Result, bool> send(net::io_context& on, const Endpoint& e, Request request) {
    auto future = start(on, e, std::move(request));
    REQUIRE(future.wait_for(60s) == std::future_status::ready);
    return future.get();
  }

  net::io_context home_{1}, a_{1}, b_{1};

 private:
  std::vector<net::executor_work_guard<net::io_context::executor_type>> work_;
  std::vector<std::thread> threads_;
  std::optional<Client> client_;
};

inline Endpoint local(const TestServer& server) {
  Endpoint e;
  e.name = "provider";
  e.host = "127.0.0.1";
  e.port = server.port();
  e.connect_timeout = 10s;
  e.request_timeout = 10s;
  e.queue_timeout = 10s;
  e.idle_retire = 30s;
  return e;
}

inline Request get(std::string target = "/") { return Request{"GET", std::move(target), {}, {}}; }

// Answers every request on the connection with `response`.
inline TestServer::script answer_all(std::string response) {
  return [response](ServerSession& s) {
    while (s.read_request()) s.write(response);
  };
}

inline void check_success(const Result& r, unsigned status) {
  CAPTURE(r.detail);
  REQUIRE(r.failure == Failure::none);
  REQUIRE(r.response.has_value());
  CHECK(r.response->status == status);
  CHECK(r.request_bytes_sent);
}

inline void check_failure(const Result& r, Failure failure, bool sent) {
  CAPTURE(r.detail);
  CHECK(to_string(r.failure) == to_string(failure));
  CHECK(r.request_bytes_sent == sent);
  CHECK_FALSE(r.response.has_value());
  CHECK_FALSE(r.detail.empty());
}

// Holds the scripted provider's exchanges until open(); opened at the latest
// when `opener` leaves scope, so a failed check never leaves the server's
// threads waiting (declare the opener after the server).
struct Gate {
  std::promise<void> promise;
  std::shared_future<void> future = promise.get_future().share();
  bool opened = false;
  void open() {
    if (!opened) promise.set_value();
    opened = true;
  }
  struct Opener {
    Gate& g;
    ~Opener() { g.open(); }
  };
};

// Requests that say whose they are: the scripted providers echo X-Tag into
// the reply, so a caller can tell its own reply from anybody else's.
inline Request tagged(std::string method, std::string tag, std::string partition) {
  Request r{std::move(method), "/", {{"X-Tag", tag}}, {}};
  r.partition = std::move(partition);
  return r;
}

inline std::string tag_of(const RawRequest& request) {
  auto tags = request.values("X-Tag");
  return tags.empty() ? std::string() : tags.front();
}

// The reply that belongs to `tag`: the tag in a header and in the body.
inline std::string tagged_reply(const std::string& tag) {
  return reply(200, "tag:" + tag, "X-Tag: " + tag + "\r\n");
}

}  // namespace gw::upstream::test
