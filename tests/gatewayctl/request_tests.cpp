// tools/gatewayctl/request.hpp: percent-encoding, query strings, and the
// method, target and body of every subcommand's request.
#include "gatewayctl/request.hpp"
#include "invocation.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

using namespace gwctl;
using gwctl::test::invocation;

TEST_CASE("percent_encode: unreserved characters as they are, every other byte as %XX") {
  CHECK(percent_encode("AZaz09-._~") == "AZaz09-._~");
  CHECK(percent_encode("a/b") == "a%2Fb");
  CHECK(percent_encode("a b+c&d=e?f#g%h") == "a%20b%2Bc%26d%3De%3Ff%23g%25h");
  CHECK(percent_encode("\xc3\xa9\x01") == "%C3%A9%01");
  CHECK(percent_encode("") == "");
}

TEST_CASE("query_string: in the given order, names and values encoded") {
  CHECK(query_string({}) == "");
  CHECK(query_string({{"tenant", "a b"}, {"limit", "5"}}) == "?tenant=a%20b&limit=5");
  CHECK(query_string({{"cursor", "WzEsImEiXQ=="}}) == "?cursor=WzEsImEiXQ%3D%3D");
}

TEST_CASE("held and rejections: GET with the filters, and the page's cursor last") {
  auto inv = invocation(Command::held);
  inv.query = {{"tenant", "tenant/a"}, {"older_than_ms", "600000"}};
  auto r = build_request(inv);
  CHECK(r.method == "GET");
  CHECK(r.target == "/v1/admin/held?tenant=tenant%2Fa&older_than_ms=600000");
  CHECK_FALSE(r.body);
  CHECK(build_request(inv, "c&1").target == "/v1/admin/held?tenant=tenant%2Fa&older_than_ms=600000&cursor=c%261");
  inv.cursor = "given";
  CHECK(build_request(inv).target.ends_with("&cursor=given"));
  CHECK(build_request(inv, "next").target.ends_with("&cursor=next"));

  auto rej = invocation(Command::rejections);
  CHECK(build_request(rej).target == "/v1/admin/rejections");
  rej.query = {{"code", "stale_owner"}, {"since_ms", "5"}};
  CHECK(build_request(rej).target == "/v1/admin/rejections?code=stale_owner&since_ms=5");
}

TEST_CASE("operation routes: each segment encoded on its own") {
  auto show = invocation(Command::show, {"tenant a", "trip/42", "op?1#"});
  auto r = build_request(show);
  CHECK(r.method == "GET");
  CHECK(r.target == "/v1/admin/operations/tenant%20a/trip%2F42/op%3F1%23");
  CHECK_FALSE(r.body);

  auto reconcile = invocation(Command::reconcile, {"t", "k", "op"});
  r = build_request(reconcile);
  CHECK(r.method == "POST");
  CHECK(r.target == "/v1/admin/operations/t/k/op/reconcile");
  CHECK(r.body == "{}");

  auto resolve = invocation(Command::resolve, {"t", "k", "op"});
  resolve.outcome = "not_executed";
  resolve.evidence = "INC-7 \"quoted\"";
  r = build_request(resolve);
  CHECK(r.method == "POST");
  CHECK(r.target == "/v1/admin/operations/t/k/op/resolve");
  CHECK(nlohmann::json::parse(*r.body) ==
        nlohmann::json{{"outcome", "not_executed"}, {"evidence", "INC-7 \"quoted\""}});
  resolve.note = "checked at the provider";
  CHECK(nlohmann::json::parse(*build_request(resolve).body)["note"] == "checked at the provider");
}

TEST_CASE("revoke and rotate-realm: POST with an empty JSON object") {
  auto r = build_request(invocation(Command::revoke, {"tenant-a", "trip 42"}));
  CHECK(r.method == "POST");
  CHECK(r.target == "/v1/admin/tasks/tenant-a/trip%2042/revoke");
  CHECK(r.body == "{}");
  r = build_request(invocation(Command::rotate_realm));
  CHECK(r.method == "POST");
  CHECK(r.target == "/v1/admin/authority/rotate-realm");
  CHECK(r.body == "{}");
}

TEST_CASE("a URL path prefix goes in front of /v1") {
  auto inv = invocation(Command::revoke, {"t", "k"});
  inv.endpoint.base_path = "/edge/gw";
  CHECK(build_request(inv).target == "/edge/gw/v1/admin/tasks/t/k/revoke");
}
