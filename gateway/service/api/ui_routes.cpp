// The operator page (GET /ui) and its script and style sheet: static files
// built into the binary. They hold no data and need no token, like
// /openapi.json; the page asks the operator for a token and sends it only to
// the operator API. The headers pin the page down: scripts and styles only
// from these files (no inline code, so text that slipped into the DOM as
// markup still could not run), fetches only to this origin, no framing, no
// form submission, no referrer, no caching.
#include "service/api/app.hpp"
#include "service/api/ui_assets.hpp"

namespace gw {
namespace {

constexpr std::string_view content_security_policy =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

http::Response asset(std::string_view content_type, std::string_view body) {
  http::Response r;
  r.set("Content-Type", std::string(content_type));
  r.set("Gateway-Status", "ok");
  r.set("Content-Security-Policy", std::string(content_security_policy));
  r.set("X-Content-Type-Options", "nosniff");
  r.set("X-Frame-Options", "DENY");
  r.set("Referrer-Policy", "no-referrer");
  r.set("Cache-Control", "no-store");
  r.set("Cross-Origin-Opener-Policy", "same-origin");
  r.set("Cross-Origin-Resource-Policy", "same-origin");
  r.body = std::string(body);
  return r;
}

}  // namespace

App::Reply App::ui_asset(Call& call) {
  if (call.route == "ui_script") co_return asset("text/javascript; charset=utf-8", ui_app_js());
  if (call.route == "ui_style") co_return asset("text/css; charset=utf-8", ui_css());
  co_return asset("text/html; charset=utf-8", ui_index_html());
}

}  // namespace gw
