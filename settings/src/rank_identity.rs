//! What a rank finds in its environment about its place in the job, under
//! the names Open MPI's and MPICH's launchers give it: its rank and the job's
//! size (`OMPI_COMM_WORLD_RANK`, `PMI_RANK`...), and its place among the ranks
//! of its host (`OMPI_COMM_WORLD_LOCAL_RANK`, `MPI_LOCALRANKID`...). The
//! launcher sets them for a process of one rank; in a process of several, the
//! loader gives each rank its own values in its private environment.

use std::ops::Range;

/// Rank `rank`'s place among the ranks of its host: (local rank, local size).
/// `blocks` are the ranks of each process, `nodes` the node (host) of each.
pub fn local_place(rank: usize, blocks: &[Range<usize>], nodes: &[u32]) -> (usize, usize) {
    let node_of = |p: usize| nodes.get(p).copied().unwrap_or(0);
    let Some(own) = blocks.iter().position(|b| b.contains(&rank)) else {
        return (0, 1);
    };
    let mut below = 0;
    let mut size = 0;
    for (p, block) in blocks.iter().enumerate() {
        if node_of(p) != node_of(own) {
            continue;
        }
        size += block.len();
        // Ranks of a node are numbered in world-rank order.
        below += block.clone().filter(|&r| r < rank).count();
    }
    (below, size)
}

/// The variables that tell a rank who it is, as Open MPI's mpirun
/// (`OMPI_COMM_WORLD_*`) and MPICH's hydra (`PMI_RANK`, `PMI_SIZE`,
/// `MPI_LOCALRANKID`, `MPI_LOCALNRANKS`) set them.
pub fn rank_variables(
    rank: usize,
    size: usize,
    local_rank: usize,
    local_size: usize,
) -> [(&'static str, String); 8] {
    [
        ("PMI_RANK", rank.to_string()),
        ("PMI_SIZE", size.to_string()),
        ("OMPI_COMM_WORLD_RANK", rank.to_string()),
        ("OMPI_COMM_WORLD_SIZE", size.to_string()),
        ("OMPI_COMM_WORLD_LOCAL_RANK", local_rank.to_string()),
        ("OMPI_COMM_WORLD_LOCAL_SIZE", local_size.to_string()),
        ("MPI_LOCALRANKID", local_rank.to_string()),
        ("MPI_LOCALNRANKS", local_size.to_string()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_ranks_count_the_ranks_of_the_same_node_in_rank_order() {
        let blocks = vec![0..2, 2..4, 4..6];
        // Processes 0 and 2 on node 0, process 1 on node 1.
        let nodes = [0, 1, 0];
        assert_eq!(local_place(0, &blocks, &nodes), (0, 4));
        assert_eq!(local_place(4, &blocks, &nodes), (2, 4));
        assert_eq!(local_place(5, &blocks, &nodes), (3, 4));
        assert_eq!(local_place(3, &blocks, &nodes), (1, 2));
        assert_eq!(local_place(3, &blocks, &[]), (3, 6));
    }
}
