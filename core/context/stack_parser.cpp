// Trace grouping over the shared locator: which frames belong to one trace, and how deep each is.
#include "core/context/stack_parser.h"

#include <optional>
#include <utility>

namespace agentd::core::context {
namespace {

// Non-frame lines tolerated inside one trace (Python's source line, a Go goroutine's function line).
constexpr std::size_t kMaxGapLines = 2;

struct LineFrame {
  StackFrame frame;
  std::optional<std::size_t> explicit_depth;  // sanitizer and gdb number their frames
};

// The frames one input line holds (usually zero or one; a generic line may hold several).
std::vector<LineFrame> parse_line(std::string_view line, std::string_view previous_line) {
  std::vector<LineFrame> out;
  for (auto& location : tools::verify::locate_line(line, previous_line)) {
    LineFrame f;
    f.frame.path = std::move(location.path);
    f.frame.package_path = std::move(location.package_path);
    f.frame.line = location.line;
    f.frame.column = location.column;
    f.frame.function = std::move(location.function);
    f.frame.format = location.format;
    f.explicit_depth = location.depth;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

std::vector<StackFrame> parse_stack_frames(std::string_view input) {
  std::vector<StackFrame> frames;
  // The frames of the trace being read, and whether they carry their own depth.
  std::vector<LineFrame> current;
  std::size_t trace = 0;
  std::size_t gap = 0;
  const auto close_trace = [&] {
    if (current.empty()) return;
    const bool reversed = current.front().frame.format == StackFormat::python;
    for (std::size_t i = 0; i < current.size(); ++i) {
      LineFrame& f = current[i];
      f.frame.trace = trace;
      if (f.explicit_depth) {
        f.frame.depth = *f.explicit_depth;
      } else {
        f.frame.depth = reversed ? current.size() - 1 - i : i;
      }
      frames.push_back(std::move(f.frame));
    }
    current.clear();
    ++trace;
  };

  std::size_t line_number = 0;
  std::string_view previous;
  for (std::size_t start = 0; start < input.size();) {
    std::size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    std::string_view line = input.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);

    std::vector<LineFrame> found = parse_line(line, previous);
    previous = line;
    if (found.empty()) {
      if (!current.empty() && ++gap > kMaxGapLines) close_trace();
      continue;
    }
    gap = 0;
    for (auto& f : found) {
      f.frame.input_line = line_number;
      // A compiler diagnostic stands alone: each is its own error. Other formats form one trace per run
      // of lines of the same format; a sanitizer's "#0" starts a new one.
      const bool starts_new =
          !current.empty() &&
          (current.back().frame.format != f.frame.format || f.frame.format == StackFormat::compiler ||
           (f.explicit_depth && *f.explicit_depth == 0 && f.frame.format != StackFormat::compiler));
      if (starts_new) close_trace();
      current.push_back(std::move(f));
    }
  }
  close_trace();
  return frames;
}

}  // namespace agentd::core::context
