#!/usr/bin/env python3
"""clang-tidy over agentd's own sources, analysing only the files whose verdict can have changed.

A file's verdict depends on nothing but clang-tidy's version, .clang-tidy, the file's compile flags and the
text of the file and of every header it includes (ours and the libraries'). The build already knows those
headers: Ninja's deps log lists them for every object. So a file's key is the SHA-256 of all that, and
.ci/tidy-clean lists the keys of the files found clean. A listed key is not analysed again; a change to the
file, to any header it includes, to its flags, to the checks or to clang-tidy gives it a new key, and then
it is analysed. Any finding fails. After a clean run the list holds exactly the current keys: commit it
with the change, and CI analyses only what changed since.

  scripts/tidy.py [BUILD_DIR]          check (default build/default, which must be built)
  AGENTD_TIDY_ALL=1 scripts/tidy.py    analyse every file, whatever the list says
"""
import concurrent.futures
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIST = os.path.join(ROOT, ".ci", "tidy-clean")
FOLDERS = ("core/", "protocol/", "storage/", "tools/", "daemon/")
# These only instantiate Asio/Beast: their findings would be the libraries'.
SKIP = ("core/support/asio_impl.cpp", "core/model/beast_impl.cpp")


def tool(name):
    for candidate in (name, name + "-14"):
        if shutil.which(candidate):
            return candidate
    sys.exit(f"tidy: {name} not found")


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "default"))
    tidy = tool("clang-tidy")
    jobs = os.cpu_count() or 1
    db_path = os.path.join(build, "compile_commands.json")
    if not os.path.exists(db_path):
        sys.exit(f"tidy: no {db_path}; build first")

    files = subprocess.run(["git", "ls-files", "*.cpp"], cwd=ROOT, check=True, capture_output=True,
                           text=True).stdout.split()
    files = [f for f in files if f.startswith(FOLDERS) and f not in SKIP]

    commands = {}
    for entry in json.load(open(db_path)):
        args = entry.get("arguments") or shlex.split(entry["command"])
        output = args[args.index("-o") + 1] if "-o" in args else None
        commands[os.path.relpath(entry["file"], ROOT)] = (args, output)

    # Ninja's deps log: object -> every file it was compiled from.
    deps = {}
    current = None
    log = subprocess.run(["ninja", "-C", build, "-t", "deps"], check=True, capture_output=True, text=True).stdout
    for line in log.splitlines():
        if not line:
            continue
        if not line.startswith(" "):
            current = line.split(":", 1)[0]
            deps[current] = [] if "(VALID)" in line else None
        elif current is not None and deps[current] is not None:
            # Relative entries are relative to the build directory: ccache with a base_dir writes them so.
            dep = line.strip()
            deps[current].append(dep if os.path.isabs(dep) else os.path.normpath(os.path.join(build, dep)))

    file_hashes = {}
    missing = set()

    def content_hash(path):
        if path not in file_hashes:
            try:
                with open(path, "rb") as f:
                    file_hashes[path] = hashlib.sha256(f.read()).hexdigest()
            except OSError:
                # Never a key worth keeping: the same file elsewhere would hash differently.
                file_hashes[path] = "missing"
                missing.add(path)
        return file_hashes[path]

    version = subprocess.run([tidy, "--version"], check=True, capture_output=True, text=True).stdout
    with open(os.path.join(ROOT, ".clang-tidy"), "rb") as f:
        checks = f.read()

    def rel(path):
        return os.path.relpath(path, ROOT) if path.startswith(ROOT + "/") else path

    keys, unknown = {}, []
    for f in files:
        if f not in commands or commands[f][1] is None or deps.get(commands[f][1]) is None:
            unknown.append(f)  # not built (or not since it changed): analyse it
            continue
        args, output = commands[f]
        h = hashlib.sha256()
        h.update(version.encode())
        h.update(checks)
        flags = [a.replace(build, "@build").replace(ROOT, "@") for a in args[1:]
                 if a not in ("-o", output, os.path.join(ROOT, f))]
        h.update("\0".join(flags).encode())
        # Sorted by the relative name, so a checkout elsewhere (/tmp/x vs /work/y) sorts them the same.
        for name, dep in sorted((rel(dep), dep) for dep in deps[output]):
            h.update(f"\0{name}\0{content_hash(dep)}".encode())
        if any(dep in missing for dep in deps[output]):
            # A key over a file that cannot be read would match no other checkout: analyse, keep no key.
            unknown.append(f)
            continue
        keys[f] = h.hexdigest()

    known = set()
    if os.path.exists(LIST) and os.environ.get("AGENTD_TIDY_ALL", "0") != "1":
        with open(LIST) as lst:
            known = {line.split()[0] for line in lst if line.strip()}

    todo = [f for f in files if f not in keys or keys[f] not in known]
    print(f"tidy: {len(files)} files, {len(files) - len(todo)} unchanged since found clean, {len(todo)} to analyse",
          flush=True)

    def analyse(f):
        run = subprocess.run([tidy, "-p", build, "--quiet", "--warnings-as-errors=*", os.path.join(ROOT, f)],
                             capture_output=True, text=True)
        return f, run.returncode, run.stdout

    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for f, code, out in pool.map(analyse, todo):
            if code != 0:
                failed.append(f)
                sys.stdout.write(out)
    if failed:
        print(f"tidy: findings in {len(failed)} files: {' '.join(failed)}")
        return 1
    if unknown:
        print(f"tidy: {len(unknown)} files had no dependency record (or one that names a file that is gone), "
              "so their keys are not kept")

    os.makedirs(os.path.dirname(LIST), exist_ok=True)
    with open(LIST, "w") as lst:
        for f in sorted(keys):
            lst.write(f"{keys[f]} {f}\n")
    print("tidy: clean")
    return 0


if __name__ == "__main__":
    sys.exit(main())
