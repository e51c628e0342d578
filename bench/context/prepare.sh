#!/usr/bin/env bash
# Materialise every case of cases.jsonl at its `parent` commit: <cache>/<id>/ holds the repository as it was
# just before the fix, as a fresh one-commit git repository (so .gitignore rules and `git status` behave as in
# a user's clone). Idempotent: a checkout that already exists is left alone.
#
#   bench/context/prepare.sh [CACHE_DIR]            # default /tmp/ctxset/checkouts
#
# Mirrors (bare git repositories holding the cases' commits) are looked up, in order, as:
#   1. MIRROR_MAP=/path/to/map: lines "owner/name /path/to/git-dir"
#   2. $MIRROR_ROOT/owner+name/repo    (the layout the search tool's fetch uses; MIRROR_ROOT=/work/.mirror)
#   3. $MIRROR_ROOT/owner+name.git, $MIRROR_ROOT/name.git, $MIRROR_ROOT/owner/name.git
# On a machine without them: `git clone --bare https://github.com/owner/name $MIRROR_ROOT/owner+name.git`.
# Options by environment: CASES (default: cases.jsonl beside this script), ONLY (substring filter on ids),
# MODE=archive (default: git archive | tar -x, then git init + one commit) or MODE=worktree
# (git worktree add --detach from the mirror).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${1:-/tmp/ctxset/checkouts}"
cases="${CASES:-$here/cases.jsonl}"
mirror_root="${MIRROR_ROOT:-/work/.mirror}"
mode="${MODE:-archive}"
only="${ONLY:-}"
mkdir -p "$cache"

mirror_for() {  # owner/name -> git dir
  local repo="$1" flat="${1/\//+}" name="${1#*/}" line
  if [[ -n "${MIRROR_MAP:-}" && -f "$MIRROR_MAP" ]]; then
    while read -r key dir _; do
      [[ "$key" == "$repo" ]] && { echo "$dir"; return 0; }
    done < "$MIRROR_MAP"
  fi
  for line in "$mirror_root/$flat/repo" "$mirror_root/$flat.git" "$mirror_root/$flat" \
              "$mirror_root/$name.git" "$mirror_root/$repo.git"; do
    if git --git-dir="$line" rev-parse --git-dir >/dev/null 2>&1; then echo "$line"; return 0; fi
  done
  return 1
}

made=0 kept=0 failed=0
# id repo parent, one case a line
while read -r id repo parent; do
  [[ -n "$only" && "$id" != *"$only"* ]] && continue
  dest="$cache/$id"
  if [[ -d "$dest" ]]; then kept=$((kept + 1)); continue; fi
  if ! gitdir="$(mirror_for "$repo")"; then
    echo "prepare: $id: no mirror for $repo (set MIRROR_ROOT or MIRROR_MAP)" >&2; failed=$((failed + 1)); continue
  fi
  if ! git --git-dir="$gitdir" cat-file -e "$parent^{commit}" 2>/dev/null; then
    echo "prepare: $id: $repo mirror lacks commit $parent" >&2; failed=$((failed + 1)); continue
  fi
  tmp="$cache/.tmp-$id"
  rm -rf "$tmp"
  if [[ "$mode" == worktree ]]; then
    git --git-dir="$gitdir" worktree prune 2>/dev/null || true
    git --git-dir="$gitdir" worktree add --detach -f "$tmp" "$parent" >/dev/null 2>&1
    git --git-dir="$gitdir" worktree move "$tmp" "$dest"
  else
    mkdir -p "$tmp"
    git --git-dir="$gitdir" archive --format=tar "$parent" | tar -x -C "$tmp"
    (cd "$tmp" && git init -q && git add -A >/dev/null 2>&1 &&
       git -c user.name=ctxset -c user.email=ctxset@localhost -c commit.gpgsign=false \
         commit -q --no-verify -m "$repo at $parent" >/dev/null)
    mv "$tmp" "$dest"
  fi
  made=$((made + 1))
  echo "prepare: $id <- $repo@${parent:0:12}"
done < <(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    if line.strip():
        c = json.loads(line); print(c["id"], c["repo"], c["parent"])' "$cases")

echo "prepare: $made made, $kept already there, $failed failed, in $cache"
[[ $failed -eq 0 ]]
