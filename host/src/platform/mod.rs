//! The platform stage: the measuring thread and the clock.
//!
//! - [`cpu`]: the cores the calling thread may use and the CPU's model;
//! - [`thread`]: pin the measuring thread to a core and raise its priority;
//! - [`affinity`]: the cores of a process the measuring thread starts;
//! - [`clock`]: the clock's resolution and the cost of reading it;
//! - [`gaps`]: what interrupts a core, as a thread spinning on it sees it;
//! - [`load`]: how busy each core is, and whether the machine is busy;
//! - [`valgrind`]: Valgrind's client requests (Callgrind's counts);
//! - [`pmu`]: whether hardware performance counters are there;
//! - [`pages`]: transparent huge pages (the kernel's mode, asking for them);
//! - [`memory`]: a process's peak resident memory;
//! - [`processes`]: a program on `$PATH`, and the processes a process
//!   started, ended whole.
//!
//! Nothing here knows of WebAssembly.

pub mod affinity;
pub mod clock;
pub mod cpu;
pub mod gaps;
pub mod git;
pub mod load;
pub mod memory;
pub mod pages;
pub mod pmu;
pub mod processes;
pub mod thread;
pub mod valgrind;
