//! Groups: ordered sets of processes, named by their rank in MPI_COMM_WORLD.

use std::sync::{Arc, OnceLock};

use crate::consts::UNDEFINED;

/// How two groups or communicators relate (MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR,
/// MPI_UNEQUAL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    Identical,
    Congruent,
    Similar,
    Unequal,
}

/// An ordered set of world ranks; member `i` has rank `i` in the group.
#[derive(Debug, Clone)]
pub struct Group {
    members: Arc<[i32]>,
    /// (world rank, group rank) sorted by world rank, built on the first
    /// lookup that the identity does not answer, shared by the group's clones:
    /// the ranks of a communicator look up through one index, not a scan each
    /// (which made creating a communicator O(ranks^2)).
    index: Arc<OnceLock<Box<[(i32, u32)]>>>,
}

impl PartialEq for Group {
    fn eq(&self, other: &Group) -> bool {
        self.members == other.members
    }
}

impl Eq for Group {}

impl Group {
    pub fn from_world_ranks(members: Vec<i32>) -> Group {
        Group {
            members: members.into(),
            index: Arc::default(),
        }
    }

    pub fn empty() -> Group {
        Group::from_world_ranks(Vec::new())
    }

    pub fn size(&self) -> usize {
        self.members.len()
    }

    /// World rank of group member `rank`.
    pub fn world_rank(&self, rank: usize) -> i32 {
        self.members[rank]
    }

    pub fn members(&self) -> &[i32] {
        &self.members
    }

    /// Group rank of the process with world rank `world`, if it is a member.
    pub fn rank_of_world(&self, world: i32) -> Option<usize> {
        // Worlds, their dups and prefixes: member i is world rank i.
        if let Some(&w) = usize::try_from(world)
            .ok()
            .and_then(|i| self.members.get(i))
        {
            if w == world {
                return Some(world as usize);
            }
        }
        let index = self.index.get_or_init(|| {
            let mut pairs: Vec<(i32, u32)> = self
                .members
                .iter()
                .enumerate()
                .map(|(rank, &w)| (w, rank as u32))
                .collect();
            pairs.sort_unstable();
            pairs.into()
        });
        index
            .binary_search_by_key(&world, |&(w, _)| w)
            .ok()
            .map(|i| index[i].1 as usize)
    }

    /// MPI_Group_translate_ranks: each of `ranks` (in self) as a rank of `other`,
    /// UNDEFINED where absent. Out-of-range ranks give `None`.
    pub fn translate_ranks(&self, ranks: &[i32], other: &Group) -> Option<Vec<i32>> {
        ranks
            .iter()
            .map(|&r| {
                if r == crate::consts::PROC_NULL {
                    return Some(crate::consts::PROC_NULL);
                }
                let w = *self.members.get(usize::try_from(r).ok()?)?;
                Some(other.rank_of_world(w).map_or(UNDEFINED, |x| x as i32))
            })
            .collect()
    }

    /// MPI_Group_incl; `None` if a rank is out of range or repeated.
    pub fn incl(&self, ranks: &[i32]) -> Option<Group> {
        let mut seen = vec![false; self.size()];
        let mut out = Vec::with_capacity(ranks.len());
        for &r in ranks {
            let i = usize::try_from(r).ok().filter(|&i| i < self.size())?;
            if std::mem::replace(&mut seen[i], true) {
                return None;
            }
            out.push(self.members[i]);
        }
        Some(Group::from_world_ranks(out))
    }

    /// MPI_Group_excl; `None` if a rank is out of range or repeated.
    pub fn excl(&self, ranks: &[i32]) -> Option<Group> {
        let mut drop = vec![false; self.size()];
        for &r in ranks {
            let i = usize::try_from(r).ok().filter(|&i| i < self.size())?;
            if std::mem::replace(&mut drop[i], true) {
                return None;
            }
        }
        Some(Group::from_world_ranks(
            self.members
                .iter()
                .zip(drop)
                .filter(|(_, d)| !d)
                .map(|(&w, _)| w)
                .collect(),
        ))
    }

    /// MPI_Group_union: members of self, then members of other not in self.
    pub fn union(&self, other: &Group) -> Group {
        let mut out = self.members.to_vec();
        out.extend(other.members.iter().filter(|w| !self.members.contains(w)));
        Group::from_world_ranks(out)
    }

    /// MPI_Group_intersection: members of self that are in other, in self's order.
    pub fn intersection(&self, other: &Group) -> Group {
        Group::from_world_ranks(
            self.members
                .iter()
                .copied()
                .filter(|w| other.members.contains(w))
                .collect(),
        )
    }

    /// MPI_Group_difference: members of self not in other, in self's order.
    pub fn difference(&self, other: &Group) -> Group {
        Group::from_world_ranks(
            self.members
                .iter()
                .copied()
                .filter(|w| !other.members.contains(w))
                .collect(),
        )
    }

    /// MPI_Group_compare.
    pub fn compare(&self, other: &Group) -> Comparison {
        if self.members == other.members {
            Comparison::Identical
        } else {
            let mut a = self.members.to_vec();
            let mut b = other.members.to_vec();
            a.sort_unstable();
            b.sort_unstable();
            if a == b {
                Comparison::Similar
            } else {
                Comparison::Unequal
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations_keep_mpi_order() {
        let g = Group::from_world_ranks(vec![4, 2, 7, 9]);
        let h = Group::from_world_ranks(vec![9, 1, 4]);
        assert_eq!(g.union(&h).members(), &[4, 2, 7, 9, 1]);
        assert_eq!(g.intersection(&h).members(), &[4, 9]);
        assert_eq!(g.difference(&h).members(), &[2, 7]);
        assert_eq!(g.incl(&[3, 0]).unwrap().members(), &[9, 4]);
        assert!(g.incl(&[0, 0]).is_none());
        assert!(g.incl(&[4]).is_none());
        assert_eq!(g.excl(&[1, 2]).unwrap().members(), &[4, 9]);
        assert_eq!(
            g.translate_ranks(&[0, 1, 3], &h).unwrap(),
            vec![2, UNDEFINED, 0]
        );
        assert_eq!(g.compare(&g.clone()), Comparison::Identical);
        let shuffled = Group::from_world_ranks(vec![9, 7, 2, 4]);
        assert_eq!(g.compare(&shuffled), Comparison::Similar);
        assert_eq!(g.compare(&h), Comparison::Unequal);
    }
}
