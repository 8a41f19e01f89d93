// Bearer tokens against the configured hashes, including the recent tokens
// each thread keeps so that a kept-alive agent's token is hashed only once.
#include "core/digest.hpp"
#include "service/api/auth.hpp"

#include <doctest/doctest.h>

#include <thread>

using namespace gw;

namespace {

Config tokens(const std::string& agent_token, const std::string& operator_token) {
  Config c;
  c.agents.push_back({"agent-a", sha256_hex(agent_token), {"tenant-a"}});
  c.operators.push_back({"ops", sha256_hex(operator_token)});
  return c;
}

http::Request bearer(const std::string& value) {
  http::Request r;
  r.method = "GET";
  r.target = "/v1/tenants/tenant-a/tasks/t/providers/p/x";
  r.headers = {{"Authorization", value}};
  return r;
}

}  // namespace

TEST_CASE("auth: a known token names its principal, the second time as the first") {
  const Authenticator auth(tokens("agent-token-1", "operator-token-1"));
  for (int round = 0; round < 3; ++round) {
    auto agent = auth.authenticate(bearer("Bearer agent-token-1"));
    REQUIRE(agent);
    CHECK(agent->kind == Principal::Kind::agent);
    CHECK(agent->name == "agent-a");
    CHECK(agent->may_act_for("tenant-a"));
    CHECK_FALSE(agent->may_act_for("tenant-b"));
    auto ops = auth.authenticate(bearer("bearer operator-token-1"));  // the scheme is case-insensitive
    REQUIRE(ops);
    CHECK(ops->kind == Principal::Kind::operator_);
  }
}

TEST_CASE("auth: unknown, near-miss and malformed tokens are refused, before and after the right one was seen") {
  const Authenticator auth(tokens("agent-token-1", "operator-token-1"));
  const auto refused = [&] {
    CHECK_FALSE(auth.authenticate(bearer("Bearer agent-token-2")));  // same length, last byte differs
    CHECK_FALSE(auth.authenticate(bearer("Bearer agent-token-")));   // a prefix
    CHECK_FALSE(auth.authenticate(bearer("Bearer agent-token-11")));
    CHECK_FALSE(auth.authenticate(bearer("Bearer ")));
    CHECK_FALSE(auth.authenticate(bearer("Basic agent-token-1")));
    CHECK_FALSE(auth.authenticate(bearer("agent-token-1")));
    CHECK_FALSE(auth.authenticate(http::Request{}));
  };
  refused();
  REQUIRE(auth.authenticate(bearer("Bearer agent-token-1")));
  refused();
}

TEST_CASE("auth: a token the replacing config dropped is refused on a thread that had just accepted it") {
  auto before = std::make_unique<Authenticator>(tokens("agent-token-1", "operator-token-1"));
  REQUIRE(before->authenticate(bearer("Bearer agent-token-1")));
  REQUIRE(before->authenticate(bearer("Bearer operator-token-1")));
  // A reload: the old instance goes, and the new one may even take its address.
  before.reset();
  const Authenticator after(tokens("agent-token-2", "operator-token-2"));
  CHECK_FALSE(after.authenticate(bearer("Bearer agent-token-1")));
  CHECK_FALSE(after.authenticate(bearer("Bearer operator-token-1")));
  REQUIRE(after.authenticate(bearer("Bearer agent-token-2")));
  CHECK(after.authenticate(bearer("Bearer agent-token-2"))->name == "agent-a");
}

TEST_CASE("auth: more accepted tokens than a thread keeps, each still named right") {
  Config c;
  for (int i = 0; i < 200; ++i)
    c.agents.push_back({"agent-" + std::to_string(i), sha256_hex("token-" + std::to_string(i)),
                        {"tenant-" + std::to_string(i)}});
  const Authenticator auth(c);
  for (int round = 0; round < 3; ++round)
    for (int i = 0; i < 200; ++i) {
      auto p = auth.authenticate(bearer("Bearer token-" + std::to_string(i)));
      REQUIRE(p);
      CHECK(p->name == "agent-" + std::to_string(i));
    }
  // Another thread starts with nothing kept and gets the same answers.
  std::thread([&] {
    for (int i = 0; i < 200; ++i) CHECK(auth.authenticate(bearer("Bearer token-" + std::to_string(i)))->name ==
                                       "agent-" + std::to_string(i));
  }).join();
}
