// The one file:line locator: where tool output and pasted error text name a source location. One
// module, three readers, each as strict as its use needs:
//  - locate_line: stack frames and diagnostics of every format agentd knows (compilers, sanitizer, gdb,
//    valgrind, Python, Node, Java, Go, Rust, and `path.ext:N` anywhere), with function names, for the
//    context retrieval's stack parser (core/context/stack_parser.h), which groups them into traces;
//  - has_location: the cheap "is there a name.ext:N on this line" the output rankers ask of every line;
//  - failure_paths: the source paths failure output names (`path:N`, pytest's `path::test`), for telling
//    whether a failure lies in the changed code (core/engine/verification.h).
// Paths come back as written: resolving them against a workspace (and refusing `..`) is the caller's job.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/enum_names.h"

namespace agentd::tools::verify {

enum class LocationFormat { compiler, sanitizer, gdb, valgrind, python, node, java, go, rust, generic };
std::string_view location_format_name(LocationFormat format) noexcept;  // "compiler", "python", ...
std::span<const support::EnumName<LocationFormat>> enum_names(LocationFormat) noexcept;

struct Location {
  std::string path;  // as written ("/home/ci/proj/src/x.py", "src/x.rs", Java: "C.java")
  // Java and Kotlin: the path the class's package implies ("com/acme/Parser.java"); empty otherwise.
  std::string package_path;
  std::size_t line = 0;    // 1-based, never 0
  std::size_t column = 0;  // 0: not given
  std::string function;    // empty when the format does not name it
  LocationFormat format = LocationFormat::generic;
  // Where the format itself places the frame: sanitizer and gdb number their frames; a compiler's error is
  // 0, a warning 1, a note 2 (notes point at what lies behind an error). nullopt: the order of lines says.
  std::optional<std::size_t> depth;
};

// A line longer than this names no location for locate_line (a minified blob pasted into a prompt).
constexpr std::size_t kMaxLocatedLineBytes = 4096;

// The locations one line holds (usually zero or one; a generic line may hold several), in line order.
// `previous_line` gives a Go frame its function (Go prints it on the line before the file:line).
// A line number of 0 or one too large for size_t names no location.
std::vector<Location> locate_line(std::string_view line, std::string_view previous_line = {});

// Whether `line` holds "name.ext:N" (also "file.ext:12:5", "(file.ext:12)"): an extension of 1-5 letters
// or digits after a name, then a colon and a digit. Cheap and loose: it only ranks lines.
bool has_location(std::string_view line);

// The source paths `output` names as `path:N` or `path::name` (pytest), relative as printed, each once,
// in order; only paths with a source extension (.py, .js, .go, .rs, .cpp, ...) count, so that
// `12:30:05` and `localhost:8080` are not taken for paths. A node stack's `file://` scheme is dropped.
std::vector<std::string> failure_paths(std::string_view output);

}  // namespace agentd::tools::verify
