//! What the property tests of the readers feed them (tests only): bytes
//! that are arbitrary, a valid file with its bytes mutated, or a valid JSON
//! document with values replaced by hostile ones (the wrong type, numbers
//! at the edges, long or control-laden strings), and the case budget that
//! keeps each reader's test to a second or so.

use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{Value, json};

/// The cases of one reader's property test: enough to reach every branch
/// of a reader at least once in a typical run, few enough for `cargo test`.
pub fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

/// Arbitrary bytes, or `seed` with a few bytes changed, inserted, removed
/// or the rest cut.
pub fn bytes_like(seed: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..256),
        mutated(seed),
    ]
}

/// `seed` with one to eight edits at random places.
fn mutated(seed: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    let len = seed.len().max(1);
    proptest::collection::vec((0..len, any::<u8>(), 0u8..4), 1..8).prop_map(move |edits| {
        let mut bytes = seed.clone();
        for (at, byte, kind) in edits {
            let at = at.min(bytes.len());
            match kind {
                0 if at < bytes.len() => bytes[at] = byte,
                1 => bytes.insert(at, byte),
                2 => bytes.truncate(at),
                _ if at < bytes.len() => {
                    bytes.remove(at);
                }
                _ => {}
            }
        }
        bytes
    })
}

/// `seed` (a JSON document) with one to four of its values (any node, by
/// its place in a walk of the tree) replaced by a hostile one, serialised;
/// or its bytes mutated.
pub fn json_like(seed: &Value) -> impl Strategy<Value = Vec<u8>> {
    let bytes = serde_json::to_vec(seed).unwrap_or_default();
    let nodes = count(seed);
    let seed = seed.clone();
    let replaced =
        proptest::collection::vec((0..nodes, 0..HOSTILE_VALUES), 1..4).prop_map(move |edits| {
            let mut value = seed.clone();
            for (node, with) in edits {
                let mut at = node;
                replace(&mut value, &mut at, &hostile(with));
            }
            serde_json::to_vec(&value).unwrap_or_default()
        });
    prop_oneof![3 => replaced, 1 => bytes_like(bytes)]
}

/// How many hostile values [`hostile`] knows.
const HOSTILE_VALUES: usize = 14;

/// The hostile value `n`.
fn hostile(n: usize) -> Value {
    match n {
        0 => Value::Null,
        1 => json!(-1),
        2 => json!(0),
        3 => json!(u64::MAX),
        4 => json!(i64::MIN),
        5 => json!(1e308),
        6 => json!(-1e-310),
        7 => json!(""),
        8 => json!("\u{1b}]0;title\u{7}\n\r<script>=cmd|' /C calc'!A0"),
        9 => json!("x".repeat(10_000)),
        10 => json!([]),
        11 => json!({}),
        12 => json!(true),
        _ => json!([1e308, -1e308, 0.0, 5e-324]),
    }
}

/// The nodes of `value`, itself included.
fn count(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(count).sum(),
        Value::Object(fields) => fields.values().map(count).sum(),
        _ => 0,
    }
}

/// Replace the node `at` places into a walk of `value` by `with`.
fn replace(value: &mut Value, at: &mut usize, with: &Value) -> bool {
    if *at == 0 {
        *value = with.clone();
        return true;
    }
    *at -= 1;
    match value {
        Value::Array(items) => items.iter_mut().any(|item| replace(item, at, with)),
        Value::Object(fields) => fields.values_mut().any(|field| replace(field, at, with)),
        _ => false,
    }
}
