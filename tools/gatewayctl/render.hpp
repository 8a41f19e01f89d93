// The gateway's replies as text for people: one function per reply kind.
// Lenient with members (absent or null shows "-", an unexpected type its
// JSON), strict with the shape: a reply without the array or object a
// command needs is a BadReply (exit 3). No I/O.
#pragma once

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <string_view>

namespace gwctl {

// ordered_json: --json prints the members in the order the gateway sent them.
using Json = nlohmann::ordered_json;

class BadReply : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `reply[key]` as an array / object, else BadReply naming the member.
const Json& member_array(const Json& reply, std::string_view key);
const Json& member_object(const Json& reply, std::string_view key);

// Strings as they are, integers in decimal, absent or null "-", anything else its JSON.
std::string cell(const Json& object, std::string_view key);
// An epoch-milliseconds member as an ISO-8601 UTC time / a ms member as a duration.
std::string time_cell(const Json& object, std::string_view key);
std::string duration_cell(const Json& object, std::string_view key);

std::string render_held(const Json& rows);
std::string render_rejections(const Json& rows);
std::string render_operation(const Json& operation);
std::string render_reconcile(const Json& reply);
std::string render_resolve(const Json& reply);
std::string render_revoke(const Json& reply);
std::string render_rotate(const Json& reply);

}  // namespace gwctl
