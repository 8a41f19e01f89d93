#include "service/api/operation_view.hpp"

namespace gw {

nlohmann::json resolution_view(const std::optional<OperationResolution>& resolution) {
  if (!resolution) return nullptr;
  return {{"source", name(resolution->source)},
          {"resolved_ms", resolution->resolved_ms},
          {"evidence", resolution->evidence_id}};
}

}  // namespace gw
