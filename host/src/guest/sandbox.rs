//! Ctrl-C, SIGTERM and SIGHUP (what `timeout`, CI runners and a closed
//! terminal send): the first asks the run to stop, the second ends the
//! process.
//!
//! The rest of the sandbox lives elsewhere: each store's memory and table
//! limits in [`crate::guest::limits`]; the deadline of a guest call and the
//! containment of a guest that crashes its process in the supervisor
//! ([`crate::benchmark::parent::supervisor`]), which measures in worker processes and
//! kills one that outlives `--timeout`, so that no check is compiled into the
//! code that is timed.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::util::exit::ExitStatus;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Why a run stopped early after [`interrupted`]: one handler takes the
/// three signals and cannot tell which came.
pub const STOPPED: &str = "interrupted (Ctrl-C, SIGTERM or SIGHUP)";

/// Whether Ctrl-C, SIGTERM or SIGHUP asked the run to stop.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Install the handler of Ctrl-C, SIGTERM and SIGHUP: the first asks the
/// run to stop, the second ends the process.
pub fn install_signal_handler() {
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            ExitStatus::Interrupted.exit_now();
        }
        eprintln!("\ninterrupted: finishing up (Ctrl-C or another signal quits at once)");
    });
}
