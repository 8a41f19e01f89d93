// The operator page's files (gateway/ui/), embedded at build time by
// embed_ui.cmake and served at GET /ui, /ui/app.js and /ui/ui.css.
#pragma once

#include <string_view>

namespace gw {

std::string_view ui_index_html();
std::string_view ui_app_js();
std::string_view ui_css();

}  // namespace gw
