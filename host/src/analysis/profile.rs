//! What a profile says: each wasm function's weight in the samples, self
//! (at the top of the stack) and total (anywhere on it), read from the
//! Firefox Profiler's processed-profile JSON that wasmtime's GuestProfiler
//! writes; and, between two profiles, the functions whose weight changed
//! most.

use anyhow::{Context, Result};
use serde_json::Value;

use crate::results::{Foreign, FunctionChange, FunctionWeight};

/// Samples, and the functions by self weight (then total), largest first.
pub fn weights(json: &[u8]) -> Result<(usize, Vec<FunctionWeight>)> {
    let profile: Value = serde_json::from_slice(json).context("the profile is not JSON")?;
    let threads = profile["threads"]
        .as_array()
        .context("the profile has no threads")?;
    let mut names: Vec<String> = Vec::new();
    let mut self_weight: Vec<f64> = Vec::new();
    let mut total_weight: Vec<f64> = Vec::new();
    let mut all = 0.0;
    let mut samples = 0;
    for thread in threads {
        let strings = strings(thread);
        let column = |table: &str, key: &str| -> Vec<Option<usize>> {
            thread[table][key]
                .as_array()
                .map(|a| a.iter().map(|v| v.as_u64().map(|x| x as usize)).collect())
                .unwrap_or_default()
        };
        let stack_frame = column("stackTable", "frame");
        let stack_prefix = column("stackTable", "prefix");
        let frame_func = column("frameTable", "func");
        let func_name = column("funcTable", "name");
        let stacks = column("samples", "stack");
        let weights: Vec<f64> = thread["samples"]["weight"]
            .as_array()
            .map(|a| a.iter().map(|v| v.as_f64().unwrap_or(1.0)).collect())
            .unwrap_or_default();
        // This thread's function index -> index in `names`.
        let mut func_slot: Vec<Option<usize>> = vec![None; func_name.len()];
        let mut slot = |func: usize, names: &mut Vec<String>| -> Option<usize> {
            if let Some(s) = *func_slot.get(func)? {
                return Some(s);
            }
            let name = func_name
                .get(func)
                .copied()
                .flatten()
                .and_then(|i| strings.get(i).cloned())
                .unwrap_or_else(|| format!("function {func}"));
            let s = match names.iter().position(|n| *n == name) {
                Some(s) => s,
                None => {
                    names.push(name);
                    names.len() - 1
                }
            };
            func_slot[func] = Some(s);
            Some(s)
        };
        for (i, stack) in stacks.iter().enumerate() {
            let weight = weights.get(i).copied().unwrap_or(1.0);
            samples += 1;
            all += weight;
            let mut seen: Vec<usize> = Vec::new();
            let mut next = *stack;
            let mut leaf = true;
            // A stack is at most as deep as the table is long.
            for _ in 0..stack_frame.len() {
                let Some(s) = next else { break };
                let func = stack_frame
                    .get(s)
                    .copied()
                    .flatten()
                    .and_then(|f| frame_func.get(f).copied().flatten());
                if let Some(func) = func
                    && let Some(index) = slot(func, &mut names)
                {
                    self_weight.resize(names.len(), 0.0);
                    total_weight.resize(names.len(), 0.0);
                    if leaf {
                        self_weight[index] += weight;
                    }
                    if !seen.contains(&index) {
                        seen.push(index);
                        total_weight[index] += weight;
                    }
                    leaf = false;
                }
                next = stack_prefix.get(s).copied().flatten();
            }
        }
    }
    let pct = |w: f64| if all > 0.0 { w / all * 100.0 } else { 0.0 };
    let mut functions: Vec<FunctionWeight> = names
        .into_iter()
        .enumerate()
        .map(|(i, name)| FunctionWeight {
            name: Foreign::new(name),
            self_pct: pct(self_weight[i]),
            total_pct: pct(total_weight[i]),
        })
        .collect();
    functions.sort_by(|a, b| {
        b.self_pct
            .total_cmp(&a.self_pct)
            .then(b.total_pct.total_cmp(&a.total_pct))
            .then(a.name.cmp(&b.name))
    });
    Ok((samples, functions))
}

/// The thread's string table (older profiles keep it in `shared`).
fn strings(thread: &Value) -> Vec<String> {
    let array = thread["stringArray"]
        .as_array()
        .or_else(|| thread["stringTable"].as_array());
    array
        .map(|a| {
            a.iter()
                .map(|s| s.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
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
