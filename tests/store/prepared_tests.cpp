// The shape of a one-statement decision (store/prepared.hpp): the concept
// takes the decisions the request path sends alone and refuses a statement
// type that leaves out a part of the contract, so a new one cannot compile
// into decide_direct half made.
#include "store/authority_store.hpp"
#include "store/ledger_store.hpp"
#include "store/pg_result.hpp"
#include "store/prepared.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <tuple>

using namespace gw;

// Named, not anonymous: the unity build puts other tests' types beside these.
namespace prepared_tests {

struct Whole {
  Statement statement{"gw_test_whole", "SELECT 1"};
  int n = 0;
  auto args() const { return std::tie(n); }
  template <class Row>
  std::optional<int> answer(const Row&) { return 1; }
  static std::optional<int> refused(const std::string&) { return std::nullopt; }
};

struct NoRefusal {
  Statement statement{"gw_test_no_refusal", "SELECT 1"};
  auto args() const { return std::tuple<>(); }
  template <class Row>
  std::optional<int> answer(const Row&) { return 1; }
};

struct AnswerNotOptional {
  Statement statement{"gw_test_not_optional", "SELECT 1"};
  auto args() const { return std::tuple<>(); }
  template <class Row>
  int answer(const Row&) { return 1; }
  static int refused(const std::string&) { return 0; }
};

struct AnswersAnotherType {
  Statement statement{"gw_test_other_type", "SELECT 1"};
  auto args() const { return std::tuple<>(); }
  template <class Row>
  std::optional<long> answer(const Row&) { return 1; }
  static std::optional<int> refused(const std::string&) { return std::nullopt; }
};

struct ArgsNotATuple {
  Statement statement{"gw_test_args", "SELECT $1"};
  int args() const { return 1; }
  template <class Row>
  std::optional<int> answer(const Row&) { return 1; }
  static std::optional<int> refused(const std::string&) { return std::nullopt; }
};

struct NoStatement {
  auto args() const { return std::tuple<>(); }
  template <class Row>
  std::optional<int> answer(const Row&) { return 1; }
  static std::optional<int> refused(const std::string&) { return std::nullopt; }
};

}  // namespace prepared_tests

using namespace prepared_tests;

TEST_CASE("a one-statement decision states its SQL, its arguments, its answer and its refusal, or does not compile") {
  // The request path's decisions, through either row type.
  CHECK(OneStatementDecision<FreshClaim, pqxx::row>);
  CHECK(OneStatementDecision<NewAdmission, PgRow>);
  CHECK(OneStatementDecision<OutcomeAtRows, PgRow>);

  CHECK(OneStatementDecision<Whole, PgRow>);
  CHECK_FALSE(OneStatementDecision<NoRefusal, PgRow>);
  CHECK_FALSE(OneStatementDecision<AnswerNotOptional, PgRow>);
  CHECK_FALSE(OneStatementDecision<AnswersAnotherType, PgRow>);
  CHECK_FALSE(OneStatementDecision<ArgsNotATuple, PgRow>);
  CHECK_FALSE(OneStatementDecision<NoStatement, PgRow>);
}
