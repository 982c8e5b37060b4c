/* Graph and distributed-graph topologies, neighbourhood collectives on
 * Cartesian, graph and distributed-graph communicators, and
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): each section checks real values
 * on every rank and rank 0 prints one line when all passed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#define CHECK(cond, what) do { if (!(cond)) { fprintf(stderr, "rank %d: FAILED %s (line %d)\n", rank, what, __LINE__); MPI_Abort(MPI_COMM_WORLD, 8); } } while (0)

static void done(const char *section) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("%s ok\n", section);
    fflush(stdout);
}

/* A 2-D grid: neighbours in MPI's order (per dimension, -1 then +1), what
 * each neighbour gathers and exchanges, MPI_PROC_NULL blocks untouched. */
static void cartesian(int periodic) {
    int dims[2] = {0, 0}, periods[2] = {periodic, periodic}, kind;
    MPI_Dims_create(size, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Topo_test(cart, &kind);
    CHECK(kind == MPI_CART, "topo_test cart");
    int me, nb[4];
    MPI_Comm_rank(cart, &me);
    for (int d = 0; d < 2; d++) MPI_Cart_shift(cart, d, 1, &nb[2 * d], &nb[2 * d + 1]);

    int got[4] = {-1, -1, -1, -1};
    MPI_Neighbor_allgather(&me, 1, MPI_INT, got, 1, MPI_INT, cart);
    for (int j = 0; j < 4; j++)
        CHECK(got[j] == (nb[j] == MPI_PROC_NULL ? -1 : nb[j]), "cart allgather");

    /* Block k goes in direction k; the -1 neighbour's +1 block arrives in
     * block 2d, the +1 neighbour's -1 block in block 2d+1. */
    int out[4], in[4] = {-1, -1, -1, -1};
    for (int k = 0; k < 4; k++) out[k] = me * 100 + k;
    MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, cart);
    for (int j = 0; j < 4; j++)
        CHECK(in[j] == (nb[j] == MPI_PROC_NULL ? -1 : nb[j] * 100 + (j ^ 1)), "cart alltoall");

    /* The same through a strided receive type: every other int. */
    MPI_Datatype every_other;
    MPI_Type_vector(1, 1, 2, MPI_INT, &every_other);
    MPI_Datatype stride2;
    MPI_Type_create_resized(every_other, 0, 2 * sizeof(int), &stride2);
    MPI_Type_commit(&stride2);
    int wide[8];
    for (int i = 0; i < 8; i++) wide[i] = -7;
    MPI_Request req;
    MPI_Ineighbor_alltoall(out, 1, MPI_INT, wide, 1, stride2, cart, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int j = 0; j < 4; j++) {
        CHECK(wide[2 * j] == (nb[j] == MPI_PROC_NULL ? -7 : nb[j] * 100 + (j ^ 1)), "cart ialltoall strided");
        CHECK(wide[2 * j + 1] == -7, "cart ialltoall gap");
    }
    MPI_Type_free(&stride2);
    MPI_Type_free(&every_other);

    /* alltoallw: byte displacements, reversed layout, a double each way. */
    double dout[4], din[4] = {-1, -1, -1, -1};
    int counts[4] = {1, 1, 1, 1};
    MPI_Aint displs[4];
    MPI_Datatype types[4] = {MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE};
    for (int k = 0; k < 4; k++) {
        dout[k] = me + k / 10.0;
        displs[k] = (3 - k) * sizeof(double);
    }
    double rev[4];
    for (int k = 0; k < 4; k++) rev[3 - k] = dout[k];
    MPI_Neighbor_alltoallw(rev, counts, displs, types, din, counts, displs, types, cart);
    for (int j = 0; j < 4; j++)
        CHECK(din[3 - j] == (nb[j] == MPI_PROC_NULL ? -1 : nb[j] + (j ^ 1) / 10.0), "cart alltoallw");

    MPI_Comm dup;
    MPI_Comm_dup(cart, &dup);
    MPI_Topo_test(dup, &kind);
    CHECK(kind == MPI_CART, "dup keeps the topology");
    int again[4] = {-1, -1, -1, -1};
    MPI_Ineighbor_allgather(&me, 1, MPI_INT, again, 1, MPI_INT, dup, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(memcmp(again, got, sizeof got) == 0, "allgather on the duplicate");
    MPI_Comm_free(&dup);
    MPI_Comm_free(&cart);
    done(periodic ? "periodic grid" : "open grid");
}

/* The neighbours of `r` in a ring graph of `n` nodes. */
static void ring_of(int r, int n, int out[2]) {
    out[0] = (r - 1 + n) % n;
    out[1] = (r + 1) % n;
}

/* Where `from` delivers its message for `to`'s `o`-th edge to it: the
 * position of the `o`-th occurrence of `to` in `from`'s neighbours. */
static int block_for(int from, int to, int o, int n) {
    int nb[2];
    ring_of(from, n, nb);
    for (int k = 0; k < 2; k++)
        if (nb[k] == to && o-- == 0) return k;
    return -1;
}

static void graph(void) {
    int *index = malloc(size * sizeof(int)), *edges = malloc(2 * size * sizeof(int));
    for (int i = 0; i < size; i++) {
        index[i] = 2 * (i + 1);
        ring_of(i, size, &edges[2 * i]);
    }
    MPI_Comm ring;
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &ring);
    int kind, nnodes, nedges, count, nb[2], newrank;
    MPI_Topo_test(ring, &kind);
    CHECK(kind == MPI_GRAPH, "topo_test graph");
    MPI_Graphdims_get(ring, &nnodes, &nedges);
    CHECK(nnodes == size && nedges == 2 * size, "graphdims_get");
    int *gi = malloc(size * sizeof(int)), *ge = malloc(2 * size * sizeof(int));
    MPI_Graph_get(ring, size, 2 * size, gi, ge);
    CHECK(memcmp(gi, index, size * sizeof(int)) == 0 && memcmp(ge, edges, 2 * size * sizeof(int)) == 0, "graph_get");
    MPI_Graph_neighbors_count(ring, rank, &count);
    MPI_Graph_neighbors(ring, rank, 2, nb);
    int want[2];
    ring_of(rank, size, want);
    CHECK(count == 2 && nb[0] == want[0] && nb[1] == want[1], "graph_neighbors");
    MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &newrank);
    CHECK(newrank == rank, "graph_map");

    int out[2] = {rank * 10, rank * 10 + 1}, in[2] = {-1, -1};
    MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, ring);
    for (int j = 0; j < 2; j++) {
        int o = (j == 1 && nb[0] == nb[1]);
        CHECK(in[j] == nb[j] * 10 + block_for(nb[j], rank, o, size), "ring alltoall");
    }
    /* allgatherv: the two neighbours' ranks, second before first. */
    int counts[2] = {1, 1}, displs[2] = {1, 0}, g[2] = {-1, -1};
    MPI_Request req;
    MPI_Ineighbor_allgatherv(&rank, 1, MPI_INT, g, counts, displs, MPI_INT, ring, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(g[1] == nb[0] && g[0] == nb[1], "ring allgatherv");
    MPI_Comm_free(&ring);

    /* A graph on fewer nodes: the other ranks get MPI_COMM_NULL. */
    if (size > 1) {
        int idx1[1] = {0};
        MPI_Comm one;
        MPI_Graph_create(MPI_COMM_WORLD, 1, idx1, edges, 0, &one);
        CHECK((rank == 0) == (one != MPI_COMM_NULL), "graph on one node");
        if (one != MPI_COMM_NULL) MPI_Comm_free(&one);
    }
    free(index);
    free(edges);
    free(gi);
    free(ge);
    done("ring graph");
}

static void dist_graph(void) {
    /* General form: each rank names the edge (r+1) -> r, weight 7r+1. */
    int src = (rank + 1) % size, deg = 1, dst = rank, w = 7 * rank + 1;
    MPI_Comm dg;
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &src, &deg, &dst, &w, MPI_INFO_NULL, 0, &dg);
    int kind, indeg, outdeg, weighted;
    MPI_Topo_test(dg, &kind);
    CHECK(kind == MPI_DIST_GRAPH, "topo_test dist graph");
    MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted);
    CHECK(indeg == 1 && outdeg == 1 && weighted, "dist_graph_neighbors_count");
    int s, sw, d, dw;
    MPI_Dist_graph_neighbors(dg, 1, &s, &sw, 1, &d, &dw);
    int prev = (rank - 1 + size) % size;
    CHECK(s == (rank + 1) % size && sw == 7 * rank + 1, "in-neighbour and weight");
    CHECK(d == prev && dw == 7 * prev + 1, "out-neighbour and weight");
    int got = -1;
    MPI_Neighbor_allgather(&rank, 1, MPI_INT, &got, 1, MPI_INT, dg);
    CHECK(got == s, "dist graph allgather");
    MPI_Comm_free(&dg);

    /* Adjacent form, unweighted: in from r-1 and r+1, out to r+1 and r-1. */
    int srcs[2] = {prev, (rank + 1) % size}, dsts[2] = {(rank + 1) % size, prev};
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, MPI_UNWEIGHTED, 2, dsts, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &dg);
    MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted);
    CHECK(indeg == 2 && outdeg == 2 && !weighted, "unweighted counts");
    int gs[2], gd[2];
    MPI_Dist_graph_neighbors(dg, 2, gs, MPI_UNWEIGHTED, 2, gd, MPI_UNWEIGHTED);
    CHECK(gs[0] == srcs[0] && gs[1] == srcs[1] && gd[0] == dsts[0] && gd[1] == dsts[1], "adjacent neighbours");
    int out[2] = {rank * 10, rank * 10 + 1}, in[2] = {-1, -1};
    MPI_Request req;
    MPI_Ineighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, dg, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(in[0] == prev * 10 && in[1] == ((rank + 1) % size) * 10 + 1, "adjacent alltoall");
    /* alltoallv and alltoallw, non-blocking: 2 ints to the first
     * destination, 1 to the second. */
    int vout[3] = {rank, rank + 1000, rank + 2000}, vin[3] = {-1, -1, -1};
    int sc[2] = {2, 1}, sd[2] = {0, 2}, rc[2] = {2, 1}, rd[2] = {0, 2};
    MPI_Ineighbor_alltoallv(vout, sc, sd, MPI_INT, vin, rc, rd, MPI_INT, dg, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    int next = (rank + 1) % size;
    CHECK(vin[0] == prev && vin[1] == prev + 1000 && vin[2] == next + 2000, "adjacent alltoallv");
    MPI_Aint bsd[2] = {0, 2 * sizeof(int)}, brd[2] = {0, 2 * sizeof(int)};
    MPI_Datatype t[2] = {MPI_INT, MPI_INT};
    for (int i = 0; i < 3; i++) vin[i] = -1;
    MPI_Ineighbor_alltoallw(vout, sc, bsd, t, vin, rc, brd, t, dg, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(vin[0] == prev && vin[1] == prev + 1000 && vin[2] == next + 2000, "adjacent alltoallw");
    MPI_Comm_free(&dg);
    done("dist graph");
}

/* One shared-memory communicator per host holds the ranks of every process
 * on it, in the order of the keys. argv[1]: ranks per host (all by default);
 * hosts hold consecutive ranks. */
static void shared(int per_host) {
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, size - rank, MPI_INFO_NULL, &node);
    int n, me, first = rank / per_host * per_host;
    MPI_Comm_size(node, &n);
    MPI_Comm_rank(node, &me);
    CHECK(n == per_host, "every rank of the host");
    CHECK(me == per_host - 1 - (rank - first), "ordered by key");
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, node);
    CHECK(sum == per_host * first + per_host * (per_host - 1) / 2, "the ranks of this host");
    MPI_Comm_free(&node);
    done("shared split");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cartesian(1);
    cartesian(0);
    graph();
    dist_graph();
    shared(argc > 1 ? atoi(argv[1]) : size);
    MPI_Finalize();
    return 0;
}
