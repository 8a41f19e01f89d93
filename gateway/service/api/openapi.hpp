// The OpenAPI 3.1 document of every route (docs/openapi.json), embedded at
// build time by embed_openapi.cmake and served at GET /openapi.json.
#pragma once

#include <string_view>

namespace gw {

std::string_view openapi_document();

}  // namespace gw
