//! Graph (MPI_Graph_*) and distributed-graph (MPI_Dist_graph_*) topologies.
//! Both keep the ranks in the order of the old communicator (no reordering).

use std::os::raw::{c_int, c_void};

use mpcrs::ErrorClass;

use crate::ctypes::{is_unweighted, is_weights_empty, MPI_Info};
use crate::export::{mpi_fn, tri};
use crate::handles::*;
use crate::topo::{store_with_topology, topology, Shape};

/// MPI_INT, for the exchange of edges.
const MPI_INT: MPI_Datatype = 0x4c00_0405;

/// A graph topology as MPI_Graph_create describes it: `index[i]` is the
/// number of edges of nodes 0..=i, `edges` their neighbours.
#[derive(Clone, Debug)]
pub(crate) struct Graph {
    pub(crate) index: Vec<c_int>,
    pub(crate) edges: Vec<c_int>,
}

impl Graph {
    /// The neighbours of `rank`, in the order given at creation.
    pub(crate) fn neighbours(&self, rank: c_int) -> &[c_int] {
        let r = rank as usize;
        let start = if r == 0 {
            0
        } else {
            self.index[r - 1] as usize
        };
        &self.edges[start..self.index[r] as usize]
    }

    /// Why `index` and `edges` of `nnodes` nodes do not make a graph, if not.
    fn check(&self, nnodes: c_int) -> Option<String> {
        let mut last = 0;
        for (i, &x) in self.index.iter().enumerate() {
            if x < last {
                return Some(format!(
                    "index[{i}] = {x} is below index[{}] = {last}",
                    i.max(1) - 1
                ));
            }
            last = x;
        }
        if let Some(&bad) = self.edges.iter().find(|&&e| e < 0 || e >= nnodes) {
            return Some(format!("edge to {bad} is not a node in 0..{nnodes}"));
        }
        None
    }
}

/// A distributed graph: this rank's in- and out-neighbours and their weights.
#[derive(Clone, Debug)]
pub(crate) struct DistGraph {
    pub(crate) sources: Vec<c_int>,
    pub(crate) source_weights: Vec<c_int>,
    pub(crate) destinations: Vec<c_int>,
    pub(crate) destination_weights: Vec<c_int>,
    pub(crate) weighted: bool,
}

fn graph_of(call: &'static str, comm: MPI_Comm) -> Result<(CommRef, Graph), c_int> {
    let c = comm_for(call, comm)?;
    match topology(comm).map(|t| t.shape) {
        Some(Shape::Graph(g)) => Ok((c, g)),
        _ => Err(fail(
            &c,
            call,
            ErrorClass::Topology,
            "the communicator has no graph topology".into(),
        )),
    }
}

fn dist_graph_of(call: &'static str, comm: MPI_Comm) -> Result<(CommRef, DistGraph), c_int> {
    let c = comm_for(call, comm)?;
    match topology(comm).map(|t| t.shape) {
        Some(Shape::DistGraph(g)) => Ok((c, g)),
        _ => Err(fail(
            &c,
            call,
            ErrorClass::Topology,
            "the communicator has no distributed graph topology".into(),
        )),
    }
}

/// Copies `v` into a C array of at most `max` entries.
///
/// # Safety
/// `out` is writable for `max` entries (or `max` is 0).
unsafe fn write_array(v: &[c_int], max: c_int, out: *mut c_int) {
    for (i, &x) in v.iter().take(max.max(0) as usize).enumerate() {
        // SAFETY: `max` entries by contract.
        unsafe { *out.add(i) = x };
    }
}

/// A weights argument of `n` entries: `None` for MPI_UNWEIGHTED, empty for
/// MPI_WEIGHTS_EMPTY or no entries.
///
/// # Safety
/// `w` is one of the two markers or holds `n` ints.
unsafe fn weights(w: *const c_int, n: usize) -> Option<Vec<c_int>> {
    if is_unweighted(w) {
        None
    } else if is_weights_empty(w) {
        Some(Vec::new())
    } else {
        // SAFETY: by contract.
        Some(unsafe { c_array(w, n) }.to_vec())
    }
}

mpi_fn! {
    fn Graph_create(comm_old: MPI_Comm, nnodes: c_int, indx: *const c_int, edges: *const c_int, _reorder: c_int, comm_graph: *mut MPI_Comm) -> c_int {
        let call = "MPI_Graph_create";
        let c = tri!(comm_for(call, comm_old));
        if nnodes < 0 || nnodes > c.size() {
            return fail(&c, call, ErrorClass::Arg, format!("{nnodes} nodes for a communicator of {}", c.size()));
        }
        // SAFETY: `nnodes` index entries, then as many edges as the last says.
        let index = unsafe { c_array(indx, nnodes as usize) }.to_vec();
        let nedges = index.last().copied().unwrap_or(0).max(0) as usize;
        // SAFETY: as above.
        let g = Graph { index, edges: unsafe { c_array(edges, nedges) }.to_vec() };
        if let Some(why) = g.check(nnodes) {
            return fail(&c, call, ErrorClass::Arg, why);
        }
        // The first `nnodes` ranks are the nodes, in rank order.
        let color = if c.rank() < nnodes { Some(0) } else { None };
        let h = match c.split(color, c.rank()) {
            Ok(Some(s)) => match store_with_topology(s, Shape::Graph(g)) {
                Ok(h) => h,
                Err(e) => return code(&e),
            },
            Ok(None) => MPI_COMM_NULL,
            Err(e) => return code(&e),
        };
        // SAFETY: writable by contract.
        unsafe { *comm_graph = h };
        MPI_SUCCESS
    }

    fn Graphdims_get(comm: MPI_Comm, nnodes: *mut c_int, nedges: *mut c_int) -> c_int {
        let (_, g) = tri!(graph_of("MPI_Graphdims_get", comm));
        // SAFETY: writable by contract.
        unsafe {
            *nnodes = g.index.len() as c_int;
            *nedges = g.edges.len() as c_int;
        }
        MPI_SUCCESS
    }

    fn Graph_get(comm: MPI_Comm, maxindex: c_int, maxedges: c_int, indx: *mut c_int, edges: *mut c_int) -> c_int {
        let (_, g) = tri!(graph_of("MPI_Graph_get", comm));
        // SAFETY: `maxindex` and `maxedges` entries by contract.
        unsafe {
            write_array(&g.index, maxindex, indx);
            write_array(&g.edges, maxedges, edges);
        }
        MPI_SUCCESS
    }

    fn Graph_neighbors_count(comm: MPI_Comm, rank: c_int, nneighbors: *mut c_int) -> c_int {
        let call = "MPI_Graph_neighbors_count";
        let (c, g) = tri!(graph_of(call, comm));
        if rank < 0 || rank >= c.size() {
            return fail(&c, call, ErrorClass::Rank, format!("rank {rank} is not in 0..{}", c.size()));
        }
        // SAFETY: writable by contract.
        unsafe { *nneighbors = g.neighbours(rank).len() as c_int };
        MPI_SUCCESS
    }

    fn Graph_neighbors(comm: MPI_Comm, rank: c_int, maxneighbors: c_int, neighbors: *mut c_int) -> c_int {
        let call = "MPI_Graph_neighbors";
        let (c, g) = tri!(graph_of(call, comm));
        if rank < 0 || rank >= c.size() {
            return fail(&c, call, ErrorClass::Rank, format!("rank {rank} is not in 0..{}", c.size()));
        }
        // SAFETY: `maxneighbors` entries by contract.
        unsafe { write_array(g.neighbours(rank), maxneighbors, neighbors) };
        MPI_SUCCESS
    }

    fn Graph_map(comm: MPI_Comm, nnodes: c_int, indx: *const c_int, edges: *const c_int, newrank: *mut c_int) -> c_int {
        let call = "MPI_Graph_map";
        let c = tri!(comm_for(call, comm));
        let _ = (indx, edges);
        if nnodes < 1 || nnodes > c.size() {
            return fail(&c, call, ErrorClass::Arg, format!("{nnodes} nodes for a communicator of {}", c.size()));
        }
        // No reordering (as MPI_Graph_create): the first ranks are the nodes.
        // SAFETY: writable by contract.
        unsafe { *newrank = if c.rank() < nnodes { c.rank() } else { MPI_UNDEFINED } };
        MPI_SUCCESS
    }
}

mpi_fn! {
    fn Dist_graph_create_adjacent(comm_old: MPI_Comm, indegree: c_int, sources: *const c_int, sourceweights: *const c_int, outdegree: c_int, destinations: *const c_int, destweights: *const c_int, _info: MPI_Info, _reorder: c_int, comm_dist_graph: *mut MPI_Comm) -> c_int {
        let call = "MPI_Dist_graph_create_adjacent";
        let c = tri!(comm_for(call, comm_old));
        if indegree < 0 || outdegree < 0 {
            return fail(&c, call, ErrorClass::Arg, format!("negative degree (in {indegree}, out {outdegree})"));
        }
        let (ni, no) = (indegree as usize, outdegree as usize);
        // SAFETY: the degrees give the lengths, by contract.
        let (src, dst, sw, dw) = unsafe {
            (c_array(sources, ni).to_vec(), c_array(destinations, no).to_vec(), weights(sourceweights, ni), weights(destweights, no))
        };
        let n = c.size();
        if let Some(&bad) = src.iter().chain(&dst).find(|&&r| r < 0 || r >= n) {
            return fail(&c, call, ErrorClass::Rank, format!("neighbour {bad} is not a rank in 0..{n}"));
        }
        let weighted = sw.is_some() || dw.is_some();
        let g = DistGraph {
            sources: src,
            source_weights: sw.unwrap_or_default(),
            destinations: dst,
            destination_weights: dw.unwrap_or_default(),
            weighted,
        };
        let h = match c.dup().and_then(|d| store_with_topology(d, Shape::DistGraph(g))) {
            Ok(h) => h,
            Err(e) => return code(&e),
        };
        // SAFETY: writable by contract.
        unsafe { *comm_dist_graph = h };
        MPI_SUCCESS
    }

    fn Dist_graph_create(comm_old: MPI_Comm, n: c_int, sources: *const c_int, degrees: *const c_int, destinations: *const c_int, weights: *const c_int, _info: MPI_Info, _reorder: c_int, comm_dist_graph: *mut MPI_Comm) -> c_int {
        let call = "MPI_Dist_graph_create";
        let c = tri!(comm_for(call, comm_old));
        if n < 0 {
            return fail(&c, call, ErrorClass::Arg, format!("negative number of sources {n}"));
        }
        // SAFETY: `n` sources and degrees, then as many edges as the degrees add up to.
        let (src, deg) = unsafe { (c_array(sources, n as usize).to_vec(), c_array(degrees, n as usize).to_vec()) };
        if let Some(&bad) = deg.iter().find(|&&d| d < 0) {
            return fail(&c, call, ErrorClass::Arg, format!("negative degree {bad}"));
        }
        let nedges: usize = deg.iter().map(|&d| d as usize).sum();
        // SAFETY: as above.
        let (dst, w) = unsafe { (c_array(destinations, nedges).to_vec(), self::weights(weights, nedges)) };
        let size = c.size();
        if let Some(&bad) = src.iter().chain(&dst).find(|&&r| r < 0 || r >= size) {
            return fail(&c, call, ErrorClass::Rank, format!("node {bad} is not a rank in 0..{size}"));
        }
        let weighted = w.is_some();
        let w = w.unwrap_or_default();
        // Every edge s -> d goes to s (an out-edge) and to d (an in-edge) as
        // three ints: direction (0 in, 1 out), the other end, the weight.
        let p = size as usize;
        let mut per: Vec<Vec<c_int>> = vec![Vec::new(); p];
        let mut e = 0;
        for (i, &s) in src.iter().enumerate() {
            for _ in 0..deg[i] {
                let (d, wt) = (dst[e], w.get(e).copied().unwrap_or(1));
                per[s as usize].extend([1, d, wt]);
                per[d as usize].extend([0, s, wt]);
                e += 1;
            }
        }
        let send_counts: Vec<c_int> = per.iter().map(|v| v.len() as c_int).collect();
        let send: Vec<c_int> = per.concat();
        let send_displs: Vec<c_int> = send_counts.iter().scan(0, |at, &n| { let d = *at; *at += n; Some(d) }).collect();
        let mut recv_counts = vec![0 as c_int; p];
        // SAFETY: arrays of one int per rank.
        let rc = unsafe {
            crate::coll::PMPI_Alltoall(send_counts.as_ptr().cast(), 1, MPI_INT, recv_counts.as_mut_ptr().cast(), 1, MPI_INT, comm_old)
        };
        if rc != MPI_SUCCESS {
            return rc;
        }
        let recv_displs: Vec<c_int> = recv_counts.iter().scan(0, |at, &n| { let d = *at; *at += n; Some(d) }).collect();
        let mut recv = vec![0 as c_int; recv_counts.iter().map(|&n| n as usize).sum()];
        // SAFETY: counts and displacements describe both buffers.
        let rc = unsafe {
            crate::coll::PMPI_Alltoallv(send.as_ptr().cast::<c_void>(), send_counts.as_ptr(), send_displs.as_ptr(), MPI_INT,
                recv.as_mut_ptr().cast::<c_void>(), recv_counts.as_ptr(), recv_displs.as_ptr(), MPI_INT, comm_old)
        };
        if rc != MPI_SUCCESS {
            return rc;
        }
        // Neighbours in the order of the ranks that named them, then of their edges.
        let mut g = DistGraph { sources: Vec::new(), source_weights: Vec::new(), destinations: Vec::new(), destination_weights: Vec::new(), weighted };
        for t in recv.chunks_exact(3) {
            if t[0] == 1 {
                g.destinations.push(t[1]);
                g.destination_weights.push(t[2]);
            } else {
                g.sources.push(t[1]);
                g.source_weights.push(t[2]);
            }
        }
        if !weighted {
            g.source_weights.clear();
            g.destination_weights.clear();
        }
        let h = match c.dup().and_then(|d| store_with_topology(d, Shape::DistGraph(g))) {
            Ok(h) => h,
            Err(e) => return code(&e),
        };
        // SAFETY: writable by contract.
        unsafe { *comm_dist_graph = h };
        MPI_SUCCESS
    }

    fn Dist_graph_neighbors_count(comm: MPI_Comm, indegree: *mut c_int, outdegree: *mut c_int, weighted: *mut c_int) -> c_int {
        let (_, g) = tri!(dist_graph_of("MPI_Dist_graph_neighbors_count", comm));
        // SAFETY: writable by contract.
        unsafe {
            *indegree = g.sources.len() as c_int;
            *outdegree = g.destinations.len() as c_int;
            *weighted = g.weighted as c_int;
        }
        MPI_SUCCESS
    }

    fn Dist_graph_neighbors(comm: MPI_Comm, maxindegree: c_int, sources: *mut c_int, sourceweights: *mut c_int, maxoutdegree: c_int, destinations: *mut c_int, destweights: *mut c_int) -> c_int {
        let (_, g) = tri!(dist_graph_of("MPI_Dist_graph_neighbors", comm));
        // SAFETY: `maxindegree` and `maxoutdegree` entries by contract; weights
        // are written only for a weighted graph and a real array.
        unsafe {
            write_array(&g.sources, maxindegree, sources);
            write_array(&g.destinations, maxoutdegree, destinations);
            if g.weighted {
                if !sourceweights.is_null() && !is_unweighted(sourceweights) {
                    write_array(&g.source_weights, maxindegree, sourceweights);
                }
                if !destweights.is_null() && !is_unweighted(destweights) {
                    write_array(&g.destination_weights, maxoutdegree, destweights);
                }
            }
        }
        MPI_SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graph_neighbours_follow_the_index() {
        let g = Graph {
            index: vec![2, 3, 4, 6],
            edges: vec![1, 3, 0, 3, 0, 2],
        };
        assert_eq!(g.neighbours(0), &[1, 3]);
        assert_eq!(g.neighbours(1), &[0]);
        assert_eq!(g.neighbours(3), &[0, 2]);
        assert!(g.check(4).is_none());
        assert!(g.check(3).is_some());
    }
}
