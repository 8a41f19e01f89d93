// X-Request-Id through the proxy (docs/api.md, Replies): a label from the
// agent is kept, anything else is replaced by 24 random hex digits; the reply
// and the provider get the same one id, and the agent's header never reaches
// the provider besides it.
#include "proxy/proxy_fixture.hpp"

#include <regex>

using namespace gw;
using namespace gw::test;

namespace {

bool generated(const std::string& id) { return std::regex_match(id, std::regex("[0-9a-f]{24}")); }

// The one X-Request-Id the provider received with its last request (a
// repeated header would read "a, b").
std::string provider_saw(const ProviderProcess& provider) {
  const auto headers = provider.requests().back()["headers"];
  return headers.contains("X-Request-Id") ? headers["X-Request-Id"].get<std::string>() : "<none>";
}

struct RequestIdRig {
  RequestIdRig() : c(rig.gateway.port()) {
    rig.gateway.set_clock(0);
    grant = grant_token(rig.gateway.claim("tenant-a", "task-a", "region-a", 60000));
  }
  // An unprotected GET through the proxy with the given extra headers.
  Reply get(const Headers& extra) {
    Headers h{{"Authorization", "Bearer " + agent_a}};
    h.insert(h.end(), extra.begin(), extra.end());
    return c.request("GET", task_path("tenant-a", "task-a", "providers/booking/bookings/none"), h);
  }
  ProxyRig rig;
  HttpClient c;
  std::string grant;
};

}  // namespace

TEST_CASE("X-Request-Id: a label from the agent is the id of the reply and of the forwarded request") {
  RequestIdRig r;
  const std::string id80(80, 'r');
  for (const std::string& id : {std::string("agent-chosen.id_1"), id80}) {
    CAPTURE(id);
    auto reply = r.get({{"X-Request-Id", id}});
    CHECK(reply.status == 404);  // the provider's own not_found, passed through
    CHECK(reply.header("X-Request-Id") == id);
    CHECK(provider_saw(r.rig.provider) == id);
  }

  // A protected write and a gateway refusal keep it too.
  Write w;
  w.grant = r.grant;
  w.key = "op-1";
  w.body = booking_body("slot-1");
  auto committed = send(r.c, w, {{"X-Request-Id", "write-1"}});
  CHECK(committed.code() == "committed");
  CHECK(committed.header("X-Request-Id") == "write-1");
  CHECK(provider_saw(r.rig.provider) == "write-1");
  w.grant.clear();
  auto refused = send(r.c, w, {{"X-Request-Id", "refused-1"}});
  check_problem(refused, 400, "invalid_grant");
  CHECK(refused.header("X-Request-Id") == "refused-1");
}

TEST_CASE("X-Request-Id: empty, oversized, spaced or non-ASCII ids are replaced by a fresh one, sent to the provider too") {
  RequestIdRig r;
  std::vector<std::string> seen;
  for (const std::string& bad : {std::string(""), std::string(81, 'r'), std::string("has space"),
                                 std::string("caf\xc3\xa9")}) {
    CAPTURE(bad);
    auto reply = r.get({{"X-Request-Id", bad}});
    const auto id = reply.header("X-Request-Id").value_or("");
    CHECK(generated(id));
    CHECK(provider_saw(r.rig.provider) == id);
    seen.push_back(id);
  }
  // Without one, too; and each request gets its own.
  auto reply = r.get({});
  CHECK(generated(reply.header("X-Request-Id").value_or("")));
  CHECK(provider_saw(r.rig.provider) == reply.header("X-Request-Id").value_or(""));
  seen.push_back(*reply.header("X-Request-Id"));
  std::sort(seen.begin(), seen.end());
  CHECK(std::adjacent_find(seen.begin(), seen.end()) == seen.end());
}

TEST_CASE("X-Request-Id: a repeated header is refused before routing, and nothing reaches the provider") {
  // First-wins and last-wins readers would log different ids for one request
  // (http/framing.hpp): neither copy is taken.
  RequestIdRig r;
  for (const Headers& twice : {Headers{{"X-Request-Id", "first-1"}, {"X-Request-Id", "second-1"}},
                               Headers{{"X-Request-Id", "not valid"}, {"x-request-id", "second-2"}}}) {
    auto reply = HttpClient(r.rig.gateway.port()).request(
        "GET", task_path("tenant-a", "task-a", "providers/booking/bookings/none"),
        [&] {
          Headers h{{"Authorization", "Bearer " + agent_a}};
          h.insert(h.end(), twice.begin(), twice.end());
          return h;
        }());
    check_problem(reply, 400, "invalid_request");
  }
  CHECK(r.rig.provider.requests().empty());
}
