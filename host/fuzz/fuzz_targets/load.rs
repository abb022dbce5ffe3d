//! Arbitrary bytes as a workload file: binary (`.wasm`) as they are, or, when
//! they look like text, converted with `wat` first as a `.wat` file would be.
//! Loads (detect, compile, check the contract) with the host's
//! default engines (Cranelift, opt-level speed, no cache) and never runs guest
//! code.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(text) = host_fuzz::looks_like_wat(data) {
        // Invalid text is the `.wat` reader's error, before any loading.
        if let Ok(bytes) = wat::parse_str(text) {
            host_fuzz::load(0, "fuzz.wat", &bytes);
        }
        return;
    }
    host_fuzz::load(0, "fuzz.wasm", data);
});
