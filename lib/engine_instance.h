// The process's one engine, shared by the C API and the preload interposer.
// Started on first use with the configured options; never destroyed (faults
// may come until the process exits).
#pragma once
#include <string>

#include "config/options.h"
#include "engine/engine.h"

namespace mtier::lib {

// All option sources (mtier.conf(5)) into *set. 0, or -EINVAL with *why.
[[nodiscard]] int load_options(OptionSet* set, std::string* why);

// The engine, started now if it is not running (with `extra` option text
// applied on top when given). A failed start is remembered and not retried:
// nullptr with *err = that start's -errno, every time.
Engine* engine(int* err, const char* extra = nullptr);

// The engine if it runs, else nullptr; never starts it.
Engine* running_engine();

// -EALREADY if the engine runs, else starts it with `extra` (mtier_init: an
// explicit start is tried even after an implicit one failed).
[[nodiscard]] int start_engine_explicitly(const char* extra);

}  // namespace mtier::lib
