// gateway-load: the closed-loop HTTP/1.1 load generator of the benchmarks (bench/run.sh).
// N client threads, one keep-alive connection each; every thread sends its next request as soon
// as the previous reply is in, for a fixed duration, and records what came back:
//   claim      each request claims a fresh task (the ownership transaction alone)
//   protected  each thread claims its own task once, then loops protected booking POSTs through
//              the gateway (admission, forward, outcome), one new Idempotency-Key and slot each,
//              Expected-Version the version its last commit returned
// Task names and keys start with random hex, as UUIDs would (see random_name).
//   direct     the same booking POSTs straight to the demo provider: the proxy-overhead baseline
// Every reply is counted by status and Gateway-Status so any non-success is visible. A summary
// goes to stdout and, with --json FILE, a JSON object for the script that tabulates the figures.
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;

enum class Mode { claim, protected_write, direct };

struct Options {
  Mode mode = Mode::protected_write;
  std::string mode_name = "protected";
  std::string host = "127.0.0.1";
  std::string port;
  unsigned clients = 16;
  double duration_s = 10;
  std::string tenant = "tenant-a";
  std::string agent_token = "dev-agent-token-a";
  std::string provider = "booking";
  std::string provider_token = "booking-secret";
  std::string run_id;
  std::chrono::milliseconds timeout{10000};
  std::int64_t lease_ms = 3'600'000;
  std::string json_path;
};

const char* usage_text =
    "usage: gateway-load --mode claim|protected|direct --port N [options]\n"
    "  --host H             server address (127.0.0.1)\n"
    "  --clients N          client threads, one keep-alive connection each (16)\n"
    "  --duration S         measured seconds, after every thread's setup (10)\n"
    "  --tenant T           tenant in the gateway paths (tenant-a)\n"
    "  --token T            agent bearer token for the gateway (dev-agent-token-a)\n"
    "  --provider NAME      gateway provider route (booking)\n"
    "  --provider-token T   the provider's credential, direct mode (booking-secret)\n"
    "  --run-id ID          prefix of task names and keys (default: from the clock)\n"
    "  --timeout-ms MS      deadline of each request (10000)\n"
    "  --json FILE          also write the figures as one JSON object\n";

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
      else usage_error("--mode must be claim, protected or direct");
    } else if (name == "--host") o.host = value;
    else if (name == "--port") o.port = std::to_string(parse_number<unsigned>(name, value));
    else if (name == "--clients") o.clients = parse_number<unsigned>(name, value);
    else if (name == "--duration") o.duration_s = parse_number<double>(name, value);
    else if (name == "--tenant") o.tenant = value;
    else if (name == "--token") o.agent_token = value;
    else if (name == "--provider") o.provider = value;
    else if (name == "--provider-token") o.provider_token = value;
    else if (name == "--run-id") o.run_id = value;
    else if (name == "--timeout-ms") o.timeout = std::chrono::milliseconds(parse_number<unsigned>(name, value));
    else if (name == "--json") o.json_path = value;
    else usage_error("unknown option " + name);
  }
  if (!have_mode) usage_error("--mode is required");
  if (o.port.empty()) usage_error("--port is required");
  if (o.run_id.empty()) {
    // Unique across runs against the same database, so tasks and keys never collide.
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    o.run_id = "b" + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
  }
  return o;
}

struct Reply {
  unsigned status = 0;
  std::string gateway_status;  // "" when the header is absent (the provider never sets it)
  std::optional<std::string> committed_version;
  std::string body;
};

using Headers = std::vector<std::pair<std::string, std::string>>;

// One keep-alive connection. A failed exchange throws beast::system_error and closes the
// socket, so the next exchange reconnects; so does a reply that asks to close.
class Connection {
 public:
  explicit Connection(const Options& options) : options_(options), stream_(io_) {}

  Reply post(const std::string& target, const Headers& headers, std::string body) {
    if (!open_) connect();
    http::request<http::string_body> rq{http::verb::post, target, 11};
    rq.set(http::field::host, options_.host + ":" + options_.port);
    rq.set(http::field::content_type, "application/json");
    for (const auto& [k, v] : headers) rq.set(k, v);
    rq.body() = std::move(body);
    rq.keep_alive(true);
    rq.prepare_payload();
    try {
      stream_.expires_after(options_.timeout);
      http::write(stream_, rq);
      http::response_parser<http::string_body> parser;
      parser.body_limit(1 << 20);
      stream_.expires_after(options_.timeout);
      http::read(stream_, buffer_, parser);
      auto rs = parser.release();
      Reply r;
      r.status = rs.result_int();
      if (auto it = rs.find("Gateway-Status"); it != rs.end()) r.gateway_status = std::string(it->value());
      if (auto it = rs.find("Committed-Version"); it != rs.end()) r.committed_version = std::string(it->value());
      r.body = std::move(rs.body());
      if (!rs.keep_alive()) close();
      return r;
    } catch (...) {
      close();
      throw;
    }
  }

 private:
  void connect() {
    tcp::resolver resolver(io_);
    stream_.expires_after(options_.timeout);
    stream_.connect(resolver.resolve(options_.host, options_.port));
    stream_.socket().set_option(tcp::no_delay(true));
    buffer_.clear();
    open_ = true;
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
    buffer_.clear();
    open_ = false;
  }

  const Options& options_;
  asio::io_context io_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  bool open_ = false;
};

struct ThreadStats {
  std::vector<std::uint32_t> ok_latency_us;
  std::map<std::string, std::uint64_t> by_status;  // "201 committed", "409 version_conflict", "io: ..."
  std::uint64_t replies = 0;
  std::uint64_t ok = 0;
  std::uint64_t reclaims = 0;
  std::string setup_error;
};

std::string status_key(const Reply& r) {
  return std::to_string(r.status) + (r.gateway_status.empty() ? "" : " " + r.gateway_status);
}

// One client thread: its connection, its task (protected mode) and its counters.
class Client {
 public:
  Client(const Options& options, unsigned index) : options_(options), index_(index), conn_(options) {}

  // Protected mode claims the thread's task before the clock starts.
  void setup() {
    if (options_.mode == Mode::protected_write) claim_own_task();
  }

  void run(steady::time_point deadline) {
    for (std::uint64_t n = 0; steady::now() < deadline; ++n) {
      const auto started = steady::now();
      try {
        Reply r = send(n);
        const auto took = std::chrono::duration_cast<std::chrono::microseconds>(steady::now() - started);
        ++stats_.replies;
        ++stats_.by_status[status_key(r)];
        if (success(r)) {
          ++stats_.ok;
          stats_.ok_latency_us.push_back(static_cast<std::uint32_t>(std::min<std::int64_t>(took.count(), UINT32_MAX)));
          if (options_.mode == Mode::protected_write)
            version_ = r.committed_version ? std::stoll(*r.committed_version) : version_ + 1;
        } else if (options_.mode == Mode::protected_write) {
          recover();
        }
      } catch (const beast::system_error& e) {
        ++stats_.replies;
        ++stats_.by_status["io: " + e.code().message()];
        if (options_.mode == Mode::protected_write) recover();
      } catch (const std::exception& e) {
        ++stats_.replies;
        ++stats_.by_status[std::string("error: ") + e.what()];
        if (options_.mode == Mode::protected_write) recover();
      }
    }
  }

  ThreadStats& stats() { return stats_; }

 private:
  std::string gateway_task_path(const std::string& task) const {
    return "/v1/tenants/" + options_.tenant + "/tasks/" + task;
  }

  std::string unique(std::uint64_t n) const {
    return options_.run_id + "-" + std::to_string(index_) + "-" + std::to_string(n);
  }

  // Random first: concurrent requests then touch B-tree pages far apart, as tasks and keys named
  // by UUIDs would. Names sharing a prefix would all land on one leaf page, where PostgreSQL's
  // page-granular SERIALIZABLE read locks make them conflict.
  std::string random_name() {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out(16, '0');
    for (auto value = rng_(); auto& c : out) {
      c = digits[value & 15];
      value >>= 4;
    }
    return out;
  }

  std::string booking_body(std::uint64_t n) const {
    return nlohmann::json{{"slot", "slot-" + unique(n)}, {"customer", "bench-" + std::to_string(index_)}}.dump();
  }

  bool success(const Reply& r) const {
    switch (options_.mode) {
      case Mode::claim: return r.status == 200 && r.gateway_status == "granted";
      case Mode::protected_write: return r.status == 201 && r.gateway_status == "committed";
      case Mode::direct: return r.status == 201;
    }
    return false;
  }

  Reply send(std::uint64_t n) {
    const Headers agent{{"Authorization", "Bearer " + options_.agent_token}};
    switch (options_.mode) {
      case Mode::claim:
        return conn_.post(gateway_task_path(random_name() + "-" + options_.run_id) + "/claim", agent, claim_body());
      case Mode::protected_write:
        return conn_.post(gateway_task_path(task_) + "/providers/" + options_.provider + "/bookings",
                          {{"Authorization", "Bearer " + options_.agent_token},
                           {"Fence-Grant", grant_token_},
                           {"Idempotency-Key", random_name() + "-" + std::to_string(n)},
                           {"Expected-Version", std::to_string(version_)}},
                          booking_body(n));
      case Mode::direct:
        // What the gateway sends upstream, less the forwarding headers.
        return conn_.post("/bookings",
                          {{"Authorization", "Bearer " + options_.provider_token},
                           {"Idempotency-Key", "d" + unique(n)}},
                          booking_body(n));
    }
    throw std::logic_error("unknown mode");
  }

  std::string claim_body() const {
    return nlohmann::json{{"owner", "bench-" + std::to_string(index_)}, {"lease_ms", options_.lease_ms}}.dump();
  }

  void claim_own_task() {
    task_ = random_name() + "-" + options_.run_id + "-" + std::to_string(index_);
    Reply r = conn_.post(gateway_task_path(task_) + "/claim",
                         {{"Authorization", "Bearer " + options_.agent_token}}, claim_body());
    if (r.status != 200) throw std::runtime_error("claim of " + task_ + " answered " + status_key(r) + ": " + r.body);
    auto j = nlohmann::json::parse(r.body);
    grant_token_ = j.at("grant_token").get<std::string>();
    version_ = j.at("version").get<std::int64_t>();
  }

  // After anything but a commit the task's state is not what this thread believes (a held
  // outcome would block it for good), so it carries on with a freshly claimed task.
  void recover() {
    ++stats_.reclaims;
    try {
      claim_own_task();
    } catch (const std::exception& e) {
      ++stats_.by_status[std::string("reclaim failed: ") + e.what()];
    }
  }

  const Options& options_;
  unsigned index_;
  Connection conn_;
  ThreadStats stats_;
  std::string task_;
  std::string grant_token_;
  std::int64_t version_ = 0;
  std::mt19937_64 rng_{std::random_device{}()};
};

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double percentile_ms(const std::vector<std::uint32_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1] / 1000.0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  std::signal(SIGPIPE, SIG_IGN);

  std::vector<std::unique_ptr<Client>> clients;
  for (unsigned i = 0; i < options.clients; ++i) clients.push_back(std::make_unique<Client>(options, i));

  // Two rendezvous: every thread's setup is done; then the clock starts for all at once.
  std::barrier rendezvous(static_cast<std::ptrdiff_t>(options.clients) + 1);
  std::atomic<bool> setup_failed{false};
  steady::time_point deadline;
  std::vector<std::thread> threads;
  for (auto& c : clients) {
    threads.emplace_back([&, client = c.get()] {
      try {
        client->setup();
      } catch (const std::exception& e) {
        client->stats().setup_error = e.what();
        setup_failed = true;
      }
      rendezvous.arrive_and_wait();
      rendezvous.arrive_and_wait();
      if (!setup_failed) client->run(deadline);
    });
  }
  rendezvous.arrive_and_wait();
  const auto cpu_start = cpu_seconds();
  const auto start = steady::now();
  deadline = start + std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(options.duration_s));
  rendezvous.arrive_and_wait();
  for (auto& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(steady::now() - start).count();
  const double cpu = cpu_seconds() - cpu_start;

  if (setup_failed) {
    for (auto& c : clients)
      if (!c->stats().setup_error.empty()) std::cerr << "gateway-load: setup: " << c->stats().setup_error << "\n";
    return 1;
  }

  ThreadStats all;
  for (auto& c : clients) {
    auto& s = c->stats();
    all.replies += s.replies;
    all.ok += s.ok;
    all.reclaims += s.reclaims;
    for (const auto& [k, n] : s.by_status) all.by_status[k] += n;
    all.ok_latency_us.insert(all.ok_latency_us.end(), s.ok_latency_us.begin(), s.ok_latency_us.end());
  }
  std::sort(all.ok_latency_us.begin(), all.ok_latency_us.end());
  const double ok_per_s = all.ok / elapsed;
  const double p50 = percentile_ms(all.ok_latency_us, 0.50), p90 = percentile_ms(all.ok_latency_us, 0.90),
               p99 = percentile_ms(all.ok_latency_us, 0.99),
               max = all.ok_latency_us.empty() ? 0 : all.ok_latency_us.back() / 1000.0;

  std::cout << std::fixed << std::setprecision(2) << "mode " << options.mode_name << ", " << options.clients
            << " clients, " << elapsed << " s: " << all.replies << " replies, " << all.ok << " ok ("
            << std::setprecision(1) << ok_per_s << "/s), " << (all.replies - all.ok) << " not ok\n"
            << std::setprecision(2) << "latency of ok replies: p50 " << p50 << " ms, p90 " << p90 << " ms, p99 "
            << p99 << " ms, max " << max << " ms\n";
  for (const auto& [k, n] : all.by_status) std::cout << "  " << k << ": " << n << "\n";
  if (all.reclaims) std::cout << "  (tasks reclaimed after a non-commit: " << all.reclaims << ")\n";
  std::cout << "load generator CPU: " << cpu << " s\n";

  if (!options.json_path.empty()) {
    nlohmann::json j{{"mode", options.mode_name},   {"clients", options.clients}, {"elapsed_s", elapsed},
                     {"replies", all.replies},      {"ok", all.ok},               {"errors", all.replies - all.ok},
                     {"ok_per_s", ok_per_s},        {"p50_ms", p50},              {"p90_ms", p90},
                     {"p99_ms", p99},               {"max_ms", max},              {"by_status", all.by_status},
                     {"reclaims", all.reclaims},    {"cpu_s", cpu}};
    std::ofstream(options.json_path) << j.dump() << "\n";
  }
  return 0;
}
