//! The architecture, checked offline from the sources (no cluster):
//!
//! * **No import circle between sibling files**, at any depth, in every
//!   crate of the workspace (all targets). One graph per folder: its nodes
//!   are the modules of that folder (each file or subfolder, and the
//!   folder's own `lib.rs` / `main.rs` / `mod.rs`, named by its stem), with
//!   an edge A -> B when anything in A (or below A) names B (or something
//!   below B) by a path that starts with `crate::`, `super::` or `self::`,
//!   in a `use` tree or inline. A path counts for the file that defines the
//!   module it names (a re-export counts for the file that re-exports). A
//!   parent naming its own child by the bare name (`mod x; pub use x::T;`,
//!   how a facade declares and re-exports its children) is no edge. Test
//!   code (`#[cfg(test)]` items and files) is left out.
//! * **No function over [`MAX_FN_LINES`] lines** in the product crates,
//!   counted as `/work/shared/hooks/longfns.py` counts: from the `fn` to its
//!   closing brace, with comments and literals blanked and everything from
//!   the first `#[cfg(test)] mod x {` on left out.
//! * **No source file over [`MAX_LINES`] lines** unless `ARCHITECTURE.md`
//!   says why.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The product crates (function length is checked in their `src`).
pub const CRATES: &[&str] = &[
    "common",
    "meta",
    "storage-adapter",
    "shard-router",
    "compute",
    "tessera",
];

/// Longest source file allowed without a reason in ARCHITECTURE.md.
pub const MAX_LINES: usize = 600;

/// Longest function allowed in the product crates.
pub const MAX_FN_LINES: usize = 150;

/// Functions over [`MAX_FN_LINES`] lines that are being split (issue 29),
/// as (file, function). The list only shrinks: the test fails on a long
/// function not listed here and on an entry that is no longer long.
pub const LONG_FUNCTIONS_BEING_SPLIT: &[(&str, &str)] = &[];

/// Folders (relative to the workspace) whose sibling circle is being taken
/// apart on other branches (issue 29). The list only shrinks: the test
/// fails when a folder listed here has no circle any more.
pub const CIRCLES_BEING_FIXED: &[&str] = &[];

/// Module name -> the sibling modules it uses.
pub type Graph = BTreeMap<String, BTreeSet<String>>;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `path` relative to `base`, with `/` between its parts.
fn relative(base: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(base).unwrap_or(path);
    let parts: Vec<_> = rel.iter().map(|c| c.to_string_lossy()).collect();
    parts.join("/")
}

/// The workspace's member crates, as `Cargo.toml` lists them.
fn members() -> Vec<String> {
    let toml = std::fs::read_to_string(workspace().join("Cargo.toml")).unwrap_or_default();
    let list = toml
        .split("members")
        .nth(1)
        .and_then(|s| s.split('[').nth(1));
    let Some(list) = list.and_then(|s| s.split(']').next()) else {
        return vec![];
    };
    list.split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(str::to_string)
        .collect()
}

// --- Comments and literals ---------------------------------------------------

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn starts(t: &[char], i: usize, s: &str) -> bool {
    s.chars().enumerate().all(|(k, c)| t.get(i + k) == Some(&c))
}

fn find(t: &[char], from: usize, s: &str) -> Option<usize> {
    (from..t.len()).find(|&j| starts(t, j, s))
}

/// The length of a char literal at `i` (`'x'`, `'\n'`, `'\u{..}'`).
fn char_literal(t: &[char], i: usize) -> Option<usize> {
    let at = |k: usize| t.get(i + k).copied();
    let hex = (4..).take_while(|&k| at(k).is_some_and(|c| c.is_ascii_hexdigit()));
    let digits = hex.count();
    if at(1) == Some('\\') && at(2) == Some('u') && at(3) == Some('{') && (1..=6).contains(&digits)
    {
        let end = 4 + digits;
        if at(end) == Some('}') && at(end + 1) == Some('\'') {
            return Some(end + 2);
        }
    }
    match (at(1)?, at(2)?) {
        ('\\', c) if c != '\n' && at(3) == Some('\'') => Some(4),
        (c, '\'') if c != '\\' && c != '\'' => Some(3),
        _ => None,
    }
}

/// `text` with comments, strings and char literals blanked (newlines
/// kept): `longfns.py`'s `clean`, character for character.
pub fn blank(text: &str) -> String {
    let t: Vec<char> = text.chars().collect();
    let n = t.len();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < n {
        let c = t[i];
        let raw = (c == 'r' && (i == 0 || !is_word(t[i - 1])))
            .then(|| (1..9).take_while(|&k| t.get(i + k) == Some(&'#')).count())
            .filter(|h| t.get(i + 1 + h) == Some(&'"'));
        let end = if starts(&t, i, "//") {
            find(&t, i, "\n").unwrap_or(n)
        } else if starts(&t, i, "/*") {
            find(&t, i + 2, "*/").map_or(n, |j| j + 2)
        } else if let Some(h) = raw {
            let close: String = std::iter::once('"').chain("#".repeat(h).chars()).collect();
            find(&t, i + h + 2, &close).map_or(n, |j| j + h + 1)
        } else if c == '"' {
            let mut j = i + 1;
            while j < n && t[j] != '"' {
                j += if t[j] == '\\' { 2 } else { 1 };
            }
            j + 1
        } else if let Some(len) = (c == '\'').then(|| char_literal(&t, i)).flatten() {
            i + len
        } else {
            out.push(c);
            i += 1;
            continue;
        };
        for &c in &t[i..end.min(n)] {
            out.push(if c == '\n' { '\n' } else { ' ' });
        }
        i = end;
    }
    out
}

// --- Function length ---------------------------------------------------------

/// Where `#[cfg(test)] mod x {` first opens in `t`.
fn test_module_start(t: &[char]) -> Option<usize> {
    let skip = |mut k: usize, f: fn(char) -> bool| {
        while t.get(k).is_some_and(|c| f(*c)) {
            k += 1;
        }
        k
    };
    (0..t.len()).find(|&i| {
        if !starts(t, i, "#[cfg(test)]") {
            return false;
        }
        let k = skip(i + 12, char::is_whitespace);
        if !starts(t, k, "mod ") {
            return false;
        }
        let name = skip(k + 4, is_word);
        name > k + 4 && t.get(skip(name, char::is_whitespace)) == Some(&'{')
    })
}

/// The functions of one file's source over `limit` lines, as (name, line
/// of the `fn`, lines); nested functions are counted inside their parents
/// too.
pub fn long_functions_in(src: &str, limit: usize) -> Vec<(String, usize, usize)> {
    let all: Vec<char> = blank(src).chars().collect();
    let t = &all[..test_module_start(&all).unwrap_or(all.len())];
    let newlines = |a: usize, b: usize| t[a..b].iter().filter(|c| **c == '\n').count();
    let mut out = vec![];
    let mut i = 0;
    while i + 1 < t.len() {
        if t[i] != 'f' || t[i + 1] != 'n' || (i > 0 && is_word(t[i - 1])) {
            i += 1;
            continue;
        }
        let space = (i + 2..t.len())
            .take_while(|&k| t[k].is_whitespace())
            .count();
        let name_at = i + 2 + space;
        let name_len = (name_at..t.len()).take_while(|&k| is_word(t[k])).count();
        if space == 0 || name_len == 0 {
            i += 1;
            continue;
        }
        let after = name_at + name_len;
        let name: String = t[name_at..after].iter().collect();
        let open = (after..t.len()).find(|&k| t[k] == '{' || t[k] == ';');
        if let Some(open) = open.filter(|&k| t[k] == '{') {
            let mut depth = 0usize;
            let mut j = open;
            while j < t.len() {
                match t[j] {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            let lines = newlines(i, j) + 1;
            if lines > limit {
                out.push((name, newlines(0, i) + 1, lines));
            }
        }
        i = after;
    }
    out
}

/// Functions over [`MAX_FN_LINES`] lines in the product crates' `src`, as
/// (file relative to the workspace, name, lines).
pub fn long_functions() -> Vec<(String, String, usize)> {
    let root = workspace();
    let mut out = vec![];
    for krate in CRATES {
        let mut files = vec![];
        rust_files(&root.join(krate).join("src"), &mut files);
        for f in files {
            let src = std::fs::read_to_string(&f).unwrap_or_default();
            for (name, _, lines) in long_functions_in(&src, MAX_FN_LINES) {
                out.push((relative(&root, &f), name, lines));
            }
        }
    }
    out.sort();
    out
}

// --- Sibling circles ---------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Id(String),
    /// `::`
    Sep,
    P(char),
}

fn tokens(code: &str) -> Vec<Tok> {
    let c: Vec<char> = code.chars().collect();
    let mut out = vec![];
    let mut i = 0;
    while i < c.len() {
        if is_word(c[i]) {
            let start = i;
            while i < c.len() && is_word(c[i]) {
                i += 1;
            }
            out.push(Tok::Id(c[start..i].iter().collect()));
        } else if starts(&c, i, "::") {
            out.push(Tok::Sep);
            i += 2;
        } else {
            if !c[i].is_whitespace() {
                out.push(Tok::P(c[i]));
            }
            i += 1;
        }
    }
    out
}

/// The index after the bracket that closes the one at `i`.
fn close_of(t: &[Tok], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < t.len() {
        match t[i] {
            Tok::P('(' | '[' | '{') => depth += 1,
            Tok::P(')' | ']' | '}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// `#[cfg(test)]` (`Some(false)`) or `#![cfg(test)]` (`Some(true)`) at `i`.
fn cfg_test_at(t: &[Tok], i: usize) -> Option<bool> {
    if t.get(i) != Some(&Tok::P('#')) {
        return None;
    }
    let inner = t.get(i + 1) == Some(&Tok::P('!'));
    let k = i + 1 + usize::from(inner);
    let want = ["[", "cfg", "(", "test", ")", "]"];
    let is = |j: usize, w: &str| match t.get(k + j) {
        Some(Tok::Id(x)) => x == w,
        Some(Tok::P(c)) => w.len() == 1 && w.starts_with(*c),
        _ => false,
    };
    want.iter()
        .enumerate()
        .all(|(j, w)| is(j, w))
        .then_some(inner)
}

/// The index after the item that starts at `i` (its attributes first).
fn skip_item(t: &[Tok], mut i: usize) -> usize {
    while t.get(i) == Some(&Tok::P('#')) {
        i = close_of(t, i + 1);
    }
    while i < t.len() {
        match t[i] {
            Tok::P(';' | ',') => return i + 1,
            Tok::P('}' | ')' | ']') => return i,
            Tok::P('{') => return close_of(t, i),
            Tok::P('(' | '[') => i = close_of(t, i),
            _ => i += 1,
        }
    }
    i
}

/// The paths of one `use` tree starting at `i` (a glob or `self` names
/// the module itself).
fn use_tree(t: &[Tok], i: &mut usize, mut prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    if t.get(*i) == Some(&Tok::Sep) {
        prefix.push("::".into());
        *i += 1;
    }
    loop {
        match t.get(*i) {
            Some(Tok::Id(x)) => {
                prefix.push(x.clone());
                *i += 1;
                if t.get(*i) == Some(&Tok::Sep) {
                    *i += 1;
                    continue;
                }
                if matches!(t.get(*i), Some(Tok::Id(a)) if a == "as") {
                    *i += 2;
                }
            }
            Some(Tok::P('*')) => *i += 1,
            Some(Tok::P('{')) => {
                *i += 1;
                while *i < t.len() && t[*i] != Tok::P('}') {
                    let before = *i;
                    use_tree(t, i, prefix.clone(), out);
                    if t.get(*i) == Some(&Tok::P(',')) || *i == before {
                        *i += 1;
                    }
                }
                *i += 1;
                return;
            }
            _ => {}
        }
        break;
    }
    out.push(prefix);
}

/// What one file declares and names: `mod x;` declarations and paths, each
/// with the inline modules it sits in.
#[derive(Default)]
struct Scan {
    mods: Vec<(Vec<String>, String)>,
    paths: Vec<(Vec<String>, Vec<String>)>,
}

fn scan(src: &str) -> Scan {
    let t = tokens(&blank(src));
    let mut s = Scan::default();
    let mut inline: Vec<(String, usize)> = vec![];
    let mut depth = 0;
    let mut i = 0;
    let id = |k: usize| match t.get(k) {
        Some(Tok::Id(x)) => Some(x.clone()),
        _ => None,
    };
    while i < t.len() {
        let here: Vec<String> = inline.iter().map(|(n, _)| n.clone()).collect();
        match (&t[i], cfg_test_at(&t, i)) {
            (_, Some(true)) => return Scan::default(),
            (_, Some(false)) => i = skip_item(&t, i),
            (Tok::P('{'), _) => {
                depth += 1;
                i += 1;
            }
            (Tok::P('}'), _) => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            (Tok::Id(k), _) if k == "mod" && id(i + 1).is_some() => {
                let name = id(i + 1).unwrap_or_default();
                if t.get(i + 2) == Some(&Tok::P('{')) {
                    depth += 1;
                    inline.push((name, depth));
                } else {
                    s.mods.push((here, name));
                }
                i += 3;
            }
            (Tok::Id(k), _) if k == "pub" && t.get(i + 1) == Some(&Tok::P('(')) => {
                i = close_of(&t, i + 1);
            }
            (Tok::Id(k), _) if k == "use" => {
                i += 1;
                let mut trees = vec![];
                use_tree(&t, &mut i, vec![], &mut trees);
                s.paths.extend(trees.into_iter().map(|p| (here.clone(), p)));
            }
            (Tok::Id(first), _)
                if t.get(i + 1) == Some(&Tok::Sep) && (i == 0 || t[i - 1] != Tok::Sep) =>
            {
                let mut segs = vec![first.clone()];
                i += 1;
                while let (Some(Tok::Sep), Some(x)) = (t.get(i), id(i + 1)) {
                    segs.push(x);
                    i += 2;
                }
                if segs.len() > 1 && matches!(segs[0].as_str(), "crate" | "super" | "self") {
                    s.paths.push((here, segs));
                }
            }
            _ => i += 1,
        }
    }
    s
}

/// The module path (items included) that `segs` names from inside module
/// `cur`, if it starts with `crate`, `super` or `self`.
fn resolve(segs: &[String], cur: &[String]) -> Option<Vec<String>> {
    let segs = match segs.split_last() {
        Some((last, rest)) if last == "self" && !rest.is_empty() => rest,
        _ => segs,
    };
    let (base, rest) = match segs.first()?.as_str() {
        "crate" => (&cur[..0], &segs[1..]),
        "self" => (cur, &segs[1..]),
        "super" => {
            let n = segs.iter().take_while(|s| *s == "super").count();
            (&cur[..cur.len().checked_sub(n)?], &segs[n..])
        }
        _ => return None,
    };
    Some([base, rest].concat())
}

/// The folder a module file's children live in.
fn child_dir(file: &str, root: bool) -> String {
    let (dir, name) = file.rsplit_once('/').unwrap_or(("", file));
    match name.strip_suffix(".rs") {
        Some(stem) if !root && stem != "mod" => format!("{dir}/{stem}"),
        _ => dir.to_string(),
    }
}

fn stem(file: &str) -> String {
    let name = file.rsplit('/').next().unwrap_or(file);
    name.trim_end_matches(".rs").to_string()
}

/// One crate's sibling graphs, by folder: `sources` maps paths relative to
/// the crate (`src/lib.rs`) to their text; `roots` are its targets' root
/// files. A folder's own module file is the node named by its stem (`lib`,
/// `main`, `mod`).
pub fn sibling_graphs(
    sources: &BTreeMap<String, String>,
    roots: &[String],
) -> BTreeMap<String, Graph> {
    let scans: BTreeMap<&str, Scan> = sources.iter().map(|(p, s)| (p.as_str(), scan(s))).collect();
    let mut graphs: BTreeMap<String, Graph> = BTreeMap::new();
    for root in roots {
        let mut modules: BTreeMap<Vec<String>, String> = BTreeMap::new();
        let mut todo = vec![(vec![], root.clone())];
        while let Some((path, file)) = todo.pop() {
            let Some(sc) = scans.get(file.as_str()) else {
                continue;
            };
            let dir = child_dir(&file, path.is_empty());
            for (inline, name) in &sc.mods {
                let d = [std::slice::from_ref(&dir), inline].concat().join("/");
                let m = [&path, inline, std::slice::from_ref(name)].concat();
                let found = [format!("{d}/{name}.rs"), format!("{d}/{name}/mod.rs")]
                    .into_iter()
                    .find(|f| scans.contains_key(f.as_str()));
                todo.extend(found.map(|f| (m, f)));
            }
            modules.insert(path, file);
        }
        let single = root.ends_with("/lib.rs") || root.ends_with("/main.rs");
        let folder = |m: &[String]| {
            let dir = child_dir(&modules[m], m.is_empty());
            match m.is_empty() && !single {
                true => format!("{dir} ({})", stem(root)),
                false => dir,
            }
        };
        for m in modules.keys().filter(|m| !m.is_empty()) {
            let (parent, name) = m.split_at(m.len() - 1);
            let Some(file) = modules.get(parent) else {
                continue;
            };
            let g = graphs.entry(folder(parent)).or_default();
            g.entry(stem(file)).or_default();
            g.entry(name[0].clone()).or_default();
        }
        for (m, file) in &modules {
            for (inline, segs) in &scans[file.as_str()].paths {
                let cur = [m.as_slice(), inline].concat();
                let Some(target) = resolve(segs, &cur) else {
                    continue;
                };
                let Some(to) = (0..=target.len())
                    .rev()
                    .map(|k| &target[..k])
                    .find(|p| modules.contains_key(*p))
                else {
                    continue;
                };
                let d = m.iter().zip(to).take_while(|(a, b)| a == b).count();
                let Some(parent) = modules.get(&m[..d]) else {
                    continue;
                };
                if to == m.as_slice() {
                    continue;
                }
                let node = |p: &[String]| p.get(d).cloned().unwrap_or_else(|| stem(parent));
                let g = graphs.entry(folder(&m[..d])).or_default();
                g.entry(node(m)).or_default().insert(node(to));
            }
        }
    }
    graphs
}

/// A crate's sources (relative to its folder) and its targets' roots.
fn crate_sources(krate: &str) -> (BTreeMap<String, String>, Vec<String>) {
    let dir = workspace().join(krate);
    let mut files = vec![];
    for sub in ["src", "tests", "benches", "examples"] {
        rust_files(&dir.join(sub), &mut files);
    }
    let sources: BTreeMap<String, String> = files
        .iter()
        .map(|f| {
            (
                relative(&dir, f),
                std::fs::read_to_string(f).unwrap_or_default(),
            )
        })
        .collect();
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
    let declared: Vec<&str> = manifest
        .lines()
        .filter_map(|l| l.trim().strip_prefix("path"))
        .filter_map(|l| l.split('"').nth(1))
        .collect();
    let roots = sources
        .keys()
        .filter(|f| {
            let parts: Vec<&str> = f.split('/').collect();
            let conventional = matches!(
                parts.as_slice(),
                ["src", "lib.rs" | "main.rs"]
                    | ["src", "bin", _]
                    | ["src", "bin", _, "main.rs"]
                    | ["tests" | "benches" | "examples", _]
                    | ["tests" | "benches" | "examples", _, "main.rs"]
            );
            conventional || declared.contains(&f.as_str())
        })
        .cloned()
        .collect();
    (sources, roots)
}

/// Every sibling circle in the workspace by folder (relative to the
/// workspace), and the folders checked.
pub fn sibling_circles() -> (BTreeMap<String, Vec<String>>, BTreeSet<String>) {
    let mut circles = BTreeMap::new();
    let mut folders = BTreeSet::new();
    for krate in members() {
        let (sources, roots) = crate_sources(&krate);
        for (folder, g) in sibling_graphs(&sources, &roots) {
            let folder = format!("{krate}/{folder}");
            if let Some(c) = find_cycle(&g) {
                circles.insert(folder.clone(), c);
            }
            folders.insert(folder);
        }
    }
    (circles, folders)
}

/// A cycle in `graph`, if it has one.
pub fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|s| s == n) {
            let mut c = stack[i..].to_vec();
            c.push(n.to_string());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        stack.push(n.to_string());
        for d in graph.get(n).into_iter().flatten() {
            if let Some(c) = visit(d, graph, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for n in graph.keys() {
        if let Some(c) = visit(n, graph, &mut vec![], &mut done) {
            return Some(c);
        }
    }
    None
}

/// Source files over [`MAX_LINES`] lines, relative to the workspace.
pub fn long_files() -> Vec<(String, usize)> {
    let root = workspace();
    let mut out = vec![];
    for krate in CRATES.iter().chain(["tests", "benches"].iter()) {
        let mut files = vec![];
        rust_files(&root.join(krate), &mut files);
        for f in files {
            let n = std::fs::read_to_string(&f).map_or(0, |s| s.lines().count());
            if n > MAX_LINES {
                out.push((relative(&root, &f), n));
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sibling_files_depend_one_way() {
        let (circles, folders) = sibling_circles();
        for f in [
            "shard-router/src/dist/pushdown",
            "compute/src/plan/pgsyntax",
            "benches/src/tpcc",
            "tessera/src/cluster",
            "tests/tests/cluster",
        ] {
            assert!(folders.contains(f), "{f} not checked; checked {folders:?}");
        }
        let new: Vec<_> = circles
            .iter()
            .filter(|(f, _)| !CIRCLES_BEING_FIXED.contains(&f.as_str()))
            .map(|(f, c)| format!("{f}: {}", c.join(" -> ")))
            .collect();
        assert!(
            new.is_empty(),
            "import circles between sibling files: {new:#?}"
        );
        let gone: Vec<_> = CIRCLES_BEING_FIXED
            .iter()
            .filter(|f| !circles.contains_key(**f))
            .collect();
        assert!(
            gone.is_empty(),
            "no circle any more in {gone:?}: take them out of CIRCLES_BEING_FIXED"
        );
    }

    #[test]
    fn no_function_over_the_limit() {
        let long = long_functions();
        let new: Vec<_> = long
            .iter()
            .filter(|(f, n, _)| !LONG_FUNCTIONS_BEING_SPLIT.contains(&(f.as_str(), n.as_str())))
            .collect();
        assert!(
            new.is_empty(),
            "functions over {MAX_FN_LINES} lines (split them): {new:#?}"
        );
        let done: Vec<_> = LONG_FUNCTIONS_BEING_SPLIT
            .iter()
            .filter(|(f, n)| !long.iter().any(|(lf, ln, _)| lf == f && ln == n))
            .collect();
        assert!(
            done.is_empty(),
            "no longer over {MAX_FN_LINES} lines: take {done:?} out of LONG_FUNCTIONS_BEING_SPLIT"
        );
    }

    #[test]
    fn long_files_have_a_reason() {
        let doc = std::fs::read_to_string(workspace().join("ARCHITECTURE.md")).unwrap_or_default();
        let missing: Vec<_> = long_files()
            .into_iter()
            .filter(|(f, _)| !doc.contains(&format!("`{f}`")))
            .collect();
        assert!(
            missing.is_empty(),
            "files over {MAX_LINES} lines without a reason in ARCHITECTURE.md: {missing:?}"
        );
    }

    #[test]
    fn the_cycle_finder_finds_cycles() {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        g.entry("a".into()).or_default().insert("b".into());
        g.entry("b".into()).or_default().insert("c".into());
        g.entry("c".into()).or_default();
        assert_eq!(find_cycle(&g), None);
        g.entry("c".into()).or_default().insert("a".into());
        assert_eq!(
            find_cycle(&g),
            Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
        );
    }

    fn graphs_of(files: &[(&str, &str)]) -> BTreeMap<String, Graph> {
        let sources = files
            .iter()
            .map(|(p, s)| (p.to_string(), s.to_string()))
            .collect();
        sibling_graphs(&sources, &["src/lib.rs".to_string()])
    }

    fn edges(g: &Graph) -> Vec<String> {
        g.iter()
            .flat_map(|(a, bs)| bs.iter().map(move |b| format!("{a}->{b}")))
            .collect()
    }

    #[test]
    fn the_graph_builder_finds_a_planted_circle() {
        let files = [
            ("src/lib.rs", "mod p;\nmod q;\npub struct Root;\n"),
            (
                "src/p/mod.rs",
                "mod x;\nmod y;\npub struct S;\npub use self::x::T;\n",
            ),
            (
                "src/p/x.rs",
                "use super::y::{U, self as why};\npub struct T;\n",
            ),
            ("src/p/y.rs", "pub struct U;\nfn f(_: &super::S) {}\n"),
            ("src/q.rs", "fn g() { crate::p::S; }\n"),
        ];
        let g = graphs_of(&files);
        assert_eq!(edges(&g["src/p"]), ["mod->x", "x->y", "y->mod"]);
        assert_eq!(
            find_cycle(&g["src/p"]),
            Some(vec!["mod".into(), "x".into(), "y".into(), "mod".into()])
        );
        assert_eq!(edges(&g["src"]), ["q->p"]);
        assert_eq!(g["src"].keys().collect::<Vec<_>>(), ["lib", "p", "q"]);
        // Taking one edge out breaks the circle.
        let mut files = files;
        files[3] = ("src/p/y.rs", "pub struct U;\n");
        assert_eq!(find_cycle(&graphs_of(&files)["src/p"]), None);
    }

    #[test]
    fn the_graph_builder_reads_paths_as_rust_does() {
        let files = [
            (
                "src/lib.rs",
                "pub mod a;\nmod b;\nmod c;\npub use c::h;\n#[cfg(test)]\nmod t;\n",
            ),
            // A grandchild naming a sibling of its parent: an edge a -> b
            // in `src`, none inside `src/a`.
            ("src/a.rs", "mod deep;\n"),
            ("src/a/deep.rs", "fn f() { super::super::b::g(); }\n"),
            // Comments, strings, tests, visibility, other crates and a
            // parent's bare child names are no edges.
            (
                "src/b.rs",
                "// crate::c::x\nconst S: &str = \"crate::c::x\";\npub(in crate::c) fn g() {}\n\
                 use ::c::x;\nuse std::c;\n#[cfg(test)]\nmod tests { use crate::c::*; }\n",
            ),
            (
                "src/c.rs",
                "pub(crate) fn h() { self::h(); crate::a::f(); }\n",
            ),
            ("src/t.rs", "use crate::b::g;\n"),
        ];
        let g = graphs_of(&files);
        assert_eq!(edges(&g["src"]), ["a->b", "c->a"]);
        assert_eq!(edges(&g["src/a"]), Vec::<String>::new());
        assert!(!g["src"].contains_key("t"), "a test-only file is no node");
    }

    #[test]
    fn the_function_counter_counts_as_longfns_py() {
        let src = "// fn commented() {\n\
                   fn short() {\n    let s = \"}\";\n    let c = '}';\n}\n\
                   fn long<T>(x: T)\nwhere T: Copy {\n    /* { */\n    let r = r#\"{\"#;\n\n}\n\
                   trait X { fn decl(&self); }\n\
                   #[cfg(test)]\nmod tests {\n    fn in_tests() {\n\n\n\n\n\n}\n}\n";
        let all = long_functions_in(src, 0);
        let names: Vec<_> = all
            .iter()
            .map(|(n, at, lines)| (n.as_str(), *at, *lines))
            .collect();
        assert_eq!(names, [("short", 2, 4), ("long", 6, 6)]);
        assert_eq!(long_functions_in(src, 5), [("long".to_string(), 6, 6)]);
        assert!(long_functions_in(src, 6).is_empty());
        assert_eq!(
            blank("a // b\n\"c\\\"\" 'd' '\\u{41}' b\"x\""),
            "a     \n                   b   "
        );
    }
}
