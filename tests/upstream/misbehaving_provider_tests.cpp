// A randomized provider that misbehaves in every way the client must
// survive, under concurrent requests from several partitions through one
// Client on two io_contexts. Seeded (UPSTREAM_FUZZ_SEED to replay; the seed
// is printed on failure). Each request tells the scripted provider what to do
// with it (X-Plan), so the test knows what the caller must get:
//  - every reply a caller gets carries its own tag, never another request's;
//  - a plan that must fail fails, with the expected failure, never with data;
//  - no request ever arrives on a connection after the provider put bytes
//    nobody asked for on it (the server knows which ones it poisoned);
//  - peak memory stays bounded although chunk extensions and trailers of up
//    to 64 MiB are streamed.
//
// A provider that writes stray bytes while the client is already writing
// the next request on that connection cannot be told from one that
// answered it: no HTTP/1.1 client can. So after a request whose plan
// poisons its connection, its partition sends nothing new until the
// provider's bytes have reached the client's socket (acknowledged, see
// session::wait_acknowledged); other partitions carry on meanwhile, and
// only partitioned idle lists keep them off that connection.
#include "client_harness.hpp"
#include "peak_memory.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <sstream>

namespace gw::upstream::test {
namespace {

enum class Act {
  ok,           // a correct reply
  stray_bytes,  // a correct reply, then bytes (garbage or a complete reply), with it or later
  head_body,    // HEAD only: the announced body sent after the reply, with it or later
  interim,      // 1 to 3 interim replies (100, 102, 103), then a correct reply
  switching,    // 101 Switching Protocols (maybe after a 100), then bytes of "the new protocol"
  chunked,      // a chunked reply with an extension and a trailer field of random size
  cut,          // a correct reply cut at a random byte: FIN or RST
};
constexpr int act_count = 7;

struct Plan {
  Act what = Act::ok;
  unsigned delay_ms = 0;      // stray_bytes, head_body: 0 = in the same write as the reply
  bool complete_reply = true;  // stray_bytes: the stray bytes are a whole reply (else garbage)
  std::size_t extension = 0;  // chunked
  std::size_t trailer = 0;    // chunked
  std::size_t cut_at = 0;     // cut: taken modulo the reply's size
  bool reset = false;         // cut
  unsigned interims = 0;      // interim; switching: 1 = a 100 first

  bool poisons() const { return what == Act::stray_bytes || what == Act::head_body || what == Act::switching; }
  std::string header() const {
    std::ostringstream out;
    out << static_cast<int>(what) << ' ' << delay_ms << ' ' << complete_reply << ' ' << extension << ' ' << trailer
        << ' ' << cut_at << ' ' << reset << ' ' << interims;
    return out.str();
  }
  static Plan parse(const std::string& text) {
    std::istringstream in(text);
    Plan p;
    int what = 0;
    in >> what >> p.delay_ms >> p.complete_reply >> p.extension >> p.trailer >> p.cut_at >> p.reset >> p.interims;
    p.what = static_cast<Act>(what);
    return p;
  }
};

// Under the client's read-buffer bound (64 KiB of head plus a read), or
// far over it; never near it, so the test does not depend on its exact value.
constexpr std::size_t small_part = 24 * 1024;
constexpr std::size_t big_part_min = 256 * 1024;
constexpr std::size_t big_part_max = 64 * 1024 * 1024;

Plan choose(std::mt19937_64& rng, const std::string& method) {
  auto pick = [&](std::size_t low, std::size_t high) {
    return std::uniform_int_distribution<std::size_t>(low, high)(rng);
  };
  Plan p;
  p.what = static_cast<Act>(pick(0, act_count - 1));
  if (method == "HEAD" && p.what == Act::chunked) p.what = Act::head_body;  // a HEAD reply carries no chunks
  if (method != "HEAD" && p.what == Act::head_body) p.what = Act::stray_bytes;
  p.delay_ms = pick(0, 1) == 0 ? 0 : static_cast<unsigned>(pick(1, 20));
  p.complete_reply = pick(0, 1) == 0;
  auto part = [&] { return pick(0, 5) == 0 ? pick(big_part_min, big_part_max) : pick(0, small_part); };
  p.extension = part();
  p.trailer = part();
  p.cut_at = pick(0, 1 << 20);
  p.reset = pick(0, 1) == 0;
  p.interims = static_cast<unsigned>(p.what == Act::switching ? pick(0, 1) : pick(1, 3));
  return p;
}

bool over_bound(const Plan& p) { return p.extension > small_part || p.trailer > small_part; }

// What the caller must get: its own tagged reply, or this failure.
Failure expected_failure(const Plan& p) {
  switch (p.what) {
    case Act::switching:
    case Act::cut: return Failure::failed_after_send;
    case Act::chunked: return over_bound(p) ? Failure::response_too_large : Failure::none;
    default: return Failure::none;
  }
}

// Requests of one partition wait here while one of its connections may
// still receive stray bytes.
struct PartitionGate {
  std::mutex mutex;
  std::condition_variable changed;
  int pending = 0;
};

// Poisoning plans whose bytes have reached the client, by tag.
class LandedTags {
 public:
  void add(const std::string& tag) {
    std::lock_guard lock(mutex_);
    tags_.insert(tag);
    changed_.notify_all();
  }
  bool wait(const std::string& tag) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, 60s, [&] { return tags_.count(tag) > 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::set<std::string> tags_;
};

std::string head_reply(const std::string& tag, std::size_t announced) {
  return "HTTP/1.1 200 OK\r\nX-Tag: " + tag + "\r\nContent-Length: " + std::to_string(announced) + "\r\n\r\n";
}

std::string interim_reply(unsigned status) {
  return "HTTP/1.1 " + std::to_string(status) + " Interim\r\n\r\n";
}

// One connection of the misbehaving provider.
void serve(ServerSession& s, LandedTags& landed, std::atomic<int>& after_poison) {
  bool poisoned = false;
  while (auto request = s.read_request()) {
    const auto tag = tag_of(*request);
    if (poisoned) {
      ++after_poison;
      s.write(tagged_reply("on-a-poisoned-connection"));
      continue;
    }
    const auto plans = request->values("X-Plan");
    const Plan p = plans.empty() ? Plan{} : Plan::parse(plans.front());
    const bool head = request->method == "HEAD";
    const std::string good = head ? head_reply(tag, ("tag:" + tag).size()) : tagged_reply(tag);
    auto poison = [&](const std::string& reply, const std::string& stray) {
      if (p.delay_ms == 0) {
        s.write(reply + stray);
      } else {
        s.write(reply);
        std::this_thread::sleep_for(std::chrono::milliseconds(p.delay_ms));
        s.write(stray);
      }
      s.wait_acknowledged();
      poisoned = true;
      landed.add(tag);
    };
    switch (p.what) {
      case Act::ok: s.write(good); break;
      case Act::stray_bytes:
        poison(good, p.complete_reply ? tagged_reply("stray-" + tag) : std::string("garbage\r\n\r\n"));
        break;
      case Act::head_body: {
        const std::string stray = tagged_reply("stray-" + tag);
        poison(head_reply(tag, stray.size()), stray);
        break;
      }
      case Act::interim: {
        std::string out;
        for (unsigned i = 0; i < p.interims; ++i) out += interim_reply(i % 3 == 0 ? 100 : i % 3 == 1 ? 103 : 102);
        s.write(out + good);
        break;
      }
      case Act::switching: {
        std::string out = p.interims ? interim_reply(100) : std::string();
        out += "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\n";
        s.write(out + tagged_reply("after-101-" + tag));
        s.wait_acknowledged();
        poisoned = true;
        landed.add(tag);
        break;
      }
      case Act::chunked: {
        // "tag:" and the tag as two chunks, the extension on the first.
        std::ostringstream size;
        size << std::hex << tag.size();
        if (!s.write("HTTP/1.1 200 OK\r\nX-Tag: " + tag + "\r\nTransfer-Encoding: chunked\r\n\r\n4;e=v") ||
            !s.write_repeated("x", p.extension) ||
            !s.write("\r\ntag:\r\n" + size.str() + "\r\n" + tag + "\r\n0\r\nX-Trailer: ") ||
            !s.write_repeated("y", p.trailer) || !s.write("\r\n\r\n"))
          return;  // the client gave up on it
        break;
      }
      case Act::cut: {
        s.write(good.substr(0, p.cut_at % good.size()));
        return p.reset ? s.reset() : s.close();
      }
    }
  }
}

struct OutcomeLog {
  std::mutex mutex;
  std::vector<std::string> errors;
  std::map<std::string, int> counts;
  void error(std::string text) {
    std::lock_guard lock(mutex);
    errors.push_back(std::move(text));
  }
  void count(const std::string& what) {
    std::lock_guard lock(mutex);
    ++counts[what];
  }
};

// Checks one result against its plan; the text of what is wrong, if anything.
std::string judge(const Request& request, const std::string& tag, const Plan& p, const Result& r) {
  std::ostringstream why;
  const Failure expected = expected_failure(p);
  if (r.failure != expected) {
    why << "expected " << to_string(expected) << ", got " << to_string(r.failure) << " (" << r.detail << ")";
  } else if (expected != Failure::none) {
    if (r.response) why << "a failure that carries a response";
    if (!r.request_bytes_sent) why << "a failure after the provider read the request, reported unsent";
  } else if (!r.response) {
    why << "success without a response";
  } else {
    const auto& response = *r.response;
    std::string echoed;
    for (const auto& h : response.headers)
      if (h.name == "X-Tag") echoed = h.value;
    const std::string body = request.method == "HEAD" ? std::string() : "tag:" + tag;
    if (response.status != 200) why << "status " << response.status;
    if (echoed != tag) why << "the reply of '" << echoed << "'";
    if (response.body != body) why << "body '" << response.body.substr(0, 80) << "'";
    if (p.what == Act::chunked) {
      const auto trailer = std::find_if(response.headers.begin(), response.headers.end(),
                                        [](const Header& h) { return h.name == "X-Trailer"; });
      if (trailer == response.headers.end() || trailer->value.size() != p.trailer)
        why << "the trailer field missing or cut";
    }
  }
  if (why.str().empty()) return {};
  return request.method + " " + tag + " plan '" + p.header() + "': " + why.str();
}

std::uint64_t seed_from_environment() {
  if (const char* text = std::getenv("UPSTREAM_FUZZ_SEED")) return std::strtoull(text, nullptr, 10);
  return std::random_device()();
}

TEST_CASE("a randomized misbehaving provider: every caller gets its own reply or a failure, in bounded memory") {
  const std::uint64_t seed = seed_from_environment();
  INFO("seed " << seed << " (UPSTREAM_FUZZ_SEED=" << seed << " replays the same plans)");
  LandedTags landed;
  std::atomic<int> after_poison{0};
  TestServer server([&](ServerSession& s) { serve(s, landed, after_poison); });
  PerThreadHarness h;
  auto e = local(server);
  e.max_connections = 64;  // more than the workers: no request ever waits for a slot (see the top)
  e.max_response_body = 64 * 1024;

  const std::vector<std::string> partitions{"tenant-a", "tenant-b", "tenant-c", ""};
  std::map<std::string, PartitionGate> gates;
  for (const auto& p : partitions) gates[p];
  constexpr int workers_per_partition = 2;
  constexpr int rounds_per_worker = 50;
  OutcomeLog log;

  REQUIRE(reset_peak_rss());
  const std::size_t before_kib = status_kib("VmRSS");
  std::vector<std::thread> workers;
  for (std::size_t w = 0; w < partitions.size() * workers_per_partition; ++w) {
    workers.emplace_back([&, w] {
      const std::string& partition = partitions[w % partitions.size()];
      PartitionGate& gate = gates.at(partition);
      std::mt19937_64 rng(seed * 1000003 + w);
      for (int round = 0; round < rounds_per_worker; ++round) {
        static const char* const methods[] = {"GET", "GET", "HEAD", "POST"};
        Request request{methods[rng() % 4], "/", {}, {}};
        const std::string tag = (partition.empty() ? "internal" : partition) + "-" + std::to_string(w) + "-" +
                                std::to_string(round);
        const Plan p = choose(rng, request.method);
        request.headers = {{"X-Tag", tag}, {"X-Plan", p.header()}};
        if (request.method == "POST") request.body = "{\"n\":" + std::to_string(round) + "}";
        request.resend_if_stale = request.method != "POST" && rng() % 2 == 0;
        request.partition = partition;
        net::io_context& on = rng() % 2 == 0 ? h.a_ : h.b_;
        std::future<std::pair<Result, bool>> future;
        {
          // Sent under the gate's lock: a request of this partition either
          // starts before a poisoning one completes (FIFO on its
          // io_context, and never queued) or after its bytes have landed.
          std::unique_lock lock(gate.mutex);
          gate.changed.wait(lock, [&] { return gate.pending == 0; });
          if (p.poisons()) ++gate.pending;
          future = h.start(on, e, request);
        }
        if (future.wait_for(60s) != std::future_status::ready) {
          log.error(tag + ": no result within 60 s");
          return;
        }
        const Result result = future.get().first;
        if (auto error = judge(request, tag, p, result); !error.empty()) log.error(error);
        log.count(std::string(to_string(result.failure)));
        if (p.poisons()) {
          if (!landed.wait(tag)) log.error(tag + ": the provider never finished poisoning its connection");
          std::lock_guard lock(gate.mutex);
          --gate.pending;
          gate.changed.notify_all();
        }
      }
    });
  }
  for (auto& t : workers) t.join();
  const std::size_t peak_kib = status_kib("VmHWM");

  std::ostringstream counts;
  for (const auto& [what, n] : log.counts) counts << what << ' ' << n << "; ";
  MESSAGE("seed " << seed << ": " << counts.str() << server.connections() << " connections");
  std::ostringstream first_errors;
  for (std::size_t i = 0; i < std::min<std::size_t>(log.errors.size(), 10); ++i) first_errors << log.errors[i] << '\n';
  CAPTURE(first_errors.str());
  CHECK(log.errors.size() == 0);
  CHECK(after_poison == 0);
  CAPTURE(before_kib);
  CAPTURE(peak_kib);
  // Streamed extensions and trailers total hundreds of MiB; the client
  // holds at most a read buffer's worth per exchange.
  CHECK(peak_kib < before_kib + 64 * 1024 + sanitizer_allowance_kib);
}

}  // namespace
}  // namespace gw::upstream::test
