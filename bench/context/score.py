#!/usr/bin/env python3
"""Score file ranking on the context development set (bench/context/cases.jsonl).

For every case (a real bug report and the files its real fix changed), rank the files of the repository as
it was just before the fix (a checkout made by prepare.sh) in two ways and report where the first gold file
lands:

  bm25    plain Okapi BM25 (k1=1.2, b=0.75) over the contents of every text file of the checkout
  agentd  the agentd binary's `_agentd/context/preview` for the report text (no model call)

    bench/context/score.py [--cache DIR] [--agentd PATH] [--only SUBSTR] [--json OUT] [--no-agentd]
                           [--no-bm25] [--warm] [--timeout S]

Standard library only. The checkouts are read, never written (agentd keeps its database in memory and its
HOME/config in a temporary directory).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import queue
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
DEFAULT_CACHE = "/tmp/ctxset/checkouts"
DEFAULT_AGENTD = REPO_ROOT / "build/default/daemon/agentd"
MAX_FILE_BYTES = 1 << 20
K1, B = 1.2, 0.75
TOP_KS = (1, 3, 5)

# ---------------------------------------------------------------------------------------------- tokenizing

# A word: a run of letters, digits and underscores. Each word yields itself (lower-cased) and, when it has
# more than one part, its snake_case/camelCase parts (lower-cased): `parseQueryString` -> parsequerystring,
# parse, query, string; `get_pager_file` -> get_pager_file, get, pager, file. Splitting only on
# non-alphanumerics would lose the whole snake_case token, so `_` is kept inside words and split here.
_WORD_B = re.compile(rb"[A-Za-z0-9_]+")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_expand_cache: dict[bytes, tuple[str, ...]] = {}


def expand(word: bytes) -> tuple[str, ...]:
    out = _expand_cache.get(word)
    if out is not None:
        return out
    text = word.decode("ascii")
    whole = text.lower().strip("_")
    parts = [p.lower() for chunk in text.split("_") if chunk for p in _PART.findall(chunk)]
    terms = []
    if whole:
        terms.append(whole)
    if len(parts) > 1 or (len(parts) == 1 and parts[0] != whole):
        terms.extend(parts)
    out = tuple(terms)
    if len(_expand_cache) < 2_000_000:
        _expand_cache[word] = out
    return out


def tokenize_counts(data: bytes) -> tuple[Counter, int]:
    """Term frequencies and length (in terms) of a document."""
    raw = Counter(_WORD_B.findall(data))
    tf: Counter = Counter()
    length = 0
    for word, n in raw.items():
        terms = expand(word)
        length += n * len(terms)
        for t in terms:
            tf[t] += n
    return tf, length


def query_terms(text: str) -> list[str]:
    seen: dict[str, None] = {}
    for t, _ in tokenize_counts(text.encode("ascii", "ignore"))[0].items():
        seen[t] = None
    return list(seen)


# ------------------------------------------------------------------------------------------------- BM25


def text_files(root: Path):
    """(relative path, bytes) of every text file: .git skipped, files > 1 MiB skipped, binary = NUL in the
    first 8 KiB. Nothing else (no .gitignore) is respected."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        for name in sorted(filenames):
            path = Path(dirpath) / name
            try:
                if path.is_symlink() or not path.is_file():
                    continue
                if path.stat().st_size > MAX_FILE_BYTES:
                    continue
                data = path.read_bytes()
            except OSError:
                continue
            if b"\0" in data[:8192]:
                continue
            yield path.relative_to(root).as_posix(), data


def bm25_rank(root: Path, query: str) -> tuple[list[tuple[str, float]], int]:
    terms = query_terms(query)
    qset = set(terms)
    docs: list[tuple[str, dict[str, int], int]] = []
    df: Counter = Counter()
    for rel, data in text_files(root):
        tf, length = tokenize_counts(data)
        hits = {t: tf[t] for t in qset if t in tf}
        df.update(hits.keys())
        docs.append((rel, hits, length))
    n = len(docs)
    if n == 0:
        return [], 0
    avgdl = sum(d[2] for d in docs) / n
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in qset}
    scored = []
    for rel, hits, length in docs:
        s = 0.0
        norm = K1 * (1 - B + B * length / avgdl) if avgdl else K1
        for t, f in hits.items():
            s += idf[t] * f * (K1 + 1) / (f + norm)
        if s > 0:
            scored.append((rel, s))
    scored.sort(key=lambda x: (-x[1], x[0]))
    return scored, n


# ----------------------------------------------------------------------------------------------- agentd


def find_agentd(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    if DEFAULT_AGENTD.exists():
        return DEFAULT_AGENTD
    build = REPO_ROOT / "build/default"
    for path in sorted(build.rglob("agentd")) if build.exists() else []:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    return DEFAULT_AGENTD


class Agentd:
    """One agentd process speaking newline-delimited JSON-RPC 2.0 over its stdio."""

    def __init__(self, binary: Path, cwd: Path, home: Path, timeout: float):
        env = dict(os.environ)
        for k in list(env):
            if k.startswith(("AGENTD_", "ANTHROPIC_", "OPENAI_")):
                del env[k]
        env.update({
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local/share"),
            # A model must be configured for session/new; a preview never calls it. The address is a closed
            # loopback port, so a stray call would fail at once instead of leaving the machine.
            "AGENTD_MODEL": "anthropic:claude-sonnet-4-5",
            "ANTHROPIC_API_KEY": "ctxset-no-calls",
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
            "AGENTD_LOG": "warn",
        })
        self.timeout = timeout
        self.proc = subprocess.Popen([str(binary), "--db", ":memory:"], cwd=cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines: queue.Queue = queue.Queue()
        self.stderr: list[bytes] = []
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()
        self.next_id = 1

    def _pump(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def request(self, method: str, params: dict) -> tuple[dict, float]:
        rid = self.next_id
        self.next_id += 1
        msg = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}) + "\n"
        start = time.perf_counter()
        self.proc.stdin.write(msg.encode())
        self.proc.stdin.flush()
        deadline = start + self.timeout
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError(f"{method}: no answer in {self.timeout:.0f}s")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                err = b"".join(self.stderr).decode(errors="replace")[-2000:]
                raise RuntimeError(f"{method}: agentd exited ({self.proc.poll()}): {err}")
            line = line.strip()
            if not line:
                continue
            m = json.loads(line)
            if "method" in m:
                if "id" in m:  # a request to us (none is expected during a preview): refuse it
                    self._send({"jsonrpc": "2.0", "id": m["id"],
                                "error": {"code": -32601, "message": "not supported by score.py"}})
                continue
            if m.get("id") == rid:
                return m, (time.perf_counter() - start) * 1000.0

    def _send(self, m: dict):
        self.proc.stdin.write((json.dumps(m) + "\n").encode())
        self.proc.stdin.flush()

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()


def ranked_paths(result: dict, checkout: Path) -> tuple[list[str], str]:
    """The files of a preview answer, best first: `ranked` when present, else context.evidence order."""
    ctx = result.get("context") or {}
    source, entries = None, None
    for holder in (result, ctx):
        if isinstance(holder.get("ranked"), list):
            source, entries = "ranked", holder["ranked"]
            break
    if entries is None:
        source, entries = "evidence", ctx.get("evidence") or []
    out: list[str] = []
    for e in entries:
        p = e.get("path") if isinstance(e, dict) else e
        if not p:
            continue
        p = normalize(p, checkout)
        if p not in out:
            out.append(p)
    return out, source


def normalize(path: str, checkout: Path) -> str:
    if os.path.isabs(path):
        try:
            path = os.path.relpath(path, checkout)
        except ValueError:
            pass
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path


def run_agentd(binary: Path, checkout: Path, task: str, timeout: float, warm: bool) -> dict:
    home = Path(tempfile.mkdtemp(prefix="ctxset-home-"))
    agent = None
    try:
        for attempt in range(30):  # the binary may be mid-rebuild: wait for it to come back
            if binary.exists():
                try:
                    agent = Agentd(binary, checkout, home, timeout)
                    break
                except OSError:
                    pass
            time.sleep(2)
        if agent is None:
            raise RuntimeError(f"no agentd binary at {binary}")
        init, _ = agent.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        if "error" in init:
            raise RuntimeError(f"initialize: {init['error']}")
        new, _ = agent.request("session/new", {"cwd": str(checkout), "mcpServers": []})
        if "error" in new:
            raise RuntimeError(f"session/new: {new['error']}")
        sid = new["result"]["sessionId"]
        ans, ms = agent.request("_agentd/context/preview", {"sessionId": sid, "input": task})
        if "error" in ans:
            raise RuntimeError(f"preview: {ans['error']}")
        result = ans["result"]
        paths, source = ranked_paths(result, checkout)
        stats = (result.get("context") or {}).get("stats") or {}
        out = {"paths": paths, "source": source, "ms": ms, "stats": stats}
        if warm:
            ans2, ms2 = agent.request("_agentd/context/preview", {"sessionId": sid, "input": task})
            out["warm_ms"] = ms2
        return out
    finally:
        if agent:
            agent.close()
        shutil.rmtree(home, ignore_errors=True)


# ---------------------------------------------------------------------------------------------- scoring


def first_gold_rank(paths: list[str], gold: list[str]) -> int | None:
    g = set(gold)
    for i, p in enumerate(paths, 1):
        if p in g:
            return i
    return None


def pct(values, q):
    if not values:
        return float("nan")
    s = sorted(values)
    k = max(0, min(len(s) - 1, math.ceil(q / 100 * len(s)) - 1))
    return s[k]


def hits(ranks, k):
    return sum(1 for r in ranks if r is not None and r <= k)


def fmt_rank(r):
    return "-" if r is None else str(r)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=str(HERE / "cases.jsonl"))
    ap.add_argument("--cache", default=DEFAULT_CACHE, help="checkouts made by prepare.sh (default %(default)s)")
    ap.add_argument("--agentd", default=None, help=f"agentd binary (default {DEFAULT_AGENTD} or found in build/)")
    ap.add_argument("--only", default=None, help="only cases whose id contains this")
    ap.add_argument("--json", default=None, help="write per-case results and the summary here")
    ap.add_argument("--no-agentd", action="store_true", help="BM25 only")
    ap.add_argument("--no-bm25", action="store_true", help="agentd only")
    ap.add_argument("--warm", action="store_true", help="also time a second preview in the same session")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per agentd request")
    args = ap.parse_args()

    cases = [json.loads(l) for l in open(args.cases) if l.strip()]
    if args.only:
        cases = [c for c in cases if args.only in c["id"]]
    if not cases:
        print("no cases", file=sys.stderr)
        return 2
    binary = find_agentd(args.agentd)
    cache = Path(args.cache)

    rows = []
    print(f"{'id':<16} {'lang':<10} {'bm25':>5} {'agentd':>6} {'ms':>8}  gold")
    for c in cases:
        checkout = cache / c["id"]
        row = {"id": c["id"], "repo": c["repo"], "language": c["language"], "gold": c["gold"]}
        if not checkout.is_dir():
            row["error"] = f"missing checkout {checkout} (run prepare.sh)"
            print(f"{c['id']:<16} {row['error']}")
            rows.append(row)
            continue
        if not args.no_bm25:
            ranked, ndocs = bm25_rank(checkout, c["task"])
            paths = [p for p, _ in ranked]
            row["bm25_rank"] = first_gold_rank(paths, c["gold"])
            row["bm25_top5"] = paths[:5]
            row["bm25_docs"] = ndocs
        if not args.no_agentd:
            try:
                a = run_agentd(binary, checkout.resolve(), c["task"], args.timeout, args.warm)
                row["agentd_rank"] = first_gold_rank(a["paths"], c["gold"])
                row["agentd_top5"] = a["paths"][:5]
                row["agentd_listed"] = len(a["paths"])
                row["agentd_source"] = a["source"]
                row["agentd_ms"] = round(a["ms"], 1)
                if "warm_ms" in a:
                    row["agentd_warm_ms"] = round(a["warm_ms"], 1)
                row["agentd_stats"] = a["stats"]
            except Exception as e:  # a failed case is reported, not fatal
                row["agentd_error"] = str(e)
        ms = f"{row['agentd_ms']:.0f}" if "agentd_ms" in row else ("err" if "agentd_error" in row else "")
        print(f"{c['id']:<16} {c['language']:<10} {fmt_rank(row.get('bm25_rank')):>5} "
              f"{fmt_rank(row.get('agentd_rank')):>6} {ms:>8}  {' '.join(c['gold'])}", flush=True)
        if "agentd_error" in row:
            print(f"    agentd error: {row['agentd_error'][:300]}", flush=True)
        rows.append(row)

    summary = summarize(rows, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"agentd": str(binary), "cases": rows, "summary": summary}, f, indent=2)
    return 0


def summarize(rows, args) -> dict:
    ok = [r for r in rows if "error" not in r]
    out: dict = {"cases": len(rows), "scored": len(ok)}
    systems = [s for s, off in (("bm25", args.no_bm25), ("agentd", args.no_agentd)) if not off]
    by_lang: dict[str, list] = defaultdict(list)
    for r in ok:
        by_lang[r["language"]].append(r)

    def line(label, group):
        cells = []
        for s in systems:
            ranks = [r.get(f"{s}_rank") for r in group if f"{s}_error" not in r]
            cells.append(" ".join(f"{hits(ranks, k):>3}/{len(ranks):<3}" for k in TOP_KS))
        print(f"{label:<12} " + " | ".join(cells))

    print()
    print(f"{'':<12} " + " | ".join(f"{s + ' top-1/3/5':<23}" for s in systems))
    line("all", ok)
    for lang in sorted(by_lang):
        line(lang, by_lang[lang])
    for s in systems:
        ranks = [r.get(f"{s}_rank") for r in ok if f"{s}_error" not in r]
        n = len(ranks) or 1
        out[s] = {f"top{k}": hits(ranks, k) for k in TOP_KS}
        out[s].update({f"top{k}_pct": round(100 * hits(ranks, k) / n, 1) for k in TOP_KS})
        out[s]["scored"] = len(ranks)
        out[s]["by_language"] = {
            lang: {f"top{k}": hits([r.get(f"{s}_rank") for r in g], k) for k in TOP_KS} | {"n": len(g)}
            for lang, g in sorted(by_lang.items())}
    if "agentd" in systems:
        ms = [r["agentd_ms"] for r in ok if "agentd_ms" in r]
        errors = [r["id"] for r in ok if "agentd_error" in r]
        out["agentd"]["latency_ms"] = {"median": round(statistics.median(ms), 1) if ms else None,
                                       "p95": round(pct(ms, 95), 1) if ms else None,
                                       "max": round(max(ms), 1) if ms else None}
        warm = [r["agentd_warm_ms"] for r in ok if "agentd_warm_ms" in r]
        if warm:
            out["agentd"]["warm_latency_ms"] = {"median": round(statistics.median(warm), 1),
                                                "p95": round(pct(warm, 95), 1)}
        out["agentd"]["errors"] = errors
        sources = Counter(r.get("agentd_source") for r in ok if "agentd_source" in r)
        out["agentd"]["order_from"] = dict(sources)
        print(f"\nagentd preview latency (cold, first preview of a fresh process): median "
              f"{out['agentd']['latency_ms']['median']} ms, p95 {out['agentd']['latency_ms']['p95']} ms, "
              f"max {out['agentd']['latency_ms']['max']} ms"
              + (f"; warm median {out['agentd']['warm_latency_ms']['median']} ms" if warm else "")
              + f"; order from {dict(sources)}" + (f"; errors: {errors}" if errors else ""))
    return out


if __name__ == "__main__":
    sys.exit(main())
