// What of a provider's reply reaches the agent and the ledger, as tables:
// clean replies pass (less reply_headers' drops), a reply revealing any of
// the provider's credentials, in headers or body, is withheld whole.
#include "service/proxy/reply_screen.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace gw;

namespace {

ProviderConfig screened_provider() {
  ProviderConfig p;
  p.name = "booking";
  p.tenant_credentials = {{"tenant-a", "tenant-a-secret-0001"}, {"tenant-b", "tenant-b-secret-0002"}};
  p.index_credentials();
  return p;
}

}  // namespace

TEST_CASE("reply screen: a clean reply passes, less what reply_headers drops") {
  const auto p = screened_provider();
  auto out = screen_reply(201, {{"Content-Type", "application/json"}, {"Set-Cookie", "a=1"}, {"X-Trace", "t-1"}},
                          R"({"booking_id":"bk_1"})", p);
  CHECK_FALSE(out.withheld);
  CHECK(out.reply.status == 201);
  CHECK(out.reply.headers == http::Fields{{"Content-Type", "application/json"}, {"X-Trace", "t-1"}});
  CHECK(out.reply.body == R"({"booking_id":"bk_1"})");
}

TEST_CASE("reply screen: a credential anywhere, any tenant's, withholds the whole reply and keeps the status") {
  const auto p = screened_provider();
  const struct {
    const char* where;
    http::Fields headers;
    std::string body;
  } revealing[] = {
      {"body", {{"Content-Type", "application/json"}}, R"({"headers":{"Authorization":"Bearer tenant-a-secret-0001"}})"},
      {"another tenant's, in the body", {}, "tenant-b-secret-0002"},
      {"header value, upper case", {{"X-Echo", "BEARER TENANT-A-SECRET-0001"}}, "{}"},
      {"header name", {{"tenant-a-secret-0001", "Authorization"}}, "{}"},
      {"split across two headers", {{"X-Echo", "tenant-a-se"}, {"X-Echo", "cret-0001"}}, "{}"},
      {"percent-encoded", {{"X-Echo", "tenant%2Da%2Dsecret%2D0001"}}, "{}"},
  };
  for (const auto& [where, headers, body] : revealing) {
    CAPTURE(where);
    auto out = screen_reply(409, headers, body, p);
    CHECK(out.withheld);
    CHECK(out.reply.status == 409);
    CHECK(out.reply.headers == http::Fields{{"Content-Type", "application/json"}, {"Gateway-Reply-Withheld", "credential"}});
    const auto j = nlohmann::json::parse(out.reply.body);
    CHECK(j["provider"] == "booking");
    CHECK(j["provider_reply"] == "withheld");
    CHECK(j["provider_status"] == 409);
    CHECK_FALSE(p.reveals_credential(out.reply.body));
  }
  // A credential only in a header the filter drops never reaches the agent: nothing to withhold.
  CHECK_FALSE(screen_reply(200, {{"Set-Cookie", "k=tenant-a-secret-0001"}}, "{}", p).withheld);
  // A status without a body keeps none.
  auto empty = screen_reply(204, {{"X-Echo", "tenant-a-secret-0001"}}, "", p);
  CHECK(empty.withheld);
  CHECK(empty.reply.body.empty());
}

TEST_CASE("reply screen: a config put together without its scan passes nothing as clean") {
  ProviderConfig p;
  p.name = "hand-made";
  p.shared_credential = "shared-secret-0001";
  CHECK(screen_reply(200, {}, "{}", p).withheld);
}
