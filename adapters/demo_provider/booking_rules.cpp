// Booking provider rules: one confirmed booking per slot; cancelling frees it;
// PUT or PATCH changes its customer.
#include "business_rules.hpp"

#include <cstdint>
#include <map>
#include <unordered_map>

namespace demo_provider {
namespace {

class booking_rules final : public business_rules {
 public:
  std::string_view collection() const override { return "bookings"; }

  rule_outcome apply(std::string_view method, const std::string& id, std::string_view body) override {
    if (id.empty())
      return method == "POST" ? create(body) : error_outcome(405, "method_not_allowed", false);
    const auto it = bookings_.find(id);
    if (method == "GET")
      return it == bookings_.end() ? error_outcome(404, "not_found", false)
                                   : rule_outcome{200, it->second, false, false};
    if (method == "DELETE") return cancel(it);
    if (method == "PUT" || method == "PATCH") return rename(it, body);
    return error_outcome(405, "method_not_allowed", false);
  }

  void reset() override {
    bookings_.clear();
    slot_holders_.clear();
    next_number_ = 1;
  }

 private:
  using booking_map = std::map<std::string, nlohmann::json, std::less<>>;

  rule_outcome create(std::string_view body) {
    auto booking = parse_object(body);
    if (!booking) return error_outcome(400, "invalid_json", false);
    const auto slot = booking->find("slot");
    const auto customer = booking->find("customer");
    if (slot == booking->end() || !slot->is_string() || slot->get_ref<const std::string&>().empty() ||
        customer == booking->end() || !customer->is_string())
      return error_outcome(400, "invalid_request", false);

    const std::string slot_name = slot->get<std::string>();
    // A definite rejection: nothing changed, and a retry under the same key
    // must see this same answer.
    if (slot_holders_.contains(slot_name)) return error_outcome(409, "slot_taken", true);

    const std::string booking_id = "bk_" + std::to_string(next_number_++);
    (*booking)["booking_id"] = booking_id;
    (*booking)["status"] = "confirmed";
    slot_holders_.emplace(slot_name, booking_id);
    bookings_.emplace(booking_id, *booking);
    return rule_outcome{201, std::move(*booking), true, true};
  }

  rule_outcome cancel(booking_map::iterator it) {
    if (it == bookings_.end()) return error_outcome(404, "not_found", true);
    nlohmann::json& booking = it->second;
    if (booking["status"] == "cancelled") return error_outcome(409, "already_cancelled", true);
    slot_holders_.erase(booking["slot"].get<std::string>());
    booking["status"] = "cancelled";
    return rule_outcome{200, booking, true, true};
  }

  // PUT and PATCH change who the booking is for: {"customer": "..."}.
  rule_outcome rename(booking_map::iterator it, std::string_view body) {
    const auto change = parse_object(body);
    if (!change) return error_outcome(400, "invalid_json", false);
    const auto customer = change->find("customer");
    if (customer == change->end() || !customer->is_string()) return error_outcome(400, "invalid_request", false);
    if (it == bookings_.end()) return error_outcome(404, "not_found", true);
    nlohmann::json& booking = it->second;
    if (booking["status"] == "cancelled") return error_outcome(409, "already_cancelled", true);
    booking["customer"] = *customer;
    return rule_outcome{200, booking, true, true};
  }

  booking_map bookings_;                                       // by booking id, cancelled ones kept
  std::unordered_map<std::string, std::string> slot_holders_;  // slot -> its confirmed booking
  std::uint64_t next_number_ = 1;
};

}  // namespace

std::unique_ptr<business_rules> make_booking_rules() {
  return std::make_unique<booking_rules>();
}

}  // namespace demo_provider
