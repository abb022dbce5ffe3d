//! Property test of reading a `.suite` file: arbitrary bytes, and a suite
//! with mutated bytes, give the paths it lists (at least one, none a
//! comment or blank) or an error, never a panic.

use proptest::prelude::*;

use super::*;
use crate::util::fuzz::{bytes_like, config};

const SUITE: &str = "# the bundled workloads\nxor.wasm\n  sub/fib.wasm  \n\n# done\nmod13.wat\n";

proptest! {
    #![proptest_config(config(200))]

    #[test]
    fn a_suite_read_is_its_entries_or_an_error(bytes in bytes_like(SUITE.as_bytes().to_vec())) {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("all.suite");
        std::fs::write(&path, &bytes).expect("written");
        if let Ok(entries) = suite_entries(&path) {
            prop_assert!(!entries.is_empty());
            let text = String::from_utf8(bytes).expect("a suite read is UTF-8");
            let listed = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .count();
            prop_assert_eq!(entries.len(), listed);
        }
    }
}
