//! A guest's failure in plain words: the meaning of a known trap (the same
//! words whatever the runtime), with the limit the sandbox refused on the
//! way, over wasmtime's own error (instances and programs alike).

use wasmtime::Trap;

/// The words of the known traps, every runtime's rows alike.
pub const STACK_OVERFLOW: &str = "stack overflow: call stack exhausted (unbounded recursion?)";
pub const DIVISION_BY_ZERO: &str = "integer divide by zero";
pub const OUT_OF_BOUNDS: &str = "out-of-bounds memory access";
pub const UNREACHABLE: &str = "wasm `unreachable` executed (the guest aborted)";

/// A guest failure as an error chain: the plain-words meaning of the trap and
/// any limit that was refused on the way, over wasmtime's own error.
pub fn guest_failure(error: wasmtime::Error, refused: Option<&str>) -> anyhow::Error {
    let words = plain_words(&error);
    let error = anyhow::Error::from(error);
    let words = match (words, refused) {
        (Some(words), Some(refused)) => Some(format!("{words}; {refused}")),
        (words, refused) => words.or(refused).map(str::to_string),
    };
    match words {
        Some(words) => error.context(words),
        None => error,
    }
}

/// What a trap means, in plain words, when it is one of the known traps.
fn plain_words(error: &wasmtime::Error) -> Option<&'static str> {
    Some(match error.downcast_ref::<Trap>()? {
        Trap::StackOverflow => STACK_OVERFLOW,
        Trap::IntegerDivisionByZero => DIVISION_BY_ZERO,
        Trap::MemoryOutOfBounds => OUT_OF_BOUNDS,
        Trap::UnreachableCodeReached => UNREACHABLE,
        _ => return None,
    })
}
