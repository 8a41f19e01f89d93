# Writes docs/openapi.json into a C++ raw string, so the binary serves the
# document it was built with (GET /openapi.json), as the schema is embedded.
file(READ "${IN}" json)
set(delimiter ")__openapi__\"")
string(FIND "${json}" "${delimiter}" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains ${delimiter}, which would end the raw string")
endif()
set(body "// Generated from docs/openapi.json by embed_openapi.cmake. Do not edit.\n#include \"service/api/openapi.hpp\"\n\nnamespace gw {\n\nstd::string_view openapi_document() {\n  return R\"__openapi__(${json})__openapi__\";\n}\n\n}  // namespace gw\n")
file(WRITE "${OUT}.tmp" "${body}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
