/* Derived datatypes through point-to-point and collectives, v-collectives and
 * reduce-scatter; deterministic output on rank 0; non-zero exit on failure. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>

#define CHECK(cond, what) do { if (!(cond)) { fprintf(stderr, "rank %d: FAILED %s\n", rank, what); MPI_Abort(MPI_COMM_WORLD, 4); } } while (0)

struct particle { int id; double pos[3]; char tag; };

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    /* column of a 6x5 matrix with a vector type */
    double m[6][5], col[6];
    for (int i = 0; i < 6; i++) for (int j = 0; j < 5; j++) m[i][j] = rank * 100 + i * 10 + j;
    MPI_Datatype column;
    MPI_Type_vector(6, 1, 5, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);
    int sz; MPI_Aint lb, ext;
    MPI_Type_size(column, &sz);
    MPI_Type_get_extent(column, &lb, &ext);
    CHECK(sz == 48 && lb == 0 && ext == (5 * 5 + 1) * 8, "vector size/extent");
    MPI_Sendrecv(&m[0][2], 1, column, next, 1, col, 6, MPI_DOUBLE, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 6; i++) CHECK(col[i] == prev * 100 + i * 10 + 2, "vector send");
    /* receive into a column too */
    double m2[6][5];
    memset(m2, 0, sizeof m2);
    MPI_Sendrecv(col, 6, MPI_DOUBLE, next, 2, &m2[0][4], 1, column, prev, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int src2 = (prev + size - 1) % size;
    for (int i = 0; i < 6; i++) CHECK(m2[i][4] == src2 * 100 + i * 10 + 2 && m2[i][3] == 0, "vector recv");
    if (rank == 0) printf("vector ok\n");

    /* struct type with padding, non-blocking */
    struct particle p[2], q[2];
    for (int k = 0; k < 2; k++) { p[k].id = rank * 10 + k; p[k].pos[0] = rank; p[k].pos[1] = k; p[k].pos[2] = -1; p[k].tag = 'a' + k; }
    MPI_Datatype ptype;
    int bl[3] = {1, 3, 1};
    MPI_Aint disp[3] = {offsetof(struct particle, id), offsetof(struct particle, pos), offsetof(struct particle, tag)};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Type_create_struct(3, bl, disp, types, &ptype);
    MPI_Datatype pres;
    MPI_Type_create_resized(ptype, 0, sizeof(struct particle), &pres);
    MPI_Type_commit(&pres);
    MPI_Type_get_extent(pres, &lb, &ext);
    CHECK(ext == sizeof(struct particle), "struct extent");
    MPI_Request r[2];
    MPI_Irecv(q, 2, pres, prev, 3, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(p, 2, pres, next, 3, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    for (int k = 0; k < 2; k++) CHECK(q[k].id == prev * 10 + k && q[k].pos[0] == prev && q[k].pos[1] == k && q[k].tag == 'a' + k, "struct");
    if (rank == 0) printf("struct ok\n");

    /* indexed + bcast; subarray + gather */
    int data[10], blens[3] = {2, 1, 3}, displs[3] = {0, 4, 6};
    for (int i = 0; i < 10; i++) data[i] = rank == 0 ? i + 1 : 0;
    MPI_Datatype idx;
    MPI_Type_indexed(3, blens, displs, MPI_INT, &idx);
    MPI_Type_commit(&idx);
    MPI_Bcast(data, 1, idx, 0, MPI_COMM_WORLD);
    int want[10] = {1, 2, 0, 0, 5, 0, 7, 8, 9, 0};
    if (rank == 0) { want[2] = 3; want[3] = 4; want[5] = 6; want[9] = 10; }
    for (int i = 0; i < 10; i++) CHECK(data[i] == want[i], "indexed bcast");
    int grid[4][6], sizes[2] = {4, 6}, subs[2] = {2, 3}, starts[2] = {1, 2};
    for (int i = 0; i < 4; i++) for (int j = 0; j < 6; j++) grid[i][j] = rank * 1000 + i * 10 + j;
    MPI_Datatype sub;
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub);
    MPI_Type_commit(&sub);
    int *g = malloc(sizeof(int) * 6 * size);
    MPI_Gather(grid, 1, sub, g, 6, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int s = 0; s < size; s++)
            for (int k = 0; k < 6; k++) CHECK(g[s * 6 + k] == s * 1000 + (1 + k / 3) * 10 + 2 + k % 3, "subarray gather");
    if (rank == 0) printf("indexed subarray ok\n");

    /* pack / unpack */
    char buf[256];
    int pos = 0, n7 = 7;
    double d3[3] = {1.5, 2.5, 3.5};
    MPI_Pack(&n7, 1, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD);
    MPI_Pack(d3, 3, MPI_DOUBLE, buf, sizeof buf, &pos, MPI_COMM_WORLD);
    int psz; MPI_Pack_size(3, MPI_DOUBLE, MPI_COMM_WORLD, &psz);
    CHECK(pos == 4 + psz, "pack position");
    int n7b = 0; double d3b[3];
    pos = 0;
    MPI_Unpack(buf, sizeof buf, &pos, &n7b, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Unpack(buf, sizeof buf, &pos, d3b, 3, MPI_DOUBLE, MPI_COMM_WORLD);
    CHECK(n7b == 7 && d3b[2] == 3.5, "unpack");
    if (rank == 0) printf("pack ok\n");

    /* v-collectives: rank r contributes r + 1 ints */
    int mine[64], counts[64], disp2[64], total = 0;
    for (int i = 0; i <= rank; i++) mine[i] = rank * 100 + i;
    for (int s = 0; s < size; s++) { counts[s] = s + 1; disp2[s] = total; total += s + 1; }
    int *all = malloc(sizeof(int) * total);
    MPI_Allgatherv(mine, rank + 1, MPI_INT, all, counts, disp2, MPI_INT, MPI_COMM_WORLD);
    for (int s = 0; s < size; s++) for (int i = 0; i <= s; i++) CHECK(all[disp2[s] + i] == s * 100 + i, "allgatherv");
    memset(all, 0, sizeof(int) * total);
    MPI_Gatherv(mine, rank + 1, MPI_INT, all, counts, disp2, MPI_INT, size - 1, MPI_COMM_WORLD);
    if (rank == size - 1) for (int s = 0; s < size; s++) for (int i = 0; i <= s; i++) CHECK(all[disp2[s] + i] == s * 100 + i, "gatherv");
    int got[64];
    MPI_Scatterv(all, counts, disp2, MPI_INT, got, rank + 1, MPI_INT, size - 1, MPI_COMM_WORLD);
    for (int i = 0; i <= rank; i++) CHECK(got[i] == rank * 100 + i, "scatterv");
    int *sendv = malloc(sizeof(int) * size), *recvv = malloc(sizeof(int) * size);
    int *ones = malloc(sizeof(int) * size), *offs = malloc(sizeof(int) * size), *seq = malloc(sizeof(int) * size);
    for (int s = 0; s < size; s++) { sendv[s] = rank * 10 + s; ones[s] = 1; offs[s] = size - 1 - s; seq[s] = s; }
    /* reversed receive displacements */
    MPI_Alltoallv(sendv, ones, seq, MPI_INT, recvv, ones, offs, MPI_INT, MPI_COMM_WORLD);
    for (int s = 0; s < size; s++) CHECK(recvv[size - 1 - s] == s * 10 + rank, "alltoallv");
    /* alltoallw: ints to even ranks, doubles to odd ones, byte displacements */
    int *wsc = malloc(sizeof(int) * size), *wsd = malloc(sizeof(int) * size);
    int *wrc = malloc(sizeof(int) * size), *wrd = malloc(sizeof(int) * size);
    MPI_Datatype *wst = malloc(sizeof(MPI_Datatype) * size), *wrt = malloc(sizeof(MPI_Datatype) * size);
    double *wsend = malloc(sizeof(double) * size), *wrecv = malloc(sizeof(double) * size);
    for (int s = 0; s < size; s++) {
        wsc[s] = 1; wrc[s] = 1;
        wsd[s] = s * sizeof(double); wrd[s] = s * sizeof(double);
        wst[s] = rank % 2 ? MPI_DOUBLE : MPI_INT;     /* what I send is typed by my parity */
        wrt[s] = s % 2 ? MPI_DOUBLE : MPI_INT;        /* what I receive, by the sender's */
        if (rank % 2) wsend[s] = rank + s / 10.0; else ((int *)&wsend[s])[0] = rank * 10 + s;
    }
    MPI_Alltoallw(wsend, wsc, wsd, wst, wrecv, wrc, wrd, wrt, MPI_COMM_WORLD);
    for (int s = 0; s < size; s++) {
        if (s % 2) CHECK(wrecv[s] == s + rank / 10.0, "alltoallw double");
        else CHECK(((int *)&wrecv[s])[0] == s * 10 + rank, "alltoallw int");
    }
    if (rank == 0) printf("vcollectives ok\n");

    /* reduce_scatter_block and reduce_scatter */
    int *contrib = malloc(sizeof(int) * size * 2), res[2];
    for (int i = 0; i < size * 2; i++) contrib[i] = i + rank;
    MPI_Reduce_scatter_block(contrib, res, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int base = size * (size - 1) / 2;
    CHECK(res[0] == size * (2 * rank) + base && res[1] == size * (2 * rank + 1) + base, "reduce_scatter_block");
    int *rc = malloc(sizeof(int) * size);
    for (int s = 0; s < size; s++) rc[s] = s % 2 + 1;
    int off = 0;
    for (int s = 0; s < rank; s++) off += rc[s];
    int tot = off;
    for (int s = rank; s < size; s++) tot += rc[s];
    int *big = malloc(sizeof(int) * tot);
    for (int i = 0; i < tot; i++) big[i] = i;
    int out[2] = {0, 0};
    MPI_Reduce_scatter(big, out, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int k = 0; k < rc[rank]; k++) CHECK(out[k] == size * (off + k), "reduce_scatter");
    if (rank == 0) printf("reduce_scatter ok\n");

    MPI_Type_free(&column);
    MPI_Type_free(&pres);
    MPI_Type_free(&ptype);
    MPI_Type_free(&idx);
    MPI_Type_free(&sub);
    CHECK(column == MPI_DATATYPE_NULL, "type free");
    MPI_Finalize();
    return 0;
}
