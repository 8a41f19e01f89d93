// store/pg_result.hpp and store/pg_params.hpp without a server: results
// built with libpq's own PQmakeEmptyPGresult/PQsetvalue, read as the
// store's parsers read them.
#include "store/pg_params.hpp"
#include "store/pg_result.hpp"

#include <doctest/doctest.h>

#include <limits>
#include <vector>

using namespace gw;

namespace {

// One row of text values (nullopt: NULL).
PgResult one_row(const std::vector<std::optional<std::string>>& values) {
  PgResultPtr r(PQmakeEmptyPGresult(nullptr, PGRES_TUPLES_OK));
  std::vector<PGresAttDesc> columns(values.size());
  std::vector<std::string> names;
  for (std::size_t i = 0; i < values.size(); ++i) names.push_back("c" + std::to_string(i));
  for (std::size_t i = 0; i < values.size(); ++i) {
    columns[i] = PGresAttDesc{};
    columns[i].name = names[i].data();
    columns[i].typlen = -1;
  }
  REQUIRE(PQsetResultAttrs(r.get(), static_cast<int>(columns.size()), columns.data()));
  for (std::size_t i = 0; i < values.size(); ++i) {
    auto& v = values[i];
    REQUIRE(PQsetvalue(r.get(), 0, static_cast<int>(i), v ? const_cast<char*>(v->data()) : nullptr,
                       v ? static_cast<int>(v->size()) : -1));
  }
  return PgResult(std::move(r));
}

}  // namespace

TEST_CASE("pg result: integers read whole, in range, or not at all") {
  CHECK(parse_pg_integer("0") == 0);
  CHECK(parse_pg_integer("-9223372036854775808") == std::numeric_limits<std::int64_t>::min());
  CHECK(parse_pg_integer("9223372036854775807") == std::numeric_limits<std::int64_t>::max());
  for (const char* bad : {"", " 1", "1 ", "1.0", "9223372036854775808", "0x10", "+", "-", "1e3"})
    CHECK_THROWS_AS(parse_pg_integer(bad), PgDecodeError);
}

TEST_CASE("pg result: bytea in hex output reads back every byte, anything else is refused") {
  CHECK(parse_pg_bytea("\\x") == "");
  CHECK(parse_pg_bytea("\\x00ff7F0a") == std::string("\0\xff\x7f\n", 4));
  for (const char* bad : {"", "x00", "\\x0", "\\x0g", "\\000", "\\\\x00"}) CHECK_THROWS_AS(parse_pg_bytea(bad), PgDecodeError);
}

TEST_CASE("pg result: fields read as libpqxx's do: types, nulls, optionals, fallbacks") {
  auto r = one_row({"tenant-a", "42", std::nullopt, "t", "f", "\\xdead", "300", "-1"});
  const auto row = r.at(0);
  CHECK(row[0].as<std::string>() == "tenant-a");
  CHECK(row[1].as<std::int64_t>() == 42);
  CHECK(row[1].as<int>() == 42);
  CHECK(row[2].is_null());
  CHECK_THROWS_AS(row[2].as<std::string>(), PgDecodeError);
  CHECK(row[2].as<std::optional<std::int64_t>>() == std::nullopt);
  CHECK(row[2].as<std::string>("[]") == "[]");
  CHECK(row[1].as<std::optional<std::int64_t>>() == 42);
  CHECK(row[3].as<bool>());
  CHECK_FALSE(row[4].as<bool>());
  CHECK_THROWS_AS(row[0].as<bool>(), PgDecodeError);
  CHECK(field_bytes(row[5]) == "\xde\xad");
  // Out of the asked type's range: refused, never wrapped.
  CHECK_THROWS_AS(row[6].as<std::uint8_t>(), PgDecodeError);
  CHECK_THROWS_AS(row[7].as<unsigned>(), PgDecodeError);
  CHECK(row[7].as<int>() == -1);
  CHECK_THROWS_AS(row[0].as<std::int64_t>(), PgDecodeError);
  CHECK(r.size() == 1);
  CHECK_THROWS_AS(r.at(1), std::out_of_range);
}

TEST_CASE("pg params: text for values, binary for bytea, null for an empty optional") {
  const std::string bytes("\0\x01", 2);
  const std::optional<std::string> none;
  const std::optional<std::int64_t> some = 7;
  auto p = PgParams::of(std::make_tuple(std::string("a"), std::int64_t{-3}, true, none, some,
                                        pqxx::binarystring(bytes), 5u));
  REQUIRE(p.size() == 7);
  CHECK(std::string(p.values()[0], p.lengths()[0]) == "a");
  CHECK(std::string(p.values()[1], p.lengths()[1]) == "-3");
  CHECK(std::string(p.values()[2], p.lengths()[2]) == "t");
  CHECK(p.values()[3] == nullptr);
  CHECK(std::string(p.values()[4], p.lengths()[4]) == "7");
  CHECK(std::string(p.values()[5], p.lengths()[5]) == bytes);
  CHECK(std::string(p.values()[6], p.lengths()[6]) == "5");
  for (int i = 0; i < p.size(); ++i) CHECK(p.formats()[i] == (i == 5 ? 1 : 0));
}

TEST_CASE("pg params: every value's bytes intact in one buffer, whatever their sizes and order") {
  const std::string big(10000, 'x');
  const std::string sixteen = "0123456789abcdef";  // just past the small-string buffer
  const std::optional<std::string> none;
  auto p = PgParams::of(std::make_tuple(std::string("a"), big, none, std::numeric_limits<std::int64_t>::min(),
                                        std::numeric_limits<std::uint64_t>::max(), std::string(), sixteen,
                                        false, pqxx::binarystring(big)));
  REQUIRE(p.size() == 9);
  CHECK(std::string(p.values()[0], p.lengths()[0]) == "a");
  CHECK(std::string(p.values()[1], p.lengths()[1]) == big);
  CHECK(p.values()[2] == nullptr);
  CHECK(p.lengths()[2] == 0);
  CHECK(std::string(p.values()[3], p.lengths()[3]) == "-9223372036854775808");
  CHECK(std::string(p.values()[4], p.lengths()[4]) == "18446744073709551615");
  // An empty string is a value, not NULL.
  CHECK(p.values()[5] != nullptr);
  CHECK(p.lengths()[5] == 0);
  CHECK(std::string(p.values()[6], p.lengths()[6]) == sixteen);
  CHECK(std::string(p.values()[7], p.lengths()[7]) == "f");
  CHECK(std::string(p.values()[8], p.lengths()[8]) == big);
  CHECK(p.formats()[8] == 1);
  // libpq reads a text value up to its NUL, whatever its length says.
  for (int i = 0; i < p.size(); ++i)
    if (p.values()[i] && p.formats()[i] == 0) CHECK(std::string(p.values()[i]) == std::string(p.values()[i], p.lengths()[i]));
}
