// Receipts (GET .../operations/{id}): response.sha256 and response.length
// describe exactly the body the agent received, for a committed and a
// provider-rejected operation.
#include "proxy/proxy_fixture.hpp"

#include "core/digest.hpp"

using namespace gw;
using namespace gw::test;

namespace {

nlohmann::json receipt_response(HttpClient& c, const std::string& op, const std::string& grant) {
  auto r = c.request("GET", task_path("tenant-a", "task-a", "operations/" + op),
                     {{"Authorization", "Bearer " + agent_a}, {"Fence-Grant", grant}});
  REQUIRE_MESSAGE(r.status == 200, r.body);
  return r.json()["operation"]["response"];
}

}  // namespace

TEST_CASE("receipt: response.sha256 and length are those of the body the agent received") {
  ProxyRig rig;
  auto& g = rig.gateway;
  auto c = g.client();
  g.set_clock(0);
  const auto grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 60000));
  Write w;
  w.grant = grant;
  w.key = "op-1";
  w.body = booking_body("slot-1");
  auto committed = send(c, w);
  REQUIRE(committed.code() == "committed");

  // Known answer, computed outside the project:
  //   printf %s '{"booking_id":"bk_1",...}' | sha256sum
  const std::string expected_body =
      R"({"booking_id":"bk_1","customer":"synthetic-customer","slot":"slot-1","status":"confirmed"})";
  REQUIRE(committed.body == expected_body);
  auto first = receipt_response(c, "op-1", grant);
  CHECK(first["status"] == 201);
  CHECK(first["sha256"] == "7f1cdd7d36828724e09e4d64b164a330196dda6883a34649bde32e8b57db7c7b");
  CHECK(first["length"] == 90);
  CHECK(first["sha256"] == sha256_hex(committed.body));
  CHECK(first["length"] == committed.body.size());
  // Settled by its own reply, not by evidence.
  auto whole = c.request("GET", task_path("tenant-a", "task-a", "operations/op-1"),
                         {{"Authorization", "Bearer " + agent_a}, {"Fence-Grant", grant}});
  CHECK(whole.json()["operation"].contains("resolution"));
  CHECK(whole.json()["operation"]["resolution"].is_null());

  // A provider rejection is recorded with its own body.
  Write taken;
  taken.grant = grant;
  taken.key = "op-2";
  taken.expected_version = 1;
  taken.body = booking_body("slot-1", "someone-else");
  auto rejected = send(c, taken);
  REQUIRE(rejected.code() == "rejected_by_provider");
  REQUIRE(rejected.body == R"({"error":"slot_taken"})");
  auto second = receipt_response(c, "op-2", grant);
  CHECK(second["status"] == 409);
  CHECK(second["sha256"] == "c50b7135ca62f32ea30b5fa9f0b72a607182ed66b25ce86cf0ec681a0598b38f");
  CHECK(second["length"] == rejected.body.size());
  CHECK(second["sha256"] == sha256_hex(rejected.body));
}
