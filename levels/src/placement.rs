//! Which process keeps whose copy (L2) and which processes encode together
//! (L3), from the host of every process. Both put the processes that back each
//! other up on distinct hosts wherever the job's hosts allow it, so that losing
//! a host loses no process's data; on one host they still pair distinct
//! processes, which survives the loss of a process.

/// The processes ordered by their index on their host, then by host: among
/// processes of one index, neighbours are on distinct hosts (FTI pairs the
/// processes of one index on consecutive nodes the same way).
fn interleaved(hosts: &[u32]) -> Vec<usize> {
    let mut seen: std::collections::HashMap<u32, usize> = Default::default();
    let mut keyed: Vec<(usize, u32, usize)> = hosts
        .iter()
        .enumerate()
        .map(|(p, &h)| {
            let index = seen.entry(h).or_insert(0);
            *index += 1;
            (*index - 1, h, p)
        })
        .collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, _, p)| p).collect()
}

/// The partner of every process (`hosts[p]` is the host of process `p`): the
/// process that keeps its L2 copy. On another host wherever the job has
/// another host; `None` for a job of one process.
pub fn partners(hosts: &[u32]) -> Vec<Option<usize>> {
    let order = interleaved(hosts);
    let n = order.len();
    let mut partner = vec![None; n];
    for (i, &p) in order.iter().enumerate() {
        let next = (1..n).map(|k| order[(i + k) % n]);
        partner[p] = next
            .clone()
            .find(|&q| hosts[q] != hosts[p])
            .or_else(|| next.clone().next());
    }
    partner
}

/// A group of processes that encode their images together (L3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub members: Vec<usize>,
    /// Every member is on a host of its own: losing one host loses at most
    /// one member's image.
    pub distinct_hosts: bool,
}

/// Groups of `size` processes for L3, every process in exactly one: members on
/// distinct hosts where there are enough hosts, else as spread as the hosts
/// allow. Processes left over (fewer than `size`) form a smaller group, or join
/// the last one when only one is left (a group needs two members).
pub fn groups(hosts: &[u32], size: usize) -> Vec<Group> {
    let size = size.max(2);
    let order = interleaved(hosts);
    let mut left: Vec<usize> = order;
    let mut groups: Vec<Group> = Vec::new();
    while left.len() >= 2 {
        let mut members = Vec::with_capacity(size);
        let mut used_hosts = std::collections::HashSet::new();
        // First pass: one per host; second: whatever is left, to fill the group.
        for pass in 0..2 {
            let mut i = 0;
            while i < left.len() && members.len() < size {
                let p = left[i];
                if pass == 1 || used_hosts.insert(hosts[p]) {
                    members.push(p);
                    left.remove(i);
                } else {
                    i += 1;
                }
            }
        }
        let distinct = {
            let mut h: Vec<u32> = members.iter().map(|&p| hosts[p]).collect();
            h.sort_unstable();
            h.dedup();
            h.len() == members.len()
        };
        groups.push(Group {
            members,
            distinct_hosts: distinct,
        });
    }
    if let Some(p) = left.pop() {
        match groups.last_mut() {
            Some(g) => {
                if g.members.iter().any(|&q| hosts[q] == hosts[p]) {
                    g.distinct_hosts = false;
                }
                g.members.push(p);
            }
            None => groups.push(Group {
                members: vec![p],
                distinct_hosts: true,
            }),
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partners_are_on_another_host_when_there_is_one() {
        // 4 hosts of 2 processes, in blocks as mpcrs-run places them.
        let hosts = [0, 0, 1, 1, 2, 2, 3, 3];
        let p = partners(&hosts);
        for (i, q) in p.iter().enumerate() {
            let q = q.unwrap();
            assert_ne!(hosts[i], hosts[q], "process {i} and its partner {q}");
        }
        // Every process keeps exactly one copy when hosts are even.
        let mut kept: Vec<usize> = p.iter().map(|q| q.unwrap()).collect();
        kept.sort_unstable();
        assert_eq!(kept, (0..8).collect::<Vec<_>>());
        // Uneven hosts: still on another host.
        let hosts = [0, 0, 0, 1];
        for (i, q) in partners(&hosts).iter().enumerate() {
            assert_ne!(hosts[i], hosts[q.unwrap()]);
        }
    }

    #[test]
    fn on_one_host_partners_are_other_processes() {
        let p = partners(&[0, 0, 0]);
        for (i, q) in p.iter().enumerate() {
            assert_ne!(Some(i), *q);
        }
        assert_eq!(partners(&[0]), vec![None]);
    }

    #[test]
    fn groups_cover_every_process_once_on_distinct_hosts() {
        // 4 hosts of 4 processes, groups of 4: each group spans the 4 hosts.
        let hosts: Vec<u32> = (0..16).map(|p| p / 4).collect();
        let g = groups(&hosts, 4);
        assert_eq!(g.len(), 4);
        assert!(g.iter().all(|g| g.distinct_hosts && g.members.len() == 4));
        let mut all: Vec<usize> = g.iter().flat_map(|g| g.members.clone()).collect();
        all.sort_unstable();
        assert_eq!(all, (0..16).collect::<Vec<_>>());
        // Too few hosts: groups as spread as possible, and say so.
        let g = groups(&[0, 0, 1, 1], 4);
        assert_eq!(g.len(), 1);
        assert!(!g[0].distinct_hosts);
        // A lone leftover joins the last group.
        let g = groups(&[0, 1, 2, 3, 4], 4);
        assert_eq!(
            g.iter().map(|g| g.members.len()).collect::<Vec<_>>(),
            vec![5]
        );
    }
}
