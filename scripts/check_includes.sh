#!/usr/bin/env bash
# Enforces the layering of DESIGN.md section 2: each folder includes only what its row names, and
# only the stdio transport writes to stdout. Prints every violation; exits 1 if there is any.
set -uo pipefail
cd "$(dirname "$0")/.."

status=0
fail() {
  echo "include-check: $1"
  status=1
}

# allowed project include prefixes per folder (quoted includes), and forbidden system headers.
check_folder() {
  local folder=$1 allowed=$2 forbidden_system=$3
  local file line inc
  while IFS= read -r file; do
    while IFS= read -r line; do
      inc=${line#*:}
      if [[ $inc =~ \#include\ *\"([^\"]+)\" ]]; then
        local path=${BASH_REMATCH[1]}
        if [[ ! $path =~ ^($allowed) ]]; then
          fail "$file:${line%%:*}: includes \"$path\", which $folder/ may not (DESIGN.md section 2)"
        fi
      elif [[ -n $forbidden_system && $inc =~ \#include\ *\<($forbidden_system) ]]; then
        fail "$file:${line%%:*}: includes <${BASH_REMATCH[1]}...>, which $folder/ may not (DESIGN.md section 2)"
      fi
    done < <(grep -n '#include' "$file")
  done < <(find "$folder" -name '*.h' -o -name '*.cpp' -o -name '*.h.in' | sort)
}

# Generated headers live under the build tree with a core/support/ path.
check_folder core/support 'core/support/' 'sqlite3|openssl/|boost/beast'
check_folder core/net 'core/support/|core/net/' 'sqlite3'
check_folder protocol 'core/support/|protocol/' 'sqlite3|openssl/|boost/beast'
check_folder storage 'core/support/|storage/' 'boost/asio|boost/beast|openssl/|simdjson'
# tools/ may use libcrypto's digests (openssl/evp.h), never TLS.
# tools/mcp speaks HTTP through core/net (Streamable HTTP servers); nothing in tools/ includes Beast itself.
check_folder tools 'core/support/|tools/|protocol/(jsonrpc|peer|framing)\.h|core/net/(http_client|sse_parser)\.h' 'boost/beast|openssl/(ssl|tls|x509)'
# core/ minus core/support: the engine. No ACP, no daemon.
while IFS= read -r file; do
  while IFS= read -r line; do
    inc=${line#*:}
    if [[ $inc =~ \#include\ *\"([^\"]+)\" ]]; then
      path=${BASH_REMATCH[1]}
      if [[ ! $path =~ ^(core/|tools/|storage/) ]]; then
        fail "$file:${line%%:*}: includes \"$path\", which core/ may not (DESIGN.md section 2)"
      fi
    fi
  done < <(grep -n '#include' "$file")
done < <(find core \( -path core/support -o -path core/net \) -prune -o \( -name '*.h' -o -name '*.cpp' \) -print | sort)

# Only the stdio transport writes to stdout. main.cpp prints --help/--version before any protocol
# starts; such lines carry the marker `// stdout-ok`. daemon/cli/ is the `agent` CLI, whose stdout is
# the user's terminal, not a protocol stream: it is left out.
while IFS= read -r hit; do
  fail "$hit: writes to stdout outside daemon/stdio_transport.cpp (stdout is protocol only)"
done < <(grep -rnE 'std::cout|printf\(|puts\(|fmt::print\((stdout, )?"|STDOUT_FILENO|fwrite\(.*stdout' \
           --include='*.cpp' --include='*.h' core protocol storage tools daemon 2>/dev/null |
         grep -v 'fmt::format\|fmt::print(stderr\|// stdout-ok\|daemon/stdio_transport.cpp\|^daemon/cli/' || true)

if ((status == 0)); then echo "include-check: layering and stdout rules hold"; fi
exit $status
