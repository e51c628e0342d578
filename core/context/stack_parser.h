// Stack traces from error output pasted into a prompt: compiler diagnostics, sanitizer, gdb and valgrind
// frames (C/C++), Python tracebacks, Node, Java, Go and Rust stacks. Each line's locations come from the
// shared locator (tools/verify/locator.h); this file groups them into traces and orders them by depth.
// Pure text in, frames out; the retrieval pipeline resolves the paths against the workspace.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tools/verify/locator.h"

namespace agentd::core::context {

using StackFormat = tools::verify::LocationFormat;
inline std::string_view stack_format_name(StackFormat format) noexcept {
  return tools::verify::location_format_name(format);
}

struct StackFrame {
  std::string path;  // as written ("/home/ci/proj/src/x.py", "src/x.rs", Java: "C.java")
  // Java and Kotlin: the path the class's package implies ("com/acme/Parser.java"); empty otherwise.
  std::string package_path;
  std::size_t line = 0;    // 1-based
  std::size_t column = 0;  // 0: not given
  std::string function;    // empty when the format does not name it
  StackFormat format = StackFormat::generic;
  std::size_t trace = 0;       // which trace of the input (0-based, in input order)
  std::size_t depth = 0;       // distance from where the error happened in its trace (0: the crash site)
  std::size_t input_line = 0;  // the input's line it was read from (1-based)
};

// Every frame in `input`, in input order. Frames of one trace are consecutive lines (a Python code line
// or a Go function line between them does not break a trace); Python's "most recent call last" order
// is turned around so that depth 0 is always where the error happened.
std::vector<StackFrame> parse_stack_frames(std::string_view input);

}  // namespace agentd::core::context
