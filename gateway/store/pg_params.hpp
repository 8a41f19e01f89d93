// A statement's arguments as libpq takes them: text, except bytea, which is
// sent as binary (no escaping, no hex doubling). Built from the same values
// the store passes libpqxx (strings, integers, booleans, optionals of them,
// pqxx::binarystring), so one argument list serves both ways of sending.
#pragma once

#include <pqxx/pqxx>

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace gw {

class PgParams {
 public:
  template <class... Args>
  static PgParams of(const std::tuple<Args...>& args) {
    PgParams p;
    std::apply([&p](const auto&... a) { (p.add(a), ...); }, args);
    return p;
  }

  void add(const std::string& text) { push(text.data(), text.size(), 0); }
  void add(bool value) { add(std::string(value ? "t" : "f")); }
  // A literal would otherwise convert to bool: pass std::string.
  void add(const char*) = delete;
  void add(const pqxx::binarystring& bytes) {
    push(reinterpret_cast<const char*>(bytes.data()), bytes.size(), 1);
  }
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  void add(T value) {
    add(std::to_string(value));
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

  int size() const { return static_cast<int>(values_.size()); }
  const char* const* values() const { return values_.data(); }
  const int* lengths() const { return lengths_.data(); }
  const int* formats() const { return formats_.data(); }

 private:
  // Each value is kept here (a deque never moves what it holds), so the
  // pointers handed to libpq stay valid while the caller's values may not.
  void push(const char* data, std::size_t size, int format) {
    const auto& kept = kept_.emplace_back(data, size);
    values_.push_back(kept.data());
    lengths_.push_back(static_cast<int>(size));
    formats_.push_back(format);
  }

  std::deque<std::string> kept_;
  std::vector<const char*> values_;
  std::vector<int> lengths_, formats_;
};

}  // namespace gw
