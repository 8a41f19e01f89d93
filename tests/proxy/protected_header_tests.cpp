// Malformed protected headers on the proxy route (docs/api.md, proxy): each
// gets its documented code, nothing reaches the provider, no ledger row; and
// the headers are checked in the documented order: Fence-Grant, then
// Idempotency-Key, then Expected-Version (gateway/service/api/proxy_routes.cpp).
#include "proxy/proxy_fixture.hpp"

#include "core/base64url.hpp"

using namespace gw;
using namespace gw::test;

namespace {

struct HeaderRig {
  HeaderRig() : c(rig.gateway.port()) {
    rig.gateway.set_clock(0);
    grant = grant_token(rig.gateway.claim("tenant-a", "task-a", "region-a", 60000));
  }
  Write write() const {
    Write w;
    w.grant = grant;
    w.key = "op-1";
    w.body = booking_body("slot-1");
    return w;
  }
  // The refusal, and proof that nothing was forwarded or recorded.
  void refused(const Write& w, unsigned status, const std::string& code, const Headers& extra = {}) {
    check_problem(send(c, w, extra), status, code);
    CHECK(rig.provider.requests().empty());
    CHECK(rig.gateway.db().scalar("SELECT count(*) FROM operations") == "0");
  }
  ProxyRig rig;
  HttpClient c;
  std::string grant;
};

}  // namespace

TEST_CASE("proxy: a malformed Idempotency-Key is invalid_request and nothing is forwarded") {
  HeaderRig r;
  for (const std::string& key : {std::string(81, 'k'), std::string("op 1"), std::string("caf\xc3\xa9"),
                                 std::string("tab\there")}) {
    CAPTURE(key);
    Write w = r.write();
    w.key.clear();
    r.refused(w, 400, "invalid_request", {{"Idempotency-Key", key}});
  }
  // Present but empty is malformed, not missing.
  Write empty = r.write();
  empty.key.clear();
  r.refused(empty, 400, "invalid_request", {{"Idempotency-Key", ""}});

  // The edge that is valid: 80 printable characters get through.
  Write longest = r.write();
  longest.key = std::string(80, 'k');
  CHECK(send(r.c, longest).code() == "committed");
  CHECK(r.rig.provider.requests_with_key(upstream_key("tenant-a", "task-a", longest.key)) == 1);
}

TEST_CASE("proxy: a malformed Fence-Grant is invalid_grant and nothing is forwarded") {
  HeaderRig r;
  const std::string cases[] = {
      "not base64url!",                                  // outside the alphabet
      base64url_encode("not json"),                      // base64url, not JSON
      base64url_encode("[1,2,3,4,5,6]"),                 // JSON, not an object
      forge(r.grant, "epoch", "1"),                      // epoch as a string
      forge(r.grant, "epoch", 1.5),                      // epoch not an integer
      forge(r.grant, "owner", 7),                        // owner not a string
      forge(r.grant, "secret", nullptr),                 // secret null
      forge(r.grant, "extra", "field"),                  // a seventh field
      r.grant + "=",                                     // padding is not base64url here
  };
  for (const auto& token : cases) {
    CAPTURE(token);
    Write w = r.write();
    w.grant = token;
    r.refused(w, 400, "invalid_grant");
  }
}

TEST_CASE("proxy: protected headers are checked in order Fence-Grant, Idempotency-Key, Expected-Version") {
  HeaderRig r;
  Write none = r.write();
  none.grant.clear();
  none.key.clear();
  none.expected_version.reset();
  r.refused(none, 400, "invalid_grant");  // all three missing: the grant first

  Write bad_grant_bad_key = r.write();
  bad_grant_bad_key.grant = "not base64url!";
  bad_grant_bad_key.key = "op 1";
  r.refused(bad_grant_bad_key, 400, "invalid_grant");

  Write no_key = r.write();
  no_key.key.clear();
  no_key.expected_version.reset();
  r.refused(no_key, 400, "missing_idempotency_key");  // before the version

  Write bad_key = r.write();
  bad_key.key = "op 1";
  bad_key.expected_version.reset();
  r.refused(bad_key, 400, "invalid_request");  // the key's error, not the missing version

  Write no_version = r.write();
  no_version.expected_version.reset();
  r.refused(no_version, 400, "missing_expected_version");

  Write bad_version = r.write();
  bad_version.expected_version.reset();
  r.refused(bad_version, 400, "invalid_request", {{"Expected-Version", "-1"}});

  // A well-formed grant of the wrong task gets as far as the ledger, which
  // refuses it (scope_mismatch) before forwarding.
  Write other_task = r.write();
  other_task.task = "task-b";
  check_problem(send(r.c, other_task), 409, "scope_mismatch");
  CHECK(r.rig.provider.requests().empty());
}
