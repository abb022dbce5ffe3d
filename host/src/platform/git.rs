//! The git state of the folder the workloads live in: its commit, branch and
//! whether its work tree has changes, asked of `git` under a deadline
//! ([`DEADLINE`]: a hung `git`, a huge work tree or a missing `git` never
//! holds a run up), with every setting through which a repository could make
//! `git` run a command forced off: a benchmark repository someone clones and
//! measures never executes anything through the host. A folder outside any
//! repository has none.
//!
//! Settings given on git's command line (here through `GIT_CONFIG_COUNT`,
//! which takes a name and a value apart, whatever they hold) win over every
//! configuration file: the repository's own, one it includes from elsewhere
//! (`[include]`, `[includeIf]`), one a `.git` file points to. What `git
//! rev-parse`, `symbolic-ref`, `config` and `status` could run, and what
//! turns it off:
//! - the file-system monitor hook (`core.fsmonitor`, run when the index is
//!   read): forced `false`;
//! - filter drivers (`filter.NAME.clean` and `.process`, run on a file's
//!   content when `status` hashes it; the attributes that name them cannot be
//!   turned off, the `.gitattributes` of the work tree are always read): every
//!   driver the configuration defines is listed first (`git config`, includes
//!   followed, as `status` reads them) and given empty commands; when the
//!   listing fails or is too long, `status` is not run and the tree is
//!   recorded dirty;
//! - hooks (`post-index-change`, in `.git/hooks` or `core.hooksPath`):
//!   `core.hooksPath=/dev/null`, and no index is written
//!   (`GIT_OPTIONAL_LOCKS=0`);
//! - a pager (`core.pager`, `pager.status`): `--no-pager` (and the output is
//!   a pipe);
//! - a fetch of missing objects from a promisor remote
//!   (`remote.NAME.uploadpack`, `core.sshCommand`, an `ext::` address):
//!   `GIT_NO_LAZY_FETCH=1` and `protocol.allow=never`;
//! - submodules (each a `git status` with its own configuration):
//!   `--ignore-submodules=dirty` (a submodule at another commit still counts;
//!   changes inside one do not);
//! - a bare repository planted in a work tree, found as the folder's
//!   repository: `safe.bareRepository=explicit`;
//! - the system's and the user's configuration files and the caller's
//!   environment (`GIT_DIR`, `GIT_CONFIG_PARAMETERS`, `GIT_PAGER`...): not
//!   passed on.
//!
//! No command run here prints a difference, so `diff.external` and
//! `textconv` drivers never apply. The tests build each trap, show that plain
//! `git` springs it, then that [`state`] records the commit and nothing ran.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// How long one `git` call may take before it is killed.
pub const DEADLINE: Duration = Duration::from_secs(3);
/// The most bytes of a commit id or a branch name read.
const MAX_NAME: u64 = 4 << 10;
/// The most bytes of the listing of filter drivers read: a longer one is not
/// trusted to be whole.
const MAX_DRIVERS: u64 = 256 << 10;
/// The most filter drivers turned off; a configuration with more is not
/// asked for its status.
const MAX_DRIVER_COUNT: usize = 256;

/// The settings every `git` call here is given, over any configuration.
const FORCED: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("protocol.allow", "never"),
    ("safe.bareRepository", "explicit"),
];

/// The environment every `git` call here runs in (nothing else is passed on
/// but `PATH` and `HOME`).
const ENVIRONMENT: &[(&str, &str)] = &[
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_ATTR_NOSYSTEM", "1"),
    ("GIT_OPTIONAL_LOCKS", "0"),
    ("GIT_NO_LAZY_FETCH", "1"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("LC_ALL", "C"),
];

/// A repository's state, as a kept run records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitState {
    /// The full commit id of HEAD.
    pub commit: String,
    /// The branch checked out; `None` on a detached HEAD.
    pub branch: Option<String>,
    /// Whether tracked files differ from HEAD, or untracked files exist; also
    /// when `git status` could not be asked safely or did not answer in time
    /// (clean is what `git` confirmed).
    pub dirty: bool,
}

/// The state of the repository holding `folder`; `None` when it is in none,
/// or `git` is missing or too slow.
pub fn state(folder: &Path) -> Option<GitState> {
    let commit = run(
        folder,
        &[],
        &["rev-parse", "--verify", "--quiet", "HEAD"],
        MAX_NAME,
    )?
    .text()?;
    if commit.is_empty() || !commit.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let branch = run(
        folder,
        &[],
        &["symbolic-ref", "--quiet", "--short", "HEAD"],
        MAX_NAME,
    )
    .and_then(|out| out.text())
    .filter(|b| !b.is_empty());
    Some(GitState {
        commit,
        branch,
        dirty: dirty(folder),
    })
}

/// Whether `git status` printed anything for `folder`, with every filter
/// driver turned off; `true` when it could not be asked so, failed or was
/// too slow. The first byte is enough: however many files changed, the
/// answer is never cut short into "clean".
fn dirty(folder: &Path) -> bool {
    let Some(drivers) = filter_drivers(folder) else {
        return true;
    };
    let off = drivers_off(&drivers);
    let args = [
        "status",
        "--porcelain",
        "--untracked-files=normal",
        "--ignore-submodules=dirty",
        "--no-renames",
    ];
    match run(folder, &off, &args, 1) {
        Some(out) => !out.bytes.is_empty() || !out.success,
        None => true,
    }
}

/// The names of the filter drivers the configuration of `folder`'s
/// repository defines (`filter.NAME.*`, includes followed); `None` when the
/// listing failed, was cut short or names too many.
fn filter_drivers(folder: &Path) -> Option<Vec<Vec<u8>>> {
    let args = ["config", "--name-only", "-z", "--get-regexp", r"^filter\."];
    let out = run(folder, &[], &args, MAX_DRIVERS + 1)?;
    // `git config --get-regexp` exits 1 when nothing matches.
    let none = out.code == Some(1) && out.bytes.is_empty();
    if !(out.success || none) || out.bytes.len() as u64 > MAX_DRIVERS {
        return None;
    }
    let mut names: Vec<Vec<u8>> = Vec::new();
    for key in out.bytes.split(|&b| b == 0).filter(|k| !k.is_empty()) {
        let rest = key.strip_prefix(b"filter.")?;
        // `filter.NAME.VARIABLE`, NAME may hold dots; `filter.VARIABLE`
        // names no driver.
        let Some(dot) = rest.iter().rposition(|&b| b == b'.') else {
            continue;
        };
        let name = rest[..dot].to_vec();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    (names.len() <= MAX_DRIVER_COUNT).then_some(names)
}

/// The settings that turn off each of `drivers`: no command to clean, smudge
/// or serve files, and none required.
fn drivers_off(drivers: &[Vec<u8>]) -> Vec<(OsString, OsString)> {
    let mut settings = Vec::new();
    for name in drivers {
        for (variable, value) in [
            ("clean", ""),
            ("smudge", ""),
            ("process", ""),
            ("required", "false"),
        ] {
            let mut key = b"filter.".to_vec();
            key.extend_from_slice(name);
            key.push(b'.');
            key.extend_from_slice(variable.as_bytes());
            settings.push((OsString::from_vec(key), OsString::from(value)));
        }
    }
    settings
}

/// What one `git` call gave.
struct Output {
    /// The first bytes it printed, up to the cap asked for.
    bytes: Vec<u8>,
    /// Whether it exited with status 0.
    success: bool,
    /// Its exit status, when it exited rather than being killed.
    code: Option<i32>,
}

impl Output {
    /// The trimmed text printed, when `git` succeeded.
    fn text(self) -> Option<String> {
        self.success
            .then(|| String::from_utf8_lossy(&self.bytes).trim().to_string())
    }
}

/// Runs `git --no-pager -C folder args` with [`FORCED`] and `extra`
/// settings in [`ENVIRONMENT`], reading at most `max` bytes of its output;
/// `None` when it could not start or was killed at [`DEADLINE`].
fn run(folder: &Path, extra: &[(OsString, OsString)], args: &[&str], max: u64) -> Option<Output> {
    let mut command = Command::new("git");
    command
        .arg("--no-pager")
        .arg("-C")
        .arg(folder)
        .args(args)
        .env_clear()
        .envs(ENVIRONMENT.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for name in ["PATH", "HOME"] {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    let settings = FORCED
        .iter()
        .map(|&(k, v)| (OsStr::new(k), OsStr::new(v)))
        .chain(extra.iter().map(|(k, v)| (k.as_os_str(), v.as_os_str())));
    let mut count = 0;
    for (i, (key, value)) in settings.enumerate() {
        command.env(format!("GIT_CONFIG_KEY_{i}"), key);
        command.env(format!("GIT_CONFIG_VALUE_{i}"), value);
        count = i + 1;
    }
    command.env("GIT_CONFIG_COUNT", count.to_string());
    let mut child = command.spawn().ok()?;
    let mut out = child.stdout.take()?;
    let reader = std::thread::spawn(move || crate::util::stream::read_head(&mut out, max));
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
    Some(Output {
        bytes,
        success: status.success(),
        code: status.code(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A repository with one commit of two files (`a`, `b`), in a temporary
    /// folder that also holds the trap's marker and anything "elsewhere".
    struct Repo {
        dir: tempfile::TempDir,
        work: PathBuf,
    }

    /// Plain `git` (no system or user configuration), as a user would run it.
    fn plain(folder: &Path, args: &[&str]) -> bool {
        Command::new("git")
            .arg("-C")
            .arg(folder)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args([
                "-c",
                "init.defaultBranch=main",
                "-c",
                "commit.gpgSign=false",
            ])
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    impl Repo {
        /// A fresh repository committed in `work/` (`git init ARGS`); `None`
        /// when this machine has no `git`.
        fn new(init: &[&str]) -> Option<Repo> {
            let dir = tempfile::tempdir().expect("temp dir");
            let work = dir.path().join("work");
            let mut args = vec!["init", "-q"];
            args.extend_from_slice(init);
            let work_arg = work.to_str().expect("a UTF-8 temp path");
            args.push(work_arg);
            if !plain(dir.path(), &args) {
                return None;
            }
            std::fs::write(work.join("a"), "a\n").expect("writes");
            std::fs::write(work.join("b"), "b\n").expect("writes");
            assert!(plain(&work, &["add", "a", "b"]));
            assert!(plain(&work, &["commit", "-q", "-m", "a"]));
            Some(Repo { dir, work })
        }

        /// The marker a trap's command creates.
        fn marker(&self) -> PathBuf {
            self.dir.path().join("marker")
        }

        /// A shell command creating the marker (and passing its input on,
        /// as a filter would).
        fn touch(&self) -> String {
            format!("touch '{}'; cat", self.marker().display())
        }

        /// Appends `text` to the configuration file `path`.
        fn configure(&self, path: &Path, text: &str) {
            use std::io::Write;
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .expect("opens the configuration");
            file.write_all(text.as_bytes()).expect("writes");
        }

        /// Moves the committed files' modification time a minute back, so
        /// that `git status` reads their content again.
        fn touch_files(&self) {
            for name in ["a", "b"] {
                let file = std::fs::File::options()
                    .write(true)
                    .open(self.work.join(name))
                    .expect("opens");
                let then = file.metadata().and_then(|m| m.modified()).expect("a time");
                file.set_modified(then - Duration::from_secs(60))
                    .expect("sets the time");
            }
        }

        /// Whether the trap sprang; the marker is removed.
        fn sprang(&self) -> bool {
            std::fs::remove_file(self.marker()).is_ok()
        }

        /// The trap is real (plain `git status` springs it) and [`state`]
        /// records the commit without springing it.
        fn assert_disarmed(&self) -> GitState {
            let _ = plain(&self.work, &["status"]);
            assert!(self.sprang(), "plain `git status` runs the trap");
            self.touch_files();
            let state = state(&self.work).expect("the commit is recorded");
            assert_eq!(state.commit.len(), 40);
            assert!(
                !self.sprang(),
                "the host's git ran the repository's command"
            );
            state
        }
    }

    /// A folder outside any repository has no state; a fresh repository
    /// with one commit has it, and an untracked file makes it dirty.
    #[test]
    fn reads_a_repository_and_nothing_elsewhere() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(state(dir.path()), None);
        let Some(repo) = Repo::new(&[]) else {
            return; // no git on this machine: nothing more to check
        };
        let clean = state(&repo.work).expect("a repository");
        assert_eq!(clean.commit.len(), 40);
        assert_eq!(clean.branch.as_deref(), Some("main"));
        assert!(!clean.dirty);
        std::fs::write(repo.work.join("c"), "c").expect("writes");
        assert!(state(&repo.work).is_some_and(|s| s.dirty));
    }

    /// More untracked files than any output cap is still dirty (a cut
    /// answer once read as clean).
    #[test]
    fn many_untracked_files_are_dirty() {
        let Some(repo) = Repo::new(&[]) else { return };
        let long = "x".repeat(200);
        for i in 0..2000 {
            std::fs::write(repo.work.join(format!("{long}{i}")), "").expect("writes");
        }
        assert!(state(&repo.work).expect("a repository").dirty);
    }

    /// `core.fsmonitor`: a hook run whenever the index is read.
    #[test]
    fn a_file_system_monitor_never_runs() {
        let Some(repo) = Repo::new(&[]) else { return };
        let config = repo.work.join(".git/config");
        repo.configure(
            &config,
            &format!("[core]\n\tfsmonitor = {}\n", repo.touch()),
        );
        repo.assert_disarmed();
    }

    /// Clean and long-running filter drivers named by `.gitattributes`
    /// (one under a name with a dot and capitals) never run; the tree they
    /// would have cleaned is still read as clean.
    #[test]
    fn filter_drivers_never_run() {
        let Some(repo) = Repo::new(&[]) else { return };
        std::fs::write(
            repo.work.join(".gitattributes"),
            "a filter=Evil.x\nb filter=y\n",
        )
        .expect("writes");
        assert!(plain(&repo.work, &["add", ".gitattributes"]));
        assert!(plain(&repo.work, &["commit", "-q", "-m", "attributes"]));
        let config = repo.work.join(".git/config");
        let touch = repo.touch();
        let text = format!(
            "[filter \"Evil.x\"]\n\tclean = {touch}\n\trequired = true\n\
             [filter \"y\"]\n\tprocess = {touch}\n"
        );
        repo.configure(&config, &text);
        repo.touch_files();
        assert!(!repo.assert_disarmed().dirty);
    }

    /// Settings included from files elsewhere (`[include]`, `[includeIf]`)
    /// are overridden as the repository's own are.
    #[test]
    fn included_settings_never_run() {
        let Some(repo) = Repo::new(&[]) else { return };
        std::fs::write(repo.work.join(".gitattributes"), "* filter=x\n").expect("writes");
        let monitor = repo.dir.path().join("monitor.cfg");
        let filter = repo.dir.path().join("filter.cfg");
        let touch = repo.touch();
        repo.configure(&monitor, &format!("[core]\n\tfsmonitor = {touch}\n"));
        repo.configure(&filter, &format!("[filter \"x\"]\n\tclean = {touch}\n"));
        let config = repo.work.join(".git/config");
        let text = format!(
            "[include]\n\tpath = {}\n[includeIf \"gitdir:/\"]\n\tpath = {}\n",
            monitor.display(),
            filter.display()
        );
        repo.configure(&config, &text);
        repo.assert_disarmed();
        // The filter alone, through the include, is a trap of its own.
        std::fs::write(&monitor, "").expect("writes");
        repo.touch_files();
        repo.assert_disarmed();
    }

    /// A `.git` file pointing at a repository elsewhere: its commit is read,
    /// its configuration runs nothing.
    #[test]
    fn a_git_file_pointing_elsewhere_runs_nothing() {
        let Some(probe) = Repo::new(&[]) else { return };
        let elsewhere = probe.dir.path().join("elsewhere.git");
        let elsewhere = elsewhere.to_str().expect("a UTF-8 temp path");
        let repo = Repo::new(&["--separate-git-dir", elsewhere]).expect("git");
        assert!(repo.work.join(".git").is_file());
        std::fs::write(repo.work.join(".gitattributes"), "* filter=x\n").expect("writes");
        let touch = repo.touch();
        let text = format!("[core]\n\tfsmonitor = {touch}\n[filter \"x\"]\n\tclean = {touch}\n");
        repo.configure(&Path::new(elsewhere).join("config"), &text);
        let state = repo.assert_disarmed();
        assert_eq!(state.branch.as_deref(), Some("main"));
    }

    /// Hooks (`post-index-change`, run when `status` writes the index), in
    /// `.git/hooks` and in a `core.hooksPath` elsewhere.
    #[test]
    fn hooks_never_run() {
        use std::os::unix::fs::PermissionsExt;
        for elsewhere in [false, true] {
            let Some(repo) = Repo::new(&[]) else { return };
            let hooks = match elsewhere {
                false => repo.work.join(".git/hooks"),
                true => repo.dir.path().join("hooks"),
            };
            std::fs::create_dir_all(&hooks).expect("creates");
            let hook = hooks.join("post-index-change");
            let script = format!("#!/bin/sh\ntouch '{}'\n", repo.marker().display());
            std::fs::write(&hook, script).expect("writes");
            std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755))
                .expect("makes it runnable");
            if elsewhere {
                let config = repo.work.join(".git/config");
                let text = format!("[core]\n\thooksPath = {}\n", hooks.display());
                repo.configure(&config, &text);
            }
            repo.touch_files();
            repo.assert_disarmed();
        }
    }

    /// A pager (`core.pager`, `pager.status`) runs only on a terminal, which
    /// the host's `git` never has; `script` gives plain `git` one to show the
    /// trap is real.
    #[test]
    fn a_pager_never_runs() {
        let Some(repo) = Repo::new(&[]) else { return };
        let config = repo.work.join(".git/config");
        let touch = repo.touch();
        let text = format!("[core]\n\tpager = {touch}\n[pager]\n\tstatus = {touch}\n");
        repo.configure(&config, &text);
        let on_a_terminal = Command::new("script")
            .args(["-qc", "git status", "/dev/null"])
            .current_dir(&repo.work)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if on_a_terminal {
            assert!(repo.sprang(), "plain `git status` on a terminal pages");
        }
        assert!(state(&repo.work).is_some());
        assert!(!repo.sprang(), "the host's git ran the pager");
    }

    /// A promisor remote whose missing objects `git` would fetch by running
    /// `remote.origin.uploadpack`.
    #[test]
    fn missing_objects_are_never_fetched() {
        let Some(repo) = Repo::new(&[]) else { return };
        let tree = Command::new("git")
            .arg("-C")
            .arg(&repo.work)
            .args(["rev-parse", "HEAD^{tree}"])
            .output()
            .expect("git runs");
        let tree = String::from_utf8(tree.stdout).expect("hex");
        let tree = tree.trim();
        let object = repo
            .work
            .join(".git/objects")
            .join(&tree[..2])
            .join(&tree[2..]);
        std::fs::remove_file(object).expect("removes the tree");
        let config = repo.work.join(".git/config");
        let nowhere = repo.dir.path().join("nowhere");
        let text = format!(
            "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tpartialClone = origin\n\
             [remote \"origin\"]\n\turl = {}\n\tpromisor = true\n\tuploadpack = {}\n",
            nowhere.display(),
            repo.touch()
        );
        repo.configure(&config, &text);
        let state = repo.assert_disarmed();
        assert!(state.dirty, "a tree that cannot be read is not clean");
    }

    /// A bare repository planted as the folder (its `core.worktree` makes
    /// `git status` read its index, with its monitor) is not used at all.
    #[test]
    fn a_planted_bare_repository_is_not_used() {
        let Some(repo) = Repo::new(&[]) else { return };
        let bare = repo.dir.path().join("planted");
        let bare_arg = bare.to_str().expect("a UTF-8 temp path");
        assert!(plain(repo.dir.path(), &["init", "-q", "--bare", bare_arg]));
        let text = format!(
            "[core]\n\tbare = false\n\tworktree = {}\n\tfsmonitor = {}\n",
            repo.work.display(),
            repo.touch()
        );
        repo.configure(&bare.join("config"), &text);
        let _ = plain(&bare, &["status"]);
        assert!(
            repo.sprang(),
            "plain `git status` uses the planted repository"
        );
        assert_eq!(state(&bare), None);
        assert!(
            !repo.sprang(),
            "the host's git ran the planted repository's monitor"
        );
    }
}
