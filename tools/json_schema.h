// Validates a tool call's input against the tool's JSON Schema before it runs, so the model gets one
// message naming every bad field and how to fix it ("input.limit: expected integer >= 1, got -3"),
// rather than a failure from deep inside the tool.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/support/json.h"
#include "core/support/result.h"

namespace agentd::tools {

// The subset of JSON Schema that tool specs use: type (a name or a list; "integer" also accepts 2.0),
// enum, const, minimum/maximum, exclusiveMinimum/exclusiveMaximum (numbers), minLength/maxLength (in
// code points), items, minItems/maxItems, properties, required, additionalProperties (false or a
// schema), and boolean schemas. Other keywords are ignored rather than refused: MCP servers send richer
// schemas, and an unchecked keyword only means the server sees the input unfiltered.
//
// Returns every violation (up to a cap), each "path: what is wrong", in document order. `root` names
// the value in paths: "input", "input.path", "input.edits[2].old_text".
std::vector<std::string> schema_violations(const support::Json& schema, const support::Json& value,
                                           std::string_view root = "input");

// The same as one Result: Errc::invalid_argument whose message lists the violations, one per line.
support::Result<void> validate_against_schema(const support::Json& schema, const support::Json& value,
                                              std::string_view root = "input");

}  // namespace agentd::tools
