// Logging that is safe on the fault path and before main: a fixed stack
// buffer formatted with vsnprintf and written with write(2) to stderr, a
// recursion guard, and a rate cap per call site (jemalloc malloc_write_fd).
// Lines carry sd-daemon(3) syslog prefixes: "<3>mtier: ..." for errors.
#pragma once
#include <cstdarg>

namespace mtier::log {

enum class Level : int { kError = 3, kWarning = 4, kNotice = 5, kInfo = 6, kDebug = 7 };

// Messages above this level are dropped. Default kWarning; MTIER_VERBOSE=1 sets kInfo.
void set_level(Level level);
Level level();
// Where lines go (default 2, stderr). Tests point it at a pipe or file.
void set_fd(int fd);
// Formats and writes one line ("mtier: " prefix and '\n' added).
void write(Level level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void vwrite(Level level, const char* fmt, va_list ap);

}  // namespace mtier::log

#define MTIER_LOG_ERROR(...) ::mtier::log::write(::mtier::log::Level::kError, __VA_ARGS__)
#define MTIER_LOG_WARN(...) ::mtier::log::write(::mtier::log::Level::kWarning, __VA_ARGS__)
#define MTIER_LOG_NOTICE(...) ::mtier::log::write(::mtier::log::Level::kNotice, __VA_ARGS__)
#define MTIER_LOG_INFO(...) ::mtier::log::write(::mtier::log::Level::kInfo, __VA_ARGS__)
#define MTIER_LOG_DEBUG(...) ::mtier::log::write(::mtier::log::Level::kDebug, __VA_ARGS__)
