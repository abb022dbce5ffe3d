//! A guest's failure under wasmtime in plain words: the meaning of a known
//! trap, with the limit the sandbox refused on the way, over wasmtime's own
//! error (instances and programs alike).

use wasmtime::Trap;

/// A guest failure as an error chain: the plain-words meaning of the trap and
/// any limit that was refused on the way, over wasmtime's own error.
pub fn guest_failure(error: wasmtime::Error, refused: Option<&str>) -> anyhow::Error {
    let words = plain_words(&error);
    let error = anyhow::Error::from(error);
    let words = match (words, refused) {
        (Some(words), Some(refused)) => Some(format!("{words}; {refused}")),
        (words, refused) => words.or(refused.map(str::to_string)),
    };
    match words {
        Some(words) => error.context(words),
        None => error,
    }
}

/// What a trap means, in plain words, when it is one of the known traps.
fn plain_words(error: &wasmtime::Error) -> Option<String> {
    Some(match error.downcast_ref::<Trap>()? {
        Trap::StackOverflow => {
            "stack overflow: call stack exhausted (unbounded recursion?)".to_string()
        }
        Trap::IntegerDivisionByZero => "integer divide by zero".to_string(),
        Trap::MemoryOutOfBounds => "out-of-bounds memory access".to_string(),
        Trap::UnreachableCodeReached => {
            "wasm `unreachable` executed (the guest aborted)".to_string()
        }
        _ => return None,
    })
}
