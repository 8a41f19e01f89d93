// The operator page (GET /ui) in headless Chromium against the real stack: an
// in-process gateway on a real PostgreSQL, in front of a real demo provider
// whose fault makes a held operation. The page is driven as an operator
// drives it (paste the token, open the operation, fill the resolve form), its
// DOM is read back, the result is checked through the JSON API, and a
// screenshot of each step is checked and kept in the build tree
// (GW_UI_ARTIFACT_DIR), never committed.
#include "proxy/proxy_fixture.hpp"
#include "support/eventually.hpp"
#include "support/private_cluster.hpp"
#include "support/process.hpp"
#include "ui/browser.hpp"
#include "ui/png_check.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>

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

// Whether the element is wholly inside the viewport as it is scrolled now: what the operator sees
// without scrolling.
bool in_view(Tab& tab, const std::string& id) {
  return tab.eval("(() => { const r = document.getElementById(" + js(id) +
                  ").getBoundingClientRect(); return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight; })()") == true;
}

// "2025-12-01T00:00:00.000Z (just now)" or "(... ago)": a human time, not epoch milliseconds.
bool human_time(const std::string& text) {
  static const std::regex iso(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \((just now|.+ ago|in .+)\)$)");
  return std::regex_match(text, iso);
}

// No epoch-millisecond number (13 digits, a word of its own) anywhere in the text.
bool no_epoch_ms(const std::string& text) { return !std::regex_search(text, std::regex(R"(\b1\d{12}\b)")); }

// Saves the screenshot under the build tree and checks it: a PNG of the
// viewport's size that is not blank.
void screenshot(Tab& tab, const std::string& name, int expected_width = width) {
  const auto png = tab.screenshot();
  const auto file = artifact_dir() + "/" + name + ".png";
  std::ofstream(file, std::ios::binary) << png;
  CAPTURE(file);
  const auto summary = summarize_png(png);
  CHECK(summary.width == static_cast<std::uint32_t>(expected_width));
  CHECK(summary.height == static_cast<std::uint32_t>(height));
  // Text in several colours, tables, buttons: hundreds of colours once anti-aliased. A blank
  // or single-colour page has one or two.
  CHECK(summary.distinct_colors > 64);
}

// Pastes the token and presses "Use token"; returns once the gateway's check of it is shown
// (and, when accepted, the held list loaded).
void use_token(Tab& tab, const std::string& token) {
  const auto checked = done(tab, "token-section");
  const auto held = done(tab, "held-section");
  // Until the gateway answered, the page says it is checking, never "token set", and shows
  // nothing. Read in the same evaluation as the click: the gateway may answer before a second
  // one runs.
  CHECK(tab.eval("document.getElementById('token').value = " + js(token) +
                 "; document.getElementById('token-use').click();"
                 " document.getElementById('token-status').textContent + ' / main hidden: ' +"
                 " document.getElementById('main').hidden") ==
        "checking the token with the gateway... / main hidden: true");
  wait_done(tab, "token-section", checked);
  if (tab.eval("document.getElementById('main').hidden") == false) wait_done(tab, "held-section", held);
}

// Opens the first held operation from its row and waits for it.
void open_first_held(Tab& tab) {
  const auto before = done(tab, "operation-section");
  tab.eval("document.querySelector('#held-table tbody tr button.open').click(); true");
  wait_done(tab, "operation-section", before);
}

// Fills the resolve form, submits it, checks the confirm step, confirms, and waits.
void resolve_by_form(Tab& tab, const std::string& outcome, const std::string& evidence, const std::string& note = "") {
  tab.eval("document.getElementById('resolve-outcome').value = " + js(outcome) + ";"
           "document.getElementById('resolve-evidence').value = " + js(evidence) + ";"
           "document.getElementById('resolve-note').value = " + js(note) + ";"
           "document.getElementById('resolve-submit').click(); true");
  // Nothing is sent before the operator confirms: the step says what will be recorded, in view.
  CHECK(tab.eval("document.getElementById('resolve-confirm').hidden") == false);
  CHECK(text_of(tab, "resolve-confirm-text").find(" as " + outcome + " on evidence ") != std::string::npos);
  CHECK(in_view(tab, "resolve-confirm"));
  const auto before = done(tab, "operation-section");
  tab.eval("document.getElementById('resolve-confirm-yes').click(); true");
  wait_done(tab, "operation-section", before);
}

// A fresh browser and one tab; Chromium's own output goes to artifact_dir()/chromium-<name>.log.
struct Chromium {
  explicit Chromium(const std::string& name, int tab_width = width)
      : browser(profile.path(), artifact_dir() + "/chromium-" + name + ".log"), tab(browser, tab_width, height) {}
  TempDir profile;
  Browser browser;
  Tab tab;
};

// The demo provider's status lookup (a not found inside its day-long settle window stays held), and a
// reconcile loop that never runs on its own: lookups happen when the page asks.
GatewayOptions with_lookup(const ProviderProcess& provider) {
  auto options = proxy_options(provider);
  options.edit = [providers = options.edit](nlohmann::json& c) {
    providers(c);
    c["providers"][0]["lookup"] = {{"path", "/bookings/by-key/{key}"},
                                   {"status_pointer", "/status"},
                                   {"body_pointer", "/body"},
                                   {"settle_window_ms", 86'400'000}};
    c["recovery"] = {{"reconcile", {{"interval_ms", 3'600'000}}}};
  };
  return options;
}

constexpr std::int64_t night = 1764547200000;  // 2025-12-01T00:00:00Z, the gateway's manual clock
// An operation id as long as an id may be: the page must show all of it.
const std::string long_id = "op-night-" + std::string(67, 'n') + "-end";  // max_label_length, 80
const std::string busy_body = "<b>upstream busy</b> try later";

// op `long_id` on tenant-a/task-a, answered 503 by the provider at `night`: held unknown. Then
// 500 lookups that each answered 500 with the same body, one every 57 s, seeded as the reconciler
// writes them (source lookup, actor the provider), and the clock 8 hours on.
void hold_with_500_lookups(Gateway& g, ProviderProcess& provider) {
  g.set_clock(night);
  HttpClient c(g.port());
  Write w;
  w.grant = grant_token(g.claim("tenant-a", "task-a", "region-eu", 100'000'000));
  w.key = long_id;
  w.body = booking_body("slot-night");
  provider.set_fault("error_5xx", 0, 1);
  check_problem(send(c, w), 504, "unknown_outcome");
  g.db().exec(
      "INSERT INTO operation_evidence (tenant, task, op_id, attempt, source, outcome, upstream_status, detail,"
      " response_headers, response_body, response_sha256, response_length, actor, recorded_ms)"
      " SELECT 'tenant-a', 'task-a', '" + long_id + "', 1, 'lookup', 'unknown', 500,"
      " 'lookup answered 500, which is neither found nor not found: the outcome stays unknown',"
      " '[]', b.body, sha256(b.body), length(b.body), 'booking', " + std::to_string(night) + " + (i + 1) * 57000"
      " FROM generate_series(0, 499) i, (SELECT convert_to(" + std::string("'") + busy_body + "', 'UTF8') AS body) b");
  g.set_clock(night + 8 * 3'600'000);
}

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
  open_first_held(tab);
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

  // A submit without an outcome is refused beside the form, in view, and nothing is asked.
  tab.eval("document.getElementById('resolve-submit').click(); true");
  CHECK(text_of(tab, "action-status") == "choose an outcome and give the evidence");
  CHECK(tab.eval("document.getElementById('action-status').className") == "status error");
  CHECK(in_view(tab, "action-status"));
  CHECK(tab.eval("document.getElementById('resolve-confirm').hidden") == true);
  // Cancel at the confirm step sends nothing.
  tab.eval("document.getElementById('resolve-outcome').value = 'succeeded';"
           "document.getElementById('resolve-evidence').value = 'x';"
           "document.getElementById('resolve-submit').click();"
           "document.getElementById('resolve-confirm-no').click(); true");
  CHECK(text_of(tab, "action-status") == "not resolved");
  CHECK(rig.gateway.db().scalar("SELECT state FROM operations WHERE op_id = 'op-held'") == "unknown");

  // Resolve through the form, with evidence that is markup.
  resolve_by_form(tab, "not_executed", hostile_evidence, "provider support confirmed nothing was booked");
  CHECK(text_of(tab, "action-status").starts_with("resolved not_executed (evidence #"));
  CHECK(tab.eval("document.getElementById('action-status').className") == "status ok");
  // The message is where the operator looks, without scrolling.
  CHECK(in_view(tab, "action-status"));
  CHECK(text_of(tab, "operation-fields").find("statenot_executed") != std::string::npos);
  CHECK(text_of(tab, "summary-next") == "Next: nothing; this operation is settled.");
  const auto evidence = rows(tab, "evidence-table");
  REQUIRE_FALSE(evidence.empty());
  const auto& last = evidence.back();
  CHECK(last[2] == "operator");
  CHECK(last[3] == "ops");
  CHECK(last[4] == "not_executed");
  CHECK(last[5] == "\u2014");  // no provider status: an explicit dash, not a blank
  CHECK(last[7] == hostile_evidence);
  CHECK(tab.eval("document.getElementById('resolve-form').hidden") == true);
  CHECK(rows(tab, "held-table").empty());
  CHECK(text_of(tab, "held-status") == "no held operations");
  check_no_markup(tab);
  screenshot(tab, "operator-page-4-resolved");
  CHECK(in_view(tab, "action-status"));  // still, in the screenshot

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

TEST_CASE("operator page: a token is set only once the gateway accepted it, and a refused one is said so and not kept") {
  Gateway gateway;
  Chromium chromium("refusal");
  Tab& tab = chromium.tab;
  tab.open("http://127.0.0.1:" + std::to_string(gateway.port()) + "/ui");

  // An agent's token: the gateway refuses it for the operator API, and the page says so.
  use_token(tab, agent_a);
  const auto refused = text_of(tab, "token-status");
  CHECK(refused.starts_with("token refused by the gateway, not kept: forbidden: this route needs an operator token"));
  CHECK(std::regex_search(refused, std::regex(R"( \(request id [0-9a-f]{24}\)$)")));
  CHECK(tab.eval("document.getElementById('token-status').className") == "status error");
  CHECK(tab.eval("document.getElementById('main').hidden") == true);
  CHECK(tab.eval("sessionStorage.getItem('write-gateway.operator-token')") == nullptr);
  CHECK(rows(tab, "held-table").empty());
  screenshot(tab, "operator-page-token-refused");

  // Unknown token: unauthenticated, and nothing is shown.
  use_token(tab, "not-a-token");
  CHECK(text_of(tab, "token-status").starts_with("token refused by the gateway, not kept: unauthenticated: "));
  CHECK(tab.eval("document.getElementById('main').hidden") == true);
  CHECK(tab.eval("sessionStorage.getItem('write-gateway.operator-token')") == nullptr);

  // The operator's token: "token set" once the gateway's answer came, then the lists.
  use_token(tab, operator_token);
  CHECK(text_of(tab, "token-status") == "token set for this tab: the gateway accepted it as an operator token");
  CHECK(tab.eval("document.getElementById('token-status').className") == "status ok");
  CHECK(tab.eval("document.getElementById('main').hidden") == false);
  CHECK(text_of(tab, "held-status") == "no held operations");
  CHECK(tab.eval("sessionStorage.getItem('write-gateway.operator-token')") == operator_token);

  // A reload checks the kept token again before showing anything.
  tab.open("http://127.0.0.1:" + std::to_string(gateway.port()) + "/ui");
  tab.eval(when("Number(document.getElementById('token-section').dataset.done) > 0"));
  CHECK(text_of(tab, "token-status") == "token set for this tab: the gateway accepted it as an operator token");

  tab.eval("document.getElementById('token-forget').click(); true");
  CHECK(tab.eval("sessionStorage.getItem('write-gateway.operator-token')") == nullptr);
  CHECK(tab.eval("document.getElementById('main').hidden") == true);
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

  open_first_held(tab);
  CHECK(text_of(tab, "operation-status") == "");
  CHECK(text_of(tab, "operation-fields").find("stateunknown") != std::string::npos);
  REQUIRE(tab.eval("document.getElementById('resolve-form').hidden") == false);

  resolve_by_form(tab, "not_executed", "ticket 7");
  CHECK(text_of(tab, "action-status").starts_with("resolved not_executed (evidence #"));
  screenshot(tab, "operator-page-dots-resolved");

  // The same operation through the API's query form and its path form (a raw client keeps "..").
  auto by_query = c.get("/v1/admin/operation?tenant=tenant-a&task=.&id=..", operator_token);
  REQUIRE_MESSAGE(by_query.status == 200, by_query.body);
  CHECK(by_query.json()["operation"]["state"] == "not_executed");
  auto by_path = c.get("/v1/admin/operations/tenant-a/./..", operator_token);
  REQUIRE_MESSAGE(by_path.status == 200, by_path.body);
  CHECK(by_path.json()["operation"] == by_query.json()["operation"]);
}

TEST_CASE("operator page: 500 identical lookups are one row, the decision and the form are on the first screen, times are human") {
  ProviderProcess provider;
  Gateway g(with_lookup(provider));
  hold_with_500_lookups(g, provider);

  Chromium chromium("lookups");
  Tab& tab = chromium.tab;
  tab.open("http://127.0.0.1:" + std::to_string(g.port()) + "/ui");
  use_token(tab, operator_token);
  open_first_held(tab);
  CHECK(text_of(tab, "operation-status") == "");

  // The 500 stored lookups are one row: how many, the first and last id and time.
  CHECK(g.db().scalar("SELECT count(*) FROM operation_evidence") == "500");
  const auto evidence = rows(tab, "evidence-table");
  REQUIRE(evidence.size() == 1);
  const auto first_id = g.db().scalar("SELECT min(id) FROM operation_evidence");
  const auto last_id = g.db().scalar("SELECT max(id) FROM operation_evidence");
  CHECK(evidence[0][0].get<std::string>().starts_with("#" + first_id + "\u2013#" + last_id));
  const auto recorded = evidence[0][1].get<std::string>();
  CHECK(recorded.starts_with("500 identicalfirst 2025-12-01T00:00:57.000Z (7h 59min ago)last 2025-12-01T07:55:00.000Z (5min 0s ago)"));
  CHECK(evidence[0][2] == "lookup");
  CHECK(evidence[0][3] == "booking");
  CHECK(evidence[0][5] == "500");
  // The provider's reply body is shown as text beside its digest, never as markup.
  CHECK(tab.eval("document.querySelector('#evidence-table pre.body').textContent") == busy_body);
  CHECK(evidence[0][8].get<std::string>().starts_with(std::to_string(busy_body.size()) + " bytes, sha256 "));
  CHECK(tab.eval("document.querySelectorAll('#operation b, #summary b').length") == 0);
  check_no_markup(tab);

  // At a glance, above the record: the whole id, the state, why, what next, and the form, all
  // on the first screen once the operation is opened.
  CHECK(text_of(tab, "summary-id") == long_id);
  CHECK(tab.eval("(() => { const s = document.getElementById('summary'); return s.scrollWidth <= s.clientWidth; })()") == true);
  CHECK(text_of(tab, "summary-state").starts_with("unknown held since 2025-12-01T00:00:00.000Z (8h 0min ago)"));
  CHECK(text_of(tab, "summary-why").find("the provider answered HTTP 503") != std::string::npos);
  CHECK(text_of(tab, "summary-next").starts_with("Next: check at provider booking"));
  CHECK(in_view(tab, "summary"));
  CHECK(in_view(tab, "resolve-form"));
  CHECK(tab.eval("Boolean(document.getElementById('resolve-form').compareDocumentPosition("
                 "document.getElementById('evidence-table')) & Node.DOCUMENT_POSITION_FOLLOWING)") == true);
  // Human times everywhere, an explicit "none" or dash for what is empty.
  const auto fields = text_of(tab, "operation-fields");
  CHECK(fields.find("created2025-12-01T00:00:00.000Z (8h 0min ago)") != std::string::npos);
  CHECK(fields.find("committed version\u2014") != std::string::npos);
  CHECK(fields.find("resolutionnone") != std::string::npos);
  CHECK(fields.find("recorded replyHTTP 503, ") != std::string::npos);
  CHECK(no_epoch_ms(text_of(tab, "operation")));
  CHECK(human_time(rows(tab, "attempts-table")[0][2].get<std::string>()));
  screenshot(tab, "operator-page-5-500-lookups");

  // "Look up now": the provider says not found, inside the settle window: still held, shown as a
  // warning beside the form, not as a success. Its detail names the time asked in ISO 8601.
  const auto before = done(tab, "operation-section");
  tab.eval("document.getElementById('reconcile').click(); true");
  wait_done(tab, "operation-section", before);
  CHECK(text_of(tab, "action-status").starts_with("lookup: still held"));
  CHECK(tab.eval("document.getElementById('action-status').className") == "status warn");
  CHECK(in_view(tab, "action-status"));
  const auto after = rows(tab, "evidence-table");
  REQUIRE(after.size() == 2);
  const auto detail = after[1][6].get<std::string>();
  CHECK(detail.find("when asked at 2025-12-01T08:00:00.000Z") != std::string::npos);
  CHECK(no_epoch_ms(text_of(tab, "operation")));
  screenshot(tab, "operator-page-6-lookup-held");

  // 800 px wide: the evidence stacks as labelled lines, its detail and body get the width.
  Chromium narrow("narrow", 800);
  narrow.tab.open("http://127.0.0.1:" + std::to_string(g.port()) + "/ui");
  use_token(narrow.tab, operator_token);
  open_first_held(narrow.tab);
  const auto cell_width = [&](int column) {
    return narrow.tab.eval("document.querySelector('#evidence-table tr td:nth-child(" + std::to_string(column) +
                           ")').getBoundingClientRect().width").get<double>();
  };
  CHECK(cell_width(7) > 500);  // detail
  CHECK(cell_width(9) > 500);  // reply body
  CHECK(narrow.tab.eval("(() => { const s = document.getElementById('operation-section');"
                        " return s.scrollWidth <= s.clientWidth; })()") == true);
  CHECK(in_view(narrow.tab, "resolve-form"));
  screenshot(narrow.tab, "operator-page-7-800px", 800);
}

TEST_CASE("operator page: with the database down, a read says nothing was changed and shows the request id") {
  PrivateCluster pg;
  Gateway g(pg.url(), {.manual_clock = true, .edit = fail_fast_database});
  Chromium chromium("database-down");
  Tab& tab = chromium.tab;
  tab.open("http://127.0.0.1:" + std::to_string(g.port()) + "/ui");
  use_token(tab, operator_token);
  CHECK(text_of(tab, "held-status") == "no held operations");

  pg.stop();
  CHECK(eventually([&] { return g.client().get("/readyz", "").status == 503; }));
  // The gateway's own words: a read was not served and changed nothing; a write forwarded nothing.
  HttpClient c(g.port());
  auto read = c.get("/v1/admin/held", operator_token);
  check_problem(read, 503, "authority_unavailable");
  CHECK(read.json()["detail"] == "the authority did not answer; this read was not served and nothing was changed");
  REQUIRE(read.header("X-Request-Id"));
  auto write = c.post_json(task_path("tenant-a", "task-a", "claim"), {{"owner", "o"}, {"lease_ms", 60000}}, agent_a);
  check_problem(write, 503, "authority_unavailable");
  CHECK(write.json()["detail"] == "the authority did not answer; nothing was forwarded");

  const auto before = done(tab, "held-section");
  tab.eval("document.querySelector('#held-filter button').click(); true");
  wait_done(tab, "held-section", before);
  const auto shown = text_of(tab, "held-status");
  CAPTURE(shown);
  CHECK(shown.starts_with("authority_unavailable: the gateway's database did not answer, so this could not be read; "
                          "nothing was changed."));
  CHECK(std::regex_search(shown, std::regex(R"(\(request id [0-9a-f]{24}\)$)")));
  CHECK(shown.find("forwarded") == std::string::npos);
  screenshot(tab, "operator-page-8-database-down");
}
