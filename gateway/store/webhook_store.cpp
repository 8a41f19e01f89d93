#include "store/webhook_store.hpp"

#include "store/authority_store.hpp"

#include <pqxx/pqxx>

namespace gw {
namespace {

// Step 1. The raw delivery before anything reads it; a repeated id inserts
// nothing (READ COMMITTED: a concurrent insert of the same id is waited for).
std::string store_sql(const AuthorityClock& clock) {
  return R"(
INSERT INTO webhook_deliveries (provider, webhook_id, webhook_timestamp, received_ms, body)
SELECT $2::text, $3::text, $4::bigint, )" + clock.now_sql(1) + R"(, $5::bytea FROM authority a
ON CONFLICT (provider, webhook_id) DO NOTHING
RETURNING id, received_ms)";
}

constexpr const char* earlier_sql = R"(
SELECT id, status FROM webhook_deliveries WHERE provider = $1 AND webhook_id = $2)";

// Step 2 starts by locking the delivery: of two callers only the first to
// lock it while it is still 'received' matches it.
constexpr const char* lock_sql = R"(
SELECT provider, webhook_id, status, body FROM webhook_deliveries WHERE id = $1 FOR UPDATE)";

// Only the operations of the provider that signed the webhook.
constexpr const char* find_sql = R"(
SELECT tenant, task, op_id, attempts, state FROM operations WHERE upstream_key = $1 AND provider = $2)";

// The evidence keeps the stored bytes themselves, so its digest is of what was signed.
std::string matched_sql(const AuthorityClock& clock) {
  return R"(
WITH now AS (SELECT )" + clock.now_sql(1) + R"( AS ms FROM authority a),
     ev AS (INSERT INTO operation_evidence (tenant, task, op_id, attempt, source, outcome, detail,
                                            response_body, response_sha256, response_length,
                                            reference, actor, recorded_ms)
            SELECT $3::text, $4::text, $5::text, $6::integer, 'webhook', $7::text, $8::text,
                   d.body, sha256(d.body), length(d.body), d.webhook_id, d.provider, now.ms
            FROM webhook_deliveries d, now WHERE d.id = $2::bigint
            RETURNING id, recorded_ms)
UPDATE webhook_deliveries d
SET status = 'matched', processed_ms = ev.recorded_ms, upstream_key = $9, outcome = $10,
    mapped_outcome = $7, detail = $8, tenant = $3, task = $4, op_id = $5, attempt = $6, evidence_id = ev.id
FROM ev WHERE d.id = $2
RETURNING ev.id, ev.recorded_ms)";
}

std::string unsettled_sql(const AuthorityClock& clock) {
  return R"(
UPDATE webhook_deliveries
SET status = $3, processed_ms = (SELECT )" + clock.now_sql(1) + R"( FROM authority a),
    upstream_key = $4, outcome = $5, mapped_outcome = $6, detail = $7
WHERE id = $2
RETURNING processed_ms)";
}

constexpr const char* list_sql = R"(
SELECT id, provider, webhook_id, webhook_timestamp, received_ms, status, upstream_key, outcome, detail,
       body, encode(sha256(body), 'hex')
FROM webhook_deliveries
WHERE status <> 'matched' AND ($1::text IS NULL OR provider = $1) AND id > $2
ORDER BY id LIMIT $3)";

std::optional<std::string> state_name(const std::optional<OperationState>& state) {
  if (!state) return std::nullopt;
  return std::string(name(*state));
}

}  // namespace

std::string_view name(WebhookDisposition disposition) {
  switch (disposition) {
    case WebhookDisposition::duplicate: return "duplicate";
    case WebhookDisposition::unparsable: return "unparsable";
    case WebhookDisposition::unmatched: return "unmatched";
    case WebhookDisposition::matched: return "matched";
  }
  return "unknown";
}

WebhookAcceptance WebhookStore::accept(Session& s, const WebhookDelivery& d, const WebhookRules& rules) {
  struct Stored {
    std::int64_t id = 0;
    bool fresh = false;  // inserted now, or an earlier one never matched
  };
  const auto stored = read_committed(s, [&](pqxx::dbtransaction& tx) {
    auto rows = tx.exec_params(store_sql(clock_), clock_.high_water(), d.provider, d.webhook_id,
                               d.webhook_timestamp_s, pqxx::binarystring(d.body));
    if (!rows.empty()) {
      clock_.observe(rows[0][1].as<std::int64_t>());
      return Stored{rows[0][0].as<std::int64_t>(), true};
    }
    auto earlier = tx.exec_params1(earlier_sql, d.provider, d.webhook_id);
    return Stored{earlier[0].as<std::int64_t>(), earlier[1].as<std::string>() == "received"};
  });
  if (stored.fresh)
    if (auto done = match(s, stored.id, rules)) return *done;
  WebhookAcceptance duplicate;
  duplicate.disposition = WebhookDisposition::duplicate;
  duplicate.delivery_id = stored.id;
  duplicate.detail = "webhook " + d.webhook_id + " was received before";
  return duplicate;
}

std::optional<WebhookAcceptance> WebhookStore::match(Session& s, std::int64_t delivery_id, const WebhookRules& rules) {
  return read_committed(s, [&](pqxx::dbtransaction& tx) -> std::optional<WebhookAcceptance> {
    auto row = tx.exec_params1(lock_sql, delivery_id);
    if (row[2].as<std::string>() != "received") return std::nullopt;  // another caller matched it
    const auto provider = row[0].as<std::string>();
    const auto webhook_id = row[1].as<std::string>();
    const auto body = pqxx::binarystring(row[3]).str();
    const auto reading = read_webhook(body, rules);

    WebhookAcceptance r;
    r.delivery_id = delivery_id;
    std::optional<std::string> key, outcome = reading.outcome;
    if (reading.parse == WebhookParse::parsed) key = reading.upstream_key;

    auto keep_unsettled = [&](WebhookDisposition disposition, const std::string& detail) {
      r.disposition = disposition;
      r.detail = detail;
      auto done = tx.exec_params1(unsettled_sql(clock_), clock_.high_water(), delivery_id,
                                  std::string(name(disposition)), key, outcome, state_name(reading.mapped),
                                  detail);
      clock_.observe(done[0].as<std::int64_t>());
      return r;
    };
    if (reading.parse == WebhookParse::unparsable)
      return keep_unsettled(WebhookDisposition::unparsable, reading.detail);

    auto found = tx.exec_params(find_sql, reading.upstream_key, provider);
    if (found.empty())
      return keep_unsettled(WebhookDisposition::unmatched,
                            "no operation of provider " + provider + " has upstream key " + reading.upstream_key);

    WebhookMatch m;
    m.scope = TaskScope{found[0][0].as<std::string>(), found[0][1].as<std::string>()};
    m.operation_id = found[0][2].as<std::string>();
    m.attempt = found[0][3].as<int>();
    m.state_seen = parse_operation_state(found[0][4].as<std::string>()).value();
    m.outcome = reading.mapped;
    r.detail = "webhook " + webhook_id + ": " + reading.detail;
    auto done = tx.exec_params1(matched_sql(clock_), clock_.high_water(), delivery_id, m.scope.tenant,
                                m.scope.task, m.operation_id, m.attempt, state_name(m.outcome), r.detail, key,
                                outcome);
    m.evidence_id = done[0].as<std::int64_t>();
    clock_.observe(done[1].as<std::int64_t>());
    r.disposition = WebhookDisposition::matched;
    r.match = std::move(m);
    return r;
  });
}

WebhookPage WebhookStore::list_unmatched(Session& s, const std::optional<std::string>& provider, unsigned limit,
                                         const std::optional<WebhookCursor>& cursor) {
  return read_committed(s, [&](pqxx::dbtransaction& tx) {
    // One row more than asked: whether another page follows.
    auto rows = tx.exec_params(list_sql, provider, cursor ? cursor->after_id : std::int64_t{0},
                               static_cast<std::int64_t>(limit) + 1);
    WebhookPage page;
    for (const auto& row : rows) {
      if (page.deliveries.size() == limit) {
        page.more = true;
        break;
      }
      StoredWebhook w;
      w.id = row[0].as<std::int64_t>();
      w.provider = row[1].as<std::string>();
      w.webhook_id = row[2].as<std::string>();
      w.webhook_timestamp_s = row[3].as<std::int64_t>();
      w.received_ms = row[4].as<std::int64_t>();
      w.status = row[5].as<std::string>();
      w.upstream_key = row[6].as<std::optional<std::string>>();
      w.outcome = row[7].as<std::optional<std::string>>();
      w.detail = row[8].as<std::optional<std::string>>();
      w.body = pqxx::binarystring(row[9]).str();
      w.body_sha256 = row[10].as<std::string>();
      page.deliveries.push_back(std::move(w));
    }
    if (page.more) page.next = WebhookCursor{page.deliveries.back().id};
    return page;
  });
}

}  // namespace gw
