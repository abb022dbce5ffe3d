//! What a profile says: each wasm function's weight in the samples, self
//! (at the top of the stack) and total (anywhere on it), read from the
//! Firefox Profiler's processed-profile JSON that wasmtime's GuestProfiler
//! writes; and, between two profiles, the functions whose weight changed
//! most.

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::results::{Foreign, FunctionChange, FunctionWeight};

/// The part of a processed profile read here: its threads.
#[derive(Deserialize)]
struct Profile {
    threads: Vec<Thread>,
}

/// One thread's tables, each a column of indices into the next (a sample
/// names a stack, a stack its frame and the stack below it, a frame its
/// function, a function its name in the string table); `null` where the
/// profile has none.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Thread {
    samples: Samples,
    stack_table: StackTable,
    frame_table: FrameTable,
    func_table: FuncTable,
    /// The string table (`stringTable` in older profiles).
    #[serde(alias = "stringTable")]
    string_array: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Samples {
    stack: Vec<Option<usize>>,
    /// Each sample's weight; 1 each when absent.
    weight: Option<Vec<Option<f64>>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct StackTable {
    frame: Vec<Option<usize>>,
    prefix: Vec<Option<usize>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct FrameTable {
    func: Vec<Option<usize>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct FuncTable {
    name: Vec<Option<usize>>,
}

/// The weights summed over every thread, per function name.
#[derive(Default)]
struct Tally {
    names: Vec<String>,
    self_weight: Vec<f64>,
    total_weight: Vec<f64>,
    all: f64,
    samples: usize,
}

impl Tally {
    /// The index of `name`, added if new.
    fn slot(&mut self, name: String) -> usize {
        if let Some(s) = self.names.iter().position(|n| *n == name) {
            return s;
        }
        self.names.push(name);
        self.self_weight.push(0.0);
        self.total_weight.push(0.0);
        self.names.len() - 1
    }

    /// Every sample of `thread`: its weight to the function at the top of
    /// its stack (self) and, once each, to every function on it (total).
    fn add(&mut self, thread: &Thread) {
        let name_of = |func: usize| {
            (thread.func_table.name.get(func).copied().flatten())
                .and_then(|i| thread.string_array.get(i).cloned())
                .unwrap_or_else(|| format!("function {func}"))
        };
        let weights = thread.samples.weight.as_deref().unwrap_or_default();
        for (i, stack) in thread.samples.stack.iter().enumerate() {
            let weight = weights.get(i).copied().flatten().unwrap_or(1.0);
            self.samples += 1;
            self.all += weight;
            let mut seen: Vec<usize> = Vec::new();
            for (depth, func) in stack_functions(thread, *stack).into_iter().enumerate() {
                let index = self.slot(name_of(func));
                if depth == 0 {
                    self.self_weight[index] += weight;
                }
                if !seen.contains(&index) {
                    seen.push(index);
                    self.total_weight[index] += weight;
                }
            }
        }
    }

    /// The functions by self weight (then total), largest first.
    fn functions(self) -> Vec<FunctionWeight> {
        let pct = |w: f64| {
            if self.all > 0.0 {
                w / self.all * 100.0
            } else {
                0.0
            }
        };
        let mut functions: Vec<FunctionWeight> = (self.names.into_iter().enumerate())
            .map(|(i, name)| FunctionWeight {
                name: Foreign::new(name),
                self_pct: pct(self.self_weight[i]),
                total_pct: pct(self.total_weight[i]),
            })
            .collect();
        functions.sort_by(|a, b| {
            b.self_pct
                .total_cmp(&a.self_pct)
                .then(b.total_pct.total_cmp(&a.total_pct))
                .then(a.name.cmp(&b.name))
        });
        functions
    }
}

/// The functions on the stack `stack` of `thread`, top first: a stack is
/// at most as deep as the table is long, whatever its prefixes say.
fn stack_functions(thread: &Thread, stack: Option<usize>) -> Vec<usize> {
    let table = &thread.stack_table;
    let mut functions = Vec::new();
    let mut next = stack;
    for _ in 0..table.frame.len() {
        let Some(s) = next else { break };
        let frame = table.frame.get(s).copied().flatten();
        if let Some(func) = frame.and_then(|f| thread.frame_table.func.get(f).copied().flatten()) {
            functions.push(func);
        }
        next = table.prefix.get(s).copied().flatten();
    }
    functions
}

/// Samples, and the functions by self weight (then total), largest first.
pub fn weights(json: &[u8]) -> Result<(usize, Vec<FunctionWeight>)> {
    let profile: Profile =
        serde_json::from_slice(json).context("the profile is not a processed profile's JSON")?;
    let mut tally = Tally::default();
    for thread in &profile.threads {
        tally.add(thread);
    }
    Ok((tally.samples, tally.functions()))
}

/// Functions whose self weight differs between `reference` and `variant`,
/// from the largest gain (what got slower) to the largest loss.
pub fn changes(reference: &[FunctionWeight], variant: &[FunctionWeight]) -> Vec<FunctionChange> {
    let mut names: Vec<&Foreign> = reference.iter().map(|f| &f.name).collect();
    for f in variant {
        if !names.contains(&&f.name) {
            names.push(&f.name);
        }
    }
    let weight = |list: &[FunctionWeight], name: &Foreign| {
        list.iter()
            .find(|f| f.name == *name)
            .map_or(0.0, |f| f.self_pct)
    };
    let mut changed: Vec<FunctionChange> = names
        .into_iter()
        .map(|name| {
            let (before, after) = (weight(reference, name), weight(variant, name));
            FunctionChange {
                name: name.clone(),
                reference_self_pct: before,
                variant_self_pct: after,
                change_points: after - before,
            }
        })
        .filter(|c| c.change_points != 0.0)
        .collect();
    // What got slower first: the largest gain in weight, down to the
    // largest loss.
    changed.sort_by(|a, b| {
        b.change_points
            .total_cmp(&a.change_points)
            .then(a.name.cmp(&b.name))
    });
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three samples: main>work, main>work, main (weights 1).
    const PROFILE: &str = r#"{"meta": {}, "threads": [{
        "stringArray": ["main", "work"],
        "funcTable": {"length": 2, "name": [0, 1]},
        "frameTable": {"length": 2, "func": [0, 1]},
        "stackTable": {"length": 2, "frame": [0, 1], "prefix": [null, 0]},
        "samples": {"length": 3, "stack": [1, 1, 0], "weight": null}
    }]}"#;

    #[test]
    fn self_and_total_weights() {
        let (samples, functions) = weights(PROFILE.as_bytes()).expect("a profile");
        assert_eq!(samples, 3);
        assert_eq!(functions[0].name, "work");
        assert!((functions[0].self_pct - 200.0 / 3.0).abs() < 1e-9);
        assert!((functions[0].total_pct - 200.0 / 3.0).abs() < 1e-9);
        assert_eq!(functions[1].name, "main");
        assert!((functions[1].self_pct - 100.0 / 3.0).abs() < 1e-9);
        assert_eq!(functions[1].total_pct, 100.0);
        assert!(weights(b"[]").is_err());
    }

    /// Weights count as given, an older profile's `stringTable` names the
    /// functions, a function without a name is named by its index, and a
    /// stack whose prefixes loop ends at the table's length.
    #[test]
    fn weights_names_and_loops() {
        const OLDER: &str = r#"{"threads": [{
            "stringTable": ["main"],
            "funcTable": {"name": [0, null]},
            "frameTable": {"func": [0, 1]},
            "stackTable": {"frame": [0, 1], "prefix": [1, 0]},
            "samples": {"stack": [1, 0], "weight": [3, 1]}
        }]}"#;
        let (samples, functions) = weights(OLDER.as_bytes()).expect("a profile");
        assert_eq!(samples, 2);
        let names: Vec<&str> = functions.iter().map(|f| f.name.unescaped()).collect();
        assert_eq!(names, ["function 1", "main"]);
        assert!((functions[0].self_pct - 75.0).abs() < 1e-9);
        assert_eq!(
            (functions[0].total_pct, functions[1].total_pct),
            (100.0, 100.0)
        );
        assert!(weights(br#"{"threads": [{"stringArray": [7]}]}"#).is_err());
    }

    #[test]
    fn changes_are_ranked_by_size() {
        let weight = |name: &str, self_pct| FunctionWeight {
            name: name.into(),
            self_pct,
            total_pct: 100.0,
        };
        let before = [weight("a", 50.0), weight("b", 50.0)];
        let after = [weight("a", 20.0), weight("b", 45.0), weight("c", 35.0)];
        let c = changes(&before, &after);
        let names: Vec<&str> = c.iter().map(|c| c.name.unescaped()).collect();
        assert_eq!(names, ["c", "b", "a"]);
        assert_eq!(c[2].change_points, -30.0);
    }
}
