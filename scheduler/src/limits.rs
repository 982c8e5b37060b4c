//! The kernel's limits behind a failed mapping or thread, said in words that
//! name the limit and what to change.

pub use crate::stack::max_map_count;

/// Memory mappings of this process now.
pub fn mappings() -> Option<usize> {
    std::fs::read_to_string("/proc/self/maps")
        .ok()
        .map(|m| m.lines().count())
}

fn status_number(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

fn rlimit(resource: libc::__rlimit_resource_t) -> Option<u64> {
    // SAFETY: getrlimit fills the struct we pass.
    let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::getrlimit(resource, &mut r) } != 0 || r.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    Some(r.rlim_cur)
}

/// The file `name` of this process's cgroup (v2), trimmed.
fn cgroup_file(name: &str) -> Option<String> {
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
    let text = std::fs::read_to_string(format!("/sys/fs/cgroup{}/{name}", path.trim())).ok()?;
    Some(text.trim().to_string())
}

/// The memory limit of this process's cgroup, if one is set.
fn cgroup_memory_max() -> Option<u64> {
    cgroup_file("memory.max")?.parse().ok()
}

const MIB: u64 = 1 << 20;

/// Why mapping `bytes` more failed with `error`, and what to change.
pub(crate) fn explain_map_failure(bytes: usize, error: &std::io::Error) -> String {
    let max_maps = max_map_count();
    if let Some(maps) = mappings() {
        if maps + 8 >= max_maps {
            return format!(
                "the process has {maps} memory mappings and vm.max_map_count is {max_maps}: \
                 raise it (sysctl -w vm.max_map_count={}) or run fewer ranks per process (-p)",
                max_maps * 2
            );
        }
    }
    if let (Some(limit), Some(size)) = (rlimit(libc::RLIMIT_AS), status_number("VmSize:")) {
        if size * 1024 + bytes as u64 > limit {
            return format!(
                "the address-space limit (ulimit -v, RLIMIT_AS) is {} MiB and the process \
                 already uses {} MiB: raise ulimit -v, or lower --stack-size (each rank's \
                 stack reserves that much address space)",
                limit / MIB,
                size * 1024 / MIB
            );
        }
    }
    if let Some(max) = cgroup_memory_max() {
        return format!(
            "{error}; this process's cgroup allows {} MiB of memory (memory.max)",
            max / MIB
        );
    }
    format!("{error}")
}

/// Why starting another OS thread failed with `error`, and what to change.
pub(crate) fn explain_thread_failure(error: &std::io::Error) -> String {
    let threads = status_number("Threads:").unwrap_or(0);
    if let Some(limit) = rlimit(libc::RLIMIT_NPROC) {
        return format!(
            "{error}; this user may run {limit} processes and threads (ulimit -u, \
             RLIMIT_NPROC) and this process has {threads} threads: raise ulimit -u or \
             start fewer workers (-c)"
        );
    }
    let pids = cgroup_file("pids.max");
    match pids.as_deref() {
        Some(max) if max != "max" => format!(
            "{error}; this process's cgroup allows {max} tasks (pids.max) and this \
             process has {threads} threads: start fewer workers (-c)"
        ),
        _ => format!("{error} ({threads} threads in this process)"),
    }
}
