// Registers every built-in policy config with PolicyRegistry (idempotent). Static-library
// self-registration would be dropped by the linker, so registration is explicit.
#pragma once

namespace lerobot {
void register_policy_configs();
}
