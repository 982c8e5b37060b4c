//! Communicators: the shared object (group, context, matching state, collective
//! arena) and each rank's handle on it, with creation (dup, split, create) and
//! comparison.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::sync::Mutex;

use crate::coll::arena::{Arena, Slot};
use crate::coll::tiers::Tiers;
use crate::consts::{ANY_SOURCE, ANY_TAG, PROC_NULL, TAG_UB, UNDEFINED};
use crate::error::{Error, ErrorClass, ErrorHandler, Result};
use crate::group::{Comparison, Group};
use crate::p2p::mailbox::Mailbox;
use crate::universe::Universe;

/// A ticket queue: collectives of one rank on one communicator, one at a time, in
/// the order they took their tickets. A non-blocking collective takes its ticket
/// when the program issues it and its helper waits for that turn later, so a
/// blocking collective issued next comes after it. The holder of the turn may
/// enter again (a helper running a blocking collective, a creation that runs
/// collectives inside) without a ticket.
#[derive(Default)]
pub(crate) struct Lane {
    next: std::sync::atomic::AtomicU64,
    done: std::sync::atomic::AtomicU64,
    /// The execution context holding the turn (`mpcrs_scheduler::context_id`), or 0.
    holder: std::sync::atomic::AtomicUsize,
    waiters: mpcrs_scheduler::sync::WaitList,
}

/// Holds the lane until dropped (unless it was entered again by its holder).
pub(crate) struct LaneTurn<'a>(&'a Lane, bool);

impl Lane {
    /// Takes a ticket (without yielding first) and waits for its turn.
    pub(crate) fn enter(&self) -> LaneTurn<'_> {
        // Only a held lane (done < next) can be held by the caller.
        if self.done.load(Ordering::Acquire) != self.next.load(Ordering::Acquire)
            && self.holder.load(Ordering::Acquire) == mpcrs_scheduler::context_id()
        {
            return LaneTurn(self, false);
        }
        let t = self.reserve();
        self.claim(t)
    }

    /// Takes a ticket to be claimed later with [`Lane::claim`].
    pub(crate) fn reserve(&self) -> u64 {
        self.next.fetch_add(1, Ordering::AcqRel)
    }

    /// Waits for the turn of ticket `t` and holds it.
    pub(crate) fn claim(&self, t: u64) -> LaneTurn<'_> {
        if self.done.load(Ordering::Acquire) != t {
            self.waiters
                .wait_until(|| self.done.load(Ordering::Acquire) == t);
        }
        self.holder
            .store(mpcrs_scheduler::context_id(), Ordering::Release);
        LaneTurn(self, true)
    }
}

impl Drop for LaneTurn<'_> {
    fn drop(&mut self) {
        if !self.1 {
            return;
        }
        self.0.holder.store(0, Ordering::Release);
        self.0.done.fetch_add(1, Ordering::AcqRel);
        self.0.waiters.notify_all();
    }
}

/// What all ranks of a communicator share.
pub(crate) struct CommShared {
    pub(crate) context: u64,
    pub(crate) group: Group,
    /// Matching state, one per member, indexed by communicator rank.
    pub(crate) mailboxes: Box<[Mailbox]>,
    pub(crate) arena: Arena,
    pub(crate) universe: Arc<Universe>,
    /// In a communicator spanning processes: where its members live.
    tiers: Option<Tiers>,
}

impl CommShared {
    pub(crate) fn new(universe: Arc<Universe>, context: u64, group: Group) -> Arc<CommShared> {
        let n = group.size();
        let tiers = crate::remote::Fabric::get().and_then(|f| {
            let p: Box<[u32]> = group
                .members()
                .iter()
                .map(|&w| f.process_of(w as usize))
                .collect();
            p.iter().any(|&x| x != f.me).then(|| Tiers::new(p, f.me))
        });
        // Only the members of this process meet in the arena.
        let meeting_here = tiers.as_ref().map_or(n, |t| t.here.len());
        Arc::new(CommShared {
            context,
            mailboxes: (0..n).map(|_| Mailbox::default()).collect(),
            arena: Arena::new(meeting_here, context),
            group,
            universe,
            tiers,
        })
    }

    /// Whether members of this communicator live in other processes: its
    /// collectives then go through point-to-point messages.
    pub(crate) fn spanning(&self) -> bool {
        self.tiers.is_some()
    }

    pub(crate) fn tiers(&self) -> Option<&Tiers> {
        self.tiers.as_ref()
    }

    /// The process of member `rank` if it is not this one.
    pub(crate) fn remote_process(&self, rank: usize) -> Option<u32> {
        let p = self.tiers.as_ref()?.processes[rank];
        (p != crate::remote::Fabric::expect().me).then_some(p)
    }
}

/// One rank's handle on a communicator (MPI_Comm). Not `Clone`: as in MPI, a
/// second handle is made with [`Communicator::dup`]. Aligned to its own cache
/// lines: the handles of ranks on different workers must not share one (the C
/// ABI counts references to them on every call).
#[repr(align(128))]
pub struct Communicator {
    pub(crate) shared: Arc<CommShared>,
    /// Orders this rank's collectives on this communicator: a non-blocking
    /// collective runs in a helper ULT, and a rank may have several in flight, but
    /// it must enter each collective round once, in the order it issued them.
    pub(crate) lane: Lane,
    pub(crate) rank: i32,
    pub(crate) world_rank: i32,
    /// 0: ERRORS_ARE_FATAL, 1: ERRORS_RETURN (atomic so handles can be shared).
    errhandler: AtomicU8,
    /// Communicators made from this one by collective calls (dup, split,
    /// create) and by create_group with this rank leading: numbers that name
    /// the children's contexts the same way in every process.
    creations: std::sync::atomic::AtomicU64,
    pub(crate) group_creations: std::sync::atomic::AtomicU64,
    name: Mutex<String>,
    /// The remote group and the local intracommunicator of an intercommunicator.
    pub(crate) inter: Option<Box<crate::intercomm::Inter>>,
}

impl std::fmt::Debug for Communicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Communicator({:?}, rank {} of {})",
            self.name(),
            self.rank,
            self.size()
        )
    }
}

impl Communicator {
    pub(crate) fn from_shared(
        shared: Arc<CommShared>,
        rank: i32,
        world_rank: i32,
        name: &str,
    ) -> Communicator {
        Communicator {
            shared,
            lane: Lane::default(),
            rank,
            world_rank,
            errhandler: AtomicU8::new(0),
            creations: Default::default(),
            group_creations: Default::default(),
            name: Mutex::new(name.to_string()),
            inter: None,
        }
    }

    /// Rank of the caller in this communicator.
    pub fn rank(&self) -> i32 {
        self.rank
    }

    /// Size of the communicator (of the local group for an intercommunicator).
    pub fn size(&self) -> i32 {
        match &self.inter {
            Some(i) => i.local.size(),
            None => self.shared.group.size() as i32,
        }
    }

    /// Rank of the caller in MPI_COMM_WORLD.
    pub fn world_rank(&self) -> i32 {
        self.world_rank
    }

    /// MPI_Comm_group.
    pub fn group(&self) -> Group {
        match &self.inter {
            Some(i) => i.local.group(),
            None => self.shared.group.clone(),
        }
    }

    /// A number every member gives its next collective creation from this
    /// communicator alike (members create in the same order).
    pub(crate) fn next_creation(&self) -> u64 {
        self.creations.fetch_add(1, Ordering::Relaxed)
    }

    /// Whether member `rank` lives in the caller's process (its memory is
    /// the caller's: ranks of one process share buffers by address).
    pub fn in_this_process(&self, rank: usize) -> bool {
        self.shared.remote_process(rank).is_none()
    }

    /// The context id separating this communicator's traffic from others'.
    pub fn context_id(&self) -> u64 {
        self.shared.context
    }

    pub fn name(&self) -> String {
        self.name.lock().unwrap().clone()
    }

    pub fn set_name(&self, name: &str) {
        *self.name.lock().unwrap() = name.to_string();
        crate::waits::name_communicator(self.shared.context, name);
    }

    pub fn error_handler(&self) -> ErrorHandler {
        match self.errhandler.load(Ordering::Relaxed) {
            0 => ErrorHandler::Fatal,
            _ => ErrorHandler::Return,
        }
    }

    /// MPI_Comm_set_errhandler for this rank's handle.
    pub fn set_error_handler(&self, h: ErrorHandler) {
        let v = match h {
            ErrorHandler::Fatal => 0,
            ErrorHandler::Return => 1,
        };
        self.errhandler.store(v, Ordering::Relaxed);
    }

    /// Builds the error of `call` and passes it through the error handler.
    pub(crate) fn fail<T>(
        &self,
        call: &'static str,
        class: ErrorClass,
        detail: impl Into<String>,
    ) -> Result<T> {
        self.error_handler()
            .handle(Err(Error::new(class, call, self.world_rank, detail)))
    }

    /// Passes an internal result through the error handler.
    pub(crate) fn check<T>(&self, r: Result<T>) -> Result<T> {
        self.error_handler().handle(r)
    }

    pub(crate) fn err(
        &self,
        call: &'static str,
        class: ErrorClass,
        detail: impl Into<String>,
    ) -> Error {
        Error::new(class, call, self.world_rank, detail)
    }

    pub(crate) fn my_mailbox(&self) -> &Mailbox {
        match &self.inter {
            Some(i) => &self.shared.mailboxes[i.me_at()],
            None => &self.shared.mailboxes[self.rank as usize],
        }
    }

    /// The member of the shared object that point-to-point rank `peer` names
    /// (on an intercommunicator, a remote rank is a member of the bridge).
    pub(crate) fn member_of_peer(&self, peer: usize) -> usize {
        match &self.inter {
            Some(i) => i.remote_at[peer],
            None => peer,
        }
    }

    /// Validates the peer rank and tag of a point-to-point call (through the error
    /// handler). A receiving call may name ANY_SOURCE and ANY_TAG. Returns whether
    /// the peer is PROC_NULL, for which the call completes at once.
    pub(crate) fn check_peer(
        &self,
        call: &'static str,
        peer: i32,
        tag: i32,
        receiving: bool,
    ) -> Result<bool> {
        let any = |what: &str| {
            if receiving {
                format!(" (or {what})")
            } else {
                String::new()
            }
        };
        let peers = self.peer_count() as i32;
        if !(peer == PROC_NULL || (receiving && peer == ANY_SOURCE) || (0..peers).contains(&peer)) {
            let role = if receiving { "source" } else { "destination" };
            let also = any("MPI_ANY_SOURCE");
            let remote = if self.is_inter() { "remote " } else { "" };
            return self.fail(
                call,
                ErrorClass::Rank,
                format!("{role} rank {peer} is not in {remote}0..{peers} (or MPI_PROC_NULL){also}"),
            );
        }
        if !((0..=TAG_UB).contains(&tag) || (receiving && tag == ANY_TAG)) {
            return self.fail(
                call,
                ErrorClass::Tag,
                format!("tag {tag} is not in 0..={TAG_UB}{}", any("MPI_ANY_TAG")),
            );
        }
        Ok(peer == PROC_NULL)
    }

    pub(crate) fn check_root(&self, call: &'static str, root: i32) -> Result<usize> {
        if (0..self.size()).contains(&root) {
            Ok(root as usize)
        } else {
            Err(self.err(
                call,
                ErrorClass::Root,
                format!("root {root} is not in 0..{}", self.size()),
            ))
        }
    }

    /// MPI_Comm_compare.
    pub fn compare(&self, other: &Communicator) -> Comparison {
        if Arc::ptr_eq(&self.shared, &other.shared) {
            return Comparison::Identical;
        }
        if self.is_inter() || other.is_inter() {
            return self.inter_compare(other);
        }
        match self.shared.group.compare(&other.shared.group) {
            Comparison::Identical => Comparison::Congruent,
            c => c,
        }
    }

    /// MPI_Comm_dup: same group, new context. Collective.
    pub fn dup(&self) -> Result<Communicator> {
        // After this rank's earlier collectives on `self` (non-blocking ones too).
        let _turn = self.lane.enter();
        if self.is_inter() {
            let r = self.inter_dup();
            return self.check(r);
        }
        let mut out = self.split_impl("MPI_Comm_dup", 0, self.rank)?;
        let c = out.take().expect("dup gives every rank a communicator");
        c.set_error_handler(self.error_handler());
        Ok(c)
    }

    /// MPI_Comm_split: ranks with the same `color` form a communicator, ordered by
    /// `key` then by rank here. `color` UNDEFINED (or `None`) gives no communicator.
    pub fn split(&self, color: Option<i32>, key: i32) -> Result<Option<Communicator>> {
        let color = color.unwrap_or(UNDEFINED);
        if color < 0 && color != UNDEFINED {
            return self.fail(
                "MPI_Comm_split",
                ErrorClass::Arg,
                format!("color {color} is negative"),
            );
        }
        let _turn = self.lane.enter();
        let r = if self.is_inter() {
            self.inter_split(color, key)
        } else {
            self.split_impl("MPI_Comm_split", color, key)
        };
        self.check(r)
    }

    /// MPI_Comm_create: the members of `group` (a subset of this communicator's)
    /// get a communicator in the group's order; others get `None`. Collective.
    pub fn create(&self, group: &Group) -> Result<Option<Communicator>> {
        let _turn = self.lane.enter();
        if self.is_inter() {
            let r = self.inter_create(group);
            return self.check(r);
        }
        let me_in = group.rank_of_world(self.world_rank);
        // Ranks may pass different, disjoint groups (MPI-2.2): each group
        // becomes a communicator of its own, named by its lowest member.
        let color = match me_in {
            Some(_) => group_color(group),
            None => UNDEFINED,
        };
        for &w in group.members() {
            if self.shared.group.rank_of_world(w).is_none() {
                return self.fail(
                    "MPI_Comm_create",
                    ErrorClass::Group,
                    format!("world rank {w} of the group is not in the communicator"),
                );
            }
        }
        let r = self.split_impl("MPI_Comm_create", color, me_in.map_or(0, |r| r as i32));
        self.check(r)
    }

    /// MPI_Comm_free: releases this rank's handle (dropping it does the same). The
    /// shared state goes when the last rank's handle does.
    pub fn free(self) {}

    /// MPI_Comm_create_group: collective over the members of `group` only (a subset
    /// of this communicator); `tag` separates concurrent creations. The first member
    /// builds the communicator and hands it to the others with point-to-point
    /// messages on this communicator.
    pub fn create_group(&self, group: &Group, tag: i32) -> Result<Communicator> {
        let call = "MPI_Comm_create_group";
        let Some(my_index) = group.rank_of_world(self.world_rank) else {
            return self.fail(
                call,
                ErrorClass::Group,
                "the caller is not a member of the group",
            );
        };
        let to_comm_rank = |w: i32| self.shared.group.rank_of_world(w).map(|r| r as i32);
        let mut ranks = Vec::with_capacity(group.size());
        for &w in group.members() {
            match to_comm_rank(w) {
                Some(r) => ranks.push(r),
                None => {
                    return self.fail(
                        call,
                        ErrorClass::Group,
                        format!("world rank {w} of the group is not in the communicator"),
                    )
                }
            }
        }
        if self.shared.spanning() {
            let r = self.create_group_spanning(group, &ranks, my_index, tag);
            return self.check(r);
        }
        let shared = if my_index == 0 {
            let u = self.shared.universe.clone();
            let shared = CommShared::new(u.clone(), u.new_context(), group.clone());
            for &r in &ranks[1..] {
                // Ranks share the address space: the message carries a counted
                // reference to the new communicator, taken back by the receiver.
                let ptr = Arc::into_raw(shared.clone()) as usize as u64;
                self.send(&[ptr], r, tag)?;
            }
            shared
        } else {
            let mut ptr = [0u64];
            self.recv(&mut ptr, ranks[0], tag)?;
            // SAFETY: the leader sent a pointer from `Arc::into_raw` of a CommShared,
            // with one strong count for this receiver.
            unsafe { Arc::from_raw(ptr[0] as usize as *const CommShared) }
        };
        Ok(Communicator::from_shared(
            shared,
            my_index as i32,
            self.world_rank,
            "",
        ))
    }

    /// MPI_COMM_SELF for the caller: a communicator holding only itself.
    pub fn self_comm(&self) -> Communicator {
        let u = self.shared.universe.clone();
        let ctx = u.new_context();
        let shared = CommShared::new(u, ctx, Group::from_world_ranks(vec![self.world_rank]));
        Communicator::from_shared(shared, 0, self.world_rank, "MPI_COMM_SELF")
    }

    /// Common body of dup, split and create: exchange (color, key) in the arena; the
    /// leader builds one shared communicator per colour and hands each rank its own.
    fn split_impl(&self, call: &'static str, color: i32, key: i32) -> Result<Option<Communicator>> {
        if self.shared.spanning() {
            return Ok(self.split_spanning(color, key));
        }
        let me = self.rank as usize;
        let arena = &self.shared.arena;
        arena.publish(
            me,
            Slot {
                a: color as i64,
                b: key as i64,
                ..Slot::default()
            },
        );
        let universe = &self.shared.universe;
        let group = &self.shared.group;
        arena.barrier_with(|r| {
            let n = r.size();
            let members = by_colour((0..n).map(|i| (r.slot(i).a, r.slot(i).b)));
            for i in 0..n {
                // SAFETY: leader action.
                unsafe { r.hand_out(i, None) };
            }
            for same_color in members.chunk_by(|x, y| x.0 == y.0) {
                let g = colour_group(group, same_color);
                let shared = CommShared::new(universe.clone(), universe.new_context(), g);
                for &(_, _, i) in same_color {
                    // SAFETY: leader action.
                    unsafe { r.hand_out(i, Some(shared.clone())) };
                }
            }
        });
        let mine = arena.take_handout(me);
        let _ = call;
        Ok(mine.map(|shared| {
            let rank = shared
                .group
                .rank_of_world(self.world_rank)
                .expect("member of the group it was handed") as i32;
            Communicator::from_shared(shared, rank, self.world_rank, "")
        }))
    }

    /// Split of a communicator spanning processes. The members of each process
    /// publish (colour, key) in the arena; their speaker swaps them with the
    /// other processes' speakers, sorts every colour once and hands each member
    /// of its process its new communicator, made under a context every process
    /// derives alike. Every member sorting everything itself was O(ranks^2).
    fn split_spanning(&self, color: i32, key: i32) -> Option<Communicator> {
        let tiers = self.shared.tiers().expect("a spanning communicator");
        let me = self.rank as usize;
        let slot = tiers.slot(me);
        let arena = &self.shared.arena;
        arena.publish(
            slot,
            Slot {
                a: color as i64,
                b: key as i64,
                ..Slot::default()
            },
        );
        let creation = self.creations.fetch_add(1, Ordering::Relaxed);
        let round = arena.barrier();
        if me == tiers.here[0] {
            let n = self.size() as usize;
            let mut all = vec![[0i64; 2]; n];
            for (s, &m) in tiers.here.iter().enumerate() {
                all[m] = [round.slot(s).a, round.slot(s).b];
            }
            crate::coll::spanning::speakers_allgather(&self.shared, me, &mut all);
            let members = by_colour(all.iter().map(|e| (e[0], e[1])));
            for s in 0..tiers.here.len() {
                // SAFETY: between the two barriers, the speaker alone writes
                // hand-outs, and nobody takes one before the second barrier.
                unsafe { round.hand_out(s, None) };
            }
            for same_color in members.chunk_by(|x, y| x.0 == y.0) {
                if !same_color.iter().any(|&(_, _, i)| tiers.lives_here(i)) {
                    continue;
                }
                let group = colour_group(&self.shared.group, same_color);
                let context =
                    derived_context(&[self.shared.context, creation, same_color[0].0 as u64]);
                let universe = &self.shared.universe;
                // Made once for every member here (a spanning communicator
                // implies the fabric): one join.
                let fabric = crate::remote::Fabric::get().expect("the fabric of a spanning job");
                let shared = fabric.registry.get_or_make(context, 1, || {
                    CommShared::new(universe.clone(), context, group)
                });
                for &(_, _, i) in same_color.iter().filter(|&&(_, _, i)| tiers.lives_here(i)) {
                    // SAFETY: as above.
                    unsafe { round.hand_out(tiers.slot(i), Some(shared.clone())) };
                }
            }
        }
        arena.barrier();
        let shared = arena.take_handout(slot)?;
        let rank = shared
            .group
            .rank_of_world(self.world_rank)
            .expect("member of the group it was handed") as i32;
        Some(Communicator::from_shared(shared, rank, self.world_rank, ""))
    }

    /// create_group of a communicator spanning processes: the first member names
    /// the context and sends it to the others with `tag`.
    fn create_group_spanning(
        &self,
        group: &Group,
        ranks: &[i32],
        my_index: usize,
        tag: i32,
    ) -> Result<Communicator> {
        let context = if my_index == 0 {
            let n = self.group_creations.fetch_add(1, Ordering::Relaxed);
            let ctx = derived_context(&[self.shared.context, u64::MAX, self.world_rank as u64, n]);
            for &r in &ranks[1..] {
                self.send(&[ctx], r, tag)?;
            }
            ctx
        } else {
            let mut ctx = [0u64];
            self.recv(&mut ctx, ranks[0], tag)?;
            ctx[0]
        };
        Ok(self.join_created(context, group.clone()))
    }

    /// MPI_Comm_create_from_group: the communicator of `group` that its
    /// members make with the same `key` (a string tag's hash and how many
    /// creations with that tag and group came before), with no message: every
    /// member derives its context alike. `self` is any communicator of the
    /// caller (for its universe).
    pub fn from_group(&self, group: &Group, key: &[u64]) -> Result<Communicator> {
        if group.rank_of_world(self.world_rank).is_none() {
            return self.fail(
                "MPI_Comm_create_from_group",
                ErrorClass::Group,
                "the caller is not a member of the group",
            );
        }
        let mut parts = vec![u64::MAX - 1];
        parts.extend_from_slice(key);
        parts.extend(group.members().iter().map(|&w| w as u64));
        Ok(self.join_created(derived_context(&parts), group.clone()))
    }

    /// This rank's handle on the new communicator `context` of `group`.
    fn join_created(&self, context: u64, group: Group) -> Communicator {
        let rank = group
            .rank_of_world(self.world_rank)
            .expect("member of the group it joins") as i32;
        let shared = meet(&self.shared.universe, context, group);
        Communicator::from_shared(shared, rank, self.world_rank, "")
    }
}

/// The members of a split, (colour, key, rank) sorted so that each colour's
/// are together and in (key, rank) order, from the (colour, key) of every
/// rank; UNDEFINED colours are left out.
fn by_colour(entries: impl Iterator<Item = (i64, i64)>) -> Vec<(i64, i64, usize)> {
    let mut members: Vec<(i64, i64, usize)> = entries
        .enumerate()
        .filter(|&(_, (c, _))| c != UNDEFINED as i64)
        .map(|(i, (c, k))| (c, k, i))
        .collect();
    members.sort_unstable();
    members
}

/// The group of one colour of [`by_colour`]'s list, its ranks those of `of`.
fn colour_group(of: &Group, same_color: &[(i64, i64, usize)]) -> Group {
    Group::from_world_ranks(
        same_color
            .iter()
            .map(|&(_, _, i)| of.world_rank(i))
            .collect(),
    )
}

/// The colour a creation from `group` splits by: its lowest world rank, the
/// same for every member, distinct between disjoint groups.
pub(crate) fn group_color(group: &Group) -> i32 {
    group.members().iter().copied().min().unwrap_or(0)
}

/// The object of the communicator `context` of `group` that every member of
/// this process gets, each calling this once: the first call makes it, the
/// others find it, however far apart they come (a member may use and free it
/// before another has asked).
pub(crate) fn meet(universe: &Arc<Universe>, context: u64, group: Group) -> Arc<CommShared> {
    let make = |g: Group| CommShared::new(universe.clone(), context, g);
    if let Some(fabric) = crate::remote::Fabric::get() {
        let here = group
            .members()
            .iter()
            .filter(|&&w| fabric.process_of(w as usize) == fabric.me)
            .count();
        return fabric.registry.get_or_make(context, here, || make(group));
    }
    let mut m = universe.meetings.lock().unwrap();
    if let Some((c, left)) = m.get_mut(&context) {
        let c = c.clone();
        *left -= 1;
        if *left == 0 {
            m.remove(&context);
        }
        return c;
    }
    let joins = group.size();
    let c = make(group);
    if joins > 1 {
        m.insert(context, (c.clone(), joins - 1));
    }
    c
}

/// A context id from numbers every member of a collective creation knows alike
/// (splitmix64 over them). The top bit keeps it apart from the ids one process
/// hands out for its own communicators.
pub(crate) fn derived_context(parts: &[u64]) -> u64 {
    let mut h: u64 = 0x243f_6a88_85a3_08d3;
    for &p in parts {
        h = h.wrapping_add(p).wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = h;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h = z ^ (z >> 31);
    }
    h | 1 << 63
}

impl Communicator {
    /// MPIX_Checkpoint: collective over the world communicator. Every rank gets
    /// the same state. The last rank of this process to arrive leads (see
    /// `checkpoint::lead`) while the others wait.
    pub fn checkpoint(&self) -> crate::CrState {
        let _turn = self.lane.enter();
        if !crate::checkpoint::enabled() {
            crate::coll::barrier(&self.shared, self.rank as usize);
            return crate::CrState::Ignore;
        }
        let ranks = self.size() as usize;
        if self.shared.spanning() {
            // The ranks of this process meet here; the leaders of the processes
            // then meet over the network.
            static LOCAL: std::sync::OnceLock<mpcrs_scheduler::sync::Barrier> =
                std::sync::OnceLock::new();
            let here = crate::checkpoint::network::expect().local_ranks();
            LOCAL
                .get_or_init(|| mpcrs_scheduler::sync::Barrier::new(here))
                .wait_with(|_| crate::checkpoint::lead(ranks, true));
        } else {
            self.shared
                .arena
                .barrier_with(|_| crate::checkpoint::lead(ranks, false));
        }
        crate::checkpoint::outcome()
    }
}
