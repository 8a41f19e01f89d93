// The outcome-to-reply table: what an agent is told about its own attempt,
// for every outcome state, with and without a provider reply, and behind
// the reply gate. No sockets, no database.
#include "service/proxy/outcome_reply.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace gw;

namespace {

const std::string secret_body = R"({"booking_id":"bk_1","status":"confirmed"})";

ProviderReply provider(unsigned status, http::Fields headers = {{"X-Provider", "demo"}}) {
  return ProviderReply{status, std::move(headers), secret_body};
}

RecordedAttempt current(std::int64_t version = 0) { return RecordedAttempt{true, Code::ok, version}; }

nlohmann::json problem_of(const http::Response& r) { return nlohmann::json::parse(r.body); }

void check_problem(const http::Response& r, unsigned status, Code code) {
  CHECK(r.status == status);
  CHECK(r.header("Gateway-Status") == name(code));
  CHECK(r.header("Content-Type") == "application/problem+json");
  auto j = problem_of(r);
  CHECK(j["code"] == name(code));
  CHECK(j["status"] == status);
  CHECK(j["title"] == std::string(title(code)));
  // A refusal or an unknown never discloses what the provider said.
  CHECK(r.body.find("bk_1") == std::string::npos);
  CHECK(!r.header("X-Provider"));
  CHECK(!r.header("Committed-Version"));
}

}  // namespace

TEST_CASE("outcome reply: succeeded passes the provider's reply through as committed, with Committed-Version") {
  auto r = outcome_reply(OperationState::succeeded, provider(201), current(7));
  CHECK(r.status == 201);
  CHECK(r.body == secret_body);
  CHECK(r.header("Gateway-Status") == "committed");
  CHECK(r.header("Committed-Version") == "7");
  CHECK(r.header("X-Provider") == "demo");
  CHECK(!r.header("Idempotent-Replayed"));
}

TEST_CASE("outcome reply: rejected passes the provider's reply through as rejected_by_provider, no version") {
  auto r = outcome_reply(OperationState::rejected, provider(409), current(7));
  CHECK(r.status == 409);
  CHECK(r.body == secret_body);
  CHECK(r.header("Gateway-Status") == "rejected_by_provider");
  CHECK(!r.header("Committed-Version"));
}

TEST_CASE("outcome reply: not_executed with a provider reply is 502 with provider_status and its Retry-After") {
  auto r = outcome_reply(OperationState::not_executed, provider(429, {{"Retry-After", "7"}}), current());
  check_problem(r, 502, Code::provider_unavailable);
  CHECK(problem_of(r)["provider_status"] == 429);
  CHECK(r.header("Retry-After") == "7");
}

TEST_CASE("outcome reply: not_executed without a reply is 502 with neither provider_status nor Retry-After") {
  auto r = outcome_reply(OperationState::not_executed, std::nullopt, current());
  check_problem(r, 502, Code::provider_unavailable);
  CHECK(!problem_of(r).contains("provider_status"));
  CHECK(!r.header("Retry-After"));
}

TEST_CASE("outcome reply: unknown, with or without a reply, is 504 unknown_outcome") {
  check_problem(outcome_reply(OperationState::unknown, provider(503, {{"Retry-After", "1"}}), current()), 504,
                Code::unknown_outcome);
  check_problem(outcome_reply(OperationState::unknown, std::nullopt, current()), 504, Code::unknown_outcome);
  // The problem says what happened: a provider that answered is not a timeout.
  auto answered = problem_of(outcome_reply(OperationState::unknown, provider(500), current()));
  CHECK(answered["provider_status"] == 500);
  CHECK(answered["detail"].get<std::string>().starts_with("the provider answered 500, "));
  auto silent = problem_of(outcome_reply(OperationState::unknown, std::nullopt, current()));
  CHECK(!silent.contains("provider_status"));
  CHECK(silent["detail"].get<std::string>().find("no usable reply came back") != std::string::npos);
  // A definite state without the reply that proves it is not guessed at.
  check_problem(outcome_reply(OperationState::succeeded, std::nullopt, current()), 504, Code::unknown_outcome);
  check_problem(outcome_reply(OperationState::rejected, std::nullopt, current()), 504, Code::unknown_outcome);
}

TEST_CASE("outcome reply: a grant that lost the task learns only that its request went out and was recorded") {
  for (auto gate : {Code::stale_owner, Code::expired_owner, Code::authority_generation_mismatch}) {
    CAPTURE(name(gate));
    for (auto state : {OperationState::succeeded, OperationState::rejected, OperationState::unknown}) {
      auto r = outcome_reply(state, provider(201), RecordedAttempt{true, gate, 3});
      check_problem(r, http_status(gate), gate);
      // Not the same as the grant code at admission, which did nothing: the
      // agent must read the receipt, never act again under a new id.
      CHECK(problem_of(r)["outcome_recorded"] == true);
      CHECK(problem_of(r)["detail"].get<std::string>().find("forwarded") != std::string::npos);
    }
  }
}

TEST_CASE("outcome reply: an attempt settled elsewhere is 504 unknown_outcome, not operation_in_flight") {
  // docs/api.md: the request was forwarded, so the agent cannot be told it
  // is still being forwarded; an exact retry reads what the ledger holds.
  auto r = outcome_reply(OperationState::succeeded, provider(201), RecordedAttempt{false, Code::ok, 0});
  check_problem(r, 504, Code::unknown_outcome);
  CHECK(problem_of(r)["detail"].get<std::string>().find("retry with the same Idempotency-Key") != std::string::npos);
}

TEST_CASE("outcome reply: an outcome that could not be recorded is 504 unknown_outcome") {
  auto r = unrecorded_outcome_reply();
  check_problem(r, 504, Code::unknown_outcome);
  CHECK(problem_of(r)["detail"].get<std::string>().find("will not be resent") != std::string::npos);
}
