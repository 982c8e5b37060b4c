//! Where the members of a communicator spanning processes live, seen from this
//! process: which members share it (they meet in the communicator's arena), and
//! one member per process that speaks for it over the network.

use std::borrow::Cow;
use std::sync::OnceLock;

use super::node::NodeArea;
use crate::remote::Fabric;

/// The two tiers of a communicator spanning processes.
pub(crate) struct Tiers {
    /// The process of each member, by communicator rank.
    pub(crate) processes: Box<[u32]>,
    /// The members in this process, ascending: member `here[i]` uses arena slot i.
    pub(crate) here: Box<[usize]>,
    /// Each member's arena slot if it lives here, `u32::MAX` otherwise.
    slots: Box<[u32]>,
    /// The lowest member of every process, ascending.
    pub(crate) leaders: Box<[usize]>,
    /// The members of each process, ascending, in the order of `leaders`.
    members: Box<[Box<[usize]>]>,
    /// Whether the members of each process are consecutive ranks: folding each
    /// process's members, then the processes in leader order, is then rank order.
    pub(crate) blocks: bool,
    /// The shared-memory area of the processes if they are all on this node
    /// (decided at the first collective; never in a job that takes checkpoints,
    /// so it belongs to the only run the job has).
    node: OnceLock<Option<NodeArea>>,
    /// Per member here (by arena slot): the collectives that may meet in the
    /// node area it has called so far. The member that speaks for this process
    /// in the k-th such collective takes the area's round k: speakers of
    /// consecutive collectives are different members and run unordered (one
    /// may still be on its way to round k when the next is at k + 1), yet
    /// every process takes its rounds in the communicator's order of calls.
    area_calls: Box<[std::sync::atomic::AtomicU64]>,
}

impl Tiers {
    pub(crate) fn new(processes: Box<[u32]>, me: u32) -> Tiers {
        let n = processes.len();
        let here: Box<[usize]> = (0..n).filter(|&r| processes[r] == me).collect();
        let mut slots = vec![u32::MAX; n].into_boxed_slice();
        for (i, &r) in here.iter().enumerate() {
            slots[r] = i as u32;
        }
        let mut seen = std::collections::HashSet::new();
        let leaders: Box<[usize]> = (0..n).filter(|&r| seen.insert(processes[r])).collect();
        let members = leaders
            .iter()
            .map(|&l| (0..n).filter(|&r| processes[r] == processes[l]).collect())
            .collect();
        // Consecutive blocks: the process changes exactly once per leader.
        let changes = (1..n).filter(|&r| processes[r] != processes[r - 1]).count();
        Tiers {
            node: OnceLock::new(),
            area_calls: here.iter().map(|_| Default::default()).collect(),
            blocks: changes + 1 == leaders.len(),
            processes,
            here,
            slots,
            leaders,
            members,
        }
    }

    /// Arena slot of a member of this process.
    pub(crate) fn slot(&self, rank: usize) -> usize {
        let s = self.slots[rank];
        debug_assert!(s != u32::MAX, "member {rank} does not live in this process");
        s as usize
    }

    /// The node-area round of the collective member `me` (of this process)
    /// is calling: every member calls this once per barrier, broadcast and
    /// reduction, speaker or not, so that all agree (see `area_calls`).
    pub(crate) fn next_area_round(&self, me: usize) -> u64 {
        // Each member counts its own calls: no other thread writes its counter.
        self.area_calls[self.slot(me)].fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
    }

    pub(crate) fn lives_here(&self, rank: usize) -> bool {
        self.slots[rank] != u32::MAX
    }

    /// The member that speaks for this process in an operation rooted at `root`:
    /// the root itself if it lives here, the lowest member here otherwise.
    pub(crate) fn speaker(&self, root: usize) -> usize {
        if self.lives_here(root) {
            root
        } else {
            self.here[0]
        }
    }

    /// Every other process than this one: its leader and its members,
    /// ascending.
    pub(crate) fn other_processes(&self) -> impl Iterator<Item = (usize, &[usize])> {
        let mine = self.processes[self.here[0]];
        self.leaders
            .iter()
            .zip(self.members.iter())
            .filter(move |(&l, _)| self.processes[l] != mine)
            .map(|(&l, m)| (l, &m[..]))
    }

    /// Position among the leaders (a slot of the node area) of `rank`'s process.
    pub(crate) fn process_slot(&self, rank: usize) -> usize {
        let p = self.processes[rank];
        self.leaders
            .iter()
            .position(|&l| self.processes[l] == p)
            .expect("every process has a leader")
    }

    /// The shared-memory area where the speakers of a communicator (context
    /// `context`) whose processes all run on this node meet; opened by the
    /// first call, which every process makes in the same collective.
    pub(crate) fn node_area(&self, context: u64) -> Option<&NodeArea> {
        let fabric = Fabric::get()?;
        let area = self.node.get_or_init(|| {
            let processes = self.leaders.iter().map(|&l| self.processes[l]);
            fabric.node_area_name(context, processes).map(|name| {
                let mine = self.leaders.binary_search(&self.here[0]).expect("a leader");
                NodeArea::open(&name, self.leaders.len(), mine, context).unwrap_or_else(|e| {
                    // The other processes wait for this one in the area: the job
                    // cannot go on without it.
                    mpcrs_settings::report!(warn,
                        "mpcrs: process {}: cannot open /dev/shm/{name}, the shared-memory area of a communicator's collectives: {e}",
                        fabric.me
                    );
                    crate::process::abort_job(1)
                })
            })
        });
        area.as_ref()
    }

    /// The speakers of every process for an operation rooted at `root` (the
    /// leaders, with the root standing for its own process), in leader order.
    pub(crate) fn speakers(&self, root: usize) -> Cow<'_, [usize]> {
        if self.leaders.binary_search(&root).is_ok() {
            return Cow::Borrowed(&self.leaders);
        }
        let of_root = self.processes[root];
        Cow::Owned(
            self.leaders
                .iter()
                .map(|&l| {
                    if self.processes[l] == of_root {
                        root
                    } else {
                        l
                    }
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_leaders_and_slots_follow_the_processes() {
        let t = Tiers::new(vec![0, 0, 1, 1, 1, 2].into(), 1);
        assert_eq!(&*t.here, &[2, 3, 4]);
        assert_eq!(&*t.leaders, &[0, 2, 5]);
        let others: Vec<_> = t.other_processes().collect();
        assert_eq!(others, [(0, &[0, 1][..]), (5, &[5][..])]);
        assert!(t.blocks);
        assert_eq!((t.slot(2), t.slot(4)), (0, 2));
        assert!(!t.lives_here(1));
        assert_eq!(t.speaker(3), 3);
        assert_eq!(t.speaker(0), 2);
        assert_eq!(&*t.speakers(4), &[0, 4, 5]);
        assert!(matches!(t.speakers(2), Cow::Borrowed(_)));
    }

    #[test]
    fn interleaved_members_are_not_blocks() {
        let t = Tiers::new(vec![0, 1, 0, 1].into(), 0);
        assert!(!t.blocks);
        assert_eq!(&*t.leaders, &[0, 1]);
        assert_eq!(&*t.here, &[0, 2]);
        assert_eq!(&*t.speakers(3), &[0, 3]);
    }
}
