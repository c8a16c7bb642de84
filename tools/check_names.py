#!/usr/bin/env python3
"""check_names.py - the module lists in the prose name files that exist.

Three texts list the project's files by name: the README's layout section,
the module list at the top of daemon/gpud.h, and doc/DESIGN.md. Files move
and get renamed; a list that names a file no longer there misleads the
next reader. This check fails on every name that matches no file.

What counts as a name:
- README.md, between the line that starts with "Layout" and the next
  heading: every `backticked` word that looks like a file or folder
  (letters, digits, _ . - / *), taken as a stem: `options` matches any
  options.* in the tree, `store*` any file that starts with "store",
  `daemon/` a folder, `tools/check_layers.py` that path.
- daemon/gpud.h, the comment block after "Modules": every word that ends
  in .c or .h, and every folder a line starts with, looked up under
  daemon/ (or from the root, for common/chan.c).
- doc/DESIGN.md: every `backticked` word with a slash or a file extension
  (a path from the repository's root, or a file name found anywhere).
A folder's own name (`unit/`) matches that folder anywhere; a word that
starts with _ (`_nocuda.c`) is a suffix files share; a header found in
/usr/include (`sqlite3.h`) is a library's. Words that start with - or /,
or hold spaces, are options, URLs and commands, not names: write a
command as `gpuctl check`, not `check`.

Usage: check_names.py [--root DIR]
Exit status: 0 every name found, 1 a name with no file (each listed).
"""
import argparse
import fnmatch
import os
import re
import sys

SKIP_DIRS = {".git", "node_modules"}
EXT = re.compile(r"\.(c|h|cu|cuh|py|sh|sql|md|html|build|bash|json|conf|service|yaml|w|obf|txt|gz)$")
NAME = re.compile(r"^[A-Za-z0-9_.*][A-Za-z0-9_.*/-]*$")


def tree_files(root):
    """Every file's path relative to root (build folders left out)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS
                       and not (rel == "." and d.startswith("build"))]
        for f in filenames:
            out.append(os.path.normpath(os.path.join(rel, f)))
    return out


def found(word, files, root, under=""):
    """Whether word names a file or folder (see the module comment)."""
    w = word.rstrip("/")
    if word.endswith("/") and "/" not in w:
        # A folder by its own name, wherever it stands (`unit/`).
        return any(("/" + w + "/") in ("/" + f) for f in files)
    if w.startswith("_"):
        w = "*" + w       # a suffix the files share (`_nocuda.c`)
    if "/" in w:
        if any(c in w for c in "*?"):
            return any(fnmatch.fnmatch(f, w) for f in files)
        path = os.path.join(root, under, w)
        return os.path.exists(path) or os.path.exists(os.path.join(root, w))
    pool = [f for f in files if f.startswith(under)] if under else files
    names = [os.path.basename(f) for f in pool]
    if "*" in w:
        pat = w if EXT.search(w) else w + "*"
        return any(fnmatch.fnmatch(n, pat) for n in names)
    if EXT.search(w):
        # A system header (`sqlite3.h`) is a name too.
        return w in names or os.path.exists(os.path.join("/usr/include", w))
    return any(os.path.splitext(n)[0] == w for n in names)


def backticked(text):
    for m in re.finditer(r"`([^`\n]+)`", text):
        yield m.group(1)


def readme_names(root):
    text = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    m = re.search(r"^Layout\b.*?(?=^#)", text, re.S | re.M)
    if not m:
        return ["README.md: no section starting with 'Layout'"], []
    words = [w for w in backticked(m.group(0)) if NAME.match(w)]
    # A bare word in the section is a module's stem; a word like
    # `page.html` or `mix.h` a file; both are names.
    return [], words


def gpud_h_names(root):
    text = open(os.path.join(root, "daemon", "gpud.h"), encoding="utf-8").read()
    m = re.search(r"Modules\b.*?\*/", text, re.S)
    if not m:
        return ["daemon/gpud.h: no 'Modules' list"], []
    # Every file name in the list (`conn.c`, `common/chan.c`) and every
    # folder a line starts with (`store/`).
    words = re.findall(r"(?<![\w/.])([A-Za-z0-9_/]+\.[ch])\b", m.group(0))
    words += re.findall(r"^ \*   ([a-z]+/)", m.group(0), re.M)
    return [], words


def design_names(root):
    path = os.path.join(root, "doc", "DESIGN.md")
    if not os.path.exists(path):
        return ["doc/DESIGN.md: missing"], []
    text = open(path, encoding="utf-8").read()
    words = [w for w in backticked(text)
             if NAME.match(w) and ("/" in w or EXT.search(w))]
    return [], words


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    files = tree_files(root)
    bad, total = [], 0
    for label, fn, under in (("README.md (Layout)", readme_names, ""),
                             ("daemon/gpud.h (Modules)", gpud_h_names, "daemon/"),
                             ("doc/DESIGN.md", design_names, "")):
        errs, words = fn(root)
        bad += errs
        for w in words:
            total += 1
            if not found(w, files, root, under):
                bad.append("%s names `%s`: no such file" % (label, w))
    for b in bad:
        print(b)
    if bad:
        return 1
    print("module lists: %d names, every one a file in the tree" % total)
    return 0


if __name__ == "__main__":
    sys.exit(main())
