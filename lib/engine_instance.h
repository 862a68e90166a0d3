// SPDX-License-Identifier: Apache-2.0
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
// applied on top when given). A failed start is remembered and not retried
// (nullptr with *err = that start's -errno, every time), except one that
// failed for want of memory (start_may_retry), which the next call tries
// again. Never throws: an exception in the start is its -errno (boundary.h).
Engine* engine(int* err, const char* extra = nullptr) noexcept;

// True for the start errors that are tried again: -ENOMEM (std::bad_alloc
// included) and -EAGAIN (a thread that could not be made). Memory that is
// short at the first table may not be later, and giving up then would run
// the whole job without tiering, when memory is what it lacks.
bool start_may_retry(int err) noexcept;

// The engine if it runs, else nullptr; never starts it.
Engine* running_engine() noexcept;

// In a forked child only (its atfork handler): true if the parent had no
// engine and no start under way in another of its threads at the fork (a
// start's lock held then would stay held in the child for good).
bool no_engine_at_fork() noexcept;

// -EALREADY if the engine runs, else starts it with `extra` (mtier_init: an
// explicit start is tried even after an implicit one failed).
[[nodiscard]] int start_engine_explicitly(const char* extra) noexcept;

}  // namespace mtier::lib
