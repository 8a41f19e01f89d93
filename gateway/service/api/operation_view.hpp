// JSON views of an operation shared by the agent's receipt and the
// operator's detail, so both say the same thing the same way.
#pragma once

#include "store/task_snapshot.hpp"

#include <nlohmann/json.hpp>

#include <optional>

namespace gw {

// {"source", "resolved_ms", "evidence"} for an operation settled by evidence
// (a lookup, a webhook, an operator); null for one settled by its own reply.
nlohmann::json resolution_view(const std::optional<OperationResolution>& resolution);

}  // namespace gw
