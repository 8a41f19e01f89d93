// tools/gatewayctl/exit_codes.hpp: every status class to its exit code, and
// the error line for problem+json and for bodies that are not.
#include "gatewayctl/exit_codes.hpp"

#include <doctest/doctest.h>

using namespace gwctl;

namespace {

HttpReply problem(unsigned status, const std::string& code, const std::string& detail) {
  HttpReply r;
  r.status = status;
  r.content_type = "application/problem+json";
  r.gateway_status = code;
  r.request_id = "req-1";
  r.body = R"({"type":"urn:write-gateway:code:)" + code + R"(","title":"t","status":)" + std::to_string(status) +
           R"(,"code":")" + code + R"(","detail":")" + detail + R"("})";
  return r;
}

}  // namespace

TEST_CASE("exit codes are the documented numbers") {
  CHECK(code_of(Exit::ok) == 0);
  CHECK(code_of(Exit::refused) == 1);
  CHECK(code_of(Exit::usage) == 2);
  CHECK(code_of(Exit::no_reply) == 3);
  CHECK(code_of(Exit::not_found) == 4);
  CHECK(code_of(Exit::gateway_error) == 5);
  CHECK(code_of(Exit::wrong_url) == 6);
}

TEST_CASE("exit_for_reply: a wrong URL (no such route, or not the gateway) is 6, a missing operation 4") {
  auto route = problem(404, "not_found", "no such route");
  route.body = R"({"type":"urn:write-gateway:code:not_found","title":"Not found","status":404,"code":"not_found",)"
               R"("detail":"no such route","missing":"route"})";
  CHECK(exit_for_reply(route) == Exit::wrong_url);
  // A gateway from before the "missing" member.
  CHECK(exit_for_reply(problem(404, "not_found", "no such route")) == Exit::wrong_url);

  auto operation = problem(404, "not_found", "no operation with this id on this task");
  CHECK(exit_for_reply(operation) == Exit::not_found);
  operation.body.insert(operation.body.size() - 1, R"(,"missing":"operation")");
  CHECK(exit_for_reply(operation) == Exit::not_found);

  // Another server: no Gateway-Status.
  HttpReply html;
  html.status = 404;
  html.body = "<html>Not Found</html>";
  CHECK(exit_for_reply(html) == Exit::wrong_url);
  html.status = 200;
  CHECK(exit_for_reply(html) == Exit::wrong_url);
  html.status = 302;
  CHECK(exit_for_reply(html) == Exit::wrong_url);
  // A 5xx stays "try again later", whoever sent it (a proxy in front of a gateway that is down).
  html.status = 502;
  CHECK(exit_for_reply(html) == Exit::gateway_error);

  CHECK(exit_for_reply(problem(409, "busy", "x")) == Exit::refused);
  CHECK(exit_for_reply(problem(503, "authority_unavailable", "x")) == Exit::gateway_error);
}

TEST_CASE("format_error: --json's error is one JSON line with the problem the gateway sent") {
  auto r = report_reply(problem(404, "not_found", "no operation with this id on this task"));
  CHECK(r.exit == Exit::not_found);
  auto j = nlohmann::json::parse(format_error(r, true));
  CHECK(format_error(r, true).ends_with("}\n"));
  CHECK(format_error(r, true).find('\n') == format_error(r, true).size() - 1);
  CHECK(j["error"]["code"] == "not_found");
  CHECK(j["error"]["detail"] == "no operation with this id on this task");
  CHECK(j["error"]["exit_code"] == 4);
  CHECK(j["error"]["http_status"] == 404);
  CHECK(j["error"]["request_id"] == "req-1");
  CHECK(j["error"]["hint"].is_null());
  CHECK(j["error"]["problem"]["detail"] == "no operation with this id on this task");

  HttpReply html;
  html.status = 404;
  html.body = "<html>Not Found</html>";
  auto other = nlohmann::json::parse(format_error(report_reply(html), true))["error"];
  CHECK(other["code"] == "not_gateway");
  CHECK(other["exit_code"] == 6);
  CHECK(other["problem"].is_null());
  CHECK(other["request_id"].is_null());
  CHECK(other["hint"].get<std::string>().find("is --url the gateway?") != std::string::npos);

  // The same report as text.
  CHECK(format_error(r, false) == "error: not_found: no operation with this id on this task\n");
  // Bytes that are not UTF-8 do not stop the JSON.
  ErrorReport bad;
  bad.code = "bad_reply";
  bad.detail = "caf\xc3";
  CHECK(nlohmann::json::parse(format_error(bad, true))["error"]["detail"] == "caf\xef\xbf\xbd");
}

TEST_CASE("exit_for_status: 2xx ok, 404 not found, other 4xx refused, 5xx gateway error, the rest no reply") {
  struct Case {
    unsigned status;
    Exit exit;
  };
  for (auto [status, exit] : {Case{200, Exit::ok}, Case{201, Exit::ok}, Case{299, Exit::ok}, Case{400, Exit::refused},
                              Case{401, Exit::refused}, Case{403, Exit::refused}, Case{404, Exit::not_found},
                              Case{405, Exit::refused}, Case{409, Exit::refused}, Case{412, Exit::refused},
                              Case{499, Exit::refused}, Case{500, Exit::gateway_error}, Case{503, Exit::gateway_error},
                              Case{504, Exit::gateway_error}, Case{599, Exit::gateway_error}, Case{100, Exit::no_reply},
                              Case{301, Exit::no_reply}, Case{304, Exit::no_reply}, Case{600, Exit::no_reply},
                              Case{0, Exit::no_reply}}) {
    CAPTURE(status);
    CHECK(exit_for_status(status) == exit);
  }
}

TEST_CASE("error_text: the problem's code and detail, then a hint for some") {
  CHECK(error_text(problem(409, "busy", "another lease")) == "error: busy: another lease\n");
  auto unauth = error_text(problem(401, "unauthenticated", "missing or unknown bearer token"));
  CHECK(unauth.starts_with("error: unauthenticated: missing or unknown bearer token\nhint: "));
  CHECK(unauth.find("GATEWAY_TOKEN") != std::string::npos);
  CHECK(error_text(problem(403, "forbidden", "operators only")).find("hint: the admin routes need an operator token") !=
        std::string::npos);
  CHECK(error_text(problem(503, "authority_unavailable", "try again")) ==
        "error: authority_unavailable: try again\nhint: the gateway log has the cause under request id req-1\n");
  CHECK(error_text(problem(404, "not_found", "no such operation")) == "error: not_found: no such operation\n");
}

TEST_CASE("read_problem: a body that is not problem+json still gives a code and a detail") {
  HttpReply html;
  html.status = 502;
  html.body = "<html>Bad Gateway</html>";
  auto p = read_problem(html);
  CHECK(p.code == "http_502");
  CHECK(p.detail == "HTTP 502: <html>Bad Gateway</html>");

  HttpReply header_only;
  header_only.status = 413;
  header_only.gateway_status = "payload_too_large";
  p = read_problem(header_only);
  CHECK(p.code == "payload_too_large");
  CHECK(p.detail == "HTTP 413 with an empty body");

  HttpReply long_body;
  long_body.status = 500;
  long_body.body = std::string(500, 'x');
  CHECK(read_problem(long_body).detail == "HTTP 500: " + std::string(200, 'x') + "...");

  HttpReply wrong_types;
  wrong_types.status = 400;
  wrong_types.body = R"({"code": 7, "detail": null})";
  CHECK(read_problem(wrong_types).code == "http_400");

  // A hostile detail cannot drive the terminal.
  CHECK(error_text(problem(400, "invalid_request", "a\\u001b[2Jb")) == "error: invalid_request: a\\x1b[2Jb\n");
}

TEST_CASE("error_text for a 3xx or a 404 not from the gateway says the URL may not be the gateway") {
  HttpReply moved;
  moved.status = 301;
  CHECK(error_text(moved).starts_with("error: not_gateway: HTTP 301 without the gateway's Gateway-Status header"));
  CHECK(error_text(moved).find("is --url the gateway?") != std::string::npos);
  CHECK(error_text(problem(404, "not_found", "no such route")).find("hint: the gateway has no such route") !=
        std::string::npos);
}
