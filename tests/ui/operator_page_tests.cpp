// The operator page (GET /ui) in headless Chromium against the real stack: an
// in-process gateway on a real PostgreSQL, in front of a real demo provider
// whose fault makes a held operation. The page is driven as an operator
// drives it (paste the token, open the operation, fill the resolve form), its
// DOM is read back, the result is checked through the JSON API, and a
// screenshot of each step is checked and kept in the build tree
// (GW_UI_ARTIFACT_DIR), never committed.
#include "proxy/proxy_fixture.hpp"
#include "support/process.hpp"
#include "ui/browser.hpp"
#include "ui/png_check.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

using namespace gw;
using namespace gw::test;
using nlohmann::json;

namespace {

constexpr int width = 1280, height = 900;

// A task name and a query that are markup if anything renders them as HTML.
const std::string hostile_task = "<img/src=x/onerror=window.pwned=1>";
const std::string hostile_task_in_path = "%3Cimg%2Fsrc%3Dx%2Fonerror%3Dwindow.pwned%3D1%3E";
const std::string hostile_query = "?note=<img/src=x/onerror=window.pwned=2>";
const std::string hostile_evidence = "<img src=x onerror=\"window.pwned=3\"> ticket 42";

std::string artifact_dir() {
  auto dir = std::filesystem::path(GW_UI_ARTIFACT_DIR);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// A JS string literal of `text` (JSON's escaping is valid JavaScript).
std::string js(const std::string& text) { return json(text).dump(); }

// A promise that resolves once `condition` (a JS expression) holds, checked on
// every DOM change: no timed polling. A hang is bounded by Browser's limit.
std::string when(const std::string& condition) {
  std::string s = "new Promise((resolve) => { const check = () => { if (";
  s += condition;
  s += ") { observer.disconnect(); resolve(true); } }; const observer = new MutationObserver(check); ";
  s += "observer.observe(document, {subtree: true, childList: true, attributes: true, characterData: true}); check(); })";
  return s;
}

// How many loads a section of the page has finished (its data-done counter).
std::int64_t done(Tab& tab, const std::string& section) {
  return std::stoll(tab.eval("document.getElementById(" + js(section) + ").dataset.done").get<std::string>());
}
void wait_done(Tab& tab, const std::string& section, std::int64_t after) {
  tab.eval(when("Number(document.getElementById(" + js(section) + ").dataset.done) > " + std::to_string(after)));
}

// The text of every cell of a table's body, row by row.
json rows(Tab& tab, const std::string& table) {
  return tab.eval("[...document.querySelectorAll('#" + table +
                  " tbody tr')].map((tr) => [...tr.cells].map((td) => td.textContent))");
}

std::string text_of(Tab& tab, const std::string& id) {
  return tab.eval("document.getElementById(" + js(id) + ").textContent").get<std::string>();
}

// Nothing the page shows became markup: no image element, no handler ran.
void check_no_markup(Tab& tab) {
  CHECK(tab.eval("document.querySelectorAll('img, script:not([src])').length") == 0);
  CHECK(tab.eval("typeof window.pwned") == "undefined");
}

// Saves the screenshot under the build tree and checks it: a PNG of the
// viewport's size that is not blank.
void screenshot(Tab& tab, const std::string& name) {
  const auto png = tab.screenshot();
  const auto file = artifact_dir() + "/" + name + ".png";
  std::ofstream(file, std::ios::binary) << png;
  CAPTURE(file);
  const auto summary = summarize_png(png);
  CHECK(summary.width == static_cast<std::uint32_t>(width));
  CHECK(summary.height == static_cast<std::uint32_t>(height));
  // Text in several colours, tables, buttons: hundreds of colours once anti-aliased. A blank
  // or single-colour page has one or two.
  CHECK(summary.distinct_colors > 64);
}

void use_token(Tab& tab, const std::string& token) {
  const auto held = done(tab, "held-section");
  tab.eval("document.getElementById('token').value = " + js(token) +
           "; document.getElementById('token-use').click(); true");
  wait_done(tab, "held-section", held);
}

// A fresh browser and one tab; Chromium's own output goes to artifact_dir()/chromium-<name>.log.
struct Chromium {
  explicit Chromium(const std::string& name)
      : browser(profile.path(), artifact_dir() + "/chromium-" + name + ".log"), tab(browser, width, height) {}
  TempDir profile;
  Browser browser;
  Tab tab;
};

}  // namespace

TEST_CASE("operator page: a held operation from a real provider fault is listed, opened, resolved by the form, shown as text") {
  ProxyRig rig;
  HttpClient c(rig.gateway.port());
  rig.gateway.set_clock(1764547200000);

  // A write the provider answers 503: the gateway cannot know what happened, so it holds it.
  Write w;
  w.task = hostile_task_in_path;
  w.grant = grant_token(rig.gateway.claim("tenant-a", hostile_task_in_path, "region-eu", 1'000'000));
  w.key = "op-held";
  w.rest = "/bookings" + hostile_query;
  w.body = booking_body("slot-ui");
  rig.provider.set_fault("error_5xx", 0, 1);
  check_problem(send(c, w), 504, "unknown_outcome");
  // Another write on the held task is refused, into the rejection audit.
  Write second = w;
  second.key = "op-second";
  second.rest = "/bookings";
  check_problem(send(c, second), 409, "unresolved_operation");
  Write third = second;
  third.key = "op-third";
  check_problem(send(c, third), 409, "unresolved_operation");

  Chromium chromium("resolve");
  Tab& tab = chromium.tab;
  const auto base = "http://127.0.0.1:" + std::to_string(rig.gateway.port());
  tab.open(base + "/ui");
  CHECK(tab.eval("document.getElementById('main').hidden") == true);
  screenshot(tab, "operator-page-1-token");

  use_token(tab, operator_token);
  tab.eval(when("Number(document.getElementById('rejections-section').dataset.done) > 0"));
  // The token stays in this tab's sessionStorage: not in the URL, not in a cookie, not in the field.
  CHECK(tab.eval("sessionStorage.getItem('write-gateway.operator-token')") == operator_token);
  CHECK(tab.eval("location.href") == base + "/ui");
  CHECK(tab.eval("document.cookie") == "");
  CHECK(tab.eval("document.getElementById('token').value") == "");

  const auto held = rows(tab, "held-table");
  REQUIRE(held.size() == 1);
  CHECK(held[0][0] == "Open");
  CHECK(held[0][1] == "tenant-a");
  CHECK(held[0][2] == hostile_task);
  CHECK(held[0][3] == "op-held");
  CHECK(held[0][4] == "unknown");
  CHECK(held[0][5] == "outcome_unknown");
  CHECK(held[0][8] == "booking");
  CHECK(held[0][9] == "POST /bookings" + hostile_query);
  CHECK(held[0][10] == "1");
  CHECK(text_of(tab, "held-status") == "1 held operation");

  // Newest first: what was refused last is the first row.
  const auto rejected = rows(tab, "rejections-table");
  REQUIRE(rejected.size() == 2);
  CHECK(rejected[0][3] == "op-third");
  CHECK(rejected[1][3] == "op-second");
  CHECK(rejected[1][1] == "tenant-a");
  CHECK(rejected[1][2] == hostile_task);
  CHECK(rejected[1][4] == "unresolved_operation");
  CHECK(rejected[1][5].get<std::string>().starts_with("region-eu epoch 1 realm "));
  check_no_markup(tab);
  screenshot(tab, "operator-page-2-held");

  // Open it from its row: the attempt with the grant that sent it, and the provider's 503.
  auto before = done(tab, "operation-section");
  tab.eval("document.querySelector('#held-table tbody tr button.open').click(); true");
  wait_done(tab, "operation-section", before);
  CHECK(text_of(tab, "operation-status") == "");
  const auto fields = text_of(tab, "operation-fields");
  CHECK(fields.find("stateunknown") != std::string::npos);
  CHECK(fields.find("held reasonoutcome_unknown") != std::string::npos);
  CHECK(fields.find("holds its taskyes") != std::string::npos);
  const auto attempts = rows(tab, "attempts-table");
  REQUIRE(attempts.size() == 1);
  CHECK(attempts[0][1].get<std::string>().starts_with("region-eu epoch 1 realm "));
  CHECK(attempts[0][3] == "unknown");
  CHECK(attempts[0][5] == "503");
  CHECK(tab.eval("document.getElementById('resolve-form').hidden") == false);
  check_no_markup(tab);
  screenshot(tab, "operator-page-3-operation");

  // Resolve through the form, with evidence that is markup.
  before = done(tab, "operation-section");
  tab.eval("document.getElementById('resolve-outcome').value = 'not_executed';"
           "document.getElementById('resolve-evidence').value = " + js(hostile_evidence) + ";"
           "document.getElementById('resolve-note').value = 'provider support confirmed nothing was booked';"
           "document.getElementById('resolve-submit').click(); true");
  wait_done(tab, "operation-section", before);
  CHECK(text_of(tab, "operation-status").starts_with("resolved not_executed (evidence #"));
  CHECK(text_of(tab, "operation-fields").find("statenot_executed") != std::string::npos);
  const auto evidence = rows(tab, "evidence-table");
  REQUIRE_FALSE(evidence.empty());
  const auto& last = evidence.back();
  CHECK(last[2] == "operator");
  CHECK(last[3] == "not_executed");
  CHECK(last[6] == hostile_evidence);
  CHECK(last[7] == "ops");
  CHECK(tab.eval("document.getElementById('resolve-form').hidden") == true);
  CHECK(rows(tab, "held-table").empty());
  CHECK(text_of(tab, "held-status") == "no held operations");
  check_no_markup(tab);
  screenshot(tab, "operator-page-4-resolved");

  // What the page did is what the API says.
  auto detail = c.get("/v1/admin/operations/tenant-a/" + hostile_task_in_path + "/op-held", operator_token);
  REQUIRE_MESSAGE(detail.status == 200, detail.body);
  const auto op = detail.json()["operation"];
  CHECK(op["state"] == "not_executed");
  CHECK(op["resolution"]["source"] == "operator");
  CHECK(op["evidence"].back()["reference"] == hostile_evidence);
  CHECK(op["evidence"].back()["actor"] == "ops");
  CHECK(c.get("/v1/admin/held", operator_token).json()["held"].empty());
}

TEST_CASE("operator page: a token that is not an operator's shows the gateway's refusal, and Forget drops it") {
  Gateway gateway;
  Chromium chromium("refusal");
  Tab& tab = chromium.tab;
  tab.open("http://127.0.0.1:" + std::to_string(gateway.port()) + "/ui");

  use_token(tab, agent_a);
  CHECK(text_of(tab, "held-status") == "forbidden: this route needs an operator token");
  CHECK(tab.eval("document.getElementById('token-status').className") == "status error");
  CHECK(rows(tab, "held-table").empty());

  tab.eval("document.getElementById('token-forget').click(); true");
  CHECK(tab.eval("sessionStorage.getItem('write-gateway.operator-token')") == nullptr);
  CHECK(tab.eval("document.getElementById('main').hidden") == true);

  // Unknown token: unauthenticated, and nothing is shown.
  use_token(tab, "not-a-token");
  CHECK(text_of(tab, "held-status").starts_with("unauthenticated: "));
  CHECK(rows(tab, "held-table").empty());
}

TEST_CASE("operator page: an operation whose task and id are the labels '.' and '..' is opened and resolved") {
  // Valid labels, but fetch() would read them in a path as steps up (even as %2e): the page names
  // such an operation in the query (/v1/admin/operation?tenant=&task=&id=).
  ProxyRig rig;
  HttpClient c(rig.gateway.port());
  rig.gateway.set_clock(1764547200000);
  Write w;
  w.task = ".";
  w.grant = grant_token(rig.gateway.claim("tenant-a", ".", "region-eu", 1'000'000));
  w.key = "..";
  w.body = booking_body("slot-dots");
  rig.provider.set_fault("error_5xx", 0, 1);
  check_problem(send(c, w), 504, "unknown_outcome");

  Chromium chromium("dots");
  Tab& tab = chromium.tab;
  tab.open("http://127.0.0.1:" + std::to_string(rig.gateway.port()) + "/ui");
  use_token(tab, operator_token);
  const auto held = rows(tab, "held-table");
  REQUIRE(held.size() == 1);
  CHECK(held[0][2] == ".");
  CHECK(held[0][3] == "..");

  auto before = done(tab, "operation-section");
  tab.eval("document.querySelector('#held-table tbody tr button.open').click(); true");
  wait_done(tab, "operation-section", before);
  CHECK(text_of(tab, "operation-status") == "");
  CHECK(text_of(tab, "operation-fields").find("stateunknown") != std::string::npos);
  REQUIRE(tab.eval("document.getElementById('resolve-form').hidden") == false);

  before = done(tab, "operation-section");
  tab.eval("document.getElementById('resolve-outcome').value = 'not_executed';"
           "document.getElementById('resolve-evidence').value = 'ticket 7';"
           "document.getElementById('resolve-submit').click(); true");
  wait_done(tab, "operation-section", before);
  CHECK(text_of(tab, "operation-status").starts_with("resolved not_executed (evidence #"));
  screenshot(tab, "operator-page-dots-resolved");

  // The same operation through the API's query form and its path form (a raw client keeps "..").
  auto by_query = c.get("/v1/admin/operation?tenant=tenant-a&task=.&id=..", operator_token);
  REQUIRE_MESSAGE(by_query.status == 200, by_query.body);
  CHECK(by_query.json()["operation"]["state"] == "not_executed");
  auto by_path = c.get("/v1/admin/operations/tenant-a/./..", operator_token);
  REQUIRE_MESSAGE(by_path.status == 200, by_path.body);
  CHECK(by_path.json()["operation"] == by_query.json()["operation"]);
}
