// A granted claim's body, written in place, has the bytes of the JSON object
// the claim route built and dumped before (http::json_reply).
#include "core/codes.hpp"
#include "service/api/grant_reply.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <limits>

using namespace gw;

TEST_CASE("grant reply: the body is the dump of the object the claim route built") {
  const auto as_object = [](const GrantIdentity& g, std::int64_t expires_at_ms, const std::string& token,
                            std::int64_t version) {
    nlohmann::json body{{"grant",
                         {{"realm", g.realm},
                          {"tenant", g.scope.tenant},
                          {"task", g.scope.task},
                          {"owner", g.owner},
                          {"epoch", g.epoch},
                          {"expires_at_ms", expires_at_ms}}},
                        {"grant_token", token},
                        {"version", version}};
    body["code"] = name(Code::granted);
    return body.dump();
  };
  const GrantIdentity usual{"realm-1", {"tenant-a", "task-0042"}, "region-a", 7};
  CHECK(granted_body(usual, 1'765'000'000'123, "eyJyZWFsbSI6InJlYWxtLTEifQ", 3) ==
        as_object(usual, 1'765'000'000'123, "eyJyZWFsbSI6InJlYWxtLTEifQ", 3));
  constexpr auto high = std::numeric_limits<std::int64_t>::max();
  const GrantIdentity odd{"r.e-a_l:m", {"T", "k"}, "o", high};
  CHECK(granted_body(odd, 0, "", high) == as_object(odd, 0, "", high));
  // Labels need no escape; were one to reach here, it is escaped as the dump escapes it.
  const GrantIdentity escaped{"quote\"", {"back\\slash", "tab\t"}, "caf\xc3\xa9", 1};
  CHECK(granted_body(escaped, -1, "t", 0) == as_object(escaped, -1, "t", 0));
}
