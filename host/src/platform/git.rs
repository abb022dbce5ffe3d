//! The git state of the folder the workloads live in: its commit, branch and
//! whether its work tree has changes, asked of `git` itself under a deadline
//! ([`DEADLINE`]: a hung `git`, a huge work tree or a missing `git` never
//! holds a run up). A folder outside any repository has none.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// How long one `git` call may take before it is killed.
pub const DEADLINE: Duration = Duration::from_secs(3);
/// The most bytes of `git` output read.
const MAX_OUTPUT: usize = 64 << 10;

/// A repository's state, as a kept run records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitState {
    /// The full commit id of HEAD.
    pub commit: String,
    /// The branch checked out; `None` on a detached HEAD.
    pub branch: Option<String>,
    /// Whether tracked files differ from HEAD, or untracked files exist.
    pub dirty: bool,
}

/// The state of the repository holding `folder`; `None` when it is in none,
/// or `git` is missing or too slow.
pub fn state(folder: &Path) -> Option<GitState> {
    let commit = git(folder, &["rev-parse", "--verify", "HEAD"])?;
    let commit = commit.trim();
    if commit.is_empty() || !commit.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let branch = git(folder, &["symbolic-ref", "--quiet", "--short", "HEAD"])
        .map(|b| b.trim().to_string())
        .filter(|b| !b.is_empty());
    let dirty = git(
        folder,
        &["status", "--porcelain", "--untracked-files=normal"],
    )
    .is_some_and(|s| !s.trim().is_empty());
    Some(GitState {
        commit: commit.to_string(),
        branch,
        dirty,
    })
}

/// What `git -C folder args` printed, when it succeeded within [`DEADLINE`].
fn git(folder: &Path, args: &[&str]) -> Option<String> {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(folder)
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut out = child.stdout.take()?;
    let reader =
        std::thread::spawn(move || crate::util::stream::read_head(&mut out, MAX_OUTPUT as u64));
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() < DEADLINE => {
                std::thread::sleep(Duration::from_millis(5));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    let bytes = reader.join().ok()?;
    status
        .success()
        .then(|| String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder outside any repository has no state; a fresh repository
    /// with one commit has it, and an untracked file makes it dirty.
    #[test]
    fn reads_a_repository_and_nothing_elsewhere() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(state(dir.path()), None);
        let run = |args: &[&str]| {
            Command::new("git")
                .arg("-C")
                .arg(dir.path())
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        if !run(&["init", "-q", "-b", "main"]) {
            return; // no git on this machine: nothing more to check
        }
        std::fs::write(dir.path().join("a"), "a").expect("writes");
        assert!(run(&["add", "a"]));
        assert!(run(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "-m",
            "a"
        ]));
        let clean = state(dir.path()).expect("a repository");
        assert_eq!(clean.commit.len(), 40);
        assert_eq!(clean.branch.as_deref(), Some("main"));
        assert!(!clean.dirty);
        std::fs::write(dir.path().join("b"), "b").expect("writes");
        assert!(state(dir.path()).is_some_and(|s| s.dirty));
    }
}
