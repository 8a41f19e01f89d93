// CRM provider rules: contacts replaced whole (PUT) or merged (PATCH, RFC 7396),
// each change bumping the contact's version.
#include "business_rules.hpp"

#include <cstdint>
#include <map>

namespace demo_provider {
namespace {

class crm_rules final : public business_rules {
 public:
  std::string_view collection() const override { return "contacts"; }

  rule_outcome apply(std::string_view method, const std::string& id, std::string_view body) override {
    if (id.empty()) return error_outcome(405, "method_not_allowed", false);
    if (method == "PUT") return upsert(id, body);
    if (method == "PATCH") return patch(id, body);
    if (method == "DELETE") return erase(id);
    if (method == "GET") {
      const auto it = contacts_.find(id);
      if (it == contacts_.end() || !it->second.present) return error_outcome(404, "not_found", false);
      return rule_outcome{200, view(id, it->second), false, false};
    }
    return error_outcome(405, "method_not_allowed", false);
  }

  void reset() override { contacts_.clear(); }

 private:
  struct contact {
    nlohmann::json fields = nlohmann::json::object();
    // Kept across DELETE so a re-created contact never reuses a version a
    // client may still hold.
    std::int64_t version = 0;
    bool present = false;
  };

  static nlohmann::json view(const std::string& id, const contact& c) {
    nlohmann::json out = c.fields;
    out["id"] = id;
    out["version"] = c.version;
    return out;
  }

  rule_outcome upsert(const std::string& id, std::string_view body) {
    auto fields = parse_object(body);
    if (!fields) return error_outcome(400, "invalid_json", false);
    contact& c = contacts_[id];
    c.fields = std::move(*fields);
    c.present = true;
    ++c.version;
    return rule_outcome{200, view(id, c), true, true};
  }

  rule_outcome patch(const std::string& id, std::string_view body) {
    const auto it = contacts_.find(id);
    if (it == contacts_.end() || !it->second.present) return error_outcome(404, "not_found", true);
    const auto changes = parse_object(body);
    if (!changes) return error_outcome(400, "invalid_json", false);
    contact& c = it->second;
    c.fields.merge_patch(*changes);
    ++c.version;
    return rule_outcome{200, view(id, c), true, true};
  }

  rule_outcome erase(const std::string& id) {
    const auto it = contacts_.find(id);
    if (it == contacts_.end() || !it->second.present) return error_outcome(404, "not_found", true);
    contact& c = it->second;
    c.present = false;
    c.fields = nlohmann::json::object();
    return rule_outcome{200, {{"id", id}, {"deleted", true}, {"version", c.version}}, true, true};
  }

  std::map<std::string, contact> contacts_;
};

}  // namespace

std::unique_ptr<business_rules> make_crm_rules() {
  return std::make_unique<crm_rules>();
}

}  // namespace demo_provider
