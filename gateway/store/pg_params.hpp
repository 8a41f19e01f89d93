// A statement's arguments as libpq takes them: text, except bytea, which is
// sent as binary (no escaping, no hex doubling). Built from the same values
// the store passes libpqxx (strings, integers, booleans, optionals of them,
// pqxx::binarystring), so one argument list serves both ways of sending.
#pragma once

#include <pqxx/pqxx>

#include <charconv>
#include <cstddef>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace gw {

class PgParams {
 public:
  // The arguments' bytes are copied into one buffer sized up front, so an
  // admission's twenty-odd arguments cost four allocations, not one each.
  template <class... Args>
  static PgParams of(const std::tuple<Args...>& args) {
    return PgParams(args);
  }

  PgParams() = default;
  // libpq gets pointers into bytes_: never copied or moved (of() returns a
  // prvalue, so none is needed).
  PgParams(const PgParams&) = delete;
  PgParams& operator=(const PgParams&) = delete;

  int size() const { return static_cast<int>(values_.size()); }
  const char* const* values() const { return values_.data(); }
  const int* lengths() const { return lengths_.data(); }
  const int* formats() const { return formats_.data(); }

 private:
  static constexpr std::size_t integer_room = 24;  // "-9223372036854775808" and then some

  template <class... Args>
  explicit PgParams(const std::tuple<Args...>& args) {
    values_.reserve(sizeof...(Args));
    lengths_.reserve(sizeof...(Args));
    formats_.reserve(sizeof...(Args));
    bytes_.reserve(std::apply([](const auto&... a) { return (room(a) + ... + std::size_t{0}); }, args));
    std::apply([this](const auto&... a) { (this->add(a), ...); }, args);
    seal();
  }

  // Each with its NUL.
  static std::size_t room(const std::string& text) { return text.size() + 1; }
  static std::size_t room(const pqxx::binarystring& bytes) { return bytes.size() + 1; }
  static std::size_t room(bool) { return 2; }
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  static std::size_t room(T) {
    return integer_room;
  }
  template <class T>
  static std::size_t room(const std::optional<T>& value) {
    return value ? room(*value) : 0;
  }

  void add(const std::string& text) { push(text.data(), text.size(), 0); }
  void add(bool value) { push(value ? "t" : "f", 1, 0); }
  // A literal would otherwise convert to bool: pass std::string.
  void add(const char*) = delete;
  void add(const pqxx::binarystring& bytes) { push(reinterpret_cast<const char*>(bytes.data()), bytes.size(), 1); }
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  void add(T value) {
    char digits[integer_room];
    const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
    push(digits, static_cast<std::size_t>(end - digits), 0);
  }
  template <class T>
  void add(const std::optional<T>& value) {
    if (value) {
      add(*value);
    } else {
      values_.push_back(nullptr);
      lengths_.push_back(0);
      formats_.push_back(0);
    }
  }

  // Appends the bytes and a NUL (libpq reads a text value up to its NUL and
  // ignores its length); where they start is known only once the buffer
  // has stopped growing (seal), so a non-null placeholder marks "not null".
  void push(const char* data, std::size_t size, int format) {
    bytes_.append(data, size);
    bytes_.push_back('\0');
    values_.push_back(bytes_.data());
    lengths_.push_back(static_cast<int>(size));
    formats_.push_back(format);
  }

  // Each non-null value's bytes follow the previous one's in bytes_.
  void seal() {
    const char* at = bytes_.data();
    for (std::size_t i = 0; i < values_.size(); ++i) {
      if (!values_[i]) continue;
      values_[i] = at;
      at += lengths_[i] + 1;
    }
  }

  std::string bytes_;
  std::vector<const char*> values_;
  std::vector<int> lengths_, formats_;
};

}  // namespace gw
