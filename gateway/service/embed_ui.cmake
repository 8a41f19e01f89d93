# Writes one file of gateway/ui/ into a C++ raw string returned by the function NAME, so the
# binary serves the operator page it was built with (GET /ui), as openapi.json is embedded.
file(READ "${IN}" text)
set(delimiter ")__ui__\"")
string(FIND "${text}" "${delimiter}" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains ${delimiter}, which would end the raw string")
endif()
set(body "// Generated from ${FILE} by embed_ui.cmake. Do not edit.\n#include \"service/api/ui_assets.hpp\"\n\nnamespace gw {\n\nstd::string_view ${NAME}() {\n  return R\"__ui__(${text})__ui__\";\n}\n\n}  // namespace gw\n")
file(WRITE "${OUT}.tmp" "${body}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
