// The one exception barrier of every command-line tool: main() calls runTool(), which runs the
// tool's body and maps anything it throws to a documented exit code and one line on stderr, so
// no input ends a tool with std::terminate (exit 134) or a raw libstdc++ message.
//
// Exit codes shared by ral-run, ral-pack, ral-inspect and ral-compile:
//   0  success
//   1  the work failed: a module did not load, compile or run; a file could not be written;
//      the machine ran out of memory
//   2  bad usage: unknown options, bad values, unreadable or malformed input files
//   3  (ral-run) an output differs from its --expected_output
//   4  internal error: an unexpected exception, a bug in RAL (please report the message)
#ifndef RAL_PLUGINS_STANDALONE_TOOL_MAIN_H_
#define RAL_PLUGINS_STANDALONE_TOOL_MAIN_H_

#include <cstdio>
#include <exception>
#include <new>
#include <string>

namespace ral::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitMismatch = 3;
inline constexpr int kExitInternal = 4;

// One line on stderr: "<tool>: error: <message>", newlines folded so each error is one line.
inline int toolError(const char* tool, int code, std::string message) {
  for (char& c : message)
    if (c == '\n') c = ' ';
  std::fprintf(stderr, "%s: error: %s\n", tool, message.c_str());
  return code;
}

template <typename Body>
int runTool(const char* tool, Body&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return toolError(tool, kExitFailed, "out of memory");
  } catch (const std::exception& e) {
    return toolError(tool, kExitInternal,
                     std::string("internal error (please report): ") + e.what());
  } catch (...) {
    return toolError(tool, kExitInternal, "internal error (please report): unknown exception");
  }
}

}  // namespace ral::cli

#endif  // RAL_PLUGINS_STANDALONE_TOOL_MAIN_H_
