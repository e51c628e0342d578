// What kind of task a prompt is (bugfix, review, feature, config, question), from its words and from
// what the input carries (a stack trace, failing tests, configuration files). The kind steers retrieval:
// a review leans on changed files, a config task on configuration files, a bugfix on the stack.
#pragma once

#include <cstddef>
#include <string_view>

#include "core/context/context_package.h"

namespace agentd::core::context {

// What the parsers found in the input, as signals for the classifier.
struct InputSignals {
  std::size_t stack_frames = 0;
  std::size_t failing_tests = 0;
  std::size_t config_paths = 0;  // mentioned paths that are configuration files
};

TaskClassification classify_task(std::string_view input, const InputSignals& signals);

// Whether a path (relative, '/'-separated) names a configuration file: build files, CI workflows,
// package manifests, *.yaml/*.toml/*.ini and the like.
bool is_config_path(std::string_view path);

}  // namespace agentd::core::context
