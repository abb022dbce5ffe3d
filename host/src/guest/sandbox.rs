//! Ctrl-C: the first press asks the run to stop, the second ends the process.
//!
//! The rest of the sandbox lives elsewhere: each store's memory and table
//! limits in [`crate::guest::limits`]; the deadline of a guest call and the
//! containment of a guest that crashes its process in the supervisor
//! ([`crate::benchmark::supervisor`]), which measures in worker processes and
//! kills one that outlives `--timeout`, so that no check is compiled into the
//! code that is timed.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::util::exit::ExitStatus;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether Ctrl-C asked the run to stop.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Install the Ctrl-C handler: the first press asks the run to stop, the
/// second ends the process.
pub fn install_ctrl_c() {
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            ExitStatus::Interrupted.exit_now();
        }
        eprintln!("\ninterrupted: finishing up (press Ctrl-C again to quit at once)");
    });
}
