#include "service/api/query.hpp"
#include "service/api/refusal.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace gw;

namespace {
std::string refusal(std::string_view query) {
  try {
    parse_query(query, {"tenant", "limit"});
  } catch (const Refusal& r) {
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

TEST_CASE("label_param: a label, or invalid_request naming the parameter") {
  CHECK(label_param("tenant-a", "tenant") == "tenant-a");
  for (const auto& bad : std::vector<std::string>{"", "has space", std::string(81, 'a'), "caf\xc3\xa9"}) {
    CAPTURE(bad);
    try {
      label_param(bad, "tenant");
      FAIL("accepted");
    } catch (const Refusal& r) {
      CHECK(r.code == Code::invalid_request);
      CHECK(std::string(r.what()).find("tenant must be a label") == 0);
    }
  }
}

TEST_CASE("page_limit: 100 without a limit, 1 to 500 with one, anything else refused") {
  CHECK(page_limit({}) == 100);
  CHECK(page_limit({{"limit", "1"}}) == 1);
  CHECK(page_limit({{"limit", "500"}}) == 500);
  for (const char* bad : {"0", "501", "-1", "ten", "", "1e2", "99999999999999999999"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(page_limit({{"limit", bad}}), Refusal);
  }
}

TEST_CASE("cursors: what encode_cursor makes comes back, anything else is refused") {
  auto made = encode_cursor(nlohmann::json::array({1764571200000, "tenant-a", 7}));
  auto back = cursor_fields(made, 3);
  CHECK(back == nlohmann::json::array({1764571200000, "tenant-a", 7}));
  CHECK_THROWS_AS(cursor_fields(made, 2), Refusal);  // another listing's cursor
  for (const auto& bad : std::vector<std::string>{"", "!!!", encode_cursor(nlohmann::json::object()),
                                                  "bm90IGpzb24"}) {  // base64url of "not json"
    CAPTURE(bad);
    CHECK_THROWS_AS(cursor_fields(bad, 3), Refusal);
  }
}
