// Byte-for-byte replay when the provider sends custom, duplicate, Set-Cookie
// and Date headers: the replay repeats the recorded headers exactly (order
// and duplicates), not the provider's current ones, and Set-Cookie and Date
// are never passed to the agent (docs/api.md, proxy).
#include "proxy/proxy_fixture.hpp"

#include <strings.h>

using namespace gw;
using namespace gw::test;

namespace {

std::vector<std::string> values(const Reply& r, const std::string& name) {
  std::vector<std::string> out;
  for (const auto& [k, v] : r.headers)
    if (strcasecmp(k.c_str(), name.c_str()) == 0) out.push_back(v);
  return out;
}

}  // namespace

TEST_CASE("replay: the provider's custom and duplicate headers are replayed exactly, Set-Cookie and Date never pass") {
  ProxyRig rig;
  auto& g = rig.gateway;
  auto& provider = rig.provider;
  auto c = g.client();
  g.set_clock(0);
  provider.set_reply_headers({{"X-Provider-Trace", "trace-1"},
                              {"Set-Cookie", "session=a; Path=/"},
                              {"Link", "</bookings>; rel=\"collection\""},
                              {"Set-Cookie", "region=eu"},
                              {"Link", "</slots>; rel=\"related\""},
                              {"Date", "Tue, 01 Dec 2026 09:00:00 GMT"}});
  Write w;
  w.grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 60000));
  w.key = "op-1";
  w.body = booking_body("slot-1");

  auto first = send(c, w);
  REQUIRE(first.code() == "committed");
  // What the provider really sent reached the agent, in order, duplicates kept.
  CHECK(values(first, "X-Provider-Trace") == std::vector<std::string>{"trace-1"});
  CHECK(values(first, "Link") ==
        std::vector<std::string>{"</bookings>; rel=\"collection\"", "</slots>; rel=\"related\""});
  CHECK(values(first, "Set-Cookie").empty());
  CHECK(values(first, "Date").empty());

  // The provider now sends other values: a replay must not show them.
  provider.set_reply_headers({{"X-Provider-Trace", "trace-2"}, {"Date", "Wed, 02 Dec 2026 10:00:00 GMT"}});
  auto replay = send(c, w);
  REQUIRE(replay.code() == "historical_retry");
  CHECK(replay.status == first.status);
  CHECK(replayable_headers(replay) == replayable_headers(first));
  CHECK(replay.body == first.body);
  CHECK(values(replay, "Date").empty());
  CHECK(values(replay, "Set-Cookie").empty());
  CHECK(provider.requests().size() == 1);  // a replay, not a second forward
}

TEST_CASE("replay: a provider header value with bytes 0x80-0xFF (not UTF-8) is passed and replayed byte for byte") {
  ProxyRig rig;
  auto& g = rig.gateway;
  auto& provider = rig.provider;
  auto c = g.client();
  g.set_clock(0);
  const std::string latin1 = "caf\xe9 cr\xe8me";  // ISO-8859-1 obs-text
  std::string high = "x";
  for (int b = 0x80; b <= 0xff; ++b) high += static_cast<char>(b);
  provider.set_reply_headers({{"X-Latin1", latin1}, {"X-High", high}});
  Write w;
  w.grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 60000));
  w.key = "op-obs";
  w.body = booking_body("slot-1");

  auto first = send(c, w);
  REQUIRE(first.code() == "committed");
  CHECK(values(first, "X-Latin1") == std::vector<std::string>{latin1});
  CHECK(values(first, "X-High") == std::vector<std::string>{high});

  provider.set_reply_headers({});
  auto replay = send(c, w);
  REQUIRE(replay.code() == "historical_retry");
  CHECK(values(replay, "X-Latin1") == std::vector<std::string>{latin1});
  CHECK(values(replay, "X-High") == std::vector<std::string>{high});
  CHECK(replayable_headers(replay) == replayable_headers(first));
  CHECK(provider.requests().size() == 1);
}
