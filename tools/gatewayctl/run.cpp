#include "gatewayctl/run.hpp"

#include "gatewayctl/exit_codes.hpp"
#include "gatewayctl/format.hpp"
#include "gatewayctl/render.hpp"
#include "gatewayctl/request.hpp"

#include <ostream>
#include <set>

namespace gwctl {
namespace {

// A reply the caller must stop at: what to print on stderr, and the exit code.
struct Stop {
  ErrorReport report;
};

ErrorReport no_reply(std::string code, std::string detail) {
  ErrorReport r;
  r.exit = Exit::no_reply;
  r.code = std::move(code);
  r.detail = std::move(detail);
  return r;
}

// One exchange: the 2xx reply's JSON object, or Stop thrown.
Json fetch(Transport& transport, const HttpRequest& request) {
  HttpReply reply;
  try {
    reply = transport.exchange(request);
  } catch (const TransportError& e) {
    throw Stop{no_reply(e.kind(), e.what())};
  }
  if (exit_for_reply(reply) != Exit::ok) throw Stop{report_reply(reply)};
  auto body = Json::parse(reply.body, nullptr, false);
  if (!body.is_object())
    throw Stop{no_reply("bad_reply", "HTTP " + std::to_string(reply.status) + " but the body is not a JSON object")};
  return body;
}

// held and rejections: one page, or every page merged (--all).
Json fetch_listing(const Invocation& inv, Transport& transport, std::string_view rows_key) {
  auto page = fetch(transport, build_request(inv));
  if (!inv.all) return page;
  Json rows = member_array(page, rows_key);
  std::set<std::string> seen;
  for (;;) {
    const auto next = page.find("next_cursor");
    if (next == page.end() || next->is_null()) break;
    if (!next->is_string()) throw BadReply("next_cursor is neither a string nor null");
    const auto cursor = next->get<std::string>();
    // A gateway that hands out a cursor twice would page forever.
    if (!seen.insert(cursor).second) throw BadReply("the gateway returned the same next_cursor twice");
    page = fetch(transport, build_request(inv, cursor));
    for (auto& row : member_array(page, rows_key)) rows.push_back(row);
  }
  // The last page's members (now_ms, code), every row, and no cursor: the whole listing.
  page[std::string(rows_key)] = std::move(rows);
  page["next_cursor"] = nullptr;
  return page;
}

void hint_next_page(const Json& page, std::ostream& err) {
  const auto next = page.find("next_cursor");
  if (next != page.end() && next->is_string())
    err << "more: add --all for every page, or --cursor " << escape_for_terminal(next->get<std::string>())
        << " for the next\n";
}

}  // namespace

int run(const Invocation& inv, Transport& transport, std::ostream& out, std::ostream& err) {
  // Text mode only: with --json, stderr holds nothing but a JSON error.
  if (inv.since_ms_flag && !inv.json)
    err << "note: --since-ms is deprecated; use --since TIME (e.g. --since 2025-12-01T09:00Z) or --since DURATION\n";
  try {
    Json reply;
    std::string text;
    switch (inv.command) {
      case Command::held:
      case Command::rejections: {
        const std::string_view key = inv.command == Command::held ? "held" : "rejections";
        reply = fetch_listing(inv, transport, key);
        const auto& rows = member_array(reply, key);
        text = inv.command == Command::held ? render_held(rows) : render_rejections(rows);
        if (!inv.all && !inv.json) hint_next_page(reply, err);
        break;
      }
      case Command::show:
        reply = fetch(transport, build_request(inv));
        text = render_operation(member_object(reply, "operation"));
        break;
      case Command::reconcile:
        reply = fetch(transport, build_request(inv));
        text = render_reconcile(reply);
        break;
      case Command::resolve:
        reply = fetch(transport, build_request(inv));
        text = render_resolve(reply);
        break;
      case Command::revoke:
        reply = fetch(transport, build_request(inv));
        text = render_revoke(reply);
        break;
      case Command::rotate_realm:
        reply = fetch(transport, build_request(inv));
        text = render_rotate(reply);
        break;
    }
    // Rendered before printing either way, so --json and the table refuse the same bad replies.
    out << (inv.json ? reply.dump(2) + "\n" : text);
    out.flush();
    return code_of(Exit::ok);
  } catch (const Stop& stop) {
    err << format_error(stop.report, inv.json);
    return code_of(stop.report.exit);
  } catch (const BadReply& e) {
    err << format_error(no_reply("bad_reply", e.what()), inv.json);
    return code_of(Exit::no_reply);
  } catch (const nlohmann::json::exception& e) {
    err << format_error(no_reply("bad_reply", e.what()), inv.json);
    return code_of(Exit::no_reply);
  }
}

}  // namespace gwctl
