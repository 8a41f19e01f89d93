#include "service/query.hpp"
#include "service/rejection.hpp"

#include <doctest/doctest.h>

using namespace gw;

namespace {
std::string refusal(std::string_view query) {
  try {
    parse_query(query, {"tenant", "limit"});
  } catch (const Rejection& r) {
    CHECK(r.code == Code::invalid_request);
    return r.what();
  }
  return "";
}
}  // namespace

TEST_CASE("parse_query: name=value pairs, percent-decoded") {
  auto q = parse_query("tenant=tenant%2Da&limit=5", {"tenant", "limit"});
  CHECK(q.size() == 2);
  CHECK(q.at("tenant") == "tenant-a");
  CHECK(q.at("limit") == "5");
  CHECK(parse_query("", {"tenant"}).empty());
  CHECK(parse_query("tenant=", {"tenant"}).at("tenant").empty());
}

TEST_CASE("parse_query: unknown, repeated, bare and badly escaped parameters are refused") {
  CHECK(refusal("owner=x").find("unknown query parameter") != std::string::npos);
  CHECK(refusal("owner=x").find("tenant, limit") != std::string::npos);
  CHECK(refusal("tenant=a&tenant=b").find("twice") != std::string::npos);
  CHECK(refusal("tenant").find("name=value") != std::string::npos);
  CHECK(refusal("tenant=a&").find("name=value") != std::string::npos);
  CHECK(refusal("tenant=%zz").find("percent-escape") != std::string::npos);
  CHECK(refusal("ten%61nt=a&tenant=b").find("twice") != std::string::npos);  // names are decoded first
}
