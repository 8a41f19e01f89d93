#include "gatewayctl/render.hpp"

#include "gatewayctl/format.hpp"

#include <limits>
#include <optional>
#include <utility>
#include <vector>

namespace gwctl {
namespace {

using Lines = std::vector<std::pair<std::string, std::string>>;

const Json* find(const Json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(std::string(key));
  return it == object.end() ? nullptr : &*it;
}

// An integer member that fits in int64. The parser keeps non-negative
// integers as unsigned, so both kinds are read here.
std::optional<std::int64_t> int64_member(const Json& object, std::string_view key) {
  const Json* v = find(object, key);
  if (!v) return std::nullopt;
  if (v->is_number_unsigned()) {
    const auto u = v->get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
    return static_cast<std::int64_t>(u);
  }
  if (v->is_number_integer()) return v->get<std::int64_t>();
  return std::nullopt;
}

// "POST /bookings", or "-" when neither is known.
std::string request_cell(const Json& row) {
  auto method = cell(row, "method"), target = cell(row, "target");
  if (method == "-" && target == "-") return "-";
  return method + " " + target;
}

std::string objects_table(const Json& rows, Table table, std::vector<std::string> (*row_cells)(const Json&)) {
  for (const auto& row : rows) table.add(row_cells(row));
  return table.str();
}

std::vector<std::string> held_row(const Json& r) {
  return {cell(r, "tenant"),          cell(r, "task"),          cell(r, "operation"), cell(r, "state"),
          cell(r, "reason"),          duration_cell(r, "held_for_ms"), time_cell(r, "held_since_ms"),
          cell(r, "provider"),        request_cell(r),          cell(r, "attempts"),  cell(r, "upstream_key")};
}

std::vector<std::string> rejection_row(const Json& r) {
  return {time_cell(r, "authority_ms"), cell(r, "tenant"), cell(r, "task"),  cell(r, "operation"),
          cell(r, "code"),              cell(r, "owner"),  cell(r, "epoch"), cell(r, "realm"),
          cell(r, "provider"),          request_cell(r)};
}

std::vector<std::string> attempt_row(const Json& a) {
  return {cell(a, "attempt"), time_cell(a, "admitted_ms"), cell(a, "owner"),           cell(a, "epoch"),
          cell(a, "realm"),   cell(a, "outcome"),          time_cell(a, "outcome_ms"), cell(a, "upstream_status"),
          cell(a, "detail")};
}

// A run of identical lookups comes as one row (docs/api.md, "admin operation"):
// how many times it was said, and when last; one that was said once shows "-".
std::vector<std::string> evidence_row(const Json& e) {
  const auto times = int64_member(e, "count").value_or(1);
  return {cell(e, "id"),
          time_cell(e, "recorded_ms"),
          times > 1 ? std::to_string(times) + "x" : "-",
          times > 1 ? time_cell(e, "last_recorded_ms") : "-",
          cell(e, "source"),
          cell(e, "outcome"),
          cell(e, "upstream_status"),
          cell(e, "actor"),
          cell(e, "reference"),
          cell(e, "detail")};
}

// A titled table, or "title: none".
std::string section(const std::string& title, const Json& parent, std::string_view key, Table table,
                    std::vector<std::string> (*row_cells)(const Json&)) {
  const Json* rows = find(parent, key);
  if (!rows || rows->is_null() || (rows->is_array() && rows->empty())) return title + ": none\n";
  if (!rows->is_array()) throw BadReply("\"" + std::string(key) + "\" is not an array");
  return title + " (" + std::to_string(rows->size()) + "):\n" + objects_table(*rows, std::move(table), row_cells);
}

std::string response_summary(const Json& operation) {
  const Json* r = find(operation, "response");
  if (!r || r->is_null()) return "-";
  return cell(*r, "status") + ", " + cell(*r, "length") + " bytes, sha256 " + cell(*r, "sha256");
}

}  // namespace

const Json& member_array(const Json& reply, std::string_view key) {
  const Json* m = find(reply, key);
  if (!m || !m->is_array()) throw BadReply("the reply has no \"" + std::string(key) + "\" array");
  return *m;
}

const Json& member_object(const Json& reply, std::string_view key) {
  const Json* m = find(reply, key);
  if (!m || !m->is_object()) throw BadReply("the reply has no \"" + std::string(key) + "\" object");
  return *m;
}

std::string cell(const Json& object, std::string_view key) {
  const Json* v = find(object, key);
  if (!v || v->is_null()) return "-";
  if (v->is_string()) return v->get<std::string>();
  return v->dump();
}

std::string time_cell(const Json& object, std::string_view key) {
  if (auto ms = int64_member(object, key)) return format_time_ms(*ms);
  return cell(object, key);
}

std::string duration_cell(const Json& object, std::string_view key) {
  if (auto ms = int64_member(object, key)) return format_duration_ms(*ms);
  return cell(object, key);
}

std::string render_held(const Json& rows) {
  if (rows.empty()) return "no held operations\n";
  return objects_table(rows,
                       Table({"TENANT", "TASK", "OPERATION", "STATE", "REASON", "HELD_FOR", "HELD_SINCE", "PROVIDER",
                              "REQUEST", "ATTEMPTS", "UPSTREAM_KEY"}),
                       held_row);
}

std::string render_rejections(const Json& rows) {
  if (rows.empty()) return "no rejections\n";
  return objects_table(rows,
                       Table({"AT", "TENANT", "TASK", "OPERATION", "CODE", "OWNER", "EPOCH", "REALM", "PROVIDER",
                              "REQUEST"}),
                       rejection_row);
}

std::string render_operation(const Json& op) {
  std::string out = key_values({{"tenant", cell(op, "tenant")},
                                {"task", cell(op, "task")},
                                {"operation", cell(op, "id")},
                                {"state", cell(op, "state")},
                                {"held_reason", cell(op, "held_reason")},
                                {"provider", cell(op, "provider")},
                                {"request", request_cell(op)},
                                {"fingerprint", cell(op, "fingerprint")},
                                {"expected_version", cell(op, "expected_version")},
                                {"committed_version", cell(op, "committed_version")},
                                {"upstream_key", cell(op, "upstream_key")},
                                {"response", response_summary(op)}});
  out += "\n" + section("attempts", op, "attempts",
                        Table({"ATTEMPT", "ADMITTED", "OWNER", "EPOCH", "REALM", "OUTCOME", "OUTCOME_AT",
                               "UPSTREAM_STATUS", "DETAIL"}),
                        attempt_row);
  out += "\n" + section("evidence", op, "evidence",
                        Table({"ID", "RECORDED", "REPEATED", "LAST", "SOURCE", "OUTCOME", "UPSTREAM_STATUS",
                               "ACTOR", "REFERENCE", "DETAIL"}),
                        evidence_row);
  return out;
}

std::string render_reconcile(const Json& reply) {
  const auto& lookup = member_object(reply, "lookup");
  const auto& op = member_object(reply, "operation");
  return key_values({{"lookup", cell(lookup, "decision")},
                     {"provider_status", cell(lookup, "status")},
                     {"outcome", cell(lookup, "outcome")},
                     {"detail", cell(lookup, "detail")}}) +
         "\n" + render_operation(op);
}

std::string render_resolve(const Json& reply) { return render_operation(member_object(reply, "operation")); }

std::string render_revoke(const Json& reply) {
  const auto& revoked = member_object(reply, "revoked");
  return key_values({{"revoked_owner", cell(revoked, "owner")},
                     {"epoch", cell(revoked, "epoch")},
                     {"realm", cell(revoked, "realm")},
                     {"lease_ends", time_cell(reply, "expires_at_ms")}});
}

std::string render_rotate(const Json& reply) {
  if (!reply.is_object() || !find(reply, "realm")) throw BadReply("the reply has no \"realm\"");
  return key_values({{"realm", cell(reply, "realm")}, {"previous_realm", cell(reply, "previous_realm")}}) +
         "every grant of the previous realm is now refused (authority_generation_mismatch): agents claim again\n";
}

}  // namespace gwctl
