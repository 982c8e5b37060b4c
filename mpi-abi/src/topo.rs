//! Virtual topologies kept per communicator handle, Cartesian topologies
//! (MPI_Cart_*), MPI_Dims_create and MPI_Topo_test. Graph and distributed-graph
//! topologies are in graph.rs, their neighbourhood collectives in neighbor.rs.

use std::os::raw::c_int;
use std::sync::Arc;

use mpcrs::{Communicator, ErrorClass, ErrorHandler};

use crate::export::{mpi_fn, tri};
use crate::handles::*;

/// A Cartesian communicator's shape.
#[derive(Clone, Debug)]
pub(crate) struct Cart {
    pub(crate) dims: Vec<c_int>,
    pub(crate) periods: Vec<bool>,
}

impl Cart {
    /// Coordinates of `rank` (row-major, as MPI specifies).
    pub(crate) fn coords(&self, rank: c_int) -> Vec<c_int> {
        let mut r = rank;
        let mut c = vec![0; self.dims.len()];
        for d in (0..self.dims.len()).rev() {
            c[d] = r % self.dims[d];
            r /= self.dims[d];
        }
        c
    }

    /// Rank of coordinates (periodic ones wrapped); `None` if off a non-periodic edge.
    pub(crate) fn rank(&self, coords: &[c_int]) -> Option<c_int> {
        let mut r = 0;
        for d in 0..self.dims.len() {
            let mut c = coords[d];
            if self.periods[d] {
                c = c.rem_euclid(self.dims[d]);
            } else if c < 0 || c >= self.dims[d] {
                return None;
            }
            r = r * self.dims[d] + c;
        }
        Some(r)
    }
}

/// The shape of a communicator's topology.
#[derive(Clone, Debug)]
pub(crate) enum Shape {
    Cart(Cart),
    Graph(crate::graph::Graph),
    DistGraph(crate::graph::DistGraph),
}

/// A neighbour in a neighbourhood collective: its rank (MPI_PROC_NULL moves no
/// data) and the tag of the message that goes to it or comes from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Neighbour {
    pub(crate) rank: c_int,
    pub(crate) tag: c_int,
}

/// A communicator's topology, kept under the communicator's handle.
#[derive(Clone)]
pub(crate) struct Topology {
    pub(crate) shape: Shape,
    /// A private duplicate of the communicator for the neighbourhood
    /// collectives: no receive of the program can match their messages.
    pub(crate) wire: Arc<Communicator>,
}

impl Shape {
    /// MPI_Topo_test's answer (MPI_GRAPH, MPI_CART, MPI_DIST_GRAPH).
    fn kind(&self) -> c_int {
        match self {
            Shape::Graph(_) => 1,
            Shape::Cart(_) => 2,
            Shape::DistGraph(_) => 3,
        }
    }

    /// The neighbours `rank` receives from and sends to, in MPI's order: per
    /// Cartesian dimension the -1 then the +1 neighbour; a graph's neighbour
    /// list both ways; a distributed graph's sources and destinations.
    pub(crate) fn neighbours(&self, rank: c_int) -> (Vec<Neighbour>, Vec<Neighbour>) {
        match self {
            Shape::Cart(cart) => {
                let me = cart.coords(rank);
                let mut both = Vec::with_capacity(2 * cart.dims.len());
                for d in 0..cart.dims.len() {
                    for delta in [-1, 1] {
                        let mut co = me.clone();
                        co[d] += delta;
                        both.push(cart.rank(&co).unwrap_or(mpcrs::PROC_NULL));
                    }
                }
                // What goes in the -1 direction arrives as the receiver's +1
                // block: a send is tagged with its block, a receive expects the
                // other block of its dimension. This pairs blocks right when both
                // neighbours are one rank (a periodic dimension of 1 or 2).
                let out = (0..both.len())
                    .map(|k| Neighbour {
                        rank: both[k],
                        tag: k as c_int,
                    })
                    .collect();
                let inc = (0..both.len())
                    .map(|k| Neighbour {
                        rank: both[k],
                        tag: (k ^ 1) as c_int,
                    })
                    .collect();
                (inc, out)
            }
            Shape::Graph(g) => {
                let n: Vec<Neighbour> = g
                    .neighbours(rank)
                    .iter()
                    .map(|&r| Neighbour { rank: r, tag: 0 })
                    .collect();
                (n.clone(), n)
            }
            Shape::DistGraph(g) => {
                let tag0 =
                    |v: &Vec<c_int>| v.iter().map(|&r| Neighbour { rank: r, tag: 0 }).collect();
                (tag0(&g.sources), tag0(&g.destinations))
            }
        }
    }
}

/// Stores the new communicator `c` under a handle with its topology.
/// Collective over `c` (the topology's wire is a duplicate of it).
pub(crate) fn store_with_topology(c: Communicator, shape: Shape) -> mpcrs::Result<MPI_Comm> {
    let wire = c.dup()?;
    // Errors on the wire are reported on the program's communicator.
    wire.set_error_handler(ErrorHandler::Return);
    let mut st = rank_state().expect("inside a rank");
    let h = st.add_comm(c);
    st.topos.insert(
        h,
        Topology {
            shape,
            wire: Arc::new(wire),
        },
    );
    Ok(h)
}

/// Gives `new`, a duplicate of `old`, a copy of `old`'s topology if it has
/// one (MPI_Comm_dup). Collective over the communicator.
pub(crate) fn copy_topology(old: MPI_Comm, new: MPI_Comm) -> mpcrs::Result<()> {
    let (shape, c) = {
        let st = rank_state().expect("inside a rank");
        match (st.topos.get(&old), st.comm(new)) {
            (Some(t), Some(c)) => (t.shape.clone(), c),
            _ => return Ok(()),
        }
    };
    let wire = c.dup()?;
    wire.set_error_handler(ErrorHandler::Return);
    rank_state().expect("inside a rank").topos.insert(
        new,
        Topology {
            shape,
            wire: Arc::new(wire),
        },
    );
    Ok(())
}

/// The topology of a communicator handle.
pub(crate) fn topology(h: MPI_Comm) -> Option<Topology> {
    rank_state()?.topos.get(&h).cloned()
}

/// MPI_Dims_create: fills the zero entries of `dims` with a balanced
/// factorization of `nnodes` over the fixed (positive) entries, in
/// non-increasing order. `Err` says why it cannot.
pub(crate) fn dims_create(nnodes: c_int, dims: &mut [c_int]) -> Result<(), String> {
    if nnodes < 0 {
        return Err(format!("nnodes is {nnodes}"));
    }
    if let Some(i) = dims.iter().position(|&d| d < 0) {
        return Err(format!("dims[{i}] is {}", dims[i]));
    }
    let fixed: i64 = dims.iter().filter(|&&d| d > 0).map(|&d| d as i64).product();
    if nnodes as i64 % fixed != 0 {
        return Err(format!(
            "{nnodes} nodes are not a multiple of the fixed dimensions' {fixed}"
        ));
    }
    let free: Vec<usize> = (0..dims.len()).filter(|&i| dims[i] == 0).collect();
    if free.is_empty() {
        return if fixed == nnodes as i64 {
            Ok(())
        } else {
            Err(format!("the dimensions make {fixed} nodes, not {nnodes}"))
        };
    }
    let vals = balanced(nnodes as i64 / fixed, free.len());
    for (k, &i) in free.iter().enumerate() {
        dims[i] = vals[k] as c_int;
    }
    Ok(())
}

/// Prime factors of `n`, smallest first, with their multiplicities.
fn factorize(mut n: i64) -> Vec<(i64, u32)> {
    let mut out = Vec::new();
    let mut p = 2;
    while p * p <= n {
        let mut c = 0;
        while n % p == 0 {
            n /= p;
            c += 1;
        }
        if c > 0 {
            out.push((p, c));
        }
        p += 1;
    }
    if n > 1 {
        out.push((n, 1));
    }
    out
}

/// `n` as a product of `k` factors in non-increasing order, as balanced as
/// possible: the smallest difference between the largest and the smallest
/// factor (the measure of Träff and Lübbe, "Specification guideline
/// violations by MPI_Dims_create", EuroMPI 2015). A single prime larger than
/// the square root of what is left takes a dimension of its own first. Among
/// equally balanced choices the one with the largest smallest factor wins,
/// then the largest next-smallest, and so on: MPICH's choice, so that
/// programs see the grids they see there.
fn balanced(mut n: i64, k: usize) -> Vec<i64> {
    if k == 1 {
        return vec![n];
    }
    let mut factors = factorize(n);
    let mut chosen = Vec::new();
    while factors.len() > 1 && chosen.len() < k - 1 {
        let (p, c) = *factors.last().expect("non-empty");
        if c != 1 || p * p <= n {
            break;
        }
        chosen.push(p);
        n /= p;
        factors.pop();
    }
    let left = k - chosen.len();
    let nprimes: usize = factors.iter().map(|&(_, c)| c as usize).sum();
    if nprimes <= left {
        // Each prime factor alone, the largest first, then ones.
        let mut primes: Vec<i64> = factors
            .iter()
            .rev()
            .flat_map(|&(p, c)| std::iter::repeat_n(p, c as usize))
            .collect();
        primes.resize(left, 1);
        chosen.extend(primes);
    } else if left == 1 {
        chosen.push(n);
    } else if factors.len() == 1 {
        // A power of one prime: its copies dealt round.
        let (p, c) = factors[0];
        let mut d = vec![1; left];
        for i in 0..c as usize {
            d[i % left] *= p;
        }
        chosen.extend(d);
    } else if factors
        .iter()
        .all(|&(_, c)| (c as usize).is_multiple_of(left))
    {
        let v: i64 = factors
            .iter()
            .map(|&(p, c)| p.pow(c / left as u32))
            .product();
        chosen.extend(std::iter::repeat_n(v, left));
    } else {
        let mut best: Option<Vec<i64>> = None;
        search(n, left, 1, &mut Vec::new(), &mut best);
        chosen.extend(best.expect("a factorization exists"));
    }
    chosen
}

/// Tries every non-increasing factorization of `m` into `slots` factors of
/// at least `lo`, the factors after them being `tail` (smallest last), and
/// keeps in `best` the most balanced (see [`balanced`]). With two factors
/// left, only the closest pair can be best.
fn search(m: i64, slots: usize, lo: i64, tail: &mut Vec<i64>, best: &mut Option<Vec<i64>>) {
    if slots == 2 {
        let mut f = None;
        let mut d = lo;
        while d * d <= m {
            if m % d == 0 {
                f = Some(d);
            }
            d += 1;
        }
        let Some(f) = f else { return };
        let mut cand = vec![m / f, f];
        cand.extend(tail.iter().rev());
        let better = match best {
            None => true,
            Some(b) => {
                let (cb, bb) = (cand[0] - cand[cand.len() - 1], b[0] - b[b.len() - 1]);
                cb < bb || (cb == bb && cand.iter().rev().gt(b.iter().rev()))
            }
        };
        if better {
            *best = Some(cand);
        }
        return;
    }
    let mut d = lo;
    while d.checked_pow(slots as u32).is_some_and(|p| p <= m) {
        if m % d == 0 {
            tail.push(d);
            search(m / d, slots - 1, d, tail, best);
            tail.pop();
        }
        d += 1;
    }
}

/// Raises an error of a call that has no communicator on MPI_COMM_WORLD.
fn world_error(call: &'static str, class: ErrorClass, detail: String) -> c_int {
    match comm_for(call, MPI_COMM_WORLD) {
        Ok(w) => fail(&w, call, class, detail),
        Err(code) => code,
    }
}

fn cart_of(
    call: &'static str,
    comm: MPI_Comm,
) -> Result<(std::sync::Arc<mpcrs::Communicator>, Cart), c_int> {
    let c = comm_for(call, comm)?;
    match topology(comm).map(|t| t.shape) {
        Some(Shape::Cart(t)) => Ok((c.into(), t)),
        _ => Err(fail(
            &c,
            call,
            ErrorClass::Topology,
            "the communicator has no Cartesian topology".into(),
        )),
    }
}

mpi_fn! {
    fn Dims_create(nnodes: c_int, ndims: c_int, dims: *mut c_int) -> c_int {
        let call = "MPI_Dims_create";
        if ndims < 0 || (ndims > 0 && dims.is_null()) {
            return world_error(call, ErrorClass::Arg, format!("ndims is {ndims}, dims {dims:?}"));
        }
        if ndims == 0 {
            return MPI_SUCCESS;
        }
        // SAFETY: `ndims` ints, readable and writable, by contract.
        let d = unsafe { std::slice::from_raw_parts_mut(dims, ndims as usize) };
        match dims_create(nnodes, d) {
            Ok(()) => MPI_SUCCESS,
            Err(why) => world_error(call, ErrorClass::Dims, why),
        }
    }

    fn Cart_create(comm_old: MPI_Comm, ndims: c_int, dims: *const c_int, periods: *const c_int, _reorder: c_int, comm_cart: *mut MPI_Comm) -> c_int {
        let call = "MPI_Cart_create";
        let c = tri!(comm_for(call, comm_old));
        let n = ndims.max(0) as usize;
        // SAFETY: `ndims` entries each, by contract.
        let (d, p) = unsafe { (c_array(dims, n).to_vec(), c_array(periods, n).to_vec()) };
        let cells: i64 = d.iter().map(|&x| x as i64).product();
        if d.iter().any(|&x| x <= 0) || cells > c.size() as i64 {
            return fail(&c, call, ErrorClass::Dims, format!("grid {d:?} needs {cells} ranks, the communicator has {}", c.size()));
        }
        // The first `cells` ranks form the grid in rank order (no reordering).
        let color = if (c.rank() as i64) < cells { Some(0) } else { None };
        let sub = match c.split(color, c.rank()) {
            Ok(s) => s,
            Err(e) => return code(&e),
        };
        let h = match sub {
            Some(s) => {
                let shape = Shape::Cart(Cart { dims: d, periods: p.iter().map(|&x| x != 0).collect() });
                match store_with_topology(s, shape) {
                    Ok(h) => h,
                    Err(e) => return code(&e),
                }
            }
            None => MPI_COMM_NULL,
        };
        // SAFETY: writable by contract.
        unsafe { *comm_cart = h };
        MPI_SUCCESS
    }

    fn Cartdim_get(comm: MPI_Comm, ndims: *mut c_int) -> c_int {
        let (_, cart) = tri!(cart_of("MPI_Cartdim_get", comm));
        // SAFETY: writable by contract.
        unsafe { *ndims = cart.dims.len() as c_int };
        MPI_SUCCESS
    }

    fn Cart_get(comm: MPI_Comm, maxdims: c_int, dims: *mut c_int, periods: *mut c_int, coords: *mut c_int) -> c_int {
        let (c, cart) = tri!(cart_of("MPI_Cart_get", comm));
        let me = cart.coords(c.rank());
        for d in 0..(maxdims.max(0) as usize).min(cart.dims.len()) {
            // SAFETY: `maxdims` entries each, by contract.
            unsafe {
                *dims.add(d) = cart.dims[d];
                *periods.add(d) = cart.periods[d] as c_int;
                *coords.add(d) = me[d];
            }
        }
        MPI_SUCCESS
    }

    fn Cart_rank(comm: MPI_Comm, coords: *const c_int, rank: *mut c_int) -> c_int {
        let (c, cart) = tri!(cart_of("MPI_Cart_rank", comm));
        // SAFETY: one coordinate per dimension, by contract.
        let co = unsafe { c_array(coords, cart.dims.len()) };
        match cart.rank(co) {
            Some(r) => {
                // SAFETY: writable by contract.
                unsafe { *rank = r };
                MPI_SUCCESS
            }
            None => fail(&c, "MPI_Cart_rank", ErrorClass::Arg, format!("coordinates {co:?} are outside the grid")),
        }
    }

    fn Cart_coords(comm: MPI_Comm, rank: c_int, maxdims: c_int, coords: *mut c_int) -> c_int {
        let (c, cart) = tri!(cart_of("MPI_Cart_coords", comm));
        if rank < 0 || rank >= c.size() {
            return fail(&c, "MPI_Cart_coords", ErrorClass::Rank, format!("rank {rank} is not in 0..{}", c.size()));
        }
        let co = cart.coords(rank);
        for d in 0..(maxdims.max(0) as usize).min(co.len()) {
            // SAFETY: `maxdims` entries by contract.
            unsafe { *coords.add(d) = co[d] };
        }
        MPI_SUCCESS
    }

    fn Cart_shift(comm: MPI_Comm, direction: c_int, disp: c_int, rank_source: *mut c_int, rank_dest: *mut c_int) -> c_int {
        let (c, cart) = tri!(cart_of("MPI_Cart_shift", comm));
        let d = direction as usize;
        if direction < 0 || d >= cart.dims.len() {
            return fail(&c, "MPI_Cart_shift", ErrorClass::Arg, format!("direction {direction} is not a dimension"));
        }
        let me = cart.coords(c.rank());
        let at = |delta: c_int| {
            let mut co = me.clone();
            co[d] += delta;
            cart.rank(&co).unwrap_or(mpcrs::PROC_NULL)
        };
        // SAFETY: writable by contract.
        unsafe {
            *rank_source = at(-disp);
            *rank_dest = at(disp);
        }
        MPI_SUCCESS
    }

    fn Cart_sub(comm: MPI_Comm, remain_dims: *const c_int, newcomm: *mut MPI_Comm) -> c_int {
        let (c, cart) = tri!(cart_of("MPI_Cart_sub", comm));
        // SAFETY: one flag per dimension, by contract.
        let keep = unsafe { c_array(remain_dims, cart.dims.len()) }.to_vec();
        let me = cart.coords(c.rank());
        // Ranks that agree on every dropped coordinate share a sub-grid.
        let mut color = 0;
        let mut key = 0;
        for d in 0..cart.dims.len() {
            if keep[d] != 0 {
                key = key * cart.dims[d] + me[d];
            } else {
                color = color * cart.dims[d] + me[d];
            }
        }
        // No dimension left: a zero-dimensional grid, which is rank 0 alone
        // (as MPI_Cart_create with no dimensions); the others get
        // MPI_COMM_NULL.
        let zero_dims = keep.iter().all(|&k| k == 0);
        let color = if zero_dims { (c.rank() == 0).then_some(0) } else { Some(color) };
        let sub = match c.split(color, key) {
            Ok(Some(s)) => s,
            Ok(None) => {
                // SAFETY: writable by contract.
                unsafe { *newcomm = MPI_COMM_NULL };
                return MPI_SUCCESS;
            }
            Err(e) => return code(&e),
        };
        let dims: Vec<c_int> = (0..cart.dims.len()).filter(|&d| keep[d] != 0).map(|d| cart.dims[d]).collect();
        let periods: Vec<bool> = (0..cart.dims.len()).filter(|&d| keep[d] != 0).map(|d| cart.periods[d]).collect();
        let h = match store_with_topology(sub, Shape::Cart(Cart { dims, periods })) {
            Ok(h) => h,
            Err(e) => return code(&e),
        };
        // SAFETY: writable by contract.
        unsafe { *newcomm = h };
        MPI_SUCCESS
    }
}

mpi_fn! {
    fn Topo_test(comm: MPI_Comm, status: *mut c_int) -> c_int {
        let _c = tri!(comm_for("MPI_Topo_test", comm));
        let kind = topology(comm).map_or(MPI_UNDEFINED, |t| t.shape.kind());
        // SAFETY: writable by contract.
        unsafe { *status = kind };
        MPI_SUCCESS
    }

    fn Cart_map(comm: MPI_Comm, ndims: c_int, dims: *const c_int, periods: *const c_int, newrank: *mut c_int) -> c_int {
        let c = tri!(comm_for("MPI_Cart_map", comm));
        let _ = periods;
        // SAFETY: `ndims` entries, by contract.
        let d = unsafe { c_array(dims, ndims.max(0) as usize) };
        let cells: i64 = d.iter().map(|&x| x as i64).product();
        if d.iter().any(|&x| x <= 0) || cells > c.size() as i64 {
            return fail(&c, "MPI_Cart_map", ErrorClass::Dims, format!("grid {d:?} needs {cells} ranks, the communicator has {}", c.size()));
        }
        // No reordering (as MPI_Cart_create): the first ranks form the grid.
        // SAFETY: writable by contract.
        unsafe { *newrank = if (c.rank() as i64) < cells { c.rank() } else { MPI_UNDEFINED } };
        MPI_SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_are_balanced_and_respect_fixed_entries() {
        let mut d = [0, 0];
        assert!(dims_create(12, &mut d).is_ok());
        assert_eq!(d, [4, 3]);
        let mut d = [0, 3, 0];
        assert!(dims_create(24, &mut d).is_ok());
        assert_eq!(d, [4, 3, 2]);
        let mut d = [5, 0];
        assert!(dims_create(12, &mut d).is_err());
        // Cases a greedy distribution of prime factors gets wrong.
        for (n, k, want) in [
            (72, 2, &[9, 8][..]),
            (70416, 4, &[163, 9, 8, 6]),
            (712656, 5, &[101, 14, 9, 8, 7]),
            (559020, 5, &[21, 20, 11, 11, 11]),
        ] {
            let mut d = vec![0; k];
            assert!(dims_create(n, &mut d).is_ok());
            assert_eq!(d, want, "{n} in {k} dimensions");
        }
    }

    #[test]
    fn coordinates_round_trip_with_periods() {
        let c = Cart {
            dims: vec![2, 3],
            periods: vec![false, true],
        };
        assert_eq!(c.coords(5), vec![1, 2]);
        assert_eq!(c.rank(&[1, 2]), Some(5));
        assert_eq!(c.rank(&[1, 3]), Some(3));
        assert_eq!(c.rank(&[2, 0]), None);
    }
}
