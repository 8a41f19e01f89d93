# Writes the numbered SQL files of schema/ into a C++ table, so the binary
# carries its own schema and cannot be started against the wrong files.
set(body "// Generated from schema/*.sql by embed_migrations.cmake. Do not edit.\n#include \"store/migrations.hpp\"\n\nnamespace gw {\nnamespace {\nconstexpr Migration table[] = {\n")
string(REPLACE "|" ";" files "${FILES}")
foreach(file IN LISTS files)
  get_filename_component(name "${file}" NAME)
  file(READ "${file}" sql)
  string(APPEND body "  {\"${name}\", R\"__sql__(${sql})__sql__\"},\n")
endforeach()
string(APPEND body "};\n}  // namespace\n\nstd::span<const Migration> embedded_migrations() { return table; }\n\n}  // namespace gw\n")
file(WRITE "${OUT}.tmp" "${body}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
