//! Hosts of a job (`--host a,b:2`, `--hostfile FILE`), where each process goes,
//! and how a process is started on another host (a launch agent, ssh by default).

use std::net::{IpAddr, ToSocketAddrs, UdpSocket};
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    pub name: String,
    /// Processes it takes before the next host is used (`name:N`, `slots=N`).
    pub slots: Option<usize>,
}

fn parse_slots(s: &str, at: &str) -> Result<usize, String> {
    s.parse::<usize>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("{at}: slots must be a positive integer, not {s:?}"))
}

/// `--host a,b:2,c` (MPICH's `host:N` gives the slots).
pub fn parse_host_list(list: &str) -> Result<Vec<Host>, String> {
    list.split(',')
        .map(|item| {
            let item = item.trim();
            if item.is_empty() {
                return Err(format!("--host {list:?}: empty host name"));
            }
            match item.rsplit_once(':') {
                Some((name, n)) if !name.contains(':') => Ok(Host {
                    name: name.to_string(),
                    slots: Some(parse_slots(n, &format!("--host {item}"))?),
                }),
                _ => Ok(Host {
                    name: item.to_string(),
                    slots: None,
                }),
            }
        })
        .collect()
}

/// A hostfile: one host per line, `name [slots=N]` (Open MPI) or `name:N`
/// (MPICH); `#` starts a comment.
pub fn parse_hostfile(path: &Path) -> Result<Vec<Host>, String> {
    let text = mpcrs_settings::files::read_config_text(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut hosts = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let at = format!("{}:{}", path.display(), i + 1);
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut words = line.split_whitespace();
        let first = words.next().unwrap();
        let mut host = match parse_host_list(first) {
            Ok(mut h) if h.len() == 1 => h.remove(0),
            _ => return Err(format!("{at}: bad host {first:?}")),
        };
        for w in words {
            match w.split_once('=') {
                Some(("slots", n)) => host.slots = Some(parse_slots(n, &at)?),
                Some(("max_slots", _)) => {}
                _ => return Err(format!("{at}: unknown attribute {w:?} (slots=N)")),
            }
        }
        hosts.push(host);
    }
    if hosts.is_empty() {
        return Err(format!("{}: names no host", path.display()));
    }
    Ok(hosts)
}

/// How processes are laid on hosts (Open MPI's `--map-by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MapBy {
    /// Hosts in order, each taking its slots (`slot`, `core`, `socket`).
    #[default]
    Slot,
    /// One process per host in turn (`node`).
    Node,
}

/// The host of each of `processes` processes: by node, one per host in
/// turn; by slot, hosts in order, each taking its slots, when the slots
/// cover the job, otherwise contiguous, even blocks.
pub fn place(processes: usize, hosts: &[Host], map_by: MapBy) -> Vec<usize> {
    if map_by == MapBy::Node && !hosts.is_empty() {
        return (0..processes).map(|p| p % hosts.len()).collect();
    }
    let slots: Option<usize> = hosts.iter().map(|h| h.slots).sum();
    match slots {
        Some(total) if total >= processes => hosts
            .iter()
            .enumerate()
            .flat_map(|(i, h)| std::iter::repeat_n(i, h.slots.unwrap()))
            .take(processes)
            .collect(),
        _ => (0..processes)
            .map(|p| p * hosts.len() / processes)
            .collect(),
    }
}

/// The addresses `name` stands for.
pub fn resolve(name: &str) -> Result<Vec<IpAddr>, String> {
    (name, 0)
        .to_socket_addrs()
        .map(|it| it.map(|a| a.ip()).collect())
        .map_err(|e| format!("host {name:?}: {e}"))
}

/// Whether `name` is this host: its own name, or an address this host owns.
pub fn is_local(name: &str, own_name: &str) -> Result<bool, String> {
    if name == own_name || name == "localhost" {
        return Ok(true);
    }
    Ok(resolve(name)?
        .into_iter()
        .any(|ip| ip.is_loopback() || UdpSocket::bind((ip, 0)).is_ok()))
}

/// This host's address on the route to `remote` (what the remote host reaches
/// us at). No packet is sent: connecting a UDP socket only picks the route.
pub fn address_towards(remote: &str) -> Result<IpAddr, String> {
    let ip = *resolve(remote)?
        .first()
        .ok_or_else(|| format!("host {remote:?} has no address"))?;
    let any: IpAddr = if ip.is_ipv4() {
        "0.0.0.0".parse().unwrap()
    } else {
        "::".parse().unwrap()
    };
    let s = UdpSocket::bind((any, 0)).map_err(|e| e.to_string())?;
    s.connect((ip, 9))
        .map_err(|e| format!("no route to host {remote} ({ip}): {e}"))?;
    Ok(s.local_addr().map_err(|e| e.to_string())?.ip())
}

/// Quotes `s` for a POSIX shell.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./=:,+@%".contains(&b))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_lists_and_files_parse_with_positions_in_errors() {
        assert_eq!(
            parse_host_list("a,b:2").unwrap(),
            vec![
                Host {
                    name: "a".into(),
                    slots: None
                },
                Host {
                    name: "b".into(),
                    slots: Some(2)
                }
            ]
        );
        assert!(parse_host_list("a,,b")
            .unwrap_err()
            .contains("empty host name"));
        assert!(parse_host_list("a:0")
            .unwrap_err()
            .contains("positive integer"));
        let f = std::env::temp_dir().join(format!("mpcrs-hostfile-{}", std::process::id()));
        std::fs::write(
            &f,
            "# cluster\nnode1 slots=2\n\nnode2:3   # spare\nnode3 cpus=4\n",
        )
        .unwrap();
        let e = parse_hostfile(&f).unwrap_err();
        assert_eq!(
            e,
            format!("{}:5: unknown attribute \"cpus=4\" (slots=N)", f.display())
        );
        std::fs::write(&f, "node1 slots=2\nnode2:3\n").unwrap();
        let h = parse_hostfile(&f).unwrap();
        assert_eq!(h[0].slots, Some(2));
        assert_eq!(h[1].slots, Some(3));
        std::fs::remove_file(&f).unwrap();
    }

    #[test]
    fn placement_fills_slots_or_spreads_evenly() {
        let h = |slots| Host {
            name: "h".into(),
            slots,
        };
        let slot = MapBy::Slot;
        assert_eq!(place(4, &[h(Some(3)), h(Some(3))], slot), vec![0, 0, 0, 1]);
        assert_eq!(place(4, &[h(None), h(None)], slot), vec![0, 0, 1, 1]);
        // Too few slots: even blocks rather than refusing.
        assert_eq!(place(3, &[h(Some(1)), h(Some(1))], slot), vec![0, 0, 1]);
        // By node: one per host in turn, slots or not.
        let hosts = [h(Some(3)), h(None), h(Some(1))];
        assert_eq!(place(5, &hosts, MapBy::Node), vec![0, 1, 2, 0, 1]);
    }

    #[test]
    fn shell_quoting_survives_spaces_and_quotes() {
        assert_eq!(shell_quote("plain/path-1"), "plain/path-1");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn loopback_is_local() {
        assert!(is_local("127.0.0.1", "nohost").unwrap());
        assert!(is_local("localhost", "nohost").unwrap());
    }
}
