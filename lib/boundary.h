// SPDX-License-Identifier: Apache-2.0
// The boundary between the program and the runtime: no exception crosses an
// interposed function or a C API function. The runtime's C++ code allocates
// (a name, a map node, the engine and its threads) and may throw; a throw
// out of malloc or mmap would end the trainer (they are noexcept in glibc's
// headers: std::terminate). contained() runs such code and turns an
// exception into a failure the caller maps to the call's own way of saying
// no: a managed-size allocation then goes to the next allocator, munmap
// fails with ENOMEM, a C API call returns -errno.
//
// Catching allocates nothing (the exception object was allocated by the
// throw; it is freed through the interposed free, which passes it on), and
// the line that says so is written by the log (a stack buffer and write(2)),
// once per place and reason.
#pragma once
#include <new>
#include <system_error>

namespace mtier::lib {

// Logs "<where>: <reason>; <outcome>" unless this where/reason pair was
// logged before. Allocates nothing; async-signal-unsafe only as the log is.
void note_exception(const char* where, const char* reason, const char* outcome) noexcept;

// -errno for the exception being handled: -ENOMEM for bad_alloc, the code
// of a system_error (std::thread that could not start: -EAGAIN), else -EIO.
// Call inside a catch block only.
int current_exception_errno() noexcept;

// Runs f(); true if it returned, false (logged) if it threw. `where` names
// the call, `outcome` what the caller does instead ("this allocation uses
// plain memory"); both are string literals.
template <class F>
[[nodiscard]] bool contained(const char* where, const char* outcome, F&& f) noexcept {
  try {
    f();
    return true;
  } catch (const std::bad_alloc&) {
    note_exception(where, "out of memory (std::bad_alloc)", outcome);
  } catch (const std::exception& e) {
    note_exception(where, e.what(), outcome);
  } catch (...) {
    note_exception(where, "an unknown exception", outcome);
  }
  return false;
}

}  // namespace mtier::lib
