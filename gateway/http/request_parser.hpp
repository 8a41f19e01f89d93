// The server's request parser: Beast's basic_parser (framing, limits, the
// syntax of every line) filling the application's Request as it goes. Each
// field is copied once, into Request::headers, with no Beast field container
// in between. Included by server.cpp only: Beast stays in one translation
// unit of the server.
#pragma once

#include "http/message.hpp"

#include <boost/beast/http/basic_parser.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace gw::http {

class RequestParser final : public boost::beast::http::basic_parser<true> {
 public:
  using error_code = boost::beast::error_code;
  using string_view = boost::beast::string_view;

  // Method, target and the head's fields once is_header_done(); the body
  // once is_done(). keep_alive is basic_parser's keep_alive().
  Request request;
  unsigned version = 11;
  bool head = false;  // a HEAD request: its reply carries no body

 private:
  void on_request_impl(boost::beast::http::verb method, string_view method_name, string_view target, int v,
                       error_code&) override {
    request.headers.reserve(16);  // one allocation for a usual head, none regrown
    request.method.assign(method_name.data(), method_name.size());
    request.target.assign(target.data(), target.size());
    version = static_cast<unsigned>(v);
    head = method == boost::beast::http::verb::head;
  }
  void on_response_impl(int, string_view, int, error_code&) override {}

  // A chunked body's trailer fields arrive after the head is done. They are
  // dropped: a field must never reach the application (or a provider)
  // without the head checks (http/framing.hpp) having seen it.
  void on_field_impl(boost::beast::http::field, string_view name, string_view value, error_code&) override {
    if (is_header_done()) return;
    request.headers.emplace_back(std::in_place, std::string_view(name.data(), name.size()),
                                 std::string_view(value.data(), value.size()));
  }
  void on_header_impl(error_code&) override {}

  void on_body_init_impl(const boost::optional<std::uint64_t>& length, error_code&) override {
    // basic_parser has refused a length over body_limit already.
    if (length) request.body.reserve(static_cast<std::size_t>(*length));
  }
  std::size_t on_body_impl(string_view bytes, error_code&) override {
    request.body.append(bytes.data(), bytes.size());
    return bytes.size();
  }
  void on_chunk_header_impl(std::uint64_t, string_view, error_code&) override {}
  std::size_t on_chunk_body_impl(std::uint64_t, string_view bytes, error_code&) override {
    request.body.append(bytes.data(), bytes.size());
    return bytes.size();
  }
  void on_finish_impl(error_code&) override {}
};

}  // namespace gw::http
