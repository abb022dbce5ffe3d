//! Helpers shared by the end-to-end tests live in `e2e.rs`; this crate has no library code.
