//! The processes a process starts: the program `$PATH` names
//! ([`on_path`]), and those it started, found in `/proc` and ended whole,
//! so that a runtime's process (`node`) that is killed leaves nothing
//! behind.

use std::path::PathBuf;
use std::time::Duration;

/// The file `name` in the first folder of `$PATH` that holds it, if any.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|folder| folder.join(name))
        .find(|candidate| candidate.is_file())
}

/// Kill process `pid` and every process it started that is still its
/// descendant: found before any is killed, since an orphan's parent
/// changes.
pub fn end_tree(pid: u32) {
    let mut doomed = descendants(pid);
    doomed.push(pid);
    doomed.into_iter().for_each(kill);
}

/// Kill every process below this one: the runtime processes it started,
/// and what they started.
pub fn end_children() {
    descendants(std::process::id()).into_iter().for_each(kill);
}

/// The processes below `root` in the process tree, read from `/proc`.
fn descendants(root: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let parents: Vec<(u32, u32)> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| Some((pid, parent_of(pid)?)))
        .collect();
    let mut found = vec![root];
    let mut at = 0;
    while at < found.len() {
        let parent = found[at];
        found.extend(
            parents
                .iter()
                .filter(|(_, p)| *p == parent)
                .map(|(pid, _)| *pid),
        );
        at += 1;
    }
    found.remove(0);
    found
}

/// The parent of process `pid`: the fourth field of its `stat`, after the
/// command's name in parentheses (which may hold anything).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = crate::util::fs::read_system_text(format!("/proc/{pid}/stat"))?;
    let (_, after) = stat.rsplit_once(')')?;
    after.split_whitespace().nth(1)?.parse().ok()
}

/// Do `work`, calling `end` (which kills what `work` waits on, so that it
/// returns) if it has not returned within `deadline`: what `work`
/// returned, and whether it was late.
pub fn within<T>(
    deadline: Duration,
    end: impl FnOnce() + Send + 'static,
    work: impl FnOnce() -> T,
) -> (T, bool) {
    let (done, stop) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        let late = matches!(
            stop.recv_timeout(deadline),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout)
        );
        if late {
            end();
        }
        late
    });
    let result = work();
    let _ = done.send(());
    (result, watchdog.join().unwrap_or(false))
}

/// SIGKILL to process `pid`.
fn kill(pid: u32) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill has no memory preconditions.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

#[cfg(test)]
mod tests {
    use std::process::Command;
    use std::time::Instant;

    use super::*;

    #[test]
    fn a_process_tree_is_ended_whole() {
        let mut shell = Command::new("sh")
            .args(["-c", "sleep 1000 & sleep 1000; true"])
            .spawn()
            .expect("sh starts");
        let since = Instant::now();
        let mut below = descendants(shell.id());
        while below.len() < 2 && since.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
            below = descendants(shell.id());
        }
        assert_eq!(below.len(), 2, "{below:?}");
        end_tree(shell.id());
        let _ = shell.wait();
        for pid in below {
            let since = Instant::now();
            while alive(pid) && since.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(10));
            }
            assert!(!alive(pid), "{pid} outlived its tree");
        }
    }

    /// Whether `pid` runs (a zombie does not).
    fn alive(pid: u32) -> bool {
        crate::util::fs::read_system_text(format!("/proc/{pid}/stat"))
            .and_then(|s| Some(s.rsplit_once(')')?.1.split_whitespace().next()? != "Z"))
            .unwrap_or(false)
    }
}
