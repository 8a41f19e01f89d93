// GET /ui, /ui/app.js, /ui/ui.css: the operator page's files as the gateway
// serves them, without a token, with the headers that keep the page from
// running anything but its own script or being framed. The page in a real
// browser is tests/ui/operator_page_tests.cpp.
#include "service/api/ui_assets.hpp"
#include "support/gateway_fixture.hpp"

#include <doctest/doctest.h>

#include <regex>

using namespace gw;
using namespace gw::test;

namespace {

void check_strict_headers(const Reply& r) {
  const auto csp = std::string(r.header("Content-Security-Policy").value_or(""));
  CAPTURE(csp);
  CHECK(csp.find("default-src 'none'") != std::string::npos);
  CHECK(csp.find("script-src 'self'") != std::string::npos);
  CHECK(csp.find("style-src 'self'") != std::string::npos);
  CHECK(csp.find("connect-src 'self'") != std::string::npos);
  CHECK(csp.find("frame-ancestors 'none'") != std::string::npos);
  CHECK(csp.find("form-action 'none'") != std::string::npos);
  CHECK(csp.find("unsafe") == std::string::npos);
  CHECK(r.header("X-Content-Type-Options") == "nosniff");
  CHECK(r.header("X-Frame-Options") == "DENY");
  CHECK(r.header("Referrer-Policy") == "no-referrer");
  CHECK(r.header("Cache-Control") == "no-store");
  CHECK(r.header("Set-Cookie") == std::nullopt);
  CHECK(r.code() == "ok");
}

}  // namespace

TEST_CASE("GET /ui and its two files: served without a token, as built in, with strict headers") {
  Gateway g;
  auto c = g.client();
  const struct {
    const char* path;
    const char* type;
    std::string_view body;
  } files[] = {{"/ui", "text/html; charset=utf-8", ui_index_html()},
               {"/ui/app.js", "text/javascript; charset=utf-8", ui_app_js()},
               {"/ui/ui.css", "text/css; charset=utf-8", ui_css()}};
  for (const auto& f : files) {
    CAPTURE(f.path);
    auto r = c.get(f.path, "");
    CHECK(r.status == 200);
    CHECK(r.header("Content-Type") == f.type);
    CHECK(r.body == f.body);
    CHECK_FALSE(r.body.empty());
    check_strict_headers(r);
    auto post = c.request("POST", f.path, {{"Content-Type", "application/json"}}, "{}");
    check_problem(post, 405, "method_not_allowed");
    CHECK(post.header("Allow") == "GET");
  }
  check_problem(c.get("/ui/", ""), 404, "not_found");
  check_problem(c.get("/ui/other.js", ""), 404, "not_found");
}

TEST_CASE("the operator page has no inline script, style or handler, and its script never writes markup") {
  const std::string html(ui_index_html());
  // Every <script> names its file; no <style>, no style attribute, no on...= handler attribute.
  std::size_t scripts = 0;
  for (auto at = html.find("<script"); at != std::string::npos; at = html.find("<script", at + 1)) {
    const auto tag = html.substr(at, html.find('>', at) - at);
    CAPTURE(tag);
    CHECK(tag.find(" src=\"/ui/app.js\"") != std::string::npos);
    ++scripts;
  }
  CHECK(scripts == 1);
  CHECK(html.find("<style") == std::string::npos);
  CHECK_FALSE(std::regex_search(html, std::regex("\\sstyle=", std::regex::icase)));
  CHECK_FALSE(std::regex_search(html, std::regex("\\son[a-z]+=", std::regex::icase)));
  // No input is named: a form submitted without the script cannot carry the token into a URL.
  CHECK_FALSE(std::regex_search(html, std::regex("<(input|select|textarea)[^>]*\\sname=", std::regex::icase)));

  const std::string script(ui_app_js());
  for (const char* sink : {"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "Function(",
                           "localStorage", "document.cookie"}) {
    CAPTURE(sink);
    CHECK(script.find(sink) == std::string::npos);
  }
}
