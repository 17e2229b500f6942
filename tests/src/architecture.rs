//! The architecture, checked: inside every crate, modules depend on each
//! other one way (no import cycle between a crate's top-level modules), and
//! no source file grows past 600 lines unless `ARCHITECTURE.md` says why.
//! Offline: reads the sources, needs no cluster.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Crates whose module graph is checked.
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

/// Source without comments and without `#[cfg(test)]` items that come
/// last in a file (the house style puts unit tests at the end).
fn code_of(src: &str) -> String {
    let src = match src.find("#[cfg(test)]") {
        Some(i) => &src[..i],
        None => src,
    };
    src.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level module a file of `src` belongs to (`""` for the root).
fn top_module(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap_or(file);
    let first = rel
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .unwrap_or_default();
    let name = first.trim_end_matches(".rs").to_string();
    if matches!(name.as_str(), "lib" | "main") {
        String::new()
    } else {
        name
    }
}

/// Files declared `#[cfg(test)] mod x;`: test code, not part of the graph.
fn test_only_files(files: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    for f in files {
        let Ok(src) = std::fs::read_to_string(f) else {
            continue;
        };
        let dir = match f.file_name().and_then(|n| n.to_str()) {
            Some("mod.rs" | "lib.rs" | "main.rs") => f.parent().map(Path::to_path_buf),
            _ => f.with_extension("").into(),
        };
        let Some(dir) = dir else { continue };
        let lines: Vec<&str> = src.lines().map(str::trim).collect();
        for w in lines.windows(2) {
            if w[0] == "#[cfg(test)]" {
                if let Some(name) = w[1].strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
                    out.insert(dir.join(format!("{name}.rs")));
                    out.insert(dir.join(name).join("mod.rs"));
                }
            }
        }
    }
    out
}

/// Top-level module -> the top-level modules of the same crate it uses.
pub fn module_graph(krate: &str) -> BTreeMap<String, BTreeSet<String>> {
    let src = workspace().join(krate).join("src");
    let mut files = vec![];
    rust_files(&src, &mut files);
    let tests = test_only_files(&files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        if tests.contains(f) {
            continue;
        }
        let from = top_module(&src, f);
        let code = code_of(&std::fs::read_to_string(f).unwrap_or_default());
        let deps = graph.entry(from.clone()).or_default();
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let is_module = rest[name.len()..].starts_with("::")
                || rest[name.len()..].starts_with(';')
                || rest[name.len()..].starts_with(',');
            if !name.is_empty() && name != from && is_module && !from.is_empty() {
                deps.insert(name);
            }
        }
    }
    // Only edges to real modules (crate::SOME_CONST is an item of the root).
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for deps in graph.values_mut() {
        deps.retain(|d| modules.contains(d));
    }
    graph
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
                let rel = f.strip_prefix(&root).unwrap_or(&f);
                out.push((rel.to_string_lossy().to_string(), n));
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
    fn modules_depend_one_way() {
        for krate in CRATES {
            let g = module_graph(krate);
            assert!(
                !g.is_empty() || *krate == "tessera",
                "{krate}: no modules found"
            );
            assert_eq!(find_cycle(&g), None, "{krate}: import cycle; graph {g:?}");
        }
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
}
