// The OpenAPI document as the gateway serves it (GET /openapi.json): it
// parses, it lists exactly the routes and methods the router serves
// (service/api/route_table.hpp), and every code it names is in the one code
// table (core/codes.hpp) under the status the table gives it.
#include "core/codes.hpp"
#include "service/api/app.hpp"
#include "service/api/openapi.hpp"
#include "service/api/route_table.hpp"
#include "support/gateway_fixture.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

using namespace gw;
using namespace gw::test;
using nlohmann::json;

namespace {

// The methods an OpenAPI path item can name. A route that takes any method
// documents every one of them (CONNECT, which OpenAPI cannot name, is prose).
const std::set<std::string> openapi_methods{"get", "put", "post", "delete", "options", "head", "patch", "trace"};

json served_document() {
  Gateway g;
  auto r = g.client().get("/openapi.json", "");
  REQUIRE_MESSAGE(r.status == 200, r.body);
  return json::parse(r.body);
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// "#/components/responses/X" -> that object; anything else as it is.
const json& resolved(const json& doc, const json& node) {
  if (node.is_object() && node.contains("$ref"))
    return doc.at(json::json_pointer(node["$ref"].get<std::string>().substr(1)));
  return node;
}

// The code names a schema allows for its `code` member: its own enum or
// const, or those of the schema it refers to.
std::vector<std::string> codes_of(const json& doc, const json& schema) {
  std::vector<std::string> out;
  const auto* s = &schema;
  if (!(s->contains("properties") && (*s)["properties"].contains("code")) && s->contains("$ref")) s = &resolved(doc, *s);
  if (!s->contains("properties") || !(*s)["properties"].contains("code")) return out;
  const auto& code = (*s)["properties"]["code"];
  if (code.contains("const")) out.push_back(code["const"].get<std::string>());
  if (code.contains("enum"))
    for (const auto& c : code["enum"]) out.push_back(c.get<std::string>());
  return out;
}

// Every string under an `enum` or `const` of a `code` member or of a
// Gateway-Status header, anywhere in the document.
void named_codes(const json& node, std::set<std::string>& out) {
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      const bool code_schema = key == "code" && value.is_object();
      const bool status_header = key == "Gateway-Status" && value.is_object() && value.contains("schema");
      const json& schema = status_header ? value["schema"] : value;
      if (code_schema || status_header) {
        if (schema.contains("const")) out.insert(schema["const"].get<std::string>());
        if (schema.contains("enum"))
          for (const auto& c : schema["enum"]) out.insert(c.get<std::string>());
      }
      named_codes(value, out);
    }
  } else if (node.is_array()) {
    for (const auto& v : node) named_codes(v, out);
  }
}

}  // namespace

TEST_CASE("GET /openapi.json: the built-in OpenAPI 3.1 document, as JSON, without a token") {
  Gateway g;
  auto r = g.client().get("/openapi.json", "");
  CHECK(r.status == 200);
  CHECK(r.header("Content-Type") == "application/json");
  CHECK(r.code() == "ok");
  CHECK(r.header("X-Request-Id"));
  CHECK(r.body == openapi_document());
  const auto doc = json::parse(r.body);
  CHECK(doc["openapi"] == "3.1.0");
  CHECK(doc["info"]["title"].is_string());
  CHECK(doc["paths"].is_object());

  auto post = g.client().request("POST", "/openapi.json", {{"Content-Type", "application/json"}}, "{}");
  check_problem(post, 405, "method_not_allowed");
  CHECK(post.header("Allow") == "GET");
}

TEST_CASE("the router and the document list the same paths and methods") {
  const auto doc = served_document();
  std::set<std::pair<std::string, std::string>> routed, documented;
  for (const auto& route : App::routes()) {
    if (route.method.empty())
      for (const auto& m : openapi_methods) routed.emplace(route.path, m);
    else
      routed.emplace(route.path, lower(route.method));
  }
  for (const auto& [path, item] : doc["paths"].items())
    for (const auto& [key, _] : item.items())
      if (openapi_methods.count(key)) documented.emplace(path, key);

  for (const auto& [path, method] : routed)
    CHECK_MESSAGE(documented.count({path, method}), "routed but not documented: " << method << " " << path);
  for (const auto& [path, method] : documented)
    CHECK_MESSAGE(routed.count({path, method}), "documented but not routed: " << method << " " << path);
  CHECK(routed == documented);
}

TEST_CASE("every path parameter of the document is declared where its path uses it") {
  const auto doc = served_document();
  for (const auto& entry : doc["paths"].items()) {
    const std::string& path = entry.key();
    const json& item = entry.value();
    std::set<std::string> in_template;
    for (auto at = path.find('{'); at != std::string::npos; at = path.find('{', at + 1))
      in_template.insert(path.substr(at + 1, path.find('}', at) - at - 1));
    std::set<std::string> at_path;
    for (const auto& p : item.value("parameters", json::array()))
      if (resolved(doc, p)["in"] == "path") at_path.insert(resolved(doc, p)["name"].get<std::string>());
    for (const auto& op : item.items()) {
      const std::string& method = op.key();
      if (!openapi_methods.count(method)) continue;
      auto declared = at_path;
      for (const auto& p : op.value().value("parameters", json::array()))
        if (resolved(doc, p)["in"] == "path") declared.insert(resolved(doc, p)["name"].get<std::string>());
      CAPTURE(path);
      CAPTURE(method);
      CHECK(declared == in_template);
    }
  }
}

TEST_CASE("the document's Code enum is the code table, in its order") {
  const auto doc = served_document();
  // As one line each, so a failure shows both lists.
  std::string table;
  for (auto code : all_codes()) table += std::string(name(code)) + " ";
  std::string documented;
  for (const auto& c : doc["components"]["schemas"]["Code"]["enum"]) documented += c.get<std::string>() + " ";
  CHECK(documented == table);
}

TEST_CASE("every code the document names is in the code table") {
  const auto doc = served_document();
  std::set<std::string> named;
  named_codes(doc, named);
  CHECK(named.size() > 30);
  for (const auto& code : named) {
    CAPTURE(code);
    CHECK(parse_code(code));
  }
}

TEST_CASE("each documented reply's codes have the status it is documented under, and every route can refuse") {
  const auto doc = served_document();
  for (const auto& entry : doc["paths"].items()) {
    const std::string& path = entry.key();
    for (const auto& op : entry.value().items()) {
      const std::string& method = op.key();
      const json& operation = op.value();
      if (!openapi_methods.count(method)) continue;
      CAPTURE(path);
      CAPTURE(method);
      // What any request can get before or beside its route (info.description).
      for (const char* status : {"400", "413", "500"}) CHECK(operation["responses"].contains(status));
      for (const auto& reply : operation["responses"].items()) {
        const std::string& status = reply.key();
        if (status == "default") continue;  // the provider's own reply
        const auto& response = resolved(doc, reply.value());
        REQUIRE(response.contains("content"));
        for (const auto& content : response["content"].items()) {
          const auto codes = codes_of(doc, content.value()["schema"]);
          if (content.key() == "application/problem+json") CHECK_FALSE(codes.empty());
          for (const auto& code : codes) {
            CAPTURE(status);
            CAPTURE(code);
            const auto known = parse_code(code);
            CHECK(known);
            if (known) CHECK(std::to_string(http_status(*known)) == status);
          }
        }
      }
    }
  }
}
