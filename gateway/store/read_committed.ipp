// Implementation of gw::read_committed (included by authority_store.hpp).
#pragma once

#include <pqxx/pqxx>

namespace gw {

template <class Fn>
auto read_committed(Session& session, Fn&& fn) -> decltype(fn(std::declval<pqxx::dbtransaction&>())) {
  try {
    pqxx::work tx(session.connection());
    // Said outright: the session's default is SERIALIZABLE (store/pool.cpp),
    // with sequential scans off for its predicate locks, which this takes none of.
    tx.exec0("SET TRANSACTION ISOLATION LEVEL READ COMMITTED; SET LOCAL enable_seqscan = on");
    auto result = fn(static_cast<pqxx::dbtransaction&>(tx));
    tx.commit();
    return result;
  } catch (const std::exception& e) {
    switch (classify_failure(e)) {
      case FailureKind::bug:
        throw;
      default:
        session.discard();
        throw AuthorityUnavailable(e.what());
    }
  }
}

}  // namespace gw
