// The gateway's configuration: one JSON file, loaded once and validated at
// start. A bad field stops the process with its JSON path in the message.
// The format is documented in docs/configuration.md.
#pragma once

#include "core/outcome.hpp"
#include "core/provider_path.hpp"
#include "core/reconcile.hpp"
#include "core/retention.hpp"
#include "core/secret_scan.hpp"
#include "core/webhook_match.hpp"
#include "tls/server_context.hpp"

#include <chrono>
#include <map>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gw {

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using ms = std::chrono::milliseconds;

// Log line levels, least to most severe.
enum class LogLevel { debug, info, warn, error };
std::optional<LogLevel> parse_log_level(std::string_view name);
std::string_view name(LogLevel level);

struct LogConfig {
  LogLevel level = LogLevel::info;  // lines below this level are not written
  // One line per request at info (probes at debug). Off, a request still
  // leaves its line when it is warn or worse (unknown_outcome, authority
  // unavailable, internal errors): those must never go unlogged.
  bool access = true;
};

struct ListenConfig {
  std::string address = "127.0.0.1";
  std::uint16_t port = 8080;
  // HTTPS when set. The files are loaded at config time, at start and on
  // each reload (SIGHUP); the paths themselves never change while running.
  std::optional<tls::TlsFiles> tls;
};

struct DatabaseConfig {
  std::string url;                 // libpq connection string (resolved from url_env if given)
  unsigned pool_size = 8;          // connections = worker threads
  unsigned connect_timeout_s = 2;
  ms statement_timeout{2000};
  ms lock_timeout{1000};
  std::size_t queue_limit = 4096;  // waiting requests beyond this answer authority_unavailable
  ms queue_timeout{3000};          // a request that waited this long for a connection gives up
  unsigned max_attempts = 8;       // serialization-failure retries per decision
  ms clock_tick{250};              // how often the durable clock floor advances
  // A connection that went silent (peer gone, a firewall dropping packets)
  // is found by TCP: keepalive probes while idle, tcp_user_timeout while a
  // query waits for its acknowledgement.
  unsigned keepalives_idle_s = 30;
  unsigned keepalives_interval_s = 5;
  unsigned keepalives_count = 3;
  ms tcp_user_timeout{10000};      // 0: the kernel's default (many minutes)
  // The longest one database job (one transaction) may take before its
  // connection is cut: the last resort when the peer still acknowledges but
  // never answers (a stalled proxy or pooler). Default: 10 s or twice
  // statement_timeout, whichever is longer.
  ms call_timeout{10000};
  // Decisions waiting for a connection at the same moment share one
  // SERIALIZABLE transaction and one commit, up to this many (1: never, the
  // default: a transaction spanning many tasks makes serialization conflicts
  // between tasks that share nothing, and they multiply when the machine is
  // busy; docs/performance.md, issue #30).
  unsigned group_max = 1;
  // Connections each I/O thread drives itself, for decisions that are one
  // statement alone (0: none).
  unsigned direct_connections = 8;
  // Decisions one direct connection carries at once, once all of its
  // thread's are lent: each statement is sent behind those on their way
  // (pipelined) and the server runs it as soon as the one before commits
  // (1: one at a time).
  unsigned direct_pipeline = 4;
  // The authority regression guard (docs/deployment.md): the file the
  // watermark is kept in across restarts ("": memory only, a restarted
  // gateway trusts the first primary it finds), and how often it is read again.
  std::string guard_state_file;
  ms guard_interval{200};
};

// The reconciler: how each gateway looks held operations up at their
// providers (docs/operations.md, "Reconciliation by provider lookup").
struct ReconcileConfig {
  ms interval{1000};            // how often the gateway asks the store for due lookups
  unsigned max_concurrent = 4;  // lookups in progress at once, per gateway
  LookupBackoff backoff;        // between lookups of one operation: base 1 s, cap 5 min, full jitter
};

// Held operations: how abandoned forwards are found and how held operations
// are reconciled (docs/configuration.md).
struct RecoveryConfig {
  // Added to a provider's queue, connect and request timeouts to make an
  // admission's forward deadline: room for the outcome record's retries.
  ms forward_margin{5000};
  ms sweep_interval{1000};  // how often in-flight operations past their deadline are swept
  unsigned sweep_batch = 100;  // operations swept per transaction
  // How long an agent's reply waits for its outcome to be recorded; the
  // record goes on being retried after that (outcome lane, no deadline).
  ms outcome_wait{3000};
  ms outcome_retry_cap{5000};  // longest pause between two tries of an outcome record
  ReconcileConfig reconcile;
};

// Leases (spec section 2): how long one claim or renew may hold a task. A
// lease can always be renewed; the bound keeps a stuck or hostile agent from
// holding a task for centuries (an operator can still revoke it).
struct LeaseConfig {
  ms max_lease{ms(30LL * 24 * 3600 * 1000)};  // 30 days
};

struct HttpConfig {
  std::size_t max_body_bytes = 1 << 20;
  std::size_t max_header_bytes = 16 << 10;
  ms read_timeout{10000};   // to receive one whole request once it started
  ms idle_timeout{60000};   // keep-alive connection with no request
  ms header_timeout{10000};  // to receive a whole request header once its first byte came
  std::size_t max_connections = 10000;  // inbound; past it the listener stops accepting
  unsigned io_threads = 2;
};

struct AgentToken {
  std::string name;
  std::string token_sha256;  // lower-case hex
  std::set<std::string> tenants;
  bool operator==(const AgentToken&) const = default;
};

struct OperatorToken {
  std::string name;
  std::string token_sha256;
  bool operator==(const OperatorToken&) const = default;
};

// Where a provider credential comes from: the config field that names it
// ("env" or "file") and what it names (the variable, or the file's path as
// resolved). Never the credential itself.
struct CredentialSource {
  std::string field;
  std::string name;
  bool operator==(const CredentialSource&) const = default;
};

// Signed webhooks from a provider (Standard Webhooks; docs/configuration.md).
struct WebhookConfig {
  std::vector<std::string> secret_envs;  // environment variables, each holding a whsec_ secret
  std::vector<std::string> keys;         // their decoded keys, resolved at load, same order
  ms tolerance{300000};                  // webhook-timestamp accepted this far from now, either way
  WebhookRules rules;                    // where the key and the outcome are in the body
};

struct ProviderConfig {
  std::string name;
  bool tls = false;
  std::string host;
  std::string port;
  std::string base_path;  // prefix joined before the agent's upstream path; "" or "/x"
  std::optional<std::string> ca_file;
  std::string credential_header = "Authorization";
  std::string credential_prefix = "Bearer ";
  // Each tenant's own account at this provider (credential.tenants), or one
  // account that every tenant shares, which the config must declare
  // (credential.shared_by_tenants). Resolved at load from an environment
  // variable or a file; a reload (SIGHUP) reads the files again.
  std::map<std::string, std::string> tenant_credentials;
  std::optional<std::string> shared_credential;
  std::map<std::string, CredentialSource> tenant_credential_sources;  // same keys as tenant_credentials
  std::optional<CredentialSource> shared_credential_source;

  // The credential a request for `tenant` is sent with; nullptr when this
  // provider has no account for that tenant (the request is refused).
  const std::string* credential_for(const std::string& tenant) const;
  // Every credential above, the shared one and each tenant's, as one scan
  // (core/secret_scan.hpp): a reply to one tenant that reveals another's is
  // as bad. Built once per load by index_credentials(), which parse_config
  // calls, so a reply costs one pass over its bytes and no allocation; a
  // reload builds a new one with the new credentials.
  std::shared_ptr<const SecretScan> credential_scan;
  void index_credentials();
  // Whether `text` holds any of this provider's credentials, in any form the
  // scan knows. Without index_credentials() (a config put together by hand),
  // always true: an unscanned reply is never passed as clean.
  bool reveals_credential(std::string_view text) const;
  // Path forms refused by default (core/provider_path.hpp) that this
  // provider's framework is known to treat as plain data.
  PathForms allowed_path_forms;
  // Methods forwarded with agent authentication only, matched exactly (case
  // matters). Every other method is fenced (service/proxy/forwarding.hpp method_rule).
  std::set<std::string> unfenced_methods{"GET", "HEAD"};
  ms connect_timeout{2000};
  ms request_timeout{10000};
  ms queue_timeout{2000};
  ms idle_retire{2000};
  std::size_t max_connections = 32;
  std::size_t max_queued = 1024;  // requests waiting for a connection; past it, refused at once
  std::size_t max_request_body_bytes = 1 << 20;
  std::size_t max_response_body_bytes = 1 << 20;  // also what the ledger keeps for replay
  std::string idempotency_header = "Idempotency-Key";
  std::string fence_realm_header = "Fence-Realm";
  std::string fence_epoch_header = "Fence-Epoch";
  std::string fence_owner_header = "Fence-Owner";
  OutcomeRules outcomes = OutcomeRules::defaults();
  // The provider's status lookup by idempotency key; without one, its held
  // operations wait for a webhook or an operator.
  std::optional<LookupConfig> lookup;
  std::optional<WebhookConfig> webhooks;  // none: POST /v1/webhooks/{name} is not_found

  // How long after admission an attempt may still be legitimately in flight
  // from this process: waiting for a connection, connecting, the exchange.
  ms forward_budget() const { return queue_timeout + connect_timeout + request_timeout; }
};

struct Config {
  ListenConfig listen;
  DatabaseConfig database;
  HttpConfig http;
  RecoveryConfig recovery;
  RetentionPolicy retention;
  LeaseConfig leases;
  LogConfig log;
  std::vector<AgentToken> agents;
  std::vector<OperatorToken> operators;
  std::vector<ProviderConfig> providers;
};

// The providers that have a status lookup, by name (what due_for_lookup takes).
std::vector<std::string> lookup_providers(const Config& config);

// How long due_for_lookup reserves an operation for the gateway that took
// it: the slowest lookup exchange (queue, connect and request timeouts of
// the slowest provider with a lookup) plus recovery.forward_margin. Past it,
// a lookup whose gateway died is handed out again.
ms lookup_lease(const Config& config);
// The same for these providers' settings (a reload may change their timeouts).
ms lookup_lease(const std::vector<ProviderConfig>& providers, ms forward_margin);

// The most a credential file may hold; a larger one is refused at load.
inline constexpr std::size_t max_credential_file_bytes = 64 * 1024;

// Reads and validates; throws ConfigError("$.path.to.field: what is wrong").
// Relative credential file paths are relative to `base_dir` (load_config:
// the config file's directory; empty: the working directory).
Config load_config(const std::string& path);
Config parse_config(const std::string& json_text, const std::string& base_dir = {});

}  // namespace gw
