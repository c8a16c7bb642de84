#!/usr/bin/env python3
"""check_layers.py - which file calls which, and file sizes.

Layer check (default): builds a file-level graph of the C and CUDA sources
in common/, kernels/, daemon/, worker/ and tools/. A function defined
(non-static) in file A and named in file B gives the edge B -> A; naming
it without calling it (a function pointer put in a handler table) counts
too, since B then depends on A all the same. Macros defined in headers are
expanded (LOG_INFO names GLOG, which names glog_write, so its users
depend on log.c). Any cycle between files fails the check; it is printed as a path
of files, each step with the name that makes it.

Why the sources and not `nm` of the objects: the check then needs no build
(meson runs it straight from the source tree), it sees the CUDA files and
the workloads that a -Dcuda=disabled build leaves out, and it cannot go
stale against an old build directory. The cost is a tokenizer instead of a
compiler: comments, strings, character literals and preprocessor lines are
dropped, definitions are found at file scope as `name ( ... ) {`, and a
function defined in a header (static inline) belongs to no file. Names
are not scoped: a local variable named like another file's function counts
as a use of it (rename one); C++ functions in .cu files leave their file
only when extern "C".

Size check (--sizes): no source file over 800 lines in daemon/ and
worker/, none over 1000 anywhere else (common/, kernels/, tools/, tests/,
schema/); offenders are listed and the check fails.

Census (--census): what a newcomer meets, for the README and
doc/DESIGN.md: the source files of each folder, and the calls between
folders (file edges whose two files stand in different folders, counted
per pair of folders).

Usage: check_layers.py [--root DIR] [--layers] [--edges] [--sizes] [--census]
Exit status: 0 clean, 1 a cycle (or, with --sizes, a file too long).
"""
import argparse
import os
import re
import sys

DIRS = ("common", "kernels", "daemon", "worker", "tools")
SOURCE_EXT = (".c", ".cu", ".cpp")
HEADER_EXT = (".h", ".cuh")
# Size limits: every source file, by top directory.
SIZE_DIRS = DIRS + ("tests", "schema")
SIZE_EXT = (".c", ".h", ".cu", ".cuh", ".py", ".sh", ".sql")
SIZE_LIMIT = {"daemon": 800, "worker": 800}
SIZE_DEFAULT = 1000

TOKEN = re.compile(r"""
    (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<pp>^[ \t]*\#(?:\\\n|[^\n])*)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<arrow>->)
  | (?P<punct>[{}();.,=])
  | (?P<other>\S)
  | \s+
""", re.S | re.M | re.X)
DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(.*)", re.S)
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
NOT_A_NAME = {"if", "for", "while", "switch", "return", "sizeof", "do",
              "else", "case", "defined", "__attribute__", "__launch_bounds__",
              "alignof", "_Alignof", "typeof", "__typeof__", "decltype"}


def tokens(text):
    """(kind, value) pairs; strings become ("string", ""), #lines ("pp", line)."""
    out = []
    for m in TOKEN.finditer(text):
        kind = m.lastgroup
        if kind is None or kind == "comment":
            continue
        if kind == "string":
            out.append(("string", ""))
        elif kind == "pp":
            # Joined continuation lines, comments dropped, for #define.
            line = re.sub(r"/\*.*?\*/|//[^\n]*", " ", m.group(0).replace("\\\n", " "))
            out.append(("pp", line))
        else:
            out.append((kind, m.group(0)))
    return out


def scan(path):
    """Returns (defined: {name: is_static}, used: set of names, macros)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        toks = tokens(f.read())
    defined, used, macros = {}, set(), {}
    # One entry per open brace: "code", or "extern" / "namespace" for
    # extern "C" { and namespace X {, which leave us at file scope.
    stack = []
    start = 0            # first token of the current file-scope declaration
    cplus = path.endswith((".cu", ".cpp"))
    i = 0
    while i < len(toks):
        kind, val = toks[i]
        if kind == "pp":
            m = DEFINE.match(val)
            if m:
                body = m.group(2)
                if body.startswith("("):  # parameters are not names
                    body = body[body.find(")") + 1:]
                macros[m.group(1)] = set(IDENT.findall(body))
            i += 1
            if "code" not in stack:
                start = i
            continue
        depth = stack.count("code")
        if val == "{":
            prev = [v for _, v in toks[max(0, i - 2):i]]
            if len(prev) == 2 and prev[0] == "extern" and toks[i - 1][0] == "string":
                stack.append("extern")
            elif "namespace" in prev:
                stack.append("namespace")
            else:
                stack.append("code")
        elif val == "}":
            if stack:
                stack.pop()
            if "code" not in stack:
                start = i + 1
        elif val == ";" and depth == 0:
            start = i + 1
        elif kind == "ident" and val not in NOT_A_NAME:
            after_member = i > 0 and toks[i - 1][1] in (".", "->")
            if (depth == 0 and i + 1 < len(toks) and toks[i + 1][1] == "("):
                j = close_paren(toks, i + 1)
                k = j + 1
                while k < len(toks) and toks[k][1] in ("__attribute__", "const", "noexcept"):
                    k = close_paren(toks, k + 1) + 1 if toks[k][1] == "__attribute__" else k + 1
                if k < len(toks) and toks[k][1] == "{":
                    prefix = [v for _, v in toks[start:i]]
                    # C++ linkage (CUDA) cannot be called from C: only
                    # extern "C" functions leave a .cu file.
                    local = "static" in prefix or (
                        cplus and "extern" not in prefix and "extern" not in stack)
                    defined[val] = local
                    used.update(v for t, v in toks[i + 2:j] if t == "ident")
                    i = k
                    continue
            if not after_member:
                used.add(val)
        i += 1
    return defined, used, macros


def close_paren(toks, i):
    """Index of the ")" matching the "(" at i."""
    n = 0
    for j in range(i, len(toks)):
        if toks[j][1] == "(":
            n += 1
        elif toks[j][1] == ")":
            n -= 1
            if n == 0:
                return j
    return len(toks) - 1


def product_files(root, exts, dirs=DIRS):
    for top in dirs:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(exts):
                    yield os.path.relpath(os.path.join(dirpath, name), root)


def build_graph(root):
    """{file: {callee file: sorted names}} over the source files."""
    sources, macros = {}, {}
    for rel in product_files(root, SOURCE_EXT + HEADER_EXT):
        defined, used, mac = scan(os.path.join(root, rel))
        if rel.endswith(HEADER_EXT):
            macros.update(mac)
        else:
            sources[rel] = (defined, used, mac)
    owners = {}
    for rel, (defined, _, _) in sources.items():
        for name, is_static in defined.items():
            if not is_static and name != "main":
                owners.setdefault(name, []).append(rel)
    graph = {}
    for rel, (defined, used, own) in sources.items():
        mine = dict(macros, **own)  # a file's own macros win
        names, todo = set(used), list(used)
        while todo:  # macros within macros, each once
            for name in mine.get(todo.pop(), ()):
                if name not in names:
                    names.add(name)
                    todo.append(name)
        edges = {}
        for name in names:
            if name in defined:
                continue  # its own (or a static of the same name)
            for owner in owners.get(name, ()):
                if owner != rel:
                    edges.setdefault(owner, []).append(name)
        graph[rel] = {k: sorted(v) for k, v in edges.items()}
    return graph


def find_cycle(graph):
    """One cycle as a list of files (first == last), or None."""
    colour, parent = {}, {}
    for top in sorted(graph):
        if top in colour:
            continue
        stack = [(top, iter(sorted(graph[top])))]
        colour[top] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                colour[node] = 2
                stack.pop()
                continue
            if colour.get(nxt) == 1:
                path = [node]
                while path[-1] != nxt:
                    path.append(parent[path[-1]])
                return list(reversed(path)) + [nxt]
            if nxt not in colour:
                colour[nxt] = 1
                parent[nxt] = node
                stack.append((nxt, iter(sorted(graph.get(nxt, {})))))
    return None


def all_cycles(graph):
    """Cycles, one per strongly connected group, cutting each as found."""
    g = {k: dict(v) for k, v in graph.items()}
    found = []
    while True:
        cyc = find_cycle(g)
        if not cyc:
            return found
        found.append(cyc)
        del g[cyc[-2]][cyc[-1]]  # look past this edge for others


def layers(graph):
    """{file: layer}: 0 calls no other file; else 1 + its callees' highest."""
    memo = {}

    def level(f):
        if f not in memo:
            memo[f] = 0
            memo[f] = 1 + max((level(c) for c in graph.get(f, {})), default=-1)
        return memo[f]

    for f in graph:
        level(f)
    return memo


def check_sizes(root):
    bad = []
    for rel in product_files(root, SIZE_EXT, SIZE_DIRS):
        top = rel.split(os.sep)[0]
        limit = SIZE_LIMIT.get(top, SIZE_DEFAULT)
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            n = sum(1 for _ in f)
        if n > limit:
            bad.append((rel, n, limit))
    return bad


def census(root, graph):
    """Print files per folder and file edges between folders."""
    per = {}
    for rel in product_files(root, SOURCE_EXT + HEADER_EXT):
        per.setdefault(os.path.dirname(rel), []).append(rel)
    print("files per folder (sources and headers):")
    for d in sorted(per):
        print(f"  {len(per[d]):4d}  {d}/")
    pairs = {}
    for f, callees in graph.items():
        for c in callees:
            a, b = os.path.dirname(f), os.path.dirname(c)
            if a != b:
                pairs[(a, b)] = pairs.get((a, b), 0) + 1
    total = sum(pairs.values())
    inside = sum(len(v) for v in graph.values()) - total
    print(f"calls between files: {inside} inside a folder, {total} across "
          f"folders over {len(pairs)} pairs of folders:")
    for (a, b), n in sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {n:4d}  {a}/ -> {b}/")
    both = sorted((a, b) for (a, b) in pairs if a < b and (b, a) in pairs)
    print(f"pairs of folders that call each other both ways: {len(both)}")
    for a, b in both:
        print(f"        {a}/ <-> {b}/")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(
        os.path.abspath(__file__)), ".."))
    ap.add_argument("--layers", action="store_true", help="print the layers")
    ap.add_argument("--edges", action="store_true", help="print every edge")
    ap.add_argument("--census", action="store_true",
                    help="print files per folder and calls between folders")
    ap.add_argument("--sizes", action="store_true",
                    help="check file sizes instead of calls")
    args = ap.parse_args()
    root = os.path.abspath(args.root)

    if args.sizes:
        bad = check_sizes(root)
        for rel, n, limit in bad:
            print(f"{rel}: {n} lines (limit {limit})")
        if bad:
            print(f"{len(bad)} file(s) over the size limit", file=sys.stderr)
            return 1
        print("file sizes: all within the limits")
        return 0

    graph = build_graph(root)
    if args.census:
        census(root, graph)
        return 0
    if args.edges:
        for f in sorted(graph):
            for callee, names in sorted(graph[f].items()):
                print(f"{f} -> {callee}: {', '.join(names)}")
    cycles = all_cycles(graph)
    if args.layers and not cycles:
        lv = layers(graph)
        for n in range(max(lv.values(), default=-1) + 1):
            files = sorted(f for f, v in lv.items() if v == n)
            print(f"layer {n}: {' '.join(files)}")
    for cyc in cycles:
        steps = [f"{a} -> {b} ({', '.join(graph[a][b])})"
                 for a, b in zip(cyc, cyc[1:])]
        print("cycle: " + " -> ".join(cyc), file=sys.stderr)
        for s in steps:
            print("    " + s, file=sys.stderr)
    if cycles:
        return 1
    print(f"no call cycle between files ({len(graph)} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
