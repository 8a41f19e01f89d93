// A libpq result read the way the store reads libpqxx's (row[i].is_null(),
// .as<T>(), field_bytes), so a statement's answer is parsed by one template
// whichever way it was sent: through libpqxx on a database worker, or on a
// connection an I/O thread drives itself (service/db/pg_connection.hpp).
// Results are text; bytea arrives in PostgreSQL's hex format (the session
// sets bytea_output), anything else is refused rather than guessed.
#pragma once

#include <libpq-fe.h>
#include <pqxx/pqxx>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace gw {

struct PgResultFree {
  void operator()(PGresult* r) const { PQclear(r); }
};
using PgResultPtr = std::unique_ptr<PGresult, PgResultFree>;

// A field's text that does not read as the type asked for: the statement
// and its parser disagree, a bug.
struct PgDecodeError : std::logic_error {
  using std::logic_error::logic_error;
};

// The number in `text`, all of it; PgDecodeError otherwise.
std::int64_t parse_pg_integer(std::string_view text);
// The bytes of a bytea in hex output format ("\x0a1b"); PgDecodeError otherwise.
std::string parse_pg_bytea(std::string_view text);

class PgField {
 public:
  PgField(const PGresult* result, int row, int column) : result_(result), row_(row), column_(column) {}

  bool is_null() const { return PQgetisnull(result_, row_, column_) != 0; }
  std::string_view text() const {
    return {PQgetvalue(result_, row_, column_), static_cast<std::size_t>(PQgetlength(result_, row_, column_))};
  }

  // As libpqxx: a null read as a plain type throws; read as optional it is empty.
  template <class T>
  T as() const {
    if constexpr (is_optional<T>::value) {
      if (is_null()) return std::nullopt;
      return as<typename T::value_type>();
    } else {
      if (is_null()) throw PgDecodeError("null where a value was expected");
      return decode<T>();
    }
  }
  template <class T>
  T as(T fallback) const {
    return is_null() ? fallback : as<T>();
  }

 private:
  template <class T>
  struct is_optional : std::false_type {};
  template <class T>
  struct is_optional<std::optional<T>> : std::true_type {};

  template <class T>
  T decode() const {
    if constexpr (std::is_same_v<T, std::string>) {
      return std::string(text());
    } else if constexpr (std::is_same_v<T, bool>) {
      if (text() == "t") return true;
      if (text() == "f") return false;
      throw PgDecodeError("not a boolean: " + std::string(text()));
    } else {
      static_assert(std::is_integral_v<T>, "text, booleans and integers only");
      const auto value = parse_pg_integer(text());
      if (!std::in_range<T>(value)) throw PgDecodeError("out of range: " + std::string(text()));
      return static_cast<T>(value);
    }
  }

  const PGresult* result_;
  int row_, column_;
};

class PgRow {
 public:
  PgRow(const PGresult* result, int row) : result_(result), row_(row) {}
  PgField operator[](int column) const { return PgField(result_, row_, column); }
  int size() const { return PQnfields(result_); }

 private:
  const PGresult* result_;
  int row_;
};

// One statement's rows, owned.
class PgResult {
 public:
  explicit PgResult(PgResultPtr result) : result_(std::move(result)) {}
  int size() const { return PQntuples(result_.get()); }
  bool empty() const { return size() == 0; }
  // Row `i`, or std::out_of_range as libpqxx's at().
  PgRow at(int i) const {
    if (i < 0 || i >= size()) throw std::out_of_range("no row " + std::to_string(i) + " in the result");
    return PgRow(result_.get(), i);
  }

 private:
  PgResultPtr result_;
};

// A bytea field's bytes, from either kind of row.
inline std::string field_bytes(const pqxx::field& f) { return pqxx::binarystring(f).str(); }
inline std::string field_bytes(const PgField& f) { return parse_pg_bytea(f.text()); }

}  // namespace gw
