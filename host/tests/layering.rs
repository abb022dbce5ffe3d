//! The host's modules import each other one way only: every stage imports
//! only the stages below it, and no file imports a file that imports it
//! (through any chain). Read from the sources as text, whole files: every
//! `crate::` path and every `super::` path (to a sibling file, or else to
//! the parent) outside comments and `#[cfg(test)]` items is an import.
//! The parent and the worker of a measurement import nothing of each
//! other. Test code, too, imports no later stage.

// The host's own sources, read with the plain readers clippy.toml forbids
// in the host: they are the repository's, not a user's.
#![allow(clippy::disallowed_methods)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The stages, lowest first: a stage may import only those before it.
const LAYERS: [&str; 10] = [
    "util",
    "cli",
    "options",
    "platform",
    "guest",
    "results",
    "analysis",
    "benchmark",
    "output",
    "command",
];

/// Every module of the library: its path (`guest::load`) and its source,
/// without comments and `#[cfg(test)]` items.
fn modules() -> BTreeMap<String, String> {
    sources(strip)
}

/// Every module with its test code, less comments only.
fn modules_with_tests() -> BTreeMap<String, String> {
    sources(|text| strip_comments(text).join("\n"))
}

/// Every module of the library by path, its source read through `read`.
fn sources(read: impl Fn(&str) -> String) -> BTreeMap<String, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = BTreeMap::new();
    let mut folders = vec![root.clone()];
    while let Some(folder) = folders.pop() {
        let entries = std::fs::read_dir(&folder).expect("the source folder is readable");
        for entry in entries.map(|e| e.expect("a folder entry")) {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let name = module_name(&root, &path);
                if name != "lib" && name != "main" {
                    let text = std::fs::read_to_string(&path).expect("a source file");
                    found.insert(name, read(&text));
                }
            }
        }
    }
    found
}

fn module_name(root: &Path, path: &Path) -> String {
    let relative: PathBuf = path
        .strip_prefix(root)
        .expect("under src")
        .with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts.join("::")
}

/// The code of a file, less comments and the items marked
/// `#[cfg(test)]`: the whole file else, what comes after a test module
/// included.
fn strip(text: &str) -> String {
    let lines = strip_comments(text);
    let mut code = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        if lines[at].trim() == "#[cfg(test)]" {
            at = after_item(&lines, at + 1);
        } else {
            code.push(lines[at]);
            at += 1;
        }
    }
    code.join("\n")
}

/// The lines of a file, each less its comment.
fn strip_comments(text: &str) -> Vec<&str> {
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect()
}

/// The line after the item that starts at line `at` (past its attributes):
/// after its `;` (`mod tests;`), or after the brace that closes its body.
fn after_item(lines: &[&str], mut at: usize) -> usize {
    while at < lines.len() && lines[at].trim_start().starts_with("#[") {
        at += 1;
    }
    let mut depth = 0usize;
    let mut opened = false;
    while at < lines.len() {
        for c in lines[at].chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        let line = lines[at].trim_end();
        at += 1;
        if (opened && depth == 0) || (!opened && line.ends_with(';')) {
            break;
        }
    }
    at
}

/// The modules a file's code names: through `crate::` paths (the longest
/// prefix of each path that is a module), through `super::` (a sibling
/// module, the child the parent hands the name on from, else the parent),
/// and through `use child::...` (a child module whose names it uses).
fn imports(
    module: &str,
    code: &str,
    known: &BTreeSet<String>,
    sources: &BTreeMap<String, String>,
) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    if let Some((parent, _)) = module.rsplit_once("::") {
        for (at, _) in code.match_indices("super::") {
            for name in names_after(&code[at + "super::".len()..]) {
                let sibling = format!("{parent}::{name}");
                let target = match known.contains(&sibling) {
                    true => sibling,
                    false => re_exported_from(parent, &name, known, sources)
                        .unwrap_or_else(|| parent.to_string()),
                };
                found.insert(target);
            }
        }
    }
    for line in code.lines() {
        // `pub use child::name;` only hands a name on: whoever takes it
        // takes it from the child (see `re_exported_from`).
        if let Some(rest) = line.trim_start().strip_prefix("use ") {
            let first: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let child = format!("{module}::{first}");
            if known.contains(&child) {
                found.insert(child);
            }
        }
    }
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        let path: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
        if let Some(module) = (1..=parts.len())
            .rev()
            .map(|n| parts[..n].join("::"))
            .find(|candidate| known.contains(candidate))
        {
            found.insert(module);
        }
    }
    found
}

/// The child of `parent` that `name` comes from, when `parent` only hands
/// it on (`pub use child::name;`, `pub use child::{a, name};`): a name
/// taken through a re-export is taken from the file that defines it.
fn re_exported_from(
    parent: &str,
    name: &str,
    known: &BTreeSet<String>,
    sources: &BTreeMap<String, String>,
) -> Option<String> {
    let code = sources.get(parent)?;
    code.lines().find_map(|line| {
        let line = line.trim_start();
        let rest = line
            .strip_prefix("pub use ")
            .or_else(|| line.strip_prefix("pub(crate) use "))
            .or_else(|| line.strip_prefix("use "))?;
        let (child, items) = rest.split_once("::")?;
        let child = format!("{parent}::{child}");
        let names = names_after(items.trim_end_matches(';'));
        (known.contains(&child) && names.iter().any(|n| n == name)).then_some(child)
    })
}

/// The first name of each path a `super::` leads to: `a` of `a::b`, `a`
/// and `c` of `{a, c::d}`.
fn names_after(rest: &str) -> Vec<String> {
    let first = |path: &str| -> String {
        path.trim()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    match rest.strip_prefix('{') {
        Some(group) => {
            let group = group.split('}').next().unwrap_or("");
            group.split(',').map(first).collect()
        }
        None => vec![first(rest)],
    }
}

fn stage(module: &str) -> usize {
    let top = module.split("::").next().unwrap_or(module);
    LAYERS
        .iter()
        .position(|l| *l == top)
        .unwrap_or_else(|| panic!("module `{module}` is in no stage: add its folder to LAYERS"))
}

#[test]
fn no_grouped_crate_imports() {
    // Grouped imports (`use crate::{a, b}`) would hide edges from this check.
    for (module, code) in modules() {
        assert!(
            !code.contains("crate::{"),
            "{module}: write `use crate::a::...;` once per path"
        );
    }
}

/// Each import of `modules` from a later stage, as `a imports b`.
fn against_the_flow(modules: &BTreeMap<String, String>) -> Vec<String> {
    let known: BTreeSet<String> = modules.keys().cloned().collect();
    let mut wrong = Vec::new();
    for (module, code) in modules {
        for imported in imports(module, code, &known, modules) {
            if stage(&imported) > stage(module) {
                wrong.push(format!("{module} imports {imported}"));
            }
        }
    }
    wrong
}

#[test]
fn stages_import_only_the_stages_below() {
    let wrong = against_the_flow(&modules());
    assert!(
        wrong.is_empty(),
        "imports against the flow:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn tests_too_import_only_the_stages_below_or_their_own() {
    // A test may use its own stage's files both ways (`super::*`), but a
    // test that reaches a later stage makes a cycle of stages all the same.
    let wrong = against_the_flow(&modules_with_tests());
    assert!(
        wrong.is_empty(),
        "test code against the flow:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_file_imports_a_file_that_imports_it() {
    let modules = modules();
    let known: BTreeSet<String> = modules.keys().cloned().collect();
    let edges: BTreeMap<&str, BTreeSet<String>> = modules
        .iter()
        .map(|(module, code)| {
            let mut to = imports(module, code, &known, &modules);
            to.remove(module);
            (module.as_str(), to)
        })
        .collect();
    // Depth-first search for a path back to the start, from every module.
    for start in edges.keys() {
        let mut stack: Vec<Vec<&str>> = vec![vec![start]];
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        while let Some(path) = stack.pop() {
            let last = *path.last().expect("a path is never empty");
            for next in edges.get(last).into_iter().flatten() {
                if next == start {
                    panic!("import cycle: {} -> {start}", path.join(" -> "));
                }
                if seen.insert(next.as_str()) {
                    let mut longer = path.clone();
                    longer.push(next.as_str());
                    stack.push(longer);
                }
            }
        }
    }
}

/// The two sides of a measurement own their halves: nothing under
/// `benchmark::parent` imports anything under `benchmark::worker`, nor the
/// reverse; what both need is in `benchmark::protocol` (or below).
#[test]
fn the_parent_and_the_worker_import_nothing_of_each_other() {
    let modules = modules();
    let known: BTreeSet<String> = modules.keys().cloned().collect();
    let side = |module: &str| -> Option<&'static str> {
        ["benchmark::parent", "benchmark::worker"]
            .into_iter()
            .find(|side| module == *side || module.starts_with(&format!("{side}::")))
    };
    let mut crossing = Vec::new();
    for (module, code) in &modules {
        let Some(from) = side(module) else { continue };
        for imported in imports(module, code, &known, &modules) {
            if side(&imported).is_some_and(|to| to != from) {
                crossing.push(format!("{module} imports {imported}"));
            }
        }
    }
    assert!(
        crossing.is_empty(),
        "the parent and the worker import each other:\n{}",
        crossing.join("\n")
    );
}

/// The parent checks each file once (its format, the runtime's support, its
/// contract) and hands the workers what it found; a worker calls none of
/// those checks again.
#[test]
fn a_worker_checks_no_file_again() {
    let checks = [
        "check_contract",
        "check_binary",
        "check_available",
        "load::load(",
        "load_bytes(",
    ];
    let mut again = Vec::new();
    for (module, code) in modules() {
        if !module.starts_with("benchmark::worker") {
            continue;
        }
        for check in checks.iter().filter(|c| code.contains(**c)) {
            again.push(format!("{module} calls {check}"));
        }
    }
    assert!(
        again.is_empty(),
        "a worker checks a file the parent checked:\n{}",
        again.join("\n")
    );
}
