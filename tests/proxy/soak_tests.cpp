// 64 agents over 500 tasks, a fixed amount of work each: claims, writes,
// stale grants reused after someone else reclaimed, exact retries, and
// provider faults. Afterwards the provider's effects and the ledger must
// agree exactly.
//
// Time is the authority's manual clock, advanced by the agents themselves
// (one action in eight is a tick): leases of 200 to 1200 clock ms expire
// after a number of actions, not of wall-clock seconds, so a slow machine or
// a sanitizer build sees the same mix of live, expired and stale grants, and
// the ticks still race with requests upstream. The real clock path has its
// own tests (store_tests, http_tests).
#include "proxy/proxy_fixture.hpp"

#include <future>
#include <map>
#include <mutex>
#include <random>
#include <set>

using namespace gw;
using namespace gw::test;
using nlohmann::json;

namespace {

constexpr int agent_count = 64;
constexpr int task_count = 500;
constexpr int actions_per_agent = 60;
constexpr std::int64_t tick_ms = 50;

// What the agents know about a task, shared between them.
struct TaskBook {
  std::vector<std::string> grants;  // in issue order; the last is the newest
  std::int64_t version = 0;         // as of the newest claim
  std::vector<Write> writes;        // sent so far, for exact retries
};

struct Books {
  std::mutex clock_mutex;  // ticks in order: the authority clock never rolls back
  std::int64_t now_ms = 0;
  std::mutex mutex;
  std::vector<TaskBook> tasks{task_count};
  std::map<std::string, int> replies;  // "status code" -> count
  std::vector<std::string> failures;   // transport errors and 500s
};

// Every answer the soak may get. authority_unavailable is allowed (a busy
// database may not answer in time) but counted in the summary.
const std::set<std::string> expected_codes{
    "granted",        "busy",          "committed",           "historical_retry",     "rejected_by_provider",
    "stale_owner",    "expired_owner", "operation_in_flight", "unresolved_operation", "version_conflict",
    "provider_unavailable", "unknown_outcome", "authority_unavailable"};

std::string task_name(int t) { return "soak-" + std::to_string(t); }

// Agent 0 also injects a fault before every fourth of its actions: an effect
// whose reply is lost, a reply too late, or a 5xx without an effect. All
// leave outcomes unknown. A fault with count 1 hits whichever request comes next.
void inject_fault(const ProviderProcess& provider, std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0: provider.set_fault("drop_after_execute", 0, 1); break;
    case 1: provider.set_fault("late_reply", 1500, 1); break;
    case 2: provider.set_fault("error_5xx", 0, 1); break;
    default: provider.set_fault("none"); break;
  }
}

void agent(int id, const Gateway& g, const ProviderProcess& provider, Books& books) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(id) * 7919 + 17);
  auto roll = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
  HttpClient c(g.port());
  const auto owner = "agent-" + std::to_string(id);
  int serial = 0;
  auto tally = [&](const std::string& what, const Reply& r) {
    std::lock_guard lock(books.mutex);
    ++books.replies[std::to_string(r.status) + " " + r.code()];
    if (!expected_codes.contains(r.code()) || r.status == 500)
      books.failures.push_back(what + ": " + std::to_string(r.status) + " " + r.body);
  };
  auto write = [&](const Write& w, const std::string& what) {
    try {
      tally(what, send(c, w));
    } catch (const std::exception& e) {
      std::lock_guard lock(books.mutex);
      books.failures.push_back(what + ": no reply: " + e.what());
    }
  };

  for (int step = 0; step < actions_per_agent; ++step) {
    if (id == 0 && step % 4 == 0) inject_fault(provider, rng);
    const int t = roll(task_count);
    const int action = roll(8);
    if (action == 0) {  // the clock moves on
      std::lock_guard lock(books.clock_mutex);
      books.now_ms += tick_ms;
      const auto r = c.post_json("/v1/admin/clock", {{"now_ms", books.now_ms}}, operator_token);
      if (r.status != 200) {
        std::lock_guard books_lock(books.mutex);
        books.failures.push_back("tick: " + std::to_string(r.status) + " " + r.body);
      }
    } else if (action < 5) {  // claim, then a new write (sometimes retried at once)
      Reply claimed;
      try {
        claimed = c.post_json(task_path("tenant-a", task_name(t), "claim"),
                              {{"owner", owner}, {"lease_ms", 200 + roll(1000)}}, agent_a);
      } catch (const std::exception& e) {
        std::lock_guard lock(books.mutex);
        books.failures.push_back(std::string("claim: no reply: ") + e.what());
        continue;
      }
      tally("claim", claimed);
      if (claimed.code() != "granted") continue;
      Write w;
      w.task = task_name(t);
      w.grant = grant_token(claimed.json());
      w.key = owner + "-op-" + std::to_string(serial++);
      w.expected_version = claimed.json()["version"].get<std::int64_t>();
      // Slots collide now and then: the provider's definite rejections.
      w.body = booking_body("slot-" + std::to_string(roll(20000)), owner);
      {
        std::lock_guard lock(books.mutex);
        auto& book = books.tasks[t];
        book.grants.push_back(w.grant);
        book.version = *w.expected_version;
        book.writes.push_back(w);
      }
      write(w, "new write");
      if (roll(3) == 0) write(w, "immediate exact retry");
    } else if (action < 6) {  // a stale grant: an older one, after someone reclaimed
      Write w;
      {
        std::lock_guard lock(books.mutex);
        auto& book = books.tasks[t];
        if (book.grants.size() < 2) continue;
        w.grant = book.grants[roll(static_cast<int>(book.grants.size()) - 1)];
        w.expected_version = book.version;
      }
      w.task = task_name(t);
      w.key = owner + "-op-" + std::to_string(serial++);
      w.body = booking_body("slot-" + std::to_string(roll(20000)), owner);
      write(w, "stale grant");
    } else {  // an exact retry of any earlier write, under the newest grant
      Write w;
      {
        std::lock_guard lock(books.mutex);
        auto& book = books.tasks[t];
        if (book.writes.empty()) continue;
        w = book.writes[roll(static_cast<int>(book.writes.size()))];
        w.grant = book.grants.back();
      }
      write(w, "exact retry");
    }
  }
}

}  // namespace

TEST_CASE("soak: 64 agents, 500 tasks, stale grants, retries and faults on a ticking clock: effects and ledger agree") {
  ProviderSettings settings;
  settings.request_timeout_ms = 1000;
  ProxyRig rig(settings);
  auto& provider = rig.provider;
  auto& g = rig.gateway;
  g.set_clock(0);
  Books books;
  // std::async: an exception in an agent reaches this thread at get(), it
  // does not abort the test binary.
  std::vector<std::future<void>> agents;
  for (int i = 0; i < agent_count; ++i)
    agents.push_back(std::async(std::launch::async, agent, i, std::cref(g), std::cref(provider), std::ref(books)));
  for (auto& a : agents) a.get();
  provider.set_fault("none");

  // Requests the gateway gave up on (late replies, timeouts) may still be
  // executing at the provider: read its counts once it has nothing in hand.
  REQUIRE(provider.wait_until_idle());
  const json effects = provider.effects();

  std::string summary;
  for (const auto& [reply, n] : books.replies) summary += reply + ": " + std::to_string(n) + "\n";
  MESSAGE("replies:\n" << summary << "provider effects: " << effects["effects"]);
  for (const auto& f : books.failures) FAIL_CHECK(f);
  CHECK(books.failures.empty());

  // The soak did exercise what it claims to.
  auto count = [&](const std::string& code) {
    int n = 0;
    for (const auto& [reply, k] : books.replies)
      if (reply.ends_with(" " + code)) n += k;
    return n;
  };
  CHECK(count("committed") > 0);
  CHECK(count("historical_retry") > 0);
  CHECK(count("stale_owner") + count("expired_owner") > 0);
  CHECK(count("operation_conflict") == 0);  // every retry was exact

  // Every effect has exactly one ledger row, succeeded or unknown; no key
  // has two effects; every succeeded row has its one effect.
  auto ledger = json::parse(g.db().scalar(
      "SELECT coalesce(json_object_agg(upstream_key, state), '{}') FROM operations"));
  CHECK(g.db().scalar("SELECT count(*) - count(DISTINCT upstream_key) FROM operations") == "0");
  CHECK(g.db().scalar("SELECT count(*) FROM operations WHERE state = 'in_flight'") == "0");
  std::int64_t sum = 0;
  for (const auto& [key, n] : effects["by_key"].items()) {
    CAPTURE(key);
    sum += n.get<std::int64_t>();
    CHECK(n == 1);
    REQUIRE(ledger.contains(key));
    CHECK((ledger[key] == "succeeded" || ledger[key] == "unknown"));
  }
  CHECK(sum == effects["effects"].get<std::int64_t>());
  CHECK(!effects["by_key"].contains(""));
  int succeeded = 0;
  for (const auto& [key, state] : ledger.items())
    if (state == "succeeded") {
      ++succeeded;
      CAPTURE(key);
      CHECK(effects["by_key"].contains(key));
    }
  CHECK(succeeded > 0);
}
