// The canonical form of a fusion and its fingerprint: the result key of every tuning
// result (DESIGN.md, "Keys"), in the spirit of XLA's autotune cache key.
#pragma once

#include <string>

#include "compiler/hlo/hlo_module.h"
#include "support/status.h"

namespace tilesmith::hlo {

/// The fused computation and every computation it calls (callees first), printed with
/// positional names (`tmp_0`, …; `comp_0`, …; the fusion itself `fusion`), instructions in
/// operand-first post-order, and without metadata, backend_config, frontend_attributes or
/// sharding. Shapes, layouts, constants and all other attributes are kept, so two fusions
/// share a canonical text exactly when they compute the same thing the same way.
std::string CanonicalText(const HloComputation& fusion);

/// `CanonicalText(*module.fusion())`.
std::string CanonicalFusionText(const HloModule& module);

/// Lowercase hex SHA-256 of `CanonicalFusionText(module)` (64 characters).
Expected<std::string> FusionFingerprint(const HloModule& module);

}  // namespace tilesmith::hlo
