// gateway-load: the closed-loop HTTP/1.1 load generator of the benchmarks (bench/run.sh).
//
// N agents, one keep-alive connection each, run as Asio C++20 coroutines on --threads event
// loops (1 by default): 1,000 agents are 1,000 coroutines, not 1,000 threads, and the generator
// takes as little of the machine's CPU as it can. Requests are written as preformatted bytes and
// replies read by a Beast parser that keeps only the status line, the two headers it needs and
// (for claims) the body: no header map, no allocation per reply. Every agent sends its next
// request as soon as the previous reply is in, for a fixed duration, and records what came back.
//
//   claim        each request claims a fresh task (the ownership transaction alone):
//                trip-<run>-1, trip-<run>-2, ... across all agents
//   protected    each agent claims its own task once (before the clock starts), then loops
//                protected booking POSTs through the gateway (admission, forward, outcome), one
//                new Idempotency-Key and slot each, Expected-Version the version its last commit
//                returned; after anything but a commit it goes on with a freshly claimed task
//   direct       the same booking POSTs straight to the demo provider
//   client       the same decisions without the gateway, as "nginx plus a careful client library
//                on PostgreSQL" would make them: each agent runs bench/minimal_protected.sql's
//                statements itself on a connection of its own (--pg; one round trip each, a
//                SERIALIZABLE admission retried up to --max-tries times on a serialization
//                failure), POSTs the booking through the proxy at --url (which adds the
//                provider's credential) and records the outcome; a write counts when its outcome
//                has committed. --tasks owner rows of bench/minimal_schema.sql, one at random
//                per write
//   passthrough  an unprotected GET through the gateway with the agent token only (no grant):
//                GET /v1/tenants/T/tasks/X/providers/booking/bookings/<id>
//   get          one fixed GET against any server: --url http://host:port/path [--bearer T]
//                (nginx in front of the provider, or the provider itself). With --alternate
//                NAME,URL[,BEARER] given twice or more, the same agents load each server in
//                turn, in --rounds short rounds each, and every server's figures are kept apart:
//                a comparison in which the machine's drift (other tenants, CPU frequency) lands on
//                every side alike instead of on whichever ran last.
//   idle         opens N keep-alive connections (one GET each, so the server has accepted and
//                served them), prints "idle: N connections open", holds them until SIGTERM/SIGINT
//                or --duration, then checks how many still answer. For "memory per idle
//                connection": the caller reads the server's RSS while they are held.
//
// --names sequential (default): tasks trip-<run>-1, trip-<run>-2, ..., keys trip-<run>-1-op-1,
// ...: what real callers send, and the SERIALIZABLE worst case (neighbours share a B-tree leaf
// page, which is what PostgreSQL's predicate locks cover). --names random: 16 random hex digits
// first, as UUIDs would spread them.
//
// A reply is counted when it completes inside the measured window (after --warmup, before
// --duration has passed), as wrk counts; agents start no request after the window and the ones
// in flight are drained uncounted. Every reply is counted by HTTP status and Gateway-Status;
// every I/O error by its message. --watch NAME=PID adds the CPU ticks of that process and its
// children, and the machine's, within the window. A summary goes to stdout and, with --json
// FILE, one JSON object for bench/run.sh.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/read.hpp>
#include <nlohmann/json.hpp>

#include "pg_client.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;
using asio::awaitable;
using asio::use_awaitable;
constexpr auto no_throw = asio::as_tuple(use_awaitable);

enum class Mode { claim, protected_write, direct, client, passthrough, get, idle };
enum class Names { sequential, random };

// http://host:port/path
struct Address {
  std::string host;
  std::string port;
  std::string target;
};

// One server of an --alternate comparison.
struct Side {
  std::string name;
  Address address;
  std::string bearer;
};

// A process whose CPU is sampled at the edges of every measured window.
struct Watch {
  std::string name;
  int pid = 0;
};

struct Options {
  Mode mode = Mode::protected_write;
  std::string mode_name = "protected";
  Names names = Names::sequential;
  std::string host = "127.0.0.1";
  std::string port;
  std::string target;  // get and idle modes: the request target
  std::string bearer;  // get mode: Authorization: Bearer <bearer> when set
  unsigned clients = 16;
  unsigned threads = 1;
  double duration_s = 10;
  double warmup_s = 0;
  std::string tenant = "tenant-a";
  std::string agent_token = "dev-agent-token-a";
  std::string provider = "booking";
  std::string provider_token = "booking-secret";
  std::string passthrough_task = "bench-passthrough";
  std::string booking_id = "bk_1";
  std::string run_id;
  std::chrono::milliseconds timeout{10000};
  std::int64_t lease_ms = 3'600'000;
  std::string json_path;
  std::vector<Side> sides;  // get mode: --alternate, two or more
  unsigned rounds = 3;      // with --alternate: measured rounds per side
  double settle_s = 0.2;    // with --alternate: uncounted seconds at the start of every later round
  std::vector<Watch> watch;
  std::string latencies_path;  // one target: every ok reply's latency in µs, one per line
  std::string pg;              // client mode: the minimal SQL's database (libpq conninfo)
  unsigned tasks = 10000;      // client mode: owner rows to pick from
  unsigned max_tries = 8;      // client mode: tries of a transaction that meets a serialization failure
};

const char* usage_text =
    "usage: gateway-load --mode MODE --port N [options]\n"
    "  MODE: claim | protected | direct | client | passthrough | get | idle\n"
    "  --host H             server address (127.0.0.1)\n"
    "  --url URL            get/idle: http://host:port/path (sets --host, --port, --target);\n"
    "                       client: where the booking is POSTed (a proxy that adds the credential)\n"
    "  --pg CONNINFO        client: the minimal SQL's database, as libpq takes it\n"
    "  --tasks N            client: owner rows task-1 .. task-N to pick from (10000)\n"
    "  --max-tries N        client: tries of a transaction that meets a serialization failure (8)\n"
    "  --target PATH        get/idle: request target (get: /, idle: /healthz)\n"
    "  --bearer T           get, idle: send Authorization: Bearer T\n"
    "  --clients N          agents (idle: connections), one keep-alive connection each (16)\n"
    "  --threads N          event loops (threads) the agents are spread over (1)\n"
    "  --duration S         measured seconds after every agent's setup; idle: longest hold (10)\n"
    "  --warmup S           seconds of load before the measured ones, not counted (0)\n"
    "  --names sequential|random   task names and keys (sequential)\n"
    "  --tenant T           tenant in the gateway paths (tenant-a)\n"
    "  --token T            agent bearer token for the gateway (dev-agent-token-a)\n"
    "  --provider NAME      gateway provider route (booking)\n"
    "  --provider-token T   the provider's credential, direct mode (booking-secret)\n"
    "  --task X             passthrough: task in the path (bench-passthrough)\n"
    "  --booking-id ID      passthrough: GET .../bookings/ID (bk_1)\n"
    "  --run-id ID          part of every task name and key (default: from the clock)\n"
    "  --timeout-ms MS      deadline of each request (10000)\n"
    "  --json FILE          also write the figures as one JSON object\n"
    "  --alternate NAME,URL[,BEARER]   get: one server of a comparison (twice or more): each\n"
    "                       is loaded in turn by the same agents, the measured seconds split in\n"
    "                       --rounds rounds per server, and reported per server\n"
    "  --rounds N           with --alternate: rounds per server (3)\n"
    "  --settle S           with --alternate: uncounted seconds that open every round after the\n"
    "                       first; the first opens with --warmup (0.2)\n"
    "  --watch NAME=PID     CPU ticks of PID and its children within the measured windows\n"
    "  --latencies FILE     also write each ok reply's latency (µs), one per line, so that the\n"
    "                       percentiles of several runs can be taken together\n";

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << "gateway-load: " << message << "\n" << usage_text;
  std::exit(2);
}

template <class Number>
Number parse_number(const std::string& name, const std::string& text) {
  Number value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value <= 0)
    usage_error(name + " must be a positive number, not '" + text + "'");
  return value;
}

// http://host:port/path only: the benchmarks talk plain HTTP on loopback.
Address parse_url(const std::string& url) {
  constexpr std::string_view scheme = "http://";
  if (!url.starts_with(scheme)) usage_error("a URL must start with http://, not '" + url + "'");
  Address a;
  const std::string rest = url.substr(scheme.size());
  const auto slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  a.target = slash == std::string::npos ? "/" : rest.substr(slash);
  const auto colon = authority.rfind(':');
  if (colon == std::string::npos) {
    a.host = authority;
    a.port = "80";
  } else {
    a.host = authority.substr(0, colon);
    a.port = std::to_string(parse_number<unsigned>("the URL's port", authority.substr(colon + 1)));
  }
  if (a.host.empty()) usage_error("'" + url + "' has no host");
  return a;
}

// NAME,URL[,BEARER]
Side parse_side(const std::string& value) {
  const auto first = value.find(',');
  if (first == 0 || first == std::string::npos) usage_error("--alternate needs NAME,URL[,BEARER], not '" + value + "'");
  const auto second = value.find(',', first + 1);
  Side side;
  side.name = value.substr(0, first);
  side.address = parse_url(value.substr(first + 1, second == std::string::npos ? std::string::npos : second - first - 1));
  if (second != std::string::npos) side.bearer = value.substr(second + 1);
  return side;
}

// NAME=PID
Watch parse_watch(const std::string& value) {
  const auto eq = value.find('=');
  if (eq == 0 || eq == std::string::npos) usage_error("--watch needs NAME=PID, not '" + value + "'");
  return {value.substr(0, eq), parse_number<int>("--watch's PID", value.substr(eq + 1))};
}

Options parse_options(int argc, char** argv) {
  Options o;
  bool have_mode = false;
  for (int i = 1; i < argc; ++i) {
    const std::string name = argv[i];
    if (name == "--help" || name == "-h") {
      std::cout << usage_text;
      std::exit(0);
    }
    if (i + 1 >= argc) usage_error(name + " needs a value");
    const std::string value = argv[++i];
    if (name == "--mode") {
      have_mode = true;
      o.mode_name = value;
      if (value == "claim") o.mode = Mode::claim;
      else if (value == "protected") o.mode = Mode::protected_write;
      else if (value == "direct") o.mode = Mode::direct;
      else if (value == "client") o.mode = Mode::client;
      else if (value == "passthrough") o.mode = Mode::passthrough;
      else if (value == "get") o.mode = Mode::get;
      else if (value == "idle") o.mode = Mode::idle;
      else usage_error("unknown --mode " + value);
    } else if (name == "--names") {
      if (value == "sequential") o.names = Names::sequential;
      else if (value == "random") o.names = Names::random;
      else usage_error("--names must be sequential or random");
    } else if (name == "--host") o.host = value;
    else if (name == "--port") o.port = std::to_string(parse_number<unsigned>(name, value));
    else if (name == "--url") {
      const Address a = parse_url(value);
      o.host = a.host;
      o.port = a.port;
      o.target = a.target;
    }
    else if (name == "--target") o.target = value;
    else if (name == "--bearer") o.bearer = value;
    else if (name == "--clients") o.clients = parse_number<unsigned>(name, value);
    else if (name == "--threads") o.threads = parse_number<unsigned>(name, value);
    else if (name == "--duration") o.duration_s = parse_number<double>(name, value);
    else if (name == "--warmup") o.warmup_s = value == "0" ? 0 : parse_number<double>(name, value);
    else if (name == "--tenant") o.tenant = value;
    else if (name == "--token") o.agent_token = value;
    else if (name == "--provider") o.provider = value;
    else if (name == "--provider-token") o.provider_token = value;
    else if (name == "--task") o.passthrough_task = value;
    else if (name == "--booking-id") o.booking_id = value;
    else if (name == "--run-id") o.run_id = value;
    else if (name == "--timeout-ms") o.timeout = std::chrono::milliseconds(parse_number<unsigned>(name, value));
    else if (name == "--json") o.json_path = value;
    else if (name == "--alternate") o.sides.push_back(parse_side(value));
    else if (name == "--rounds") o.rounds = parse_number<unsigned>(name, value);
    else if (name == "--settle") o.settle_s = value == "0" ? 0 : parse_number<double>(name, value);
    else if (name == "--watch") o.watch.push_back(parse_watch(value));
    else if (name == "--latencies") o.latencies_path = value;
    else if (name == "--pg") o.pg = value;
    else if (name == "--tasks") o.tasks = parse_number<unsigned>(name, value);
    else if (name == "--max-tries") o.max_tries = parse_number<unsigned>(name, value);
    else usage_error("unknown option " + name);
  }
  if (!have_mode) usage_error("--mode is required");
  if (o.mode == Mode::client && (o.pg.empty() || o.target.empty()))
    usage_error("--mode client needs --pg and --url");
  if ((o.tasks == 0 || o.max_tries == 0) && o.mode == Mode::client) usage_error("--tasks and --max-tries must be positive");
  if (!o.sides.empty()) {
    if (o.mode != Mode::get) usage_error("--alternate needs --mode get");
    if (o.sides.size() < 2) usage_error("--alternate needs two servers or more");
    if (!o.latencies_path.empty()) usage_error("--latencies takes one server, not --alternate");
    for (std::size_t i = 0; i < o.sides.size(); ++i)
      for (std::size_t k = 0; k < i; ++k)
        if (o.sides[i].name == o.sides[k].name) usage_error("--alternate names must differ: " + o.sides[i].name);
    o.port = o.sides[0].address.port;  // each side has its own; this one only passes the check below
  }
  if (o.port.empty()) usage_error("--port (or --url) is required");
  if (o.target.empty()) o.target = o.mode == Mode::idle ? "/healthz" : "/";
  o.threads = std::min(o.threads, o.clients);
  if (o.run_id.empty()) {
    // Unique across runs against the same database, so tasks and keys never collide.
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    o.run_id = "b" + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
  }
  return o;
}

// What one reply said, as far as the benchmark cares. Reused by its connection.
struct Reply {
  unsigned status = 0;
  std::string gateway_status;          // "" when the header is absent (the provider never sets it)
  std::int64_t committed_version = -1;  // -1: no Committed-Version header
  std::string body;
  bool keep_body = false;

  void reset() {
    status = 0;
    gateway_status.clear();
    committed_version = -1;
    body.clear();
  }
};

// A response parser that keeps only what Reply holds: no field container, and the body only
// when asked for (claims read their grant from it; error bodies go to the summary).
class ReplyParser final : public http::basic_parser<false> {
 public:
  explicit ReplyParser(Reply& reply) : reply_(reply) { reply_.reset(); }

 private:
  void on_request_impl(http::verb, beast::string_view, beast::string_view, int, beast::error_code&) override {}
  void on_response_impl(int code, beast::string_view, int, beast::error_code&) override {
    reply_.status = static_cast<unsigned>(code);
  }
  void on_field_impl(http::field, beast::string_view name, beast::string_view value, beast::error_code&) override {
    if (beast::iequals(name, "Gateway-Status")) reply_.gateway_status.assign(value.data(), value.size());
    else if (beast::iequals(name, "Committed-Version")) {
      std::int64_t v = -1;
      std::from_chars(value.data(), value.data() + value.size(), v);
      reply_.committed_version = v;
    }
  }
  void on_header_impl(beast::error_code&) override {}
  void on_body_init_impl(boost::optional<std::uint64_t> const&, beast::error_code&) override {}
  std::size_t on_body_impl(beast::string_view body, beast::error_code&) override {
    keep(body);
    return body.size();
  }
  void on_chunk_header_impl(std::uint64_t, beast::string_view, beast::error_code&) override {}
  std::size_t on_chunk_body_impl(std::uint64_t, beast::string_view body, beast::error_code&) override {
    keep(body);
    return body.size();
  }
  void on_finish_impl(beast::error_code&) override {}

  void keep(beast::string_view body) {
    if (reply_.keep_body || reply_.status < 200 || reply_.status > 299)
      if (reply_.body.size() < 4096) reply_.body.append(body.data(), std::min<std::size_t>(body.size(), 4096));
  }

  Reply& reply_;
};

struct Stats {
  std::vector<std::uint32_t> ok_latency_us;
  std::map<std::string, std::uint64_t> not_ok;  // "409 version_conflict", "io: Connection refused"
  std::map<std::string, std::uint64_t> setup;   // setup claims that failed (then retried)
  std::map<std::string, std::string> sample_body;  // one body per not-ok key, for the summary
  std::uint64_t replies = 0;
  std::uint64_t ok = 0;
  std::uint64_t reclaims = 0;
  std::uint64_t retries = 0;  // client mode: transactions run again after a serialization failure
  std::string setup_error;

  void merge(const Stats& s) {
    replies += s.replies;
    ok += s.ok;
    reclaims += s.reclaims;
    retries += s.retries;
    for (const auto& [k, n] : s.not_ok) not_ok[k] += n;
    for (const auto& [k, n] : s.setup) setup[k] += n;
    for (const auto& [k, b] : s.sample_body) sample_body.try_emplace(k, b);
    ok_latency_us.insert(ok_latency_us.end(), s.ok_latency_us.begin(), s.ok_latency_us.end());
    if (setup_error.empty()) setup_error = s.setup_error;
  }
};

std::string status_key(const Reply& r) {
  std::string key = std::to_string(r.status);
  if (!r.gateway_status.empty()) {
    key += ' ';
    key += r.gateway_status;
  }
  return key;
}

// Shared by every event loop: the options and the counters that make names unique.
struct Shared {
  const Options& options;
  tcp::endpoint endpoint;
  std::string host_header;  // "Host: h:p\r\n"
  std::atomic<std::uint64_t> next_claim{0};  // claim mode: trip-<run>-1, -2, ...
  std::atomic<std::uint64_t> next_task;       // protected mode: tasks after the first N
  explicit Shared(const Options& o, tcp::endpoint e)
      : options(o), endpoint(e), host_header("Host: " + o.host + ":" + o.port + "\r\n"), next_task(o.clients) {}
};

class Worker;

// One agent: its connection, its task (protected mode), its request bytes.
class Agent {
 public:
  Agent(Worker& worker, unsigned index);

  awaitable<void> setup();
  // Load until `until`, counting the replies that complete in [from, until).
  awaitable<void> run(steady::time_point from, steady::time_point until);
  awaitable<bool> open_idle();       // idle mode: connect and one GET
  awaitable<bool> still_answers();   // idle mode: one more GET on the held connection

  // For the watchdog: a request in progress since `started`.
  bool busy = false;
  bool timed_out = false;
  steady::time_point started;
  tcp::socket socket;

 private:
  // Sends request_ and reads reply_; an error closes the connection (the next exchange
  // reconnects), as does a reply that asks to close. Returns the error, if any.
  awaitable<beast::error_code> exchange();
  void close();

  void build_claim(const std::string& task);
  void build_protected();
  void build_direct();
  // A booking POST to a provider (or a proxy in front of it): `credential` empty when the
  // proxy adds it.
  void build_booking(std::string_view target, std::string_view credential, std::string_view key,
                     std::string_view slot);
  std::string random_hex();
  std::string task_path(const std::string& task) const;
  bool success() const;
  void count_not_ok(Stats& stats, const std::string& key, bool with_body);
  awaitable<bool> claim_own_task(std::string task);
  awaitable<void> recover();
  // Client mode: one write made as a client library would; "" when its outcome committed, else
  // what stopped it (counted as the reply's key).
  awaitable<std::string> client_write();
  // Client mode: runs `steps` as one transaction, again from the start after a serialization
  // failure (up to --max-tries); the failure that ended it, or "" once it committed.
  template <class Steps>
  awaitable<std::string> transaction(const char* what, Steps steps);

  Worker& worker_;
  const Options& options_;
  Shared& shared_;
  unsigned index_;  // 1-based
  beast::flat_buffer buffer_;
  bool open_ = false;
  std::string request_;  // the bytes of the next request
  Reply reply_;
  std::string task_;
  std::string grant_token_;
  std::int64_t version_ = 0;
  std::uint64_t op_ = 0;  // protected: the task's last operation number; direct, client: requests sent
  std::unique_ptr<bench::PgClient> pg_;  // client mode
};

// One event loop on one thread, with its agents and their counters.
class Worker {
 public:
  explicit Worker(Shared& shared) : shared(shared), options(shared.options), rng(std::random_device{}()) {}

  Shared& shared;
  const Options& options;
  asio::io_context io{1};
  std::vector<std::unique_ptr<Agent>> agents;
  Stats stats;
  std::mt19937_64 rng;
  unsigned running = 0;
  steady::time_point last_done;

  // Closes the connection of every request past its deadline: the agent sees the error and
  // counts a timeout. One timer per loop instead of one per request.
  awaitable<void> watchdog() {
    asio::steady_timer timer(io);
    const auto period = std::min<std::chrono::milliseconds>(options.timeout / 4, std::chrono::milliseconds(250));
    while (running > 0) {
      timer.expires_after(period);
      co_await timer.async_wait(no_throw);
      const auto now = steady::now();
      for (auto& a : agents)
        if (a->busy && now - a->started > options.timeout) {
          a->timed_out = true;
          beast::error_code ignored;
          a->socket.close(ignored);
        }
    }
  }

  // Runs `body` for every agent as coroutines on this loop, with the watchdog, until all end.
  template <class Body>
  void run_all(Body body) {
    running = static_cast<unsigned>(agents.size());
    for (auto& a : agents)
      asio::co_spawn(io, [this, a = a.get(), body]() -> awaitable<void> {
        co_await body(*a);
        last_done = steady::now();
        --running;
      }, asio::detached);
    asio::co_spawn(io, watchdog(), asio::detached);
    io.restart();
    io.run();
  }
};

Agent::Agent(Worker& worker, unsigned index)
    : socket(worker.io), worker_(worker), options_(worker.options), shared_(worker.shared), index_(index) {
  if (options_.mode == Mode::passthrough || options_.mode == Mode::get || options_.mode == Mode::idle) {
    // One fixed request, formatted once.
    std::string target = options_.target;
    std::string auth;
    if (options_.mode == Mode::passthrough) {
      target = task_path(options_.passthrough_task) + "/providers/" + options_.provider + "/bookings/" + options_.booking_id;
      auth = options_.agent_token;
    } else {
      auth = options_.bearer;
    }
    request_ = "GET ";
    request_ += target;
    request_ += " HTTP/1.1\r\n";
    request_ += shared_.host_header;
    if (!auth.empty()) {
      request_ += "Authorization: Bearer ";
      request_ += auth;
      request_ += "\r\n";
    }
    request_ += "\r\n";
  }
}

void Agent::close() {
  beast::error_code ignored;
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
  buffer_.clear();
  open_ = false;
}

awaitable<beast::error_code> Agent::exchange() {
  started = steady::now();
  busy = true;
  timed_out = false;
  beast::error_code ec;
  if (!open_) {
    socket = tcp::socket(worker_.io);
    std::tie(ec) = co_await socket.async_connect(shared_.endpoint, no_throw);
    if (!ec) {
      socket.set_option(tcp::no_delay(true), ec);
      buffer_.clear();
      open_ = true;
    }
  }
  if (!ec) std::tie(ec, std::ignore) = co_await asio::async_write(socket, asio::buffer(request_), no_throw);
  if (!ec) {
    ReplyParser parser(reply_);
    parser.body_limit(1 << 20);
    std::tie(ec, std::ignore) = co_await http::async_read(socket, buffer_, parser, no_throw);
    if (!ec && !parser.keep_alive()) close();
  }
  busy = false;
  if (ec) {
    if (timed_out) ec = asio::error::timed_out;
    close();
  }
  co_return ec;
}

std::string Agent::task_path(const std::string& task) const {
  std::string path = "/v1/tenants/";
  path += options_.tenant;
  path += "/tasks/";
  path += task;
  return path;
}

std::string Agent::random_hex() {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (auto value = worker_.rng(); auto& c : out) {
    c = digits[value & 15];
    value >>= 4;
  }
  return out;
}

void Agent::build_claim(const std::string& task) {
  reply_.keep_body = true;  // the grant is in it
  std::string body = R"({"owner":"bench-)";
  body += std::to_string(index_);
  body += R"(","lease_ms":)";
  body += std::to_string(options_.lease_ms);
  body += '}';
  request_ = "POST ";
  request_ += task_path(task);
  request_ += "/claim HTTP/1.1\r\n";
  request_ += shared_.host_header;
  request_ += "Authorization: Bearer ";
  request_ += options_.agent_token;
  request_ += "\r\nContent-Type: application/json\r\nContent-Length: ";
  request_ += std::to_string(body.size());
  request_ += "\r\n\r\n";
  request_ += body;
}

void Agent::build_protected() {
  reply_.keep_body = false;
  ++op_;
  std::string key;
  if (options_.names == Names::sequential) {
    key = task_;
    key += "-op-";
  } else {
    key = random_hex();
    key += '-';
  }
  key += std::to_string(op_);
  std::string body = R"({"slot":"slot-)";
  body += task_;
  body += '-';
  body += std::to_string(op_);
  body += R"(","customer":"bench-)";
  body += std::to_string(index_);
  body += R"("})";
  request_ = "POST ";
  request_ += task_path(task_);
  request_ += "/providers/";
  request_ += options_.provider;
  request_ += "/bookings HTTP/1.1\r\n";
  request_ += shared_.host_header;
  request_ += "Authorization: Bearer ";
  request_ += options_.agent_token;
  request_ += "\r\nFence-Grant: ";
  request_ += grant_token_;
  request_ += "\r\nIdempotency-Key: ";
  request_ += key;
  request_ += "\r\nExpected-Version: ";
  request_ += std::to_string(version_);
  request_ += "\r\nContent-Type: application/json\r\nContent-Length: ";
  request_ += std::to_string(body.size());
  request_ += "\r\n\r\n";
  request_ += body;
}

// What the gateway sends upstream, less the forwarding headers.
void Agent::build_direct() {
  ++op_;
  std::string unique = options_.run_id;
  unique += '-';
  unique += std::to_string(index_);
  unique += '-';
  unique += std::to_string(op_);
  build_booking("/bookings", options_.provider_token, "d" + unique, unique);
}

void Agent::build_booking(std::string_view target, std::string_view credential, std::string_view key,
                          std::string_view slot) {
  std::string body = R"({"slot":"slot-)";
  body += slot;
  body += R"(","customer":"bench-)";
  body += std::to_string(index_);
  body += R"("})";
  request_ = "POST ";
  request_ += target;
  request_ += " HTTP/1.1\r\n";
  request_ += shared_.host_header;
  if (!credential.empty()) {
    request_ += "Authorization: Bearer ";
    request_ += credential;
    request_ += "\r\n";
  }
  request_ += "Idempotency-Key: ";
  request_ += key;
  request_ += "\r\nContent-Type: application/json\r\nContent-Length: ";
  request_ += std::to_string(body.size());
  request_ += "\r\n\r\n";
  request_ += body;
}

bool Agent::success() const {
  switch (options_.mode) {
    case Mode::claim: return reply_.status == 200 && reply_.gateway_status == "granted";
    case Mode::protected_write: return reply_.status == 201 && reply_.gateway_status == "committed";
    case Mode::direct:
    case Mode::client:
    case Mode::passthrough:
    case Mode::get:
    case Mode::idle: return reply_.status >= 200 && reply_.status <= 299;
  }
  return false;
}

void Agent::count_not_ok(Stats& stats, const std::string& key, bool with_body) {
  ++stats.not_ok[key];
  if (with_body && !reply_.body.empty()) stats.sample_body.try_emplace(key, reply_.body.substr(0, 300));
}

// Claims `task` for this agent (protected mode); a refusal is counted in the setup figures.
awaitable<bool> Agent::claim_own_task(std::string task) {
  build_claim(task);
  const beast::error_code ec = co_await exchange();
  if (ec) {
    ++worker_.stats.setup["io: " + ec.message()];
    co_return false;
  }
  if (reply_.status != 200) {
    ++worker_.stats.setup[status_key(reply_)];
    worker_.stats.sample_body.try_emplace("setup " + status_key(reply_), reply_.body.substr(0, 300));
    co_return false;
  }
  try {
    auto j = nlohmann::json::parse(reply_.body);
    grant_token_ = j.at("grant_token").get<std::string>();
    version_ = j.at("version").get<std::int64_t>();
  } catch (const std::exception& e) {
    worker_.stats.setup_error = std::string("claim reply unreadable: ") + e.what();
    co_return false;
  }
  task_ = std::move(task);
  op_ = 0;
  co_return true;
}

// Task number `number` of this run: trip-<run>-<number>, or <16 random hex>-<run>-<number>.
// Protected mode: agent i's first task is number i, later ones come after every agent's first;
// claim mode: one count over all agents.
std::string fresh_task(Shared& shared, std::uint64_t number, std::string random_part) {
  std::string task = shared.options.names == Names::sequential ? std::string("trip-") : std::move(random_part) + "-";
  task += shared.options.run_id;
  task += '-';
  task += std::to_string(number);
  return task;
}

// bench/minimal_protected.sql's statements, prepared on every client-mode connection.
const std::vector<bench::PgStatement> client_statements = {
    {"begin_serializable", "BEGIN ISOLATION LEVEL SERIALIZABLE"},
    {"begin", "BEGIN"},
    {"commit", "COMMIT"},
    {"rollback", "ROLLBACK"},
    {"owner", "SELECT owner, epoch, expires_at, version FROM owners WHERE tenant = $1 AND task = $2 FOR UPDATE"},
    {"seen", "SELECT count(*) FROM operations WHERE tenant = $1 AND task = $2 AND op_id = $3"},
    {"admit", "INSERT INTO operations (tenant, task, op_id, payload_hash, state, epoch) "
              "VALUES ($1, $2, $3, sha256(convert_to($3, 'UTF8')), 'admitted', $4)"},
    {"succeeded", "UPDATE operations SET state = 'succeeded' "
                  "WHERE tenant = $1 AND task = $2 AND op_id = $3 AND state = 'admitted'"},
    {"bump", "UPDATE owners SET version = version + 1 WHERE tenant = $1 AND task = $2 AND epoch = $3"},
};

const std::vector<const char*> no_params;

// The owner bench/minimal_schema.sql gives every task: the one this client checks it still is.
constexpr std::string_view minimal_owner = "minimal";

template <class Steps>
awaitable<std::string> Agent::transaction(const char* what, Steps steps) {
  std::string failure;
  for (unsigned attempt = 1; attempt <= options_.max_tries; ++attempt) {
    bench::PgAnswer answer = co_await steps();
    const bool reached_commit = answer.ok();
    if (reached_commit) answer = co_await pg_->run("commit", no_params);
    if (answer.ok()) co_return "";
    failure = std::string("pg ") + (answer.sqlstate.empty() ? "error" : answer.sqlstate) + " in the " + what;
    // A failed statement leaves the transaction aborted; a failed COMMIT has ended it already.
    if (!reached_commit && !answer.sqlstate.empty()) (void)co_await pg_->run("rollback", no_params);
    if (!answer.retryable()) co_return failure;
    ++worker_.stats.retries;
  }
  co_return failure + ", gave up after " + std::to_string(options_.max_tries) + " tries";
}

awaitable<std::string> Agent::client_write() {
  ++op_;
  const std::string task = "task-" + std::to_string(1 + worker_.rng() % options_.tasks);
  std::string op = options_.run_id;
  op += '-';
  op += std::to_string(index_);
  op += '-';
  op += std::to_string(op_);
  const char* tenant = options_.tenant.c_str();
  // Named, not braced in the calls: GCC 12 cannot take an initializer list across a co_await.
  const std::vector<const char*> key{tenant, task.c_str()}, op_key{tenant, task.c_str(), op.c_str()};
  std::string epoch;
  std::string refused;
  // The admission: the owner row locked and checked, the key looked up, the operation recorded.
  std::string failure = co_await transaction("admission", [&]() -> awaitable<bench::PgAnswer> {
    bench::PgAnswer a = co_await pg_->run("begin_serializable", no_params);
    if (!a.ok()) co_return a;
    a = co_await pg_->run("owner", key);
    if (!a.ok()) co_return a;
    if (!a.has_row || a.row.size() != 4 || a.row[0] != minimal_owner) {
      refused = task + " has no owner row, or not this client's";
      co_return a;
    }
    epoch = a.row[1];
    a = co_await pg_->run("seen", op_key);
    if (!a.ok() || (a.has_row && !a.row.empty() && a.row[0] != "0")) co_return a;
    const std::vector<const char*> admit{tenant, task.c_str(), op.c_str(), epoch.c_str()};
    co_return co_await pg_->run("admit", admit);
  });
  if (!failure.empty()) co_return failure;
  if (!refused.empty()) co_return refused;
  // The provider, through the proxy that holds its credential.
  build_booking(options_.target, "", op, op);
  if (const beast::error_code ec = co_await exchange()) co_return "io: " + ec.message();
  if (!success()) co_return "provider " + status_key(reply_);
  // The outcome, under the epoch the admission read.
  co_return co_await transaction("outcome", [&]() -> awaitable<bench::PgAnswer> {
    bench::PgAnswer a = co_await pg_->run("begin", no_params);
    if (!a.ok()) co_return a;
    a = co_await pg_->run("succeeded", op_key);
    if (!a.ok()) co_return a;
    const std::vector<const char*> bump{tenant, task.c_str(), epoch.c_str()};
    co_return co_await pg_->run("bump", bump);
  });
}

awaitable<void> Agent::setup() {
  if (options_.mode == Mode::client) {
    try {
      pg_ = std::make_unique<bench::PgClient>(worker_.io, options_.pg, client_statements);
    } catch (const std::exception& e) {
      if (worker_.stats.setup_error.empty()) worker_.stats.setup_error = e.what();
    }
    co_return;
  }
  if (options_.mode != Mode::protected_write) co_return;
  // Claims before the clock starts. A claim refused for load (a 503) is retried, with a pause
  // that grows, up to 10 times; each refusal is reported.
  asio::steady_timer pause(worker_.io);
  for (unsigned attempt = 1; attempt <= 10; ++attempt) {
    if (co_await claim_own_task(fresh_task(shared_, index_, random_hex()))) co_return;
    if (!worker_.stats.setup_error.empty()) break;
    pause.expires_after(std::chrono::milliseconds(20 * attempt));
    co_await pause.async_wait(no_throw);
  }
  if (worker_.stats.setup_error.empty()) worker_.stats.setup_error = "agent " + std::to_string(index_) + " could not claim a task";
}

// After anything but a commit the task's state is not what this agent believes (a held outcome
// would block it for good), so it carries on with a freshly claimed task.
awaitable<void> Agent::recover() {
  ++worker_.stats.reclaims;
  for (unsigned attempt = 1; attempt <= 3; ++attempt)
    if (co_await claim_own_task(fresh_task(shared_, ++shared_.next_task, random_hex()))) co_return;
  // Still no task: the next protected request fails (stale or unknown grant) and comes back here.
}

awaitable<void> Agent::run(steady::time_point from, steady::time_point until) {
  Stats& stats = worker_.stats;
  auto& latencies = stats.ok_latency_us;
  while (steady::now() < until) {
    if (options_.mode == Mode::client) {
      if (!pg_) co_return;
      const auto begun = steady::now();
      const std::string failure = co_await client_write();
      const auto done = steady::now();
      if (done < from || done >= until) continue;
      ++stats.replies;
      if (!failure.empty()) {
        count_not_ok(stats, failure, false);
        continue;
      }
      ++stats.ok;
      const auto took = std::chrono::duration_cast<std::chrono::microseconds>(done - begun).count();
      latencies.push_back(static_cast<std::uint32_t>(std::min<std::int64_t>(took, UINT32_MAX)));
      continue;
    }
    switch (options_.mode) {
      case Mode::claim: {
        build_claim(fresh_task(shared_, ++shared_.next_claim, random_hex()));
        break;
      }
      case Mode::protected_write: build_protected(); break;
      case Mode::direct: build_direct(); break;
      case Mode::client:
      case Mode::passthrough:
      case Mode::get:
      case Mode::idle: break;  // request_ is fixed
    }
    const auto begun = steady::now();
    const beast::error_code ec = co_await exchange();
    const auto done = steady::now();
    const auto took = std::chrono::duration_cast<std::chrono::microseconds>(done - begun).count();
    const bool counted = done >= from && done < until;
    if (!ec && success()) {
      if (counted) {
        ++stats.replies;
        ++stats.ok;
        latencies.push_back(static_cast<std::uint32_t>(std::min<std::int64_t>(took, UINT32_MAX)));
      }
      if (options_.mode == Mode::protected_write)
        version_ = reply_.committed_version >= 0 ? reply_.committed_version : version_ + 1;
      continue;
    }
    if (counted) {
      ++stats.replies;
      if (ec) count_not_ok(stats, "io: " + ec.message(), false);
      else count_not_ok(stats, status_key(reply_), true);
    }
    if (options_.mode == Mode::protected_write) co_await recover();
  }
}

awaitable<bool> Agent::open_idle() {
  const beast::error_code ec = co_await exchange();
  if (ec) {
    ++worker_.stats.not_ok["open: io: " + ec.message()];
    co_return false;
  }
  // Any reply will do (the server accepted and served the connection); a non-2xx is reported.
  if (!success()) ++worker_.stats.not_ok["open: reply " + status_key(reply_)];
  co_return open_;
}

awaitable<bool> Agent::still_answers() {
  if (!open_) co_return false;
  // A connection the server closed while held must not be reopened by exchange().
  const beast::error_code ec = co_await exchange();
  if (ec) {
    ++worker_.stats.not_ok["after hold: io: " + ec.message()];
    co_return false;
  }
  co_return true;
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double percentile_ms(const std::vector<std::uint32_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1] / 1000.0;
}

// Idle connections need one descriptor each: take the hard limit.
void raise_fd_limit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
  }
}

// Runs fn(worker) on every worker, each on its own thread (the first on this one).
template <class Fn>
void on_every_worker(std::vector<std::unique_ptr<Worker>>& workers, Fn fn) {
  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < workers.size(); ++i) threads.emplace_back([&, i] { fn(*workers[i]); });
  fn(*workers[0]);
  for (auto& t : threads) t.join();
}

int run_idle(const Options& options, std::vector<std::unique_ptr<Worker>>& workers) {
  // The stop signal is caught from the start: the caller may send it as soon as it reads the
  // "open" line.
  asio::io_context hold_io;
  asio::signal_set signals(hold_io, SIGTERM, SIGINT);
  // Open: at most 256 connects in flight per loop, so the listen backlog never overflows.
  const auto t0 = steady::now();
  on_every_worker(workers, [](Worker& w) {
    std::size_t next = 0;
    const std::size_t openers = std::min<std::size_t>(256, w.agents.size());
    w.running = static_cast<unsigned>(openers);
    for (std::size_t k = 0; k < openers; ++k)
      asio::co_spawn(w.io, [&w, &next]() -> awaitable<void> {
        while (next < w.agents.size()) {
          Agent& a = *w.agents[next++];
          if (co_await a.open_idle()) ++w.stats.ok;
        }
        --w.running;
      }, asio::detached);
    asio::co_spawn(w.io, w.watchdog(), asio::detached);
    w.io.run();
  });
  std::uint64_t opened = 0;
  for (auto& w : workers) opened += w->stats.ok;
  const double open_s = std::chrono::duration<double>(steady::now() - t0).count();
  std::cout << "idle: " << opened << " connections open (of " << options.clients << ", in " << std::fixed
            << std::setprecision(2) << open_s << " s)" << std::endl;

  // Hold until told to stop, or --duration.
  {
    asio::steady_timer timer(hold_io);
    timer.expires_after(std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(options.duration_s)));
    signals.async_wait([&](const beast::error_code&, int) { timer.cancel(); });
    timer.async_wait([&](const beast::error_code&) { signals.cancel(); });
    hold_io.run();
  }
  const double held_s = std::chrono::duration<double>(steady::now() - t0).count() - open_s;

  // Still there? One more GET on each held connection.
  for (auto& w : workers) w->stats.replies = 0;
  on_every_worker(workers, [](Worker& w) {
    std::size_t next = 0;
    const std::size_t checkers = std::min<std::size_t>(256, w.agents.size());
    w.running = static_cast<unsigned>(checkers);
    for (std::size_t k = 0; k < checkers; ++k)
      asio::co_spawn(w.io, [&w, &next]() -> awaitable<void> {
        while (next < w.agents.size()) {
          Agent& a = *w.agents[next++];
          if (co_await a.still_answers()) ++w.stats.replies;
        }
        --w.running;
      }, asio::detached);
    asio::co_spawn(w.io, w.watchdog(), asio::detached);
    w.io.restart();
    w.io.run();
  });
  Stats all;
  for (auto& w : workers) all.merge(w->stats);
  std::cout << "idle: held " << std::setprecision(2) << held_s << " s; " << all.replies
            << " connections still answered after the hold\n";
  for (const auto& [k, n] : all.not_ok) std::cout << "  " << k << ": " << n << "\n";
  if (!options.json_path.empty()) {
    nlohmann::json j{{"mode", "idle"}, {"clients", options.clients}, {"opened", opened},
                     {"open_s", open_s}, {"held_s", held_s}, {"still_open", all.replies},
                     {"errors", all.not_ok}};
    std::ofstream(options.json_path) << j.dump() << "\n";
  }
  return opened == options.clients ? 0 : 1;
}

// CPU ticks (of sysconf(_SC_CLK_TCK)) of a process and its children, as bench/run.sh counts
// them: the process's own and its waited-for children's, plus each live child's own. 0 once the
// process is gone.
std::uint64_t tree_ticks(int pid) {
  const auto stat_ticks = [](int p, bool with_waited) -> std::uint64_t {
    std::ifstream in("/proc/" + std::to_string(p) + "/stat");
    std::string line;
    if (!std::getline(in, line)) return 0;
    // Fields after the command name, which may hold spaces: state is field 3, utime 14.
    std::istringstream fields(line.substr(line.rfind(')') + 2));
    std::vector<std::string> f{std::istream_iterator<std::string>(fields), {}};
    if (f.size() < 15) return 0;
    std::uint64_t sum = std::stoull(f[11]) + std::stoull(f[12]);
    if (with_waited) sum += std::stoull(f[13]) + std::stoull(f[14]);
    return sum;
  };
  std::uint64_t sum = stat_ticks(pid, true);
  std::ifstream children("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  for (int child = 0; children >> child;) sum += stat_ticks(child, false);
  return sum;
}

// What the measured windows cost: this process's CPU, each watched process's ticks, and the
// machine's busy and total ticks (/proc/stat, all cores).
struct Usage {
  double self_cpu_s = 0;
  std::vector<std::uint64_t> watched;
  std::uint64_t machine_busy = 0;
  std::uint64_t machine_total = 0;

  static Usage now(const std::vector<Watch>& watch) {
    Usage u;
    u.self_cpu_s = cpu_seconds();
    for (const auto& w : watch) u.watched.push_back(tree_ticks(w.pid));
    std::ifstream stat("/proc/stat");
    std::string cpu;
    std::uint64_t v[8]{};
    stat >> cpu >> v[0] >> v[1] >> v[2] >> v[3] >> v[4] >> v[5] >> v[6] >> v[7];
    // user nice system idle iowait irq softirq steal
    u.machine_busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    u.machine_total = u.machine_busy + v[3] + v[4];
    return u;
  }
  void add(const Usage& from, const Usage& to) {
    self_cpu_s += to.self_cpu_s - from.self_cpu_s;
    watched.resize(to.watched.size());
    for (std::size_t i = 0; i < to.watched.size(); ++i)
      watched[i] += to.watched[i] >= from.watched[i] ? to.watched[i] - from.watched[i] : 0;
    machine_busy += to.machine_busy - from.machine_busy;
    machine_total += to.machine_total - from.machine_total;
  }
};

// One server under load: its options (address and request), its agents and what they measured.
struct Target {
  Options options;
  std::unique_ptr<Shared> shared;
  std::vector<std::unique_ptr<Worker>> workers;
  double window_s = 0;  // measured seconds, summed over rounds
  Usage usage;          // within those seconds
};

steady::duration seconds(double s) {
  return std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(s));
}

// Every agent of `t` loads its server for `lead` uncounted, then for `window` counted; then
// starts no more requests, and the round ends when the last reply is in.
void run_round(Target& t, steady::duration lead, steady::duration window) {
  const auto from = steady::now() + lead;
  const auto until = from + window;
  const auto& watch = t.options.watch;
  Usage at_from;
  asio::steady_timer opens(t.workers[0]->io, from), closes(t.workers[0]->io, until);
  opens.async_wait([&](const beast::error_code&) { at_from = Usage::now(watch); });
  closes.async_wait([&](const beast::error_code&) { t.usage.add(at_from, Usage::now(watch)); });
  on_every_worker(t.workers, [from, until](Worker& w) {
    w.run_all([from, until](Agent& a) { return a.run(from, until); });
  });
  t.window_s += std::chrono::duration<double>(window).count();
}

// Prints the figures of `t` (each line after `prefix`) and returns them as JSON.
nlohmann::json report(const Target& t, const std::string& prefix) {
  const Options& options = t.options;
  Stats all;
  for (auto& w : t.workers) all.merge(w->stats);
  std::sort(all.ok_latency_us.begin(), all.ok_latency_us.end());
  const double elapsed = t.window_s;
  const double cpu = t.usage.self_cpu_s;
  const double ok_per_s = elapsed > 0 ? static_cast<double>(all.ok) / elapsed : 0;
  const double p50 = percentile_ms(all.ok_latency_us, 0.50), p90 = percentile_ms(all.ok_latency_us, 0.90),
               p99 = percentile_ms(all.ok_latency_us, 0.99), p999 = percentile_ms(all.ok_latency_us, 0.999),
               max = all.ok_latency_us.empty() ? 0 : all.ok_latency_us.back() / 1000.0;
  const std::uint64_t not_ok = all.replies - all.ok;

  std::cout << std::fixed << std::setprecision(2) << prefix << "mode " << options.mode_name << ", names "
            << (options.names == Names::sequential ? "sequential" : "random") << ", " << options.clients
            << " agents on " << options.threads << " thread(s), " << elapsed << " s: " << all.replies
            << " replies, " << all.ok << " ok (" << std::setprecision(1) << ok_per_s << "/s), " << not_ok
            << " not ok\n"
            << std::setprecision(2) << prefix << "latency of ok replies: p50 " << p50 << " ms, p90 " << p90
            << " ms, p99 " << p99 << " ms, p99.9 " << p999 << " ms, max " << max << " ms\n";
  for (const auto& [k, n] : all.not_ok) {
    std::cout << prefix << "  " << k << ": " << n << "\n";
    if (const auto it = all.sample_body.find(k); it != all.sample_body.end())
      std::cout << prefix << "    e.g. " << it->second << "\n";
  }
  for (const auto& [k, n] : all.setup) std::cout << prefix << "  setup claim refused, retried: " << k << ": " << n << "\n";
  if (all.reclaims) std::cout << prefix << "  (tasks reclaimed after a non-commit: " << all.reclaims << ")\n";
  if (all.retries) std::cout << prefix << "  (transactions run again after a serialization failure: " << all.retries << ")\n";
  std::cout << prefix << "load generator CPU: " << cpu << " s (" << std::setprecision(0)
            << (elapsed > 0 ? 100 * cpu / elapsed : 0) << "% of one core)\n";

  nlohmann::json ticks = nlohmann::json::object();
  for (std::size_t i = 0; i < options.watch.size() && i < t.usage.watched.size(); ++i)
    ticks[options.watch[i].name] = t.usage.watched[i];
  return {{"mode", options.mode_name},
          {"names", options.names == Names::sequential ? "sequential" : "random"},
          {"clients", options.clients},
          {"threads", options.threads},
          {"elapsed_s", elapsed},
          {"replies", all.replies},
          {"ok", all.ok},
          {"errors", not_ok},
          {"ok_per_s", ok_per_s},
          {"p50_ms", p50},
          {"p90_ms", p90},
          {"p99_ms", p99},
          {"p999_ms", p999},
          {"max_ms", max},
          {"not_ok", all.not_ok},
          {"setup_refusals", all.setup},
          {"reclaims", all.reclaims},
          {"serialization_retries", all.retries},
          {"cpu_s", cpu},
          {"cpu_ticks", ticks},
          {"ticks_per_s", sysconf(_SC_CLK_TCK)},
          {"machine_busy_ticks", t.usage.machine_busy},
          {"machine_total_ticks", t.usage.machine_total}};
}

// The servers to load: the one the options name, or each --alternate side.
std::vector<std::unique_ptr<Target>> make_targets(const Options& options) {
  std::vector<Options> each;
  if (options.sides.empty()) each.push_back(options);
  for (const Side& side : options.sides) {
    Options o = options;
    o.host = side.address.host;
    o.port = side.address.port;
    o.target = side.address.target;
    o.bearer = side.bearer;
    each.push_back(std::move(o));
  }
  std::vector<std::unique_ptr<Target>> targets;
  for (Options& o : each) {
    auto t = std::make_unique<Target>();
    t->options = std::move(o);
    asio::io_context io;
    tcp::resolver resolver(io);
    beast::error_code ec;
    const auto results = resolver.resolve(t->options.host, t->options.port, ec);
    if (ec || results.empty()) {
      std::cerr << "gateway-load: cannot resolve " << t->options.host << ":" << t->options.port << ": " << ec.message() << "\n";
      std::exit(2);
    }
    t->shared = std::make_unique<Shared>(t->options, results.begin()->endpoint());
    for (unsigned i = 0; i < t->options.threads; ++i) t->workers.push_back(std::make_unique<Worker>(*t->shared));
    for (unsigned i = 0; i < t->options.clients; ++i) {
      Worker& w = *t->workers[i % t->options.threads];
      w.agents.push_back(std::make_unique<Agent>(w, i + 1));
    }
    for (auto& w : t->workers) w->stats.ok_latency_us.reserve(1 << 16);
    targets.push_back(std::move(t));
  }
  return targets;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  std::signal(SIGPIPE, SIG_IGN);
  raise_fd_limit();
  auto targets = make_targets(options);

  if (options.mode == Mode::idle) return run_idle(options, targets[0]->workers);

  // Setup (protected mode's claims) on every loop, before any clock starts.
  for (auto& t : targets) {
    on_every_worker(t->workers, [](Worker& w) { w.run_all([](Agent& a) { return a.setup(); }); });
    for (auto& w : t->workers)
      if (!w->stats.setup_error.empty()) {
        Stats all;
        for (auto& x : t->workers) all.merge(x->stats);
        std::cerr << "gateway-load: setup: " << all.setup_error << "\n";
        for (const auto& [k, n] : all.setup) std::cerr << "  setup claim " << k << ": " << n << "\n";
        for (const auto& [k, b] : all.sample_body) std::cerr << "  " << k << ": " << b << "\n";
        return 1;
      }
  }

  if (targets.size() == 1) {
    run_round(*targets[0], seconds(options.warmup_s), seconds(options.duration_s));
    nlohmann::json j = report(*targets[0], "");
    if (!options.json_path.empty()) std::ofstream(options.json_path) << j.dump() << "\n";
    if (!options.latencies_path.empty()) {
      std::ofstream out(options.latencies_path);
      for (auto& w : targets[0]->workers)
        for (auto us : w->stats.ok_latency_us) out << us << '\n';
    }
    return 0;
  }

  // Round r of every side in turn, the same agents count on each: the first round opens every
  // side's connections under --warmup, later ones start after --settle.
  const auto window = seconds(options.duration_s / options.rounds);
  for (unsigned r = 0; r < options.rounds; ++r)
    for (auto& t : targets) run_round(*t, seconds(r == 0 ? options.warmup_s : options.settle_s), window);
  nlohmann::json sides = nlohmann::json::object();
  for (std::size_t i = 0; i < targets.size(); ++i) {
    std::cout << options.sides[i].name << " (" << options.sides[i].address.host << ":"
              << options.sides[i].address.port << options.sides[i].address.target << "):\n";
    sides[options.sides[i].name] = report(*targets[i], "  ");
  }
  std::cout << "alternated: " << options.rounds << " rounds of " << std::setprecision(2)
            << options.duration_s / options.rounds << " s per server\n";
  if (!options.json_path.empty()) {
    nlohmann::json j{{"rounds", options.rounds}, {"round_s", options.duration_s / options.rounds}, {"sides", sides}};
    std::ofstream(options.json_path) << j.dump() << "\n";
  }
  return 0;
}
