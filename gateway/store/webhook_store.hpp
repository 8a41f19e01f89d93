// Verified provider webhooks in the authority (spec section 4), in two steps
// so that nothing a provider sent is lost to a parse or match failure:
//   1. store the raw delivery, once per (provider, webhook id);
//   2. read the stored body with the provider's rules (core/webhook_match),
//      find the operation by its upstream idempotency key, record an
//      operation_evidence row (source 'webhook') and mark the delivery.
// Both at READ COMMITTED: the lookup by key must not take SERIALIZABLE
// predicate locks on the operations index pages admissions write (see
// docs/design.md). Operation state is never changed here: a `matched` result
// tells the caller what the evidence says, and resolving is its next step.
#pragma once

#include "core/grant.hpp"
#include "core/ledger.hpp"
#include "core/webhook_match.hpp"
#include "store/authority_clock.hpp"
#include "store/pool.hpp"
#include "store/transaction.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gw {

// A delivery whose signature verify_webhook accepted.
struct WebhookDelivery {
  std::string provider;
  std::string webhook_id;
  std::int64_t webhook_timestamp_s = 0;
  std::string body;  // raw bytes, exactly as signed
};

enum class WebhookDisposition {
  duplicate,   // this (provider, webhook id) was already stored and matched: nothing changed
  unparsable,  // stored, no key in the body: kept for operators
  unmatched,   // stored, no operation of this provider has the key: kept for operators
  matched,     // stored, evidence recorded for the operation
};
std::string_view name(WebhookDisposition disposition);

// What the evidence names, for the caller's resolve step.
struct WebhookMatch {
  TaskScope scope;
  std::string operation_id;
  int attempt = 0;                          // the operation's current attempt when matched
  OperationState state_seen = OperationState::in_flight;  // its state as read, READ COMMITTED
  std::optional<OperationState> outcome;    // mapped outcome; none: the webhook resolves nothing
  std::int64_t evidence_id = 0;             // the operation_evidence row
};

struct WebhookAcceptance {
  WebhookDisposition disposition = WebhookDisposition::duplicate;
  std::int64_t delivery_id = 0;      // the stored row (the earlier one for a duplicate)
  std::optional<WebhookMatch> match;  // matched only
  std::string detail;                 // what was read, or why nothing matched; for logs
};

// Where the previous page of the listing ended.
struct WebhookCursor {
  std::int64_t after_id = 0;
};

struct StoredWebhook {
  std::int64_t id = 0;
  std::string provider, webhook_id;
  std::int64_t webhook_timestamp_s = 0;
  std::int64_t received_ms = 0;
  std::string status;  // received, unmatched or unparsable
  std::optional<std::string> upstream_key, outcome, detail;
  std::string body;
  std::string body_sha256;  // hex
};

struct WebhookPage {
  std::vector<StoredWebhook> deliveries;
  bool more = false;                  // another page follows
  std::optional<WebhookCursor> next;  // pass back for that page
};

class WebhookStore {
 public:
  explicit WebhookStore(AuthorityClock& clock) : clock_(clock) {}

  // Step 1, then step 2 for a delivery stored now. A repeated (provider,
  // webhook id) is `duplicate` and changes nothing, unless the earlier
  // delivery was stored but never matched (its gateway stopped between the
  // steps): then this call matches the stored body, not the new one. Of two
  // concurrent deliveries of one id exactly one runs step 2; the other is
  // `duplicate`. Throws AuthorityUnavailable when the database cannot answer
  // (the provider should get 503 and deliver again).
  WebhookAcceptance accept(Session& s, const WebhookDelivery& delivery, const WebhookRules& rules);

  // Deliveries that settled nothing (unmatched, unparsable, and any left
  // received), oldest first; `provider` filters. READ COMMITTED.
  WebhookPage list_unmatched(Session& s, const std::optional<std::string>& provider, unsigned limit,
                             const std::optional<WebhookCursor>& cursor);

 private:
  std::optional<WebhookAcceptance> match(Session& s, std::int64_t delivery_id, const WebhookRules& rules);

  AuthorityClock& clock_;
};

}  // namespace gw
