//! Intercommunicators (MPI-3.1 section 6.6): two disjoint groups, each rank
//! naming the other group's ranks in point-to-point calls and collectives.
//!
//! An intercommunicator's shared object is a bridge: a communicator over both
//! groups, the low group's members first (the group whose leader has the lower
//! world rank at creation), which gives every rank of either side a mailbox.
//! A send to remote rank r goes to the bridge member of r and carries the
//! sender's local rank as its source, so a receiver names its sources by their
//! rank in the remote group, as MPI says; only the other group sends on a
//! bridge, so local ranks never meet in one mailbox. Collectives
//! ([`crate::coll::inter`]) use the bridge with the runtime's negative tags
//! between the groups and a private intracommunicator of the local group
//! within each.
//!
//! Intercommunicators are made through the C ABI ([`crate::raw`]); the typed
//! Rust API has none, so its collectives only ever see intracommunicators.

use crate::comm::{derived_context, meet, Communicator};
use crate::consts::{PROC_NULL, UNDEFINED};
use crate::error::{ErrorClass, Result};
use crate::group::{Comparison, Group};

/// MPI_ROOT: the root of an intercommunicator collective names itself so.
pub const ROOT: i32 = -3;

/// Tags of the messages between the groups' leaders at creation and merge.
const TAG_SPLIT: i32 = -120;
const TAG_MERGE: i32 = -121;

/// What a rank's handle on an intercommunicator knows besides the bridge.
pub(crate) struct Inter {
    pub(crate) remote: Group,
    /// Bridge member of each remote rank.
    pub(crate) remote_at: Box<[usize]>,
    /// Bridge member of each local rank.
    pub(crate) local_at: Box<[usize]>,
    /// The local group as an intracommunicator of its own context.
    pub(crate) local: Communicator,
    /// Whether the local group comes first in the bridge.
    pub(crate) low: bool,
}

impl Inter {
    /// The caller's bridge member.
    pub(crate) fn me_at(&self) -> usize {
        self.local_at[self.local.rank as usize]
    }

    /// The bridge group of `low` and `high`, and where each side's ranks are in it.
    fn layout(local: &Group, remote: &Group, low: bool) -> (Group, Box<[usize]>, Box<[usize]>) {
        let (first, second) = if low {
            (local, remote)
        } else {
            (remote, local)
        };
        let bridge = Group::from_world_ranks(
            first
                .members()
                .iter()
                .chain(second.members())
                .copied()
                .collect(),
        );
        let offset = |mine: bool| if mine == low { 0 } else { first.size() };
        let local_at = (0..local.size()).map(|i| offset(true) + i).collect();
        let remote_at = (0..remote.size()).map(|i| offset(false) + i).collect();
        (bridge, local_at, remote_at)
    }

    /// An intercommunicator handle of `local` (this rank's new local
    /// intracommunicator) and `remote` on the bridge of `context`.
    fn handle(
        local: Communicator,
        remote: Group,
        low: bool,
        context: u64,
        name: &str,
    ) -> Communicator {
        let (bridge, local_at, remote_at) = Self::layout(&local.group(), &remote, low);
        let shared = meet(&local.shared.universe, context, bridge);
        let world_rank = local.world_rank;
        let rank = local.rank;
        let mut c = Communicator::from_shared(shared, rank, world_rank, name);
        c.inter = Some(Box::new(Inter {
            remote,
            remote_at,
            local_at,
            local,
            low,
        }));
        c
    }
}

impl Communicator {
    /// MPI_Comm_test_inter.
    pub fn is_inter(&self) -> bool {
        self.inter.is_some()
    }

    /// MPI_Comm_remote_size (0 for an intracommunicator, whose callers refuse it).
    pub fn remote_size(&self) -> i32 {
        self.inter.as_ref().map_or(0, |i| i.remote.size() as i32)
    }

    /// MPI_Comm_remote_group.
    pub fn remote_group(&self) -> Option<Group> {
        self.inter.as_ref().map(|i| i.remote.clone())
    }

    /// How many ranks a collective's per-rank arrays cover: the remote group's
    /// size on an intercommunicator, the communicator's size otherwise.
    pub fn peer_count(&self) -> usize {
        match &self.inter {
            Some(i) => i.remote.size(),
            None => self.size() as usize,
        }
    }

    /// Whether the caller is the root of a rooted collective whose root
    /// argument is `root` (MPI_ROOT on an intercommunicator).
    pub fn is_root(&self, root: i32) -> bool {
        match &self.inter {
            Some(_) => root == ROOT,
            None => root == self.rank,
        }
    }

    /// MPI_Intercomm_create: collective over this (local) communicator; the
    /// leaders, `local_leader` here and `remote_leader` of `peer` (at the
    /// local leader only), exchange their groups over `peer` with `tag`.
    pub(crate) fn intercomm_create(
        &self,
        local_leader: i32,
        peer: Option<&Communicator>,
        remote_leader: i32,
        tag: i32,
    ) -> Result<Communicator> {
        let call = "MPI_Intercomm_create";
        if self.is_inter() {
            return self.fail(
                call,
                ErrorClass::Comm,
                "the local communicator is an intercommunicator",
            );
        }
        if !(0..self.size()).contains(&local_leader) {
            return self.fail(
                call,
                ErrorClass::Rank,
                format!("local leader {local_leader} is not in 0..{}", self.size()),
            );
        }
        // [context token, world rank of the leader, remote world ranks...]
        let mut told: Vec<u64> = Vec::new();
        if self.rank == local_leader {
            let Some(peer) = peer else {
                return self.fail(
                    call,
                    ErrorClass::Comm,
                    "the leader's peer communicator is MPI_COMM_NULL",
                );
            };
            if !(0..peer.size()).contains(&remote_leader) {
                return self.fail(
                    call,
                    ErrorClass::Rank,
                    format!(
                        "remote leader {remote_leader} is not in 0..{} of the peer communicator",
                        peer.size()
                    ),
                );
            }
            let n = self
                .group_creations
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let token =
                derived_context(&[self.shared.context, u64::MAX - 1, self.world_rank as u64, n]);
            let mut mine = vec![token, self.world_rank as u64];
            mine.extend(self.group().members().iter().map(|&w| w as u64));
            let bytes = std::mem::size_of_val(mine.as_slice());
            // SAFETY: `mine` lives until the send is waited for below. Both
            // leaders send first, so neither waits for the other's receive.
            let sent = unsafe {
                peer.send_bytes(
                    call,
                    mine.as_ptr().cast(),
                    bytes,
                    remote_leader,
                    tag,
                    crate::p2p::SendMode::Standard,
                )?
            };
            let theirs = peer.recv_vec::<u64>(remote_leader, tag)?.0;
            sent.wait();
            if theirs.len() < 2 {
                return self.fail(
                    call,
                    ErrorClass::Other,
                    "malformed group message from the remote leader",
                );
            }
            let low = self.world_rank < theirs[1] as i32;
            let context = if low {
                derived_context(&[token, theirs[0]])
            } else {
                derived_context(&[theirs[0], token])
            };
            told = vec![context, low as u64];
            told.extend_from_slice(&theirs[2..]);
        }
        let mut len = [told.len() as u64];
        self.broadcast(&mut len, local_leader)?;
        told.resize(len[0] as usize, 0);
        self.broadcast(&mut told, local_leader)?;
        let (context, low) = (told[0], told[1] == 1);
        let remote = Group::from_world_ranks(told[2..].iter().map(|&w| w as i32).collect());
        let local = self.dup()?;
        Ok(Inter::handle(local, remote, low, context, ""))
    }

    /// MPI_Intercomm_merge: an intracommunicator of both groups, the group
    /// whose ranks passed `high` false first (the low group first if both
    /// passed the same).
    pub(crate) fn intercomm_merge(&self, high: bool) -> Result<Communicator> {
        let Some(inter) = &self.inter else {
            return self.fail(
                "MPI_Intercomm_merge",
                ErrorClass::Comm,
                "not an intercommunicator",
            );
        };
        let theirs = self.leaders_swap(&[high as u64], 1, TAG_MERGE)?;
        let remote_high = theirs[0] == 1;
        let local_first = if high != remote_high {
            !high
        } else {
            inter.low
        };
        let local = self.group();
        let (first, second) = if local_first {
            (&local, &inter.remote)
        } else {
            (&inter.remote, &local)
        };
        let group = Group::from_world_ranks(
            first
                .members()
                .iter()
                .chain(second.members())
                .copied()
                .collect(),
        );
        let creation = self.next_creation();
        let context = derived_context(&[self.shared.context, creation, u64::MAX - 2]);
        let rank = group.rank_of_world(self.world_rank).expect("a member") as i32;
        let shared = meet(&self.shared.universe, context, group);
        Ok(Communicator::from_shared(shared, rank, self.world_rank, ""))
    }

    /// MPI_Comm_dup of an intercommunicator.
    pub(crate) fn inter_dup(&self) -> Result<Communicator> {
        let inter = self.inter.as_ref().expect("an intercommunicator");
        let creation = self.next_creation();
        let context = derived_context(&[self.shared.context, creation, u64::MAX - 3]);
        let local = inter.local.dup()?;
        let c = Inter::handle(local, inter.remote.clone(), inter.low, context, "");
        c.set_error_handler(self.error_handler());
        Ok(c)
    }

    /// MPI_Comm_split of an intercommunicator: the ranks of each group with
    /// the same colour, ordered by key, face the remote ranks of that colour;
    /// a colour with no rank on one side gives MPI_COMM_NULL on the other.
    pub(crate) fn inter_split(&self, color: i32, key: i32) -> Result<Option<Communicator>> {
        let inter = self.inter.as_ref().expect("an intercommunicator");
        let n = self.size() as usize;
        let mut all = vec![0i64; 2 * n];
        inter
            .local
            .all_gather(&[color as i64, key as i64], &mut all)?;
        // The remote group's colours and keys, through the leaders.
        let mut mine: Vec<u64> = all.iter().map(|&x| x as u64).collect();
        mine.insert(0, n as u64);
        let m = inter.remote.size();
        let theirs = self.leaders_swap(&mine, 1 + 2 * m, TAG_SPLIT)?;
        let creation = self.next_creation();
        let new_local = inter
            .local
            .split((color != UNDEFINED).then_some(color), key)?;
        let Some(new_local) = new_local else {
            return Ok(None);
        };
        let mut remote: Vec<(i64, usize)> = (0..m)
            .filter(|&i| theirs[1 + 2 * i] as i64 == color as i64)
            .map(|i| (theirs[2 + 2 * i] as i64, i))
            .collect();
        if remote.is_empty() {
            return Ok(None);
        }
        remote.sort_unstable();
        let remote = Group::from_world_ranks(
            remote
                .iter()
                .map(|&(_, i)| inter.remote.world_rank(i))
                .collect(),
        );
        let context = derived_context(&[self.shared.context, creation, color as u64]);
        let c = Inter::handle(new_local, remote, inter.low, context, "");
        c.set_error_handler(self.error_handler());
        Ok(Some(c))
    }

    /// The leaders' exchange of `mine` for `theirs` words from the remote
    /// leader, broadcast to the local group: every rank returns the remote
    /// leader's data.
    fn leaders_swap(&self, mine: &[u64], theirs: usize, tag: i32) -> Result<Vec<u64>> {
        let inter = self.inter.as_ref().expect("an intercommunicator");
        let mut got = vec![0u64; theirs];
        if inter.local.rank == 0 {
            let me = inter.me_at();
            // SAFETY: both buffers live until the waits below.
            unsafe {
                let r = crate::coll::messages::irecv(
                    &self.shared,
                    me,
                    inter.remote_at[0],
                    tag,
                    got.as_mut_ptr().cast(),
                    theirs * 8,
                );
                let s = crate::coll::messages::isend(
                    &self.shared,
                    me,
                    inter.remote_at[0],
                    tag,
                    mine.as_ptr().cast(),
                    mine.len() * 8,
                );
                s.wait();
                let st = r.wait();
                if crate::coll::messages::mismatch(st, theirs * 8) {
                    return Err(self.err(
                        "MPI_Intercomm",
                        ErrorClass::Other,
                        "the remote group's leader sent data of another length",
                    ));
                }
            }
        }
        inter.local.broadcast(&mut got, 0)?;
        Ok(got)
    }

    /// MPI_Comm_create of an intercommunicator: `group` is a subgroup of the
    /// local group; it faces the subgroup the remote ranks passed.
    pub(crate) fn inter_create(&self, group: &Group) -> Result<Option<Communicator>> {
        let me_in = group.rank_of_world(self.world_rank);
        let local = self.group();
        for &w in group.members() {
            if local.rank_of_world(w).is_none() {
                return self.fail(
                    "MPI_Comm_create",
                    ErrorClass::Group,
                    format!("world rank {w} of the group is not in the local group"),
                );
            }
        }
        // Every rank of a local group passes the same group (MPI-3.1 6.4.2):
        // the members face the remote group's members.
        let color = if me_in.is_some() { 0 } else { UNDEFINED };
        self.inter_split(color, me_in.map_or(0, |r| r as i32))
    }

    /// MPI_Comm_compare where either side is an intercommunicator.
    pub(crate) fn inter_compare(&self, other: &Communicator) -> Comparison {
        let (Some(a), Some(b)) = (&self.inter, &other.inter) else {
            return Comparison::Unequal;
        };
        let local = self.group().compare(&other.group());
        let remote = a.remote.compare(&b.remote);
        match (local, remote) {
            (Comparison::Unequal, _) | (_, Comparison::Unequal) => Comparison::Unequal,
            (Comparison::Identical, Comparison::Identical) => Comparison::Congruent,
            _ => Comparison::Similar,
        }
    }

    /// Checks the root argument of a rooted intercommunicator collective:
    /// MPI_ROOT, MPI_PROC_NULL or a remote rank.
    pub(crate) fn check_inter_root(&self, call: &'static str, root: i32) -> Result<i32> {
        let m = self.remote_size();
        if root == ROOT || root == PROC_NULL || (0..m).contains(&root) {
            Ok(root)
        } else {
            self.fail(
                call,
                ErrorClass::Root,
                format!("root {root} is not MPI_ROOT, MPI_PROC_NULL or a remote rank in 0..{m}"),
            )
        }
    }
}
