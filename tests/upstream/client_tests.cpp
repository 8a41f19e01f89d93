// Upstream client against real sockets: scripted servers on 127.0.0.1 play
// the provider (answering, stalling, closing, resetting, TLS) and each test
// checks the failure class and, above all, request_bytes_sent. Deadlines are
// generous and only "it finished" is asserted about time.
#include "client_harness.hpp"
#include "tls_files.hpp"

namespace gw::upstream::test {
namespace {

std::string unused_port() {
  net::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
  return std::to_string(acceptor.local_endpoint().port());
}

TEST_CASE("success: exact request on the wire, exact response back, one connection for two requests") {
  std::mutex mutex;
  std::vector<RawRequest> seen;
  const std::string body("a\0b\r\n\xff", 6);
  TestServer server([&](ServerSession& s) {
    while (auto request = s.read_request()) {
      {
        std::lock_guard lock(mutex);
        seen.push_back(*request);
      }
      s.write(reply(200, body, "X-First: 1\r\nx-lower-Case: two\r\n"));
    }
  });
  Harness h;
  auto e = local(server);

  Request post{"POST", "/v1/items?x=1", {{"X-Trace", "t1"}, {"Content-Length", "999"}, {"Transfer-Encoding", "chunked"}},
               "hello"};
  Result first = h.send(e, post);
  check_success(first, 200);
  CHECK(first.detail.empty());
  CHECK(first.response->body == body);
  REQUIRE(first.response->headers.size() == 3);
  CHECK(first.response->headers[0].name == "X-First");
  CHECK(first.response->headers[0].value == "1");
  CHECK(first.response->headers[1].name == "x-lower-Case");
  CHECK(first.response->headers[1].value == "two");
  CHECK(first.response->headers[2].name == "Content-Length");
  CHECK(first.response->headers[2].value == "6");

  Request second = get("/two");
  second.headers.push_back({"Host", "custom.example"});
  check_success(h.send(e, second), 200);

  CHECK(server.connections() == 1);
  std::lock_guard lock(mutex);
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].method == "POST");
  CHECK(seen[0].target == "/v1/items?x=1");
  CHECK(seen[0].values("Host") == std::vector<std::string>{"127.0.0.1:" + server.port()});
  CHECK(seen[0].values("Content-Length") == std::vector<std::string>{"5"});
  CHECK(seen[0].values("Transfer-Encoding").empty());
  CHECK(seen[0].values("X-Trace") == std::vector<std::string>{"t1"});
  CHECK(seen[0].body == "hello");
  CHECK(seen[1].method == "GET");
  CHECK(seen[1].values("Host") == std::vector<std::string>{"custom.example"});
  CHECK(seen[1].values("Content-Length").empty());
}

TEST_CASE("connection refused is connect_failed, nothing sent") {
  Harness h;
  Endpoint e;
  e.name = "closed";
  e.host = "127.0.0.1";
  e.port = unused_port();
  check_failure(h.send(e, get()), Failure::connect_failed, false);
}

TEST_CASE("an unresolvable host is connect_failed, nothing sent") {
  Harness h;
  Endpoint e;
  e.name = "nowhere";
  e.host = "nonexistent.invalid";
  e.port = "80";
  e.connect_timeout = 3s;
  check_failure(h.send(e, get()), Failure::connect_failed, false);
}

TEST_CASE("a provider that never replies: failed_after_send at request_timeout") {
  TestServer server([](ServerSession& s) {
    if (s.read_request()) s.wait_for_eof();
  });
  Harness h;
  auto e = local(server);
  e.request_timeout = 300ms;
  check_failure(h.send(e, Request{"POST", "/pay", {}, "{}"}), Failure::failed_after_send, true);
  eventually([&] { return server.finished_scripts() == 1; });  // the client closed it
}

TEST_CASE("a provider that reads the request and closes: failed_after_send") {
  TestServer server([](ServerSession& s) {
    if (s.read_request()) s.close();
  });
  Harness h;
  check_failure(h.send(local(server), Request{"POST", "/pay", {}, "{}"}), Failure::failed_after_send, true);
}

TEST_CASE("a truncated or malformed response is failed_after_send") {
  std::string response;
  SUBCASE("body cut short") { response = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc"; }
  SUBCASE("not HTTP") { response = "hello there\r\n\r\n"; }
  SUBCASE("headers cut short") { response = "HTTP/1.1 200 OK\r\nContent-Le"; }
  TestServer server([&](ServerSession& s) {
    if (s.read_request()) {
      s.write(response);
      s.close();
    }
  });
  Harness h;
  check_failure(h.send(local(server), get()), Failure::failed_after_send, true);
}

TEST_CASE("a reset while the request body is being written is failed_after_send") {
  TestServer server([](ServerSession& s) {
    if (s.read_head()) s.reset();
  });
  Harness h;
  // Far more than loopback buffers hold, so the write is still going when
  // the reset arrives.
  Request big{"PUT", "/blob", {}, std::string(64 << 20, 'x')};
  check_failure(h.send(local(server), std::move(big)), Failure::failed_after_send, true);
}

TEST_CASE("an idle pooled connection the provider closed is detected and replaced") {
  std::promise<void> first_done;
  std::shared_future<void> go = first_done.get_future().share();
  std::atomic<int> closed{0};
  bool abortive = false;
  SUBCASE("FIN") { abortive = false; }
  SUBCASE("RST") { abortive = true; }
  TestServer server([&](ServerSession& s) {
    if (!s.read_request()) return;
    s.write(reply(200, "ok"));
    go.wait();  // close only once the client has read the reply
    abortive ? s.reset() : s.close();
    ++closed;
  });
  Harness h;
  auto e = local(server);
  check_success(h.send(e, get()), 200);
  first_done.set_value();
  eventually([&] { return closed.load() == 1; });
  std::this_thread::sleep_for(50ms);  // let the FIN/RST cross loopback
  // Without the check before reuse this would be written on a dead
  // connection and come back as failed_after_send.
  check_success(h.send(e, get()), 200);
  CHECK(server.connections() == 2);
}

TEST_CASE("a stale idle connection gives its slot back: with one connection allowed, every later request goes out") {
  // Each connection serves one request and is then closed by the provider,
  // once the client has read the reply: every reuse finds a closed idle
  // connection, gives it up and must return its slot before opening a new
  // one. A slot kept would leave the next request waiting for the only one.
  std::atomic<int> closed{0};
  TestServer server([&](ServerSession& s) {
    if (!s.read_request()) return;
    s.write(reply(200, "ok"));
    s.close();
    ++closed;
  });
  Harness h;
  auto e = local(server);
  e.max_connections = 1;
  e.queue_timeout = 2s;  // a kept slot fails the request as queue_timeout
  for (int i = 1; i <= 4; ++i) {
    CAPTURE(i);
    check_success(h.send(e, get()), 200);
    eventually([&] { return closed.load() == i; });
    std::this_thread::sleep_for(50ms);  // let the FIN cross loopback
  }
  CHECK(server.connections() == 4);
}

TEST_CASE("Client::exchange from a coroutine whose executor is no io_context's: sent on the client's own") {
  TestServer server(answer_all(reply(200, "ok")));
  Harness h;
  auto e = local(server);
  net::thread_pool pool(1);
  std::promise<std::pair<Result, bool>> promise;
  auto future = promise.get_future();
  net::co_spawn(pool, h.client().exchange(e, get()), [&](std::exception_ptr error, Result r) {
    REQUIRE_FALSE(error);
    // Resumed on its own executor, not on the client's io_context.
    promise.set_value({std::move(r), pool.get_executor().running_in_this_thread()});
  });
  REQUIRE(future.wait_for(60s) == std::future_status::ready);
  auto [result, on_own_executor] = future.get();
  check_success(result, 200);
  CHECK(on_own_executor);
  pool.join();
}

Request resendable_get() {
  Request r = get();
  r.resend_if_stale = true;
  return r;
}

TEST_CASE("resend_if_stale: a kept-alive connection the provider closed is written without a peek, then resent once on a new one") {
  std::promise<void> first_done;
  std::shared_future<void> go = first_done.get_future().share();
  std::atomic<int> requests{0};
  enum class How { fin_while_idle, rst_while_idle, fin_after_reading } way = How::fin_while_idle;
  SUBCASE("FIN while idle") { way = How::fin_while_idle; }
  SUBCASE("RST while idle") { way = How::rst_while_idle; }
  SUBCASE("the request read, then FIN with no answer") { way = How::fin_after_reading; }
  TestServer server([&](ServerSession& s) {
    if (s.index() > 0) return answer_all(reply(200, "again"))(s);
    if (!s.read_request()) return;
    ++requests;
    s.write(reply(200, "ok"));
    if (way == How::fin_after_reading) {
      if (s.read_request()) ++requests;  // the second request reached the provider
      return s.close();
    }
    go.wait();  // close only once the client has read the reply
    way == How::rst_while_idle ? s.reset() : s.close();
  });
  Harness h;
  auto e = local(server);
  check_success(h.send(e, resendable_get()), 200);
  first_done.set_value();
  if (way != How::fin_after_reading) {
    eventually([&] { return server.finished_scripts() == 1; });
    std::this_thread::sleep_for(50ms);  // let the FIN/RST cross loopback
  }
  auto r = h.send(e, resendable_get());
  check_success(r, 200);
  CHECK(r.response->body == "again");
  CHECK(server.connections() == 2);
  if (way == How::fin_after_reading) CHECK(requests == 2);
}

TEST_CASE("resend_if_stale: never after a byte of the response, on a new connection, after the deadline, or twice") {
  std::string what;
  SUBCASE("part of a response came") { what = "partial"; }
  SUBCASE("the connection was new") { what = "fresh"; }
  SUBCASE("request_timeout passed") { what = "timeout"; }
  SUBCASE("the new connection fails too") { what = "twice"; }
  TestServer server([&](ServerSession& s) {
    if (what == "fresh") {
      if (s.read_request()) s.close();
      return;
    }
    if (s.index() == 0) {
      if (!s.read_request()) return;
      s.write(reply(200, "ok"));
    }
    if (!s.read_request()) return;
    if (what == "partial") s.write("HTTP/1.1 200 OK\r\nContent-Le");
    if (what == "timeout") return s.wait_for_eof();  // never answers; the client's deadline closes
    s.close();
  });
  Harness h;
  auto e = local(server);
  if (what != "fresh") check_success(h.send(e, resendable_get()), 200);
  if (what == "timeout") e.request_timeout = 300ms;
  check_failure(h.send(e, resendable_get()), Failure::failed_after_send, true);
  CHECK(server.connections() == (what == "twice" ? 2 : 1));
}

TEST_CASE("without resend_if_stale a request read and left unanswered on a kept-alive connection is not resent") {
  TestServer server([](ServerSession& s) {
    if (!s.read_request()) return;
    s.write(reply(200, "ok"));
    if (s.read_request()) s.close();
  });
  Harness h;
  auto e = local(server);
  check_success(h.send(e, get()), 200);
  check_failure(h.send(e, get()), Failure::failed_after_send, true);
  CHECK(server.connections() == 1);
}

TEST_CASE("an idle connection older than idle_retire is not reused") {
  TestServer server(answer_all(reply(200, "ok")));
  Harness h;
  auto e = local(server);
  e.idle_retire = 100ms;
  check_success(h.send(e, get()), 200);
  eventually([&] { return server.finished_scripts() == 1; });  // swept and closed by the client
  check_success(h.send(e, get()), 200);
  CHECK(server.connections() == 2);
}

TEST_CASE("max_connections=1: the second request queues, then reuses the connection") {
  TestServer server([](ServerSession& s) {
    while (s.read_request()) {
      std::this_thread::sleep_for(200ms);
      s.write(reply(200, "slow"));
    }
  });
  Harness h;
  auto e = local(server);
  e.max_connections = 1;
  auto a = h.start(e, get("/a"));
  auto b = h.start(e, get("/b"));
  check_success(wait(std::move(a)), 200);
  check_success(wait(std::move(b)), 200);
  CHECK(server.connections() == 1);
}

TEST_CASE("queue_timeout: no slot in time, nothing sent") {
  TestServer server([](ServerSession& s) {
    if (s.read_request()) s.wait_for_eof();
  });
  Harness h;
  auto e = local(server);
  e.max_connections = 1;
  e.queue_timeout = 100ms;
  e.request_timeout = 2s;
  auto a = h.start(e, get("/a"));
  auto b = h.start(e, get("/b"));
  check_failure(wait(std::move(b)), Failure::queue_timeout, false);
  check_failure(wait(std::move(a)), Failure::failed_after_send, true);
  CHECK(server.connections() == 1);
}

// Answers 200 to every request; the first exchange keeps its connection (and
// so the only slot, at max_connections 1) until `released`, after `first_in`.
TestServer::script hold_first(std::promise<void>& first_in, std::shared_future<void> released,
                               std::atomic<int>& seen) {
  return [&first_in, released, &seen](ServerSession& s) {
    while (s.read_request()) {
      if (++seen == 1) {
        first_in.set_value();
        released.wait();
      }
      s.write(reply(200, "ok"));
    }
  };
}

TEST_CASE("max_queued: past the bound a request is refused at once, unsent, while the queued one still runs") {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> first_in;
  std::atomic<int> seen{0};
  TestServer server(hold_first(first_in, released, seen));
  Harness h;
  auto e = local(server);
  e.max_connections = 1;
  e.max_queued = 1;
  e.queue_timeout = 600s;  // far away: a refusal before it can only be the bound
  auto a = h.start(e, get("/a"));
  first_in.get_future().wait();
  auto b = h.start(e, get("/b"));  // queued behind /a
  auto c = h.send(e, get("/c"));   // over the bound
  check_failure(c, Failure::queue_timeout, false);
  CHECK(c.detail.find("queue full") != std::string::npos);
  release.set_value();
  check_success(wait(std::move(a)), 200);
  check_success(wait(std::move(b)), 200);
  CHECK(seen == 2);
}

TEST_CASE("update: a raised max_connections starts queued requests, a lowered one refuses new ones while those in flight finish") {
  Gate held;
  std::atomic<int> seen{0};
  TestServer server([&](ServerSession& s) {
    while (s.read_request()) {
      ++seen;
      held.future.wait();  // every exchange holds its connection until the test lets go
      s.write(reply(200, "ok"));
    }
  });
  Gate::Opener open_at_end{held};
  Harness h;
  auto e = local(server);
  e.max_connections = 1;
  e.max_queued = 1;
  e.queue_timeout = 600s;  // far away: only a limit decides here
  e.generation = 1;
  auto a = h.start(e, get("/a"));
  eventually([&] { return seen == 1; });
  auto b = h.start(e, get("/b"));  // queued behind /a

  auto raised = e;
  raised.max_connections = 2;
  raised.generation = 2;
  h.client().update(raised);  // no new send: the queued one starts on its own
  eventually([&] { return seen == 2; });

  auto lowered = e;
  lowered.max_connections = 1;
  lowered.max_queued = 0;
  lowered.generation = 3;
  h.client().update(lowered);
  auto refused = h.send(lowered, get("/c"));  // two in flight, over the new limit, and no queue
  check_failure(refused, Failure::queue_timeout, false);
  CHECK(refused.detail.find("max_queued 0") != std::string::npos);

  held.open();
  check_success(wait(std::move(a)), 200);  // neither was cut by the change
  check_success(wait(std::move(b)), 200);
  check_success(h.send(lowered, get("/d")), 200);
  CHECK(server.connections() == 2);  // /d took an idle connection: the update closed none
  CHECK(seen == 3);
}

TEST_CASE("update: a send with older settings does not bring the old limits back") {
  Gate held;
  std::atomic<int> seen{0};
  TestServer server([&](ServerSession& s) {
    while (s.read_request()) {
      ++seen;
      held.future.wait();
      s.write(reply(200, "ok"));
    }
  });
  Gate::Opener open_at_end{held};
  Harness h;
  auto old_settings = local(server);
  old_settings.max_connections = 1;
  old_settings.queue_timeout = 600s;
  old_settings.generation = 1;
  auto newer = old_settings;
  newer.max_connections = 2;
  newer.generation = 2;
  h.client().update(newer);  // before any send: the pool is made with these
  // Requests that took the old settings before a reload are sent after it.
  auto a = h.start(old_settings, get("/a"));
  auto b = h.start(old_settings, get("/b"));
  eventually([&] { return seen == 2; });  // under max_connections 1, /b would wait for /a
  held.open();
  check_success(wait(std::move(a)), 200);
  check_success(wait(std::move(b)), 200);
}

TEST_CASE("a response over the limits is response_too_large, sent, and the connection is dropped") {
  std::string response;
  SUBCASE("Content-Length body") { response = reply(200, std::string(5000, 'x')); }
  SUBCASE("chunked body") {
    std::string chunk(800, 'y');
    response = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (int i = 0; i < 3; ++i) response += "320\r\n" + chunk + "\r\n";
    response += "0\r\n\r\n";
  }
  SUBCASE("header block") { response = "HTTP/1.1 200 OK\r\nX-Big: " + std::string(70 * 1024, 'h') + "\r\n\r\n"; }
  TestServer server(answer_all(response));
  Harness h;
  auto e = local(server);
  e.max_response_body = 1000;
  check_failure(h.send(e, get()), Failure::response_too_large, true);
  eventually([&] { return server.finished_scripts() == 1; });
}

TEST_CASE("a 503 is a normal response: classifying it is not the client's job") {
  TestServer server(answer_all(reply(503, "busy", "Retry-After: 1\r\n")));
  Harness h;
  Result r = h.send(local(server), Request{"POST", "/pay", {}, "{}"});
  check_success(r, 503);
  CHECK(r.response->body == "busy");
}

TEST_CASE("HEAD reads no body, and its connection is not reused") {
  TestServer server([](ServerSession& s) {
    while (auto request = s.read_request())
      s.write(request->method == "HEAD" ? "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n" : reply(200, "body"));
  });
  Harness h;
  auto e = local(server);
  Result head = h.send(e, Request{"HEAD", "/", {}, {}});
  check_success(head, 200);
  CHECK(head.response->body.empty());
  REQUIRE(head.response->headers.size() == 1);
  CHECK(head.response->headers[0].value == "1234");
  Result after = h.send(e, get());
  check_success(after, 200);
  CHECK(after.response->body == "body");
  CHECK(server.connections() == 2);  // a body announced by HEAD may still come (reply_confusion_tests.cpp)
}

TEST_CASE("responses without keep-alive are not reused") {
  std::string response;
  SUBCASE("Connection: close") { response = reply(200, "x", "Connection: close\r\n"); }
  SUBCASE("HTTP/1.0") { response = "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx"; }
  TestServer server(answer_all(response));
  Harness h;
  auto e = local(server);
  check_success(h.send(e, get()), 200);
  check_success(h.send(e, get()), 200);
  CHECK(server.connections() == 2);
}

TEST_CASE("a request carrying Connection: close does not leave a pooled connection") {
  TestServer server(answer_all(reply(200, "x")));
  Harness h;
  auto e = local(server);
  Request closing = get();
  closing.headers.push_back({"Connection", "close"});
  check_success(h.send(e, closing), 200);
  check_success(h.send(e, get()), 200);
  CHECK(server.connections() == 2);
}

TEST_CASE("a body delimited by EOF is complete, and an interim 100 is skipped") {
  std::string response;
  std::string expected;
  unsigned status = 0;
  SUBCASE("EOF-delimited") {
    response = "HTTP/1.1 200 OK\r\n\r\nuntil-eof";
    expected = "until-eof";
    status = 200;
  }
  SUBCASE("100 Continue first") {
    response = "HTTP/1.1 100 Continue\r\n\r\n" + reply(201, "made");
    expected = "made";
    status = 201;
  }
  TestServer server([&](ServerSession& s) {
    if (s.read_request()) {
      s.write(response);
      s.close();
    }
  });
  Harness h;
  Result r = h.send(local(server), Request{"POST", "/", {}, "x"});
  check_success(r, status);
  CHECK(r.response->body == expected);
}

TEST_CASE("a request that cannot be written safely is write_failed_unsent, nothing sent") {
  TestServer server(answer_all(reply(200, "x")));
  Harness h;
  Request bad = get();
  bad.headers.push_back({"X-Evil", "a\r\nX-Injected: 1"});
  check_failure(h.send(local(server), bad), Failure::write_failed_unsent, false);
  CHECK(server.connections() == 0);
}

TEST_CASE("shutdown fails queued and later requests as unsent while in-flight ones finish") {
  TestServer server([](ServerSession& s) {
    if (s.read_request()) s.wait_for_eof();
  });
  Harness h;
  auto e = local(server);
  e.max_connections = 1;
  e.request_timeout = 500ms;
  auto in_flight = h.start(e, get("/a"));
  auto queued = h.start(e, get("/b"));
  eventually([&] { return server.connections() == 1; });
  h.client().shutdown();
  check_failure(wait(std::move(queued)), Failure::queue_timeout, false);
  check_failure(wait(h.start(e, get("/c"))), Failure::queue_timeout, false);
  check_failure(wait(std::move(in_flight)), Failure::failed_after_send, true);
}

TEST_CASE("many requests sent from many threads, none of them the io_context's") {
  TestServer server([](ServerSession& s) {
    while (auto request = s.read_request()) s.write(reply(200, request->target));
  });
  Harness h;
  auto e = local(server);
  e.max_connections = 3;
  constexpr int per_thread = 20;
  std::vector<std::future<Result>> futures[3];
  std::vector<std::thread> senders;
  for (int t = 0; t < 3; ++t) {
    senders.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) futures[t].push_back(h.start(e, get("/" + std::to_string(t * 100 + i))));
    });
  }
  for (auto& s : senders) s.join();
  for (int t = 0; t < 3; ++t) {
    for (int i = 0; i < per_thread; ++i) {
      Result r = wait(std::move(futures[t][i]));
      check_success(r, 200);
      CHECK(r.response->body == "/" + std::to_string(t * 100 + i));
    }
  }
  CHECK(server.connections() <= 3);
}

// --- TLS ---

struct TlsServerContext {
  net::ssl::context context{net::ssl::context::tls_server};
  TlsServerContext() {
    const auto& files = TlsFiles::get();
    context.use_certificate_chain_file(files.cert);
    context.use_private_key_file(files.key, net::ssl::context::pem);
  }
};

TEST_CASE("TLS verified with ca_file: success and keep-alive reuse") {
  TlsServerContext tls;
  TestServer server(answer_all(reply(200, "secure")), &tls.context);
  Harness h;
  auto e = local(server);
  e.tls = true;
  e.host = "localhost";  // the certificate's name, sent as SNI
  e.ca_file = TlsFiles::get().cert;
  Result r = h.send(e, Request{"POST", "/pay", {}, "{}"});
  check_success(r, 200);
  CHECK(r.response->body == "secure");
  check_success(h.send(e, get()), 200);
  CHECK(server.connections() == 1);
}

TEST_CASE("TLS that cannot be verified is tls_failed, nothing sent") {
  TlsServerContext tls;
  TestServer server(answer_all(reply(200, "secure")), &tls.context);
  Harness h;
  auto e = local(server);
  e.tls = true;
  SUBCASE("self-signed, system trust store") { e.host = "localhost"; }
  SUBCASE("trusted certificate, wrong name") {
    e.host = "127.0.0.1";
    e.ca_file = TlsFiles::get().cert;
  }
  SUBCASE("CA file missing") {
    e.host = "localhost";
    e.ca_file = "/nonexistent/ca.pem";
  }
  check_failure(h.send(e, Request{"POST", "/pay", {}, "{}"}), Failure::tls_failed, false);
}

TEST_CASE("TLS failures after the request: counted as sent") {
  TlsServerContext tls;
  Request request{"POST", "/pay", {}, "{}"};
  TestServer::script script;
  SUBCASE("never replies") {
    script = [](ServerSession& s) {
      if (s.read_request()) s.wait_for_eof();
    };
  }
  SUBCASE("reset during a large body") {
    script = [](ServerSession& s) {
      if (s.read_head()) s.reset();
    };
    request.body.assign(64 << 20, 'x');
  }
  TestServer server(script, &tls.context);
  Harness h;
  auto e = local(server);
  e.tls = true;
  e.host = "localhost";
  e.ca_file = TlsFiles::get().cert;
  e.request_timeout = 500ms;
  if (request.body.size() > 1000) e.request_timeout = 30s;
  check_failure(h.send(e, std::move(request)), Failure::failed_after_send, true);
}

}  // namespace
}  // namespace gw::upstream::test

namespace gw::upstream::test {
namespace {

TEST_CASE("per io_context: an exchange completes on the io_context it was sent on, and reuses only connections opened there") {
  TestServer server(answer_all(reply(200, "ok")));
  PerThreadHarness h;
  const auto e = local(server);
  for (auto* on : {&h.a_, &h.b_, &h.a_, &h.b_, &h.a_}) {
    auto [result, on_its_thread] = h.send(*on, e, get());
    check_success(result, 200);
    CHECK(on_its_thread);
  }
  // One keep-alive connection per io_context, each reused there only.
  CHECK(server.connections() == 2);
}

TEST_CASE("per io_context: a slot freed on one io_context starts the request queued on another, there") {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> first_in;
  std::atomic<int> seen{0};
  TestServer server(hold_first(first_in, released, seen));
  PerThreadHarness h;
  auto e = local(server);
  e.max_connections = 1;
  auto first = h.start(h.a_, e, get("/first"));
  first_in.get_future().wait();
  auto queued = h.start(h.b_, e, get("/queued"));  // waits: the only slot is taken on a_
  CHECK(queued.wait_for(100ms) == std::future_status::timeout);
  release.set_value();
  auto [first_result, first_on_a] = first.get();
  check_success(first_result, 200);
  CHECK(first_on_a);
  REQUIRE(queued.wait_for(60s) == std::future_status::ready);
  auto [queued_result, queued_on_b] = queued.get();
  check_success(queued_result, 200);
  CHECK(queued_on_b);
  // The idle connection was opened on a_, so b_ opened its own.
  CHECK(server.connections() == 2);
  CHECK(seen == 2);
}

}  // namespace
}  // namespace gw::upstream::test
