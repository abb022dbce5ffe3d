//! WASI preview 1 for runtimes other than wasmtime: one call of an import
//! of `wasi_snapshot_preview1`, by name, on the guest's memory as bytes,
//! answered by the very implementation wasmtime's programs get
//! (wasmtime-wasi's preview 1 context, built by
//! [`crate::guest::program::World::p1`]: the folder read-only, output
//! captured, nothing else granted). A runtime links each WASI import of a
//! program to a host function of its own that calls [`call`] with the
//! arguments widened to `i64`; `proc_exit` is answered here, as
//! [`Stop::Exit`].

use anyhow::anyhow;
use wasmtime_wasi::I32Exit;
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p1::wasi_snapshot_preview1 as p1;
use wasmtime_wasi::p1::wasi_snapshot_preview1::WasiSnapshotPreview1 as _;
use wiggle::GuestMemory;

/// The module name of WASI preview 1's imports.
pub const MODULE: &str = "wasi_snapshot_preview1";

/// The most bytes one call may copy between the guest and the host: what
/// a wasmtime store grants each host call by default.
const HOSTCALL_FUEL: usize = 128 << 20;

/// Why a WASI call did not return to the guest.
#[derive(Debug)]
pub enum Stop {
    /// `proc_exit` with this code.
    Exit(i32),
    /// A trap: a bad pointer, an import not in preview 1, or a wrong number
    /// of arguments.
    Trap(anyhow::Error),
}

/// An argument as the generated function takes it: the guest passed it as
/// an `i32` or an `i64`, widened to `i64` by the caller.
trait Arg {
    fn from_wide(value: i64) -> Self;
}

impl Arg for i32 {
    fn from_wide(value: i64) -> Self {
        value as i32
    }
}

impl Arg for i64 {
    fn from_wide(value: i64) -> Self {
        value
    }
}

fn arg<T: Arg>(args: &[i64], index: usize) -> T {
    T::from_wide(args.get(index).copied().unwrap_or(0))
}

/// The number of arguments each function takes, so that a guest that
/// declares an import with another signature is refused, not misread.
pub fn arity(name: &str) -> Option<usize> {
    Some(match name {
        "sched_yield" => 0,
        "fd_close" | "fd_datasync" | "fd_sync" | "proc_exit" | "proc_raise" => 1,
        "args_get"
        | "args_sizes_get"
        | "environ_get"
        | "environ_sizes_get"
        | "clock_res_get"
        | "fd_fdstat_get"
        | "fd_fdstat_set_flags"
        | "fd_filestat_get"
        | "fd_filestat_set_size"
        | "fd_prestat_get"
        | "fd_renumber"
        | "fd_tell"
        | "random_get"
        | "sock_shutdown" => 2,
        "clock_time_get"
        | "fd_allocate"
        | "fd_fdstat_set_rights"
        | "fd_prestat_dir_name"
        | "path_create_directory"
        | "path_remove_directory"
        | "path_unlink_file"
        | "sock_accept" => 3,
        "fd_advise"
        | "fd_filestat_set_times"
        | "fd_read"
        | "fd_seek"
        | "fd_write"
        | "poll_oneoff" => 4,
        "fd_pread" | "fd_pwrite" | "fd_readdir" | "path_filestat_get" | "path_symlink"
        | "sock_send" => 5,
        "path_readlink" | "path_rename" | "sock_recv" => 6,
        "path_filestat_set_times" | "path_link" => 7,
        "path_open" => 9,
        _ => return None,
    })
}

/// Call the generated function `$f` with the arguments at `$i`...; an
/// async one is driven to its end on wasmtime-wasi's runtime, as wasmtime's
/// own synchronous linker does.
macro_rules! dispatch {
    ($name:expr, $ctx:expr, $memory:expr, $args:expr;
     sync { $($s:ident ( $($si:literal)* )),* $(,)? }
     async { $($a:ident ( $($ai:literal)* )),* $(,)? }) => {
        match $name {
            $(stringify!($s) => p1::$s($ctx, $memory, $(arg($args, $si)),*),)*
            $(stringify!($a) => wasmtime_wasi::runtime::in_tokio(
                p1::$a($ctx, $memory, $(arg($args, $ai)),*)
            ),)*
            other => return Err(Stop::Trap(anyhow!(
                "`{MODULE}.{other}` is not a function of WASI preview 1"
            ))),
        }
    };
}

/// Answer the guest's call of `wasi_snapshot_preview1.<name>` with
/// `args`, on `memory` (all of the guest's linear memory): the errno it
/// returns, or why it stops.
pub fn call(ctx: &mut WasiP1Ctx, memory: &mut [u8], name: &str, args: &[i64]) -> Result<i32, Stop> {
    if arity(name) != Some(args.len()) {
        return Err(Stop::Trap(anyhow!(
            "`{MODULE}.{name}` called with {} arguments, not as WASI preview 1 declares it",
            args.len()
        )));
    }
    if name == "proc_exit" {
        return Err(Stop::Exit(args[0] as i32));
    }
    ctx.set_hostcall_fuel(HOSTCALL_FUEL);
    let memory = &mut GuestMemory::Unshared(memory);
    let answered = dispatch!(name, ctx, memory, args;
        sync {
            args_get(0 1), args_sizes_get(0 1), environ_get(0 1), environ_sizes_get(0 1),
            clock_res_get(0 1), clock_time_get(0 1 2), fd_allocate(0 1 2),
            fd_fdstat_set_flags(0 1), fd_fdstat_set_rights(0 1 2), fd_prestat_get(0 1),
            fd_prestat_dir_name(0 1 2), fd_tell(0 1), proc_raise(0), sched_yield(),
            random_get(0 1), sock_accept(0 1 2), sock_recv(0 1 2 3 4 5),
            sock_send(0 1 2 3 4), sock_shutdown(0 1),
        }
        async {
            fd_advise(0 1 2 3), fd_close(0), fd_datasync(0), fd_fdstat_get(0 1),
            fd_filestat_get(0 1), fd_filestat_set_size(0 1), fd_filestat_set_times(0 1 2 3),
            fd_read(0 1 2 3), fd_pread(0 1 2 3 4), fd_seek(0 1 2 3), fd_sync(0),
            fd_readdir(0 1 2 3 4), fd_write(0 1 2 3), fd_pwrite(0 1 2 3 4),
            poll_oneoff(0 1 2 3), path_create_directory(0 1 2), path_filestat_get(0 1 2 3 4),
            path_filestat_set_times(0 1 2 3 4 5 6), path_link(0 1 2 3 4 5 6),
            path_open(0 1 2 3 4 5 6 7 8), path_readlink(0 1 2 3 4 5),
            path_remove_directory(0 1 2), path_rename(0 1 2 3 4 5), path_symlink(0 1 2 3 4),
            path_unlink_file(0 1 2), fd_renumber(0 1),
        }
    );
    answered.map_err(|e| match e.downcast_ref::<I32Exit>() {
        Some(I32Exit(code)) => Stop::Exit(*code),
        None => Stop::Trap(anyhow::Error::from(e)),
    })
}

/// Refuse an import a program may not have: anything but a function of
/// WASI preview 1 with its own number of `params`, `bench.start` and
/// `bench.end`.
pub fn check_import(module: &str, name: &str, params: Option<usize>) -> anyhow::Result<()> {
    use crate::guest::contract::BENCH_MODULE;
    let fits = match module {
        MODULE => params.is_some() && arity(name) == params,
        BENCH_MODULE => matches!(name, "start" | "end") && params == Some(0),
        _ => false,
    };
    if !fits {
        anyhow::bail!(
            "imports `{module}.{name}`: a program may import functions of WASI preview 1 \
             (as it declares them), `bench.start` and `bench.end`, nothing else"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every function of WASI preview 1 (its witx), in order.
    const PREVIEW_1: [&str; 46] = [
        "args_get",
        "args_sizes_get",
        "environ_get",
        "environ_sizes_get",
        "clock_res_get",
        "clock_time_get",
        "fd_advise",
        "fd_allocate",
        "fd_close",
        "fd_datasync",
        "fd_fdstat_get",
        "fd_fdstat_set_flags",
        "fd_fdstat_set_rights",
        "fd_filestat_get",
        "fd_filestat_set_size",
        "fd_filestat_set_times",
        "fd_pread",
        "fd_prestat_get",
        "fd_prestat_dir_name",
        "fd_pwrite",
        "fd_read",
        "fd_readdir",
        "fd_renumber",
        "fd_seek",
        "fd_sync",
        "fd_tell",
        "fd_write",
        "path_create_directory",
        "path_filestat_get",
        "path_filestat_set_times",
        "path_link",
        "path_open",
        "path_readlink",
        "path_remove_directory",
        "path_rename",
        "path_symlink",
        "path_unlink_file",
        "poll_oneoff",
        "proc_exit",
        "proc_raise",
        "sched_yield",
        "random_get",
        "sock_accept",
        "sock_recv",
        "sock_send",
        "sock_shutdown",
    ];

    fn context() -> WasiP1Ctx {
        wasmtime_wasi::WasiCtxBuilder::new().build_p1()
    }

    /// The arity table and the calls agree: every function, called with as
    /// many arguments as the table says, reaches wasmtime-wasi (an errno, a
    /// trap of its own, or the exit), and one argument more is refused.
    #[test]
    fn every_function_is_called_with_its_arity() {
        let mut memory = vec![0u8; 1 << 16];
        for name in PREVIEW_1 {
            let arity = arity(name).unwrap_or_else(|| panic!("{name}: no arity"));
            let args = vec![0i64; arity];
            match call(&mut context(), &mut memory, name, &args) {
                Ok(_) | Err(Stop::Exit(_)) => {}
                Err(Stop::Trap(e)) => {
                    let words = format!("{e:#}");
                    assert!(
                        !words.contains("arguments") && !words.contains("not a function"),
                        "{name}: {words}"
                    );
                }
            }
            let more = vec![0i64; arity + 1];
            assert!(matches!(
                call(&mut context(), &mut memory, name, &more),
                Err(Stop::Trap(_))
            ));
        }
        assert!(arity("fd_fork").is_none());
    }

    /// A call does what preview 1 says on the bytes it is given: the clock
    /// is written where asked, an exit stops with its code, a bad pointer
    /// traps.
    #[test]
    fn calls_work_on_the_guest_memory() {
        let mut memory = vec![0u8; 64];
        let mut ctx = context();
        // clock_time_get(monotonic, precision 1, result at 8)
        assert_eq!(
            call(&mut ctx, &mut memory, "clock_time_get", &[1, 1, 8]).ok(),
            Some(0)
        );
        let mut time = [0u8; 8];
        time.copy_from_slice(&memory[8..16]);
        assert!(u64::from_le_bytes(time) > 0);
        assert!(matches!(
            call(&mut ctx, &mut memory, "proc_exit", &[7]),
            Err(Stop::Exit(7))
        ));
        assert!(matches!(
            call(&mut ctx, &mut memory, "clock_time_get", &[1, 1, 1 << 20]),
            Err(Stop::Trap(_))
        ));
        assert!(matches!(check_import(MODULE, "fd_write", Some(4)), Ok(())));
        assert!(check_import(MODULE, "fd_write", Some(3)).is_err());
        assert!(check_import("env", "abort", Some(0)).is_err());
        assert!(check_import("bench", "start", Some(0)).is_ok());
    }
}
