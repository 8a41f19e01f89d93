#include "store/migrations.hpp"
#include "support/test_database.hpp"

#include <doctest/doctest.h>
#include <pqxx/pqxx>

#include <map>
#include <set>
#include <span>
#include <string>
#include <thread>

using namespace gw;
using namespace gw::test;

TEST_CASE("migrations from two gateways at once apply each file exactly once") {
  TestDatabase db(/*migrate=*/false);
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i)
    threads.emplace_back([&] {
      pqxx::connection c(db.url());
      migrate(c);
      ++ok;
    });
  for (auto& t : threads) t.join();
  CHECK(ok == 2);
  CHECK(db.scalar("SELECT count(*) FROM schema_migrations") == std::to_string(embedded_migrations().size()));
  CHECK(db.scalar("SELECT count(*) FROM authority") == "1");
}

TEST_CASE("migrations again are a no-op") {
  TestDatabase db;
  auto realm = db.scalar("SELECT realm FROM authority");
  pqxx::connection c(db.url());
  migrate(c);
  CHECK(db.scalar("SELECT realm FROM authority") == realm);
}

TEST_CASE("a changed or unknown applied migration stops the gateway") {
  TestDatabase db;
  db.exec("UPDATE schema_migrations SET sha256 = 'edited' WHERE name = '001_authority.sql'");
  pqxx::connection c(db.url());
  CHECK_THROWS_WITH_AS(migrate(c), doctest::Contains("changed"), std::runtime_error);
  TestDatabase db2;
  db2.exec("INSERT INTO schema_migrations (name, sha256) VALUES ('999_future.sql', 'x')");
  pqxx::connection c2(db2.url());
  CHECK_THROWS_WITH_AS(migrate(c2), doctest::Contains("999_future.sql"), std::runtime_error);
}

TEST_CASE("schema: the hot tables' value rules, domains since schema/011, refuse what their CHECKs refused") {
  TestDatabase db;
  pqxx::connection c(db.url());
  // One row per table, valid but for the value the caller puts in.
  const auto task = [](const std::string& epoch, const std::string& hash, const std::string& expires,
                       const std::string& granted) {
    return "INSERT INTO tasks (tenant, task, owner, epoch, secret_hash, expires_at_ms, granted_at_ms) VALUES"
           " ('t', 'k-' || md5(random()::text), 'o', " + epoch + ", " + hash + ", " + expires + ", " + granted + ")";
  };
  const auto operation = [](const std::string& column, const std::string& value) {
    std::map<std::string, std::string> v{{"fingerprint", "sha256('f')"}, {"expected_version", "0"},
                                         {"state", "'in_flight'"},    {"attempts", "1"},
                                         {"held_reason", "NULL"},     {"resolution", "NULL"},
                                         {"lookups", "0"},            {"attempt_epoch", "1"},
                                         {"attempt_outcome", "NULL"}};
    v[column] = value;
    return "INSERT INTO operations (tenant, task, op_id, fingerprint, method, provider, target, expected_version,"
           " upstream_key, state, attempts, created_ms, updated_ms, held_reason, resolution, lookups,"
           " attempt_realm, attempt_owner, attempt_epoch, attempt_admitted_ms,"
           " attempt_outcome) VALUES ('t', 'k', 'op-' || md5(random()::text), " + v["fingerprint"] +
           ", 'POST', 'p', '/x', " + v["expected_version"] + ", 'u', " + v["state"] + ", " + v["attempts"] +
           ", 0, 0, " + v["held_reason"] + ", " + v["resolution"] + ", " + v["lookups"] + ", 'r', 'o', " +
           v["attempt_epoch"] + ", 0, " + v["attempt_outcome"] + ")";
  };
  const auto attempt = [](const std::string& number, const std::string& outcome) {
    return "INSERT INTO earlier_attempts (tenant, task, op_id, attempt, realm, owner, epoch, admitted_ms, outcome)"
           " VALUES ('t', 'k', 'op-' || md5(random()::text), " + number + ", 'r', 'o', 1, 0, " + outcome + ")";
  };
  const auto accepted = [&](const std::string& sql) {
    pqxx::work tx(c);
    tx.exec(sql);
    tx.commit();
  };
  const auto refused = [&](const std::string& sql) {
    pqxx::work tx(c);
    CHECK_THROWS_AS(tx.exec(sql), pqxx::check_violation);
  };
  accepted(task("1", "sha256('s')", "0", "0"));
  refused(task("0", "sha256('s')", "0", "0"));
  refused(task("1", "'\\x00'::bytea", "0", "0"));
  refused(task("1", "sha256('s')", "-1", "0"));
  refused(task("1", "sha256('s')", "0", "-1"));

  accepted("INSERT INTO task_ledger (tenant, task, version) VALUES ('t', 'k', 0)");
  refused("INSERT INTO task_ledger (tenant, task, version) VALUES ('t', 'k2', -1)");
  refused("UPDATE task_ledger SET version = -1");

  accepted(operation("state", "'in_flight'"));
  accepted(operation("resolution", "ROW('operator', 0, 1)"));
  refused(operation("fingerprint", "'\\x00'::bytea"));
  refused(operation("expected_version", "-1"));
  refused(operation("state", "'done'"));
  refused(operation("attempts", "0"));
  refused(operation("held_reason", "'bored'"));
  refused(operation("resolution", "ROW('someone', 0, 1)"));
  // Whole or absent (schema/016, as the CHECK of schema/005 before it).
  refused(operation("resolution", "ROW('operator', NULL, 1)"));
  refused(operation("resolution", "ROW('operator', 0, NULL)"));
  refused(operation("resolution", "ROW(NULL, 0, 1)"));
  accepted(operation("resolution", "ROW(NULL, NULL, NULL)"));
  refused(operation("lookups", "-1"));
  refused(operation("attempt_epoch", "0"));
  refused(operation("attempt_outcome", "'in_flight'"));
  refused("UPDATE operations SET state = 'done'");

  accepted(attempt("1", "'succeeded'"));
  refused(attempt("0", "NULL"));
  refused(attempt("1", "'in_flight'"));
}

namespace {
// The embedded migrations applied one at a time, each in its own transaction,
// as gateways of each version would have: up to a given one, then the rest.
struct MigrationSteps {
  pqxx::connection& c;
  std::span<const Migration> all = embedded_migrations();
  std::size_t next = 0;

  void apply(const Migration& m) {
    pqxx::work tx(c);
    tx.exec(std::string(m.sql));
    tx.commit();
  }
  // Applies every migration named before `name`; returns the one named next.
  std::string_view apply_before(std::string_view name) {
    for (; next < all.size() && all[next].name < name; ++next) apply(all[next]);
    return next < all.size() ? all[next].name : std::string_view();
  }
  void apply_rest() {
    for (; next < all.size(); ++next) apply(all[next]);
  }
};
}  // namespace

TEST_CASE("schema/013 moves each operation's current attempt into its row and keeps the earlier ones") {
  TestDatabase db(false);
  pqxx::connection c(db.url());
  MigrationSteps steps{c};
  REQUIRE(steps.apply_before("013") == "013_current_attempt_in_operation.sql");
  // Two operations as schema/012 kept them: one on its first attempt, one
  // re-admitted once (attempt 1 not_executed, attempt 2 succeeded).
  const auto operation = [](const std::string& op, int attempts, const std::string& state) {
    return "INSERT INTO operations (tenant, task, op_id, fingerprint, method, provider, target, expected_version,"
           " upstream_key, state, attempts, created_ms, updated_ms) VALUES ('t', 'k', '" + op +
           "', sha256('f'), 'POST', 'p', '/x', 0, 'u-" + op + "', '" + state + "', " + std::to_string(attempts) +
           ", 5, 9)";
  };
  db.exec(operation("op-a", 1, "in_flight"));
  db.exec(operation("op-b", 2, "succeeded"));
  db.exec("INSERT INTO operation_attempts (tenant, task, op_id, attempt, realm, owner, epoch, admitted_ms, outcome,"
          " outcome_ms, upstream_status, detail) VALUES"
          " ('t', 'k', 'op-a', 1, 'r', 'owner-a', 3, 5, NULL, NULL, NULL, NULL),"
          " ('t', 'k', 'op-b', 1, 'r', 'owner-b', 4, 6, 'not_executed', 7, 409, 'refused'),"
          " ('t', 'k', 'op-b', 2, 'r', 'owner-c', 5, 8, 'succeeded', 9, 201, 'replied')");
  const auto attempts = [&] {
    return db.scalar("SELECT string_agg(op_id || ':' || attempt || ':' || owner || ':' || epoch || ':' || admitted_ms ||"
                     " ':' || coalesce(outcome, '-') || ':' || coalesce(upstream_status::text, '-'), ' '"
                     " ORDER BY op_id, attempt) FROM operation_attempts");
  };
  const auto before = attempts();

  steps.apply_rest();

  // Readers see the same attempts through the view.
  CHECK(attempts() == before);
  CHECK(db.scalar("SELECT string_agg(op_id || ':' || attempt, ' ' ORDER BY op_id, attempt) FROM earlier_attempts") ==
        "op-b:1");
  CHECK(db.scalar("SELECT string_agg(op_id || ':' || attempt_owner || ':' || coalesce(attempt_outcome, '-'), ' '"
                  " ORDER BY op_id) FROM operations") == "op-a:owner-a:- op-b:owner-c:succeeded");
}

TEST_CASE("schema/016 keeps each operation's resolution whole in one value, with no CHECK on the table") {
  TestDatabase db(false);
  pqxx::connection c(db.url());
  MigrationSteps steps{c};
  REQUIRE(steps.apply_before("016") == "016_resolution_as_one_value.sql");
  // One operation resolved from a lookup, one never resolved, as schema/015 kept them.
  const auto operation = [](const std::string& op, const std::string& resolution) {
    return "INSERT INTO operations (tenant, task, op_id, fingerprint, method, provider, target, expected_version,"
           " upstream_key, state, attempts, created_ms, updated_ms, attempt_realm, attempt_owner, attempt_epoch,"
           " attempt_admitted_ms, resolved_by, resolved_ms, resolution_evidence) VALUES ('t', 'k', '" + op +
           "', sha256('f'), 'POST', 'p', '/x', 0, 'u-" + op + "', 'succeeded', 1, 5, 9, 'r', 'o', 1, 5, " +
           resolution + ")";
  };
  db.exec(operation("op-a", "'lookup', 7, 3"));
  db.exec(operation("op-b", "NULL, NULL, NULL"));

  steps.apply_rest();

  CHECK(db.scalar("SELECT string_agg(op_id || ':' || coalesce((resolution).source || ',' || (resolution).resolved_ms"
                  " || ',' || (resolution).evidence, '-'), ' ' ORDER BY op_id) FROM operations") ==
        "op-a:lookup,7,3 op-b:-");
  CHECK(db.scalar("SELECT count(*) FROM pg_constraint WHERE conrelid = 'operations'::regclass AND contype = 'c'") ==
        "0");
  CHECK(db.scalar("SELECT count(*) FROM pg_attribute WHERE attrelid = 'operations'::regclass AND NOT attisdropped"
                  " AND attname IN ('resolved_by', 'resolved_ms', 'resolution_evidence')") == "0");
  // The rule holds where the value is written, as the CHECK held it.
  CHECK_THROWS_AS(db.exec("UPDATE operations SET resolution = ROW('lookup', NULL, 3) WHERE op_id = 'op-b'"),
                  pqxx::check_violation);
  db.exec("UPDATE operations SET resolution = ROW('operator', 11, 4) WHERE op_id = 'op-b'");
  CHECK(db.scalar("SELECT (resolution).source FROM operations WHERE op_id = 'op-b'") == "operator");
}

namespace {
// Keeps the server's notices on a connection: ANALYZE VERBOSE reports its sample in one.
struct Notices : pqxx::errorhandler {
  using pqxx::errorhandler::errorhandler;
  std::string text;
  bool operator()(const char msg[]) noexcept override {
    text += msg;
    return true;
  }
};
}  // namespace

TEST_CASE("schema/014 and 015: tables that grow with traffic are analysed from 3,000 rows, with statistics only for "
          "the columns statements search") {
  TestDatabase db;
  // For each table, the columns some statement of gateway/store filters, sorts or joins on.
  const std::map<std::string, std::set<std::string>> searched = {
      {"operations",
       {"tenant", "task", "op_id", "state", "attempts", "provider", "upstream_key", "expected_version", "updated_ms",
        "held_reason", "forward_deadline_ms", "lookup_attempt", "next_lookup_ms"}},
      {"rejections", {"id", "tenant", "task", "code", "recorded_ms"}},
      {"webhook_deliveries", {"id", "provider", "webhook_id", "status", "received_ms", "tenant", "task", "op_id"}},
      {"operation_evidence", {"id", "tenant", "task", "op_id"}}};
  pqxx::connection c(db.url());
  {
    pqxx::work tx(c);
    for (const auto& [table, columns] : searched) {
      std::size_t seen = 0;
      for (const auto& row : tx.exec("SELECT attname, attstattarget FROM pg_attribute WHERE attrelid = " +
                                     tx.quote(table) + "::regclass AND attnum > 0 AND NOT attisdropped")) {
        const auto column = row[0].as<std::string>();
        INFO(table << "." << column);
        // -1 is the server's default: a column added without saying which kind it is.
        CHECK(row[1].as<int>() == (columns.contains(column) ? 10 : 0));
        seen += columns.contains(column) ? 1 : 0;
      }
      INFO(table);
      CHECK(seen == columns.size());  // no searched column misspelt or gone
    }
  }
  db.exec(R"(INSERT INTO operations (tenant, task, op_id, fingerprint, method, provider, target, expected_version,
                                     upstream_key, state, attempts, created_ms, updated_ms, response_body,
                                     attempt_realm, attempt_owner, attempt_epoch, attempt_admitted_ms)
             SELECT 't', 'k' || g % 50, 'op-' || g, sha256(g::text::bytea), 'POST', 'p', '/x', 0, 'u-' || g,
                    'succeeded', 1, g, g, convert_to(repeat('b', 90), 'UTF8'), 'r', 'o', 1, g
             FROM generate_series(1, 8000) AS g)");
  Notices notices(c);
  c.set_variable("client_min_messages", "info");
  pqxx::nontransaction(c).exec("ANALYZE VERBOSE operations");
  INFO(notices.text);
  CHECK(notices.text.find("8000 live rows") != std::string::npos);
  CHECK(notices.text.find("3000 rows in sample") != std::string::npos);
  CHECK(db.scalar("SELECT count(*) FROM pg_stats WHERE tablename = 'operations' AND attname IN ('task', 'updated_ms')") ==
        "2");
  CHECK(db.scalar("SELECT count(*) FROM pg_stats WHERE tablename = 'operations' AND attname IN ('response_body',"
                  " 'response_headers', 'fingerprint')") == "0");

  db.exec(R"(INSERT INTO rejections (tenant, task, op_id, fingerprint, method, provider, target, code, recorded_ms)
             SELECT 't', 'k' || g % 50, 'op-' || g, sha256(g::text::bytea), 'POST', 'p', '/x', 'stale_epoch', g
             FROM generate_series(1, 5000) AS g)");
  notices.text.clear();
  pqxx::nontransaction(c).exec("ANALYZE VERBOSE rejections");
  INFO(notices.text);
  CHECK(notices.text.find("5000 live rows") != std::string::npos);
  CHECK(notices.text.find("3000 rows in sample") != std::string::npos);
}
