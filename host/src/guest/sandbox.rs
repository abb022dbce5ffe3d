//! Keep a run safe from its workloads: a deadline on every guest call, a
//! watchdog, and Ctrl-C.
//!
//! One helper thread, kept off the measuring core, ticks the epoch of the
//! engine that compiles the *guarded* copy of every workload (compiled with
//! epoch checks): a guarded call that outlives `--timeout` traps. Guarded
//! copies run everything that may not return: set-up, warm-up and the pilot.
//! Samples are taken on a copy compiled without those checks (they cost up to
//! 10% of a tight loop), which only runs counts the guarded copy has already
//! returned from. Should it hang all the same (a workload whose behaviour
//! changes from call to call), the same thread acts as a watchdog: it reports
//! the workload and ends the run with the results finished so far.
//!
//! Ctrl-C asks the run to stop: guarded calls are interrupted at once,
//! sampling stops between calls, and the finished results are reported with a
//! distinct exit status. A second Ctrl-C ends the process at once.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use wasmtime::Engine;

use crate::util::exit::ExitStatus;

/// How often the epoch advances.
pub const TICK: Duration = Duration::from_millis(5);

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

/// What the watchdog reports if it has to end the run: set by the command
/// before measuring, called from the watchdog thread with a one-line reason.
pub type Emergency = Box<dyn Fn(&str) + Send + Sync>;

/// The deadline machinery shared by the measuring thread and the ticker.
pub struct Guard {
    engines: Mutex<Vec<Engine>>,
    timeout: Duration,
    /// Start of the unguarded call in progress, in ns since `origin`; 0 when
    /// none is.
    unguarded_since: AtomicU64,
    /// What the unguarded call in progress is, for the watchdog's message.
    unguarded_what: Mutex<String>,
    origin: Instant,
    stop: AtomicBool,
    emergency: OnceLock<Emergency>,
}

impl Guard {
    /// Start the ticker for `engine` (the guarded engine). The thread keeps
    /// off `measuring_core`.
    pub fn start(
        engine: Engine,
        timeout: Duration,
        measuring_core: Option<usize>,
    ) -> (Arc<Guard>, JoinHandle<()>) {
        let guard = Arc::new(Guard {
            engines: Mutex::new(vec![engine]),
            timeout,
            unguarded_since: AtomicU64::new(0),
            unguarded_what: Mutex::new(String::new()),
            origin: Instant::now(),
            stop: AtomicBool::new(false),
            emergency: OnceLock::new(),
        });
        let ticker = Arc::clone(&guard);
        let handle = std::thread::Builder::new()
            .name("guard".into())
            .spawn(move || {
                if let Some(core) = measuring_core {
                    crate::platform::thread::keep_off_core(core);
                }
                ticker.tick_until_stopped();
            })
            .unwrap_or_else(|e| panic!("cannot start the guard thread: {e}"));
        (guard, handle)
    }

    /// Tick `engine` too (another engine compiled with epoch checks).
    pub fn watch_engine(&self, engine: &Engine) {
        if let Ok(mut engines) = self.engines.lock() {
            engines.push(engine.clone());
        }
    }

    fn increment_epochs(&self, times: u64) {
        if let Ok(engines) = self.engines.lock() {
            for engine in engines.iter() {
                for _ in 0..times {
                    engine.increment_epoch();
                }
            }
        }
    }

    /// Epoch ticks a guarded call may last.
    pub fn deadline_ticks(&self) -> u64 {
        (self.timeout.as_nanos() / TICK.as_nanos()).max(1) as u64 + 1
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Set what the watchdog reports if it has to end the run.
    pub fn on_emergency(&self, emergency: Emergency) {
        let _ = self.emergency.set(emergency);
    }

    /// Mark the start of an unguarded call (outside the timed region).
    #[inline]
    pub fn unguarded_start(&self) {
        let now = self.origin.elapsed().as_nanos() as u64;
        self.unguarded_since.store(now.max(1), Ordering::Relaxed);
    }

    /// Mark its end.
    #[inline]
    pub fn unguarded_end(&self) {
        self.unguarded_since.store(0, Ordering::Relaxed);
    }

    /// Name what the following unguarded calls are, for the watchdog.
    pub fn describe_unguarded(&self, what: String) {
        if let Ok(mut current) = self.unguarded_what.lock() {
            *current = what;
        }
    }

    /// Stop the ticker.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    fn tick_until_stopped(&self) {
        let mut flushed = false;
        while !self.stop.load(Ordering::SeqCst) {
            std::thread::sleep(TICK);
            self.increment_epochs(1);
            if interrupted() && !flushed {
                // Expire every guarded call at once.
                self.increment_epochs(self.deadline_ticks());
                flushed = true;
            }
            let since = self.unguarded_since.load(Ordering::Relaxed);
            if since != 0 {
                let running = self
                    .origin
                    .elapsed()
                    .saturating_sub(Duration::from_nanos(since));
                if running > self.timeout {
                    let what = self
                        .unguarded_what
                        .lock()
                        .map(|w| w.clone())
                        .unwrap_or_default();
                    let reason = format!(
                        "{what}: a call did not return within --timeout {} although the same count had returned before; ending the run",
                        humantime::format_duration(self.timeout)
                    );
                    match self.emergency.get() {
                        Some(report) => report(&reason),
                        None => eprintln!("error: {reason}"),
                    }
                    ExitStatus::Watchdog.exit_now();
                }
            }
        }
    }
}
