//! The platform stage: the measuring thread and the clock.
//!
//! - [`thread`]: pin the measuring thread to a core and raise its priority,
//!   and keep helper threads off that core;
//! - [`clock`]: the clock's resolution and the cost of reading it.
//!
//! Nothing here knows of WebAssembly.

pub mod clock;
pub mod thread;
