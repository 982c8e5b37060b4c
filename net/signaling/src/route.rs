//! Routing of control messages and the connections every process opens at start.

/// Start-up connections of a rail (config `topology`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StaticTopology {
    Ring,
    None,
    Fully,
}

/// Processes `me` connects to at start-up, among `count` processes. The ring
/// links each process to its two neighbours, the last to the first.
pub fn initial_peers(me: u32, count: u32, topology: StaticTopology) -> Vec<u32> {
    let mut peers = match topology {
        StaticTopology::None => Vec::new(),
        StaticTopology::Fully => (0..count).filter(|&p| p != me).collect(),
        StaticTopology::Ring if count <= 1 => Vec::new(),
        StaticTopology::Ring => vec![(me + 1) % count, (me + count - 1) % count],
    };
    peers.sort_unstable();
    peers.dedup();
    peers
}

/// The next hop of a control message from `me` to `dest`: among the connected
/// processes, the one whose rank is closest to `dest` (ties to the lower rank).
/// `None` if `me` is `dest` or nothing is connected. On a ring (linked in rank
/// order) every hop gets strictly closer, so a message always arrives.
pub fn next_hop(me: u32, dest: u32, connected: &[u32]) -> Option<u32> {
    if me == dest {
        return None;
    }
    connected
        .iter()
        .copied()
        .min_by_key(|&p| (p.abs_diff(dest), p))
}

/// What a process publishes in the key-value store for the ring: `rank:host:port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingEntry {
    pub process: u32,
    pub host: String,
    pub port: u16,
}

/// The key and value of a process's ring entry.
pub fn ring_entry(e: &RingEntry) -> (String, String) {
    (
        format!("ring-{}", e.process),
        format!("{}:{}:{}", e.process, e.host, e.port),
    )
}

/// Parses a ring value `rank:host:port` (the host may contain ':' for IPv6).
pub fn parse_ring_entry(value: &str) -> Option<RingEntry> {
    let (rank, rest) = value.split_once(':')?;
    let (host, port) = rest.rsplit_once(':')?;
    Some(RingEntry {
        process: rank.parse().ok()?,
        host: host.to_string(),
        port: port.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topologies_connect_the_expected_processes() {
        assert_eq!(initial_peers(0, 8, StaticTopology::Ring), vec![1, 7]);
        assert_eq!(initial_peers(3, 8, StaticTopology::Ring), vec![2, 4]);
        assert_eq!(initial_peers(0, 2, StaticTopology::Ring), vec![1]);
        assert!(initial_peers(0, 1, StaticTopology::Ring).is_empty());
        assert_eq!(initial_peers(1, 3, StaticTopology::Fully), vec![0, 2]);
        assert!(initial_peers(1, 3, StaticTopology::None).is_empty());
    }

    /// Walks a message hop by hop; `links(p)` lists p's connections.
    fn walk(from: u32, to: u32, links: impl Fn(u32) -> Vec<u32>) -> Vec<u32> {
        let mut path = vec![from];
        let mut at = from;
        while at != to {
            at = next_hop(at, to, &links(at)).expect("a route");
            path.push(at);
            assert!(path.len() < 64, "routing loop: {path:?}");
        }
        path
    }

    #[test]
    fn messages_travel_the_ring_getting_closer_every_hop() {
        let n = 8;
        let ring = |p: u32| initial_peers(p, n, StaticTopology::Ring);
        // Rank-distance routing walks the ring in rank order.
        assert_eq!(walk(1, 6, ring), vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(walk(6, 2, ring), vec![6, 5, 4, 3, 2]);
        // A shortcut, once it exists, is taken.
        let with_shortcut = |p: u32| {
            let mut l = ring(p);
            if p == 1 {
                l.push(5);
            }
            l
        };
        assert_eq!(walk(1, 6, with_shortcut), vec![1, 5, 6]);
        for a in 0..n {
            for b in 0..n {
                let path = walk(a, b, ring);
                assert!(path
                    .windows(2)
                    .all(|w| w[1].abs_diff(b) < w[0].abs_diff(b) || w[1] == b));
            }
        }
    }

    #[test]
    fn ring_entries_round_trip() {
        let e = RingEntry {
            process: 3,
            host: "fe80::1".into(),
            port: 4242,
        };
        let (k, v) = ring_entry(&e);
        assert_eq!(k, "ring-3");
        assert_eq!(parse_ring_entry(&v), Some(e));
        assert_eq!(parse_ring_entry("x:h:1"), None);
    }
}
