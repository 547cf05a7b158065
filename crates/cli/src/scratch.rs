//! Private temporary directories that no killed run leaves behind for good.
//!
//! A directory is removed when its [`tempfile::TempDir`] is dropped, which a process
//! killed with SIGKILL (a sweep's `kill -9`, the out-of-memory killer, a Slurm task out of
//! time) never does. So each directory is named after the process that made it,
//! `<prefix><pid>.<start>-XXXXXX` in the system's temporary directory, `<start>` being
//! the process's start time (field 22 of `/proc/<pid>/stat`, clock ticks since boot),
//! and making one first removes the directories of that prefix whose process no longer
//! exists on this host and that belong to the same user. A live process's directory is
//! never touched; a pid reused since its owner died belongs to a process that started
//! later, so the owner's directory goes. (Where `/proc` cannot tell the start time the
//! name is `<prefix><pid>-XXXXXX`, and such a directory stays while its pid is in use.)

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use anyhow::{Context, Result};
use tempfile::TempDir;

/// Makes a directory only this user can enter, `<prefix><pid>-XXXXXX`, after removing
/// the directories of `prefix` left by processes that no longer exist.
pub fn private_dir(prefix: &str) -> Result<TempDir> {
    let pid = std::process::id();
    let owner = match process_start(pid) {
        Some(start) => format!("{pid}.{start}"),
        None => pid.to_string(),
    };
    let dir = tempfile::Builder::new()
        .prefix(&format!("{prefix}{owner}-"))
        .tempdir()?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))
        .context("making the temporary directory private")?;
    if let Some(parent) = dir.path().parent() {
        remove_left_behind(parent, prefix, dir.path());
    }
    Ok(dir)
}

/// Whether process `pid` exists on this host and has not exited. A zombie (state `Z`
/// in `/proc/<pid>/stat`) has exited: a killed sweep's runs stay zombies for good where
/// the init process does not reap orphans (some containers), and their directories
/// must still go.
pub fn pid_alive(pid: u32) -> bool {
    match stat_fields(pid) {
        Some(fields) => fields
            .first()
            .is_none_or(|state| state != "Z" && state != "X"),
        None => Path::new(&format!("/proc/{pid}")).exists(),
    }
}

/// The fields of `/proc/<pid>/stat` after the command name, which is in parentheses and
/// may hold spaces or parentheses itself: the state first (field 3).
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

/// When process `pid` started (field 22 of `/proc/<pid>/stat`, clock ticks since boot),
/// if `/proc` tells. With the pid, it names one process for as long as the host runs.
pub fn process_start(pid: u32) -> Option<u64> {
    stat_fields(pid)?.get(22 - 3)?.parse().ok()
}

/// Whether the process that made a directory named `<pid>.<start>` (or `<pid>`, `start`
/// unknown) still runs: `pid` is alive and, where both start times are known, started
/// when the owner did (a pid reused by a later process is not the owner).
fn owner_alive(pid: u32, start: Option<u64>) -> bool {
    pid_alive(pid)
        && match (start, process_start(pid)) {
            (Some(owner), Some(now)) => owner == now,
            _ => true,
        }
}

/// `<pid>.<start>` or `<pid>` of a directory name's owner part.
fn parse_owner(owner: &str) -> Option<(u32, Option<u64>)> {
    match owner.split_once('.') {
        Some((pid, start)) => Some((pid.parse().ok()?, Some(start.parse().ok()?))),
        None => Some((owner.parse().ok()?, None)),
    }
}

/// Removes the directories `<prefix><pid>[.<start>]-*` in `parent` whose process is gone
/// and whose owner is `ours`'s. Failures are ignored: what is left is only disk space.
fn remove_left_behind(parent: &Path, prefix: &str, ours: &Path) {
    let (Ok(entries), Ok(me)) = (std::fs::read_dir(parent), ours.metadata()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((pid, start)) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(owner, _)| parse_owner(owner))
        else {
            continue;
        };
        if owner_alive(pid, start) {
            continue;
        }
        let path = entry.path();
        match path.symlink_metadata() {
            Ok(m) if m.is_dir() && m.uid() == me.uid() => {
                let _ = std::fs::remove_dir_all(&path);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_of_dead_processes_are_removed_and_others_kept() {
        let parent = tempfile::tempdir().unwrap();
        let p = parent.path();
        // A pid above the kernel's maximum (2^22) is never alive.
        let dead = p.join("regsim-test-4194305-abc");
        let live = p.join(format!("regsim-test-{}-def", std::process::id()));
        let other_prefix = p.join("regsim-other-4194305-abc");
        let not_a_pid = p.join("regsim-test-xyz-abc");
        let me = std::process::id();
        let start = process_start(me).unwrap();
        // This process's pid with its start time: ours; with another start time: a
        // process that had this pid before, gone.
        let live_with_start = p.join(format!("regsim-test-{me}.{start}-ghi"));
        let reused = p.join(format!("regsim-test-{me}.{}-jkl", start.wrapping_sub(1)));
        let dead_with_start = p.join("regsim-test-4194305.12345-mno");
        let bad_start = p.join(format!("regsim-test-{me}.x-pqr"));
        let dead_file = p.join("regsim-test-4194306-file");
        for d in [
            &dead,
            &live,
            &other_prefix,
            &not_a_pid,
            &live_with_start,
            &reused,
            &dead_with_start,
            &bad_start,
        ] {
            std::fs::create_dir(d).unwrap();
            std::fs::write(d.join("inside"), "x").unwrap();
        }
        std::fs::write(&dead_file, "x").unwrap();
        remove_left_behind(p, "regsim-test-", &live);
        assert!(!dead.exists());
        assert!(!reused.exists(), "a reused pid's earlier owner is gone");
        assert!(!dead_with_start.exists());
        assert!(live.exists() && other_prefix.exists() && not_a_pid.exists());
        assert!(live_with_start.exists() && bad_start.exists());
        assert!(dead_file.exists(), "only directories are removed");
    }

    #[test]
    fn a_zombie_is_not_alive_and_a_running_process_is() {
        assert!(pid_alive(std::process::id()));
        assert!(!pid_alive(4_194_305), "above the kernel's pid limit");
        // A child that exited and is not yet reaped is a zombie.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let start = std::time::Instant::now();
        while pid_alive(pid) {
            assert!(start.elapsed().as_secs() < 10, "a zombie counted as alive");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        child.wait().unwrap();
    }

    #[test]
    fn a_private_dir_is_named_after_this_process_and_closed_to_others() {
        let d = private_dir("regsim-scratch-test-").unwrap();
        let name = d.path().file_name().unwrap().to_string_lossy().into_owned();
        let me = std::process::id();
        let start = process_start(me).unwrap();
        assert!(
            name.starts_with(&format!("regsim-scratch-test-{me}.{start}-")),
            "{name}"
        );
        let mode = d.path().metadata().unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}
