#include "service/api/grant_reply.hpp"

#include "core/codes.hpp"
#include "core/json_text.hpp"

namespace gw {

std::string granted_body(const GrantIdentity& grant, std::int64_t expires_at_ms, std::string_view token,
                         std::int64_t version) {
  std::string body;
  body.reserve(160 + grant.realm.size() + grant.scope.tenant.size() + grant.scope.task.size() + grant.owner.size() +
               token.size());
  // Members in ascending key order, as nlohmann prints an object.
  JsonObjectWriter reply(body);
  reply.member("code", name(Code::granted));
  reply.object("grant")
      .member("epoch", grant.epoch)
      .member("expires_at_ms", expires_at_ms)
      .member("owner", grant.owner)
      .member("realm", grant.realm)
      .member("task", grant.scope.task)
      .member("tenant", grant.scope.tenant)
      .close();
  reply.member("grant_token", token).member("version", version).close();
  return body;
}

}  // namespace gw
