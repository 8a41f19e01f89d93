// Reconciliation by provider lookup as tables (core/reconcile.hpp): the
// lookup target, what a lookup's answer decides, and the backoff between
// lookups. No I/O: the random source is a value the test chooses.
#include "core/fingerprint.hpp"
#include "core/reconcile.hpp"
#include "service/api/path.hpp"

#include <doctest/doctest.h>

#include <climits>
#include <limits>

using namespace gw;

namespace {

LookupConfig demo_lookup() {
  LookupConfig l;
  l.path = "/bookings/by-key/{key}";
  l.settle_window = std::chrono::milliseconds(60000);
  l.status_pointer = "/status";
  l.body_pointer = "/body";
  return l;
}

// A lookup reply at asked_at for an attempt whose last possible send was 1000.
LookupInput reply(unsigned status, std::string_view body, std::int64_t asked_at = 1'000'000) {
  LookupInput in;
  in.status = status;
  in.body = body;
  in.last_possible_send_ms = 1000;
  in.asked_at_ms = asked_at;
  return in;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("lookup target: base path, then the template with the key percent-encoded") {
  CHECK(lookup_target("", "/bookings/by-key/{key}", "gw1-AbC_x-9") == "/bookings/by-key/gw1-AbC_x-9");
  CHECK(lookup_target("/api/v2", "/bookings/by-key/{key}", "k") == "/api/v2/bookings/by-key/k");
  CHECK(lookup_target("/api", "/lookup?key={key}&full=1", "k") == "/api/lookup?key=k&full=1");
  CHECK(lookup_target("", "/b/{key}/status", "k") == "/b/k/status");
  CHECK(lookup_target("", "/{key}", "") == "/");

  struct Case {
    std::string key, encoded;
  };
  const Case cases[] = {
      {"a/b", "a%2Fb"},                  // never a second path segment
      {"100%", "100%25"},                // never an escape the provider would decode
      {"%2F", "%252F"},                  // an escape in the key stays the key's bytes
      {"a b", "a%20b"},                  // never '+': that is only a space in forms
      {"a+b", "a%2Bb"},
      {"\xC3\xA9t\xC3\xA9", "%C3%A9t%C3%A9"},  // UTF-8 bytes, each encoded
      {"\xFF\x80", "%FF%80"},            // bytes that are not UTF-8 at all
      {std::string("a\0b", 3), "a%00b"},
      {"?#&=;:@!$'()*,[]{}", "%3F%23%26%3D%3B%3A%40%21%24%27%28%29%2A%2C%5B%5D%7B%7D"},
      {"AZaz09-._~", "AZaz09-._~"},      // unreserved: as is
  };
  for (const auto& c : cases) {
    CAPTURE(c.encoded);
    CHECK(percent_encode(c.key) == c.encoded);
    CHECK(lookup_target("/p", "/by-key/{key}", c.key) == "/p/by-key/" + c.encoded);
  }
}

TEST_CASE("lookup target: every byte survives the round trip through a decoder") {
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  const auto encoded = percent_encode(all);
  CHECK(encoded.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%") ==
        std::string::npos);
  CHECK(percent_decode(encoded) == all);
  // The gateway's own keys are base64url: nothing to encode.
  const auto key = upstream_idempotency_key("tenant/a", "task b", "op%c");
  CHECK(percent_encode(key) == key);
}

TEST_CASE("lookup path template: exactly one {key}, from '/', no other brace, printable") {
  CHECK_FALSE(lookup_path_problem("/bookings/by-key/{key}"));
  CHECK_FALSE(lookup_path_problem("/{key}"));
  CHECK_FALSE(lookup_path_problem("/lookup?key={key}&a=%20"));
  const std::pair<std::string, std::string> bad[] = {
      {"", "must start with '/'"},
      {"bookings/{key}", "must start with '/'"},
      {"/bookings", "must contain {key}"},
      {"/b/{KEY}", "must contain {key}"},
      {"/b/{key}{key}", "exactly once"},
      {"/b/{key}/{id}", "brace"},
      {"/b/}{key}", "brace"},
      {"/b/{key}#frag", "'#'"},
      {"/b c/{key}", "printable ASCII"},
      {"/b/{key}\r\nX: 1", "printable ASCII"},
      {"/b/\xC3\xA9/{key}", "printable ASCII"},
  };
  for (const auto& [path, why] : bad) {
    CAPTURE(path);
    auto problem = lookup_path_problem(path);
    REQUIRE(problem);
    CHECK(has(*problem, why));
  }
}

TEST_CASE("decide_lookup: found with the original status settles as the provider's outcome rules say") {
  const auto rules = OutcomeRules::defaults();
  struct Case {
    int original;
    OperationState expected;
  };
  const Case cases[] = {
      {200, OperationState::succeeded}, {201, OperationState::succeeded}, {299, OperationState::succeeded},
      {400, OperationState::rejected},  {409, OperationState::rejected},  {422, OperationState::rejected},
      {499, OperationState::rejected},
      // Not final from a lookup: the provider recorded "not processed", or
      // failed, under the key. An operator judges those.
      {408, OperationState::unknown},   {429, OperationState::unknown},   {500, OperationState::unknown},
      {503, OperationState::unknown},   {302, OperationState::unknown},   {101, OperationState::unknown},
  };
  for (const auto& c : cases) {
    CAPTURE(c.original);
    const std::string body =
        R"({"state":"executed","status":)" + std::to_string(c.original) + R"(,"body":{"booking_id":"bk_1"}})";
    auto d = decide_lookup(demo_lookup(), rules, reply(200, body));
    CHECK(d.outcome == c.expected);
    CHECK(d.settles() == (c.expected != OperationState::unknown));
    CHECK(d.original_status == static_cast<unsigned>(c.original));
    CHECK(d.original_body == R"({"booking_id":"bk_1"})");
    CHECK(has(d.detail, "original status " + std::to_string(c.original)));
  }
  // The provider's own rules, not the defaults.
  OutcomeRules only_409{{{409, 409}}, {}};
  auto d = decide_lookup(demo_lookup(), only_409, reply(200, R"({"status":422,"body":{}})"));
  CHECK(d.outcome == OperationState::unknown);
  d = decide_lookup(demo_lookup(), only_409, reply(200, R"({"status":409,"body":{}})"));
  CHECK(d.outcome == OperationState::rejected);
}

TEST_CASE("decide_lookup: the found even settles before the settle window: it is positive evidence") {
  auto d = decide_lookup(demo_lookup(), OutcomeRules::defaults(), reply(200, R"({"status":201,"body":{}})", 0));
  CHECK(d.outcome == OperationState::succeeded);
}

TEST_CASE("decide_lookup: the original body as the pointer finds it") {
  const auto rules = OutcomeRules::defaults();
  auto body_of = [&](std::string_view lookup_body) {
    return decide_lookup(demo_lookup(), rules, reply(200, lookup_body)).original_body;
  };
  CHECK(body_of(R"({"status":201,"body":"raw text, \u00e9"})") == "raw text, \xC3\xA9");  // a string is the bytes
  CHECK(body_of(R"({"status":201,"body":{"b":[1,2],"a":"x"}})") == R"({"a":"x","b":[1,2]})");
  CHECK(body_of(R"({"status":204,"body":null})") == "");
  CHECK(body_of(R"({"status":201,"body":17})") == "17");

  auto root = demo_lookup();
  root.status_pointer.reset();
  root.body_pointer = "";  // the whole found body is the original body
  auto d = decide_lookup(root, rules, reply(200, R"({"id":"bk_1"})"));
  CHECK(d.outcome == OperationState::succeeded);
  CHECK_FALSE(d.original_status);
  CHECK(d.original_body == R"({"id":"bk_1"})");
}

TEST_CASE("decide_lookup: a found body the pointers cannot read keeps the operation held") {
  const auto rules = OutcomeRules::defaults();
  const std::pair<std::string, std::string> cases[] = {
      {"not json", "not JSON"},
      {"", "not JSON"},
      {R"({"state":"executed","body":{}})", "/status in its body is not a status"},
      {R"({"status":"201","body":{}})", "/status in its body is not a status"},
      {R"({"status":201.0,"body":{}})", "/status in its body is not a status"},
      {R"({"status":true,"body":{}})", "/status in its body is not a status"},
      {R"({"status":-201,"body":{}})", "/status in its body is not a status"},
      {R"({"status":2010,"body":{}})", "/status in its body is not a status"},
      {R"({"status":99,"body":{}})", "/status in its body is not a status"},
      {R"({"status":null,"body":{}})", "/status in its body is not a status"},
      {R"([201])", "/status in its body is not a status"},
      {R"({"status":201})", "nothing at /body"},
  };
  for (const auto& [body, why] : cases) {
    CAPTURE(body);
    auto d = decide_lookup(demo_lookup(), rules, reply(200, body));
    CHECK(d.outcome == OperationState::unknown);
    CHECK_FALSE(d.settles());
    CHECK(has(d.detail, why));
  }
  // An array index that does not fit the document is "nothing there", never a throw.
  auto indexed = demo_lookup();
  indexed.status_pointer = "/items/x";
  CHECK(decide_lookup(indexed, rules, reply(200, R"({"items":[201],"body":{}})")).outcome == OperationState::unknown);
  indexed.status_pointer = "/items/0";
  CHECK(decide_lookup(indexed, rules, reply(200, R"({"items":[201],"body":{}})")).outcome == OperationState::succeeded);
}

TEST_CASE("decide_lookup: found without a status pointer means the provider executed it") {
  auto l = demo_lookup();
  l.status_pointer.reset();
  l.body_pointer.reset();
  // The body is not read at all: not even whether it is JSON.
  auto d = decide_lookup(l, OutcomeRules::defaults(), reply(200, "<html>found</html>"));
  CHECK(d.outcome == OperationState::succeeded);
  CHECK_FALSE(d.original_status);
  CHECK_FALSE(d.original_body);
  l.method = "HEAD";
  CHECK(decide_lookup(l, OutcomeRules::defaults(), reply(200, "")).outcome == OperationState::succeeded);
}

TEST_CASE("decide_lookup: not found is not_executed only from the last possible send plus the settle window") {
  const auto rules = OutcomeRules::defaults();
  const std::string body = R"({"state":"not_found"})";
  // Last possible send 1000, settle window 60000: trusted from 61000.
  CHECK(not_found_trusted_from(demo_lookup(), 1000) == 61000);
  struct Case {
    std::int64_t asked_at;
    OperationState expected;
  };
  const Case cases[] = {
      {0, OperationState::unknown},
      {1000, OperationState::unknown},
      {60999, OperationState::unknown},
      {61000, OperationState::not_executed},
      {61001, OperationState::not_executed},
      {std::numeric_limits<std::int64_t>::max(), OperationState::not_executed},
  };
  for (const auto& c : cases) {
    CAPTURE(c.asked_at);
    auto d = decide_lookup(demo_lookup(), rules, reply(404, body, c.asked_at));
    CHECK(d.outcome == c.expected);
    CHECK_FALSE(d.original_status);
    CHECK(has(d.detail, c.expected == OperationState::unknown ? "inside the settle window" : "not executed"));
  }
  // The body of a not found is not read: a 404 from a framework is a 404.
  CHECK(decide_lookup(demo_lookup(), rules, reply(404, "<html>", 61000)).outcome == OperationState::not_executed);

  // No known last send (admitted before forward deadlines existed): never trusted.
  auto in = reply(404, body, std::numeric_limits<std::int64_t>::max());
  in.last_possible_send_ms.reset();
  auto d = decide_lookup(demo_lookup(), rules, in);
  CHECK(d.outcome == OperationState::unknown);
  CHECK(has(d.detail, "no forward deadline"));
  // A window that would end past 2^63-1 never ends.
  in.last_possible_send_ms = std::numeric_limits<std::int64_t>::max() - 10;
  CHECK_FALSE(not_found_trusted_from(demo_lookup(), in.last_possible_send_ms));
  CHECK(decide_lookup(demo_lookup(), rules, in).outcome == OperationState::unknown);

  // A zero window trusts a not found from the last possible send on.
  auto zero = demo_lookup();
  zero.settle_window = std::chrono::milliseconds(0);
  CHECK(decide_lookup(zero, rules, reply(404, body, 999)).outcome == OperationState::unknown);
  CHECK(decide_lookup(zero, rules, reply(404, body, 1000)).outcome == OperationState::not_executed);
}

TEST_CASE("decide_lookup: any other status, or no reply, keeps the operation held") {
  const auto rules = OutcomeRules::defaults();
  for (unsigned status : {201u, 204u, 301u, 302u, 400u, 401u, 403u, 405u, 409u, 410u, 429u, 500u, 502u, 503u, 504u}) {
    CAPTURE(status);
    auto d = decide_lookup(demo_lookup(), rules, reply(status, R"({"status":201,"body":{}})"));
    CHECK(d.outcome == OperationState::unknown);
    CHECK(has(d.detail, "neither found nor not found"));
  }
  LookupInput failed;
  failed.failure = "connect_failed: connection refused";
  failed.last_possible_send_ms = 0;
  failed.asked_at_ms = 1'000'000;
  auto d = decide_lookup(demo_lookup(), rules, failed);
  CHECK(d.outcome == OperationState::unknown);
  CHECK(has(d.detail, "connect_failed: connection refused"));
}

TEST_CASE("decide_lookup: the provider's own found and not_found lists") {
  auto l = demo_lookup();
  l.status_pointer.reset();
  l.body_pointer.reset();
  l.found = {{200, 200}, {202, 203}};
  l.not_found = {{404, 404}, {410, 410}};
  const auto rules = OutcomeRules::defaults();
  CHECK(decide_lookup(l, rules, reply(203, "")).outcome == OperationState::succeeded);
  CHECK(decide_lookup(l, rules, reply(201, "")).outcome == OperationState::unknown);
  CHECK(decide_lookup(l, rules, reply(410, "", 61000)).outcome == OperationState::not_executed);
  CHECK(decide_lookup(l, rules, reply(410, "", 60999)).outcome == OperationState::unknown);
}

TEST_CASE("lookup backoff: exponential from the base, capped") {
  LookupBackoff b{std::chrono::milliseconds(1000), std::chrono::milliseconds(30000), 0};
  const std::pair<int, std::int64_t> expected[] = {{0, 1000},  {1, 1000},  {2, 2000},     {3, 4000},
                                                   {4, 8000},  {5, 16000}, {6, 30000},    {7, 30000},
                                                   {64, 30000}, {1000, 30000}, {INT_MAX, 30000}};
  for (auto [lookups, delay] : expected) {
    CAPTURE(lookups);
    CHECK(next_lookup_delay_ms(b, lookups, 0) == delay);
    CHECK(next_lookup_delay_ms(b, lookups, ~std::uint64_t{0}) == delay);  // no jitter: the draw is ignored
  }
  // No overflow on the way to a huge cap.
  LookupBackoff wide{std::chrono::milliseconds(1), std::chrono::milliseconds::max(), 0};
  CHECK(next_lookup_delay_ms(wide, 11, 0) == 1024);
  CHECK(next_lookup_delay_ms(wide, 63, 0) == std::int64_t{1} << 62);
  CHECK(next_lookup_delay_ms(wide, 64, 0) == std::numeric_limits<std::int64_t>::max());
  CHECK(next_lookup_delay_ms(wide, INT_MAX, 0) == std::numeric_limits<std::int64_t>::max());
  LookupBackoff flat{std::chrono::milliseconds(500), std::chrono::milliseconds(500), 0};
  CHECK(next_lookup_delay_ms(flat, 9, 0) == 500);
}

TEST_CASE("lookup backoff: full jitter is uniform over [0, ceiling], set by the draw") {
  LookupBackoff b{std::chrono::milliseconds(1000), std::chrono::milliseconds(30000), 100};
  // Lookups 3: ceiling 4000, so a draw picks one of 4001 delays.
  CHECK(next_lookup_delay_ms(b, 3, 0) == 4000);
  CHECK(next_lookup_delay_ms(b, 3, 1) == 3999);
  CHECK(next_lookup_delay_ms(b, 3, 4000) == 0);
  CHECK(next_lookup_delay_ms(b, 3, 4001) == 4000);
  // A fixed sequence of draws covers the range and never leaves it.
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  std::int64_t low = INT64_MAX, high = 0;
  for (int i = 0; i < 10000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    auto d = next_lookup_delay_ms(b, 3, x);
    REQUIRE(d >= 0);
    REQUIRE(d <= 4000);
    low = std::min(low, d);
    high = std::max(high, d);
  }
  CHECK(low < 100);
  CHECK(high > 3900);
}

TEST_CASE("lookup backoff: partial jitter keeps the delay in the top part of the ceiling") {
  LookupBackoff b{std::chrono::milliseconds(1000), std::chrono::milliseconds(30000), 25};
  // Lookups 3: ceiling 4000, jitter 25 %: from 3000 to 4000.
  CHECK(next_lookup_delay_ms(b, 3, 0) == 4000);
  CHECK(next_lookup_delay_ms(b, 3, 1000) == 3000);
  CHECK(next_lookup_delay_ms(b, 3, 1001) == 4000);
  b.jitter_percent = 1000;  // beyond 100 counts as full
  CHECK(next_lookup_delay_ms(b, 3, 4000) == 0);
  LookupBackoff odd{std::chrono::milliseconds(999), std::chrono::milliseconds(999), 50};
  CHECK(next_lookup_delay_ms(odd, 1, 499) == 500);  // span 499 of 999, rounded down
  CHECK(next_lookup_delay_ms(odd, 1, 500) == 999);
}
