/*
 * mpi.h of mpcrs, a thread-based MPI runtime.
 *
 * ABI-compatible with MPICH 4.x (libmpich.so.12): handles are ints, and every
 * constant below has the value MPICH gives it, so programs built against either
 * header run with either library. MPI_Status has MPICH's layout.
 *
 * The Rust side of the library (mpi-abi/src) is checked against this file by a
 * test, so the two cannot drift.
 */
#ifndef MPCRS_MPI_H
#define MPCRS_MPI_H

#include <stddef.h>

#if defined(__cplusplus)
extern "C" {
#endif

#define MPCRS 1

/* ---- Versions ---------------------------------------------------------- */
#define MPI_VERSION    4
#define MPI_SUBVERSION 0

/* ---- Scalar types ------------------------------------------------------ */
typedef long MPI_Aint;
typedef int MPI_Fint;
typedef long MPI_Count;
typedef long MPI_Offset;

/* ---- Handles ----------------------------------------------------------- */
typedef int MPI_Comm;
typedef int MPI_Group;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Request;
typedef int MPI_Errhandler;
typedef int MPI_Info;
typedef int MPI_Message;

#define MPI_COMM_NULL       ((MPI_Comm)0x04000000)
#define MPI_COMM_WORLD      ((MPI_Comm)0x44000000)
#define MPI_COMM_SELF       ((MPI_Comm)0x44000001)
#define MPI_GROUP_NULL      ((MPI_Group)0x08000000)
#define MPI_GROUP_EMPTY     ((MPI_Group)0x48000000)
#define MPI_DATATYPE_NULL   ((MPI_Datatype)0x0c000000)
#define MPI_OP_NULL         ((MPI_Op)0x18000000)
#define MPI_REQUEST_NULL    ((MPI_Request)0x2c000000)
#define MPI_ERRHANDLER_NULL ((MPI_Errhandler)0x14000000)
#define MPI_INFO_NULL       ((MPI_Info)0x1c000000)
#define MPI_MESSAGE_NULL    ((MPI_Message)0x2c000000)
#define MPI_MESSAGE_NO_PROC ((MPI_Message)0x6c000000)

#define MPI_ERRORS_ARE_FATAL ((MPI_Errhandler)0x54000000)
#define MPI_ERRORS_RETURN    ((MPI_Errhandler)0x54000001)
#define MPI_ERRORS_ABORT     ((MPI_Errhandler)0x54000003)

/* ---- Predefined datatypes (0x4c00SSII: SS = size in bytes) -------------- */
#define MPI_CHAR               ((MPI_Datatype)0x4c000101)
#define MPI_SIGNED_CHAR        ((MPI_Datatype)0x4c000118)
#define MPI_UNSIGNED_CHAR      ((MPI_Datatype)0x4c000102)
#define MPI_BYTE               ((MPI_Datatype)0x4c00010d)
#define MPI_WCHAR              ((MPI_Datatype)0x4c00040e)
#define MPI_SHORT              ((MPI_Datatype)0x4c000203)
#define MPI_UNSIGNED_SHORT     ((MPI_Datatype)0x4c000204)
#define MPI_INT                ((MPI_Datatype)0x4c000405)
#define MPI_UNSIGNED           ((MPI_Datatype)0x4c000406)
#define MPI_LONG               ((MPI_Datatype)0x4c000807)
#define MPI_UNSIGNED_LONG      ((MPI_Datatype)0x4c000808)
#define MPI_FLOAT              ((MPI_Datatype)0x4c00040a)
#define MPI_DOUBLE             ((MPI_Datatype)0x4c00080b)
#define MPI_LONG_DOUBLE        ((MPI_Datatype)0x4c00100c)
#define MPI_LONG_LONG_INT      ((MPI_Datatype)0x4c000809)
#define MPI_LONG_LONG          MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG ((MPI_Datatype)0x4c000819)
#define MPI_PACKED             ((MPI_Datatype)0x4c00010f)
#define MPI_INT8_T             ((MPI_Datatype)0x4c000137)
#define MPI_INT16_T            ((MPI_Datatype)0x4c000238)
#define MPI_INT32_T            ((MPI_Datatype)0x4c000439)
#define MPI_INT64_T            ((MPI_Datatype)0x4c00083a)
#define MPI_UINT8_T            ((MPI_Datatype)0x4c00013b)
#define MPI_UINT16_T           ((MPI_Datatype)0x4c00023c)
#define MPI_UINT32_T           ((MPI_Datatype)0x4c00043d)
#define MPI_UINT64_T           ((MPI_Datatype)0x4c00083e)
#define MPI_C_BOOL             ((MPI_Datatype)0x4c00013f)
#define MPI_AINT               ((MPI_Datatype)0x4c000843)
#define MPI_OFFSET             ((MPI_Datatype)0x4c000844)
#define MPI_COUNT              ((MPI_Datatype)0x4c000845)
/* (value, index) pairs for MPI_MINLOC / MPI_MAXLOC */
#define MPI_FLOAT_INT          ((MPI_Datatype)0x8c000000)
#define MPI_DOUBLE_INT         ((MPI_Datatype)0x8c000001)
#define MPI_LONG_INT           ((MPI_Datatype)0x8c000002)
#define MPI_SHORT_INT          ((MPI_Datatype)0x8c000003)
#define MPI_2INT               ((MPI_Datatype)0x4c000816)
#define MPI_LONG_DOUBLE_INT    ((MPI_Datatype)0x8c000004)

/* ---- Predefined reduction operations ----------------------------------- */
#define MPI_MAX     ((MPI_Op)0x58000001)
#define MPI_MIN     ((MPI_Op)0x58000002)
#define MPI_SUM     ((MPI_Op)0x58000003)
#define MPI_PROD    ((MPI_Op)0x58000004)
#define MPI_LAND    ((MPI_Op)0x58000005)
#define MPI_BAND    ((MPI_Op)0x58000006)
#define MPI_LOR     ((MPI_Op)0x58000007)
#define MPI_BOR     ((MPI_Op)0x58000008)
#define MPI_LXOR    ((MPI_Op)0x58000009)
#define MPI_BXOR    ((MPI_Op)0x5800000a)
#define MPI_MINLOC  ((MPI_Op)0x5800000b)
#define MPI_MAXLOC  ((MPI_Op)0x5800000c)
#define MPI_REPLACE ((MPI_Op)0x5800000d)
#define MPI_NO_OP   ((MPI_Op)0x5800000e)

/* ---- Special values ---------------------------------------------------- */
#define MPI_PROC_NULL   (-1)
#define MPI_ANY_SOURCE  (-2)
#define MPI_ROOT        (-3)
#define MPI_ANY_TAG     (-1)
#define MPI_UNDEFINED   (-32766)
#define MPI_BOTTOM      ((void *)0)
#define MPI_IN_PLACE    ((void *)-1)
#define MPI_IDENT       0
#define MPI_CONGRUENT   1
#define MPI_SIMILAR     2
#define MPI_UNEQUAL     3
#define MPI_THREAD_SINGLE     0
#define MPI_THREAD_FUNNELED   1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE   3
#define MPI_BSEND_OVERHEAD             96
#define MPI_MAX_PROCESSOR_NAME         128
#define MPI_MAX_LIBRARY_VERSION_STRING 8192
#define MPI_MAX_ERROR_STRING           512
#define MPI_MAX_OBJECT_NAME            128
#define MPI_MAX_INFO_KEY               255
#define MPI_MAX_INFO_VAL               1024
#define MPI_ORDER_C         56
#define MPI_ORDER_FORTRAN   57
#define MPI_COMM_TYPE_SHARED 1
#define MPI_KEYVAL_INVALID  0x24000000
#define MPI_TAG_UB          0x64400001
#define MPI_HOST            0x64400003
#define MPI_IO              0x64400005
#define MPI_WTIME_IS_GLOBAL 0x64400007
#define MPI_UNIVERSE_SIZE   0x64400009
#define MPI_APPNUM          0x6440000d

/* ---- Status ------------------------------------------------------------ */
typedef struct MPI_Status {
    int count_lo;
    int count_hi_and_cancelled;
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
} MPI_Status;

#define MPI_STATUS_IGNORE   ((MPI_Status *)1)
#define MPI_STATUSES_IGNORE ((MPI_Status *)1)

/* ---- Error classes ----------------------------------------------------- */
#define MPI_SUCCESS        0
#define MPI_ERR_BUFFER     1
#define MPI_ERR_COUNT      2
#define MPI_ERR_TYPE       3
#define MPI_ERR_TAG        4
#define MPI_ERR_COMM       5
#define MPI_ERR_RANK       6
#define MPI_ERR_ROOT       7
#define MPI_ERR_GROUP      8
#define MPI_ERR_OP         9
#define MPI_ERR_TOPOLOGY  10
#define MPI_ERR_DIMS      11
#define MPI_ERR_ARG       12
#define MPI_ERR_UNKNOWN   13
#define MPI_ERR_TRUNCATE  14
#define MPI_ERR_OTHER     15
#define MPI_ERR_INTERN    16
#define MPI_ERR_IN_STATUS 17
#define MPI_ERR_PENDING   18
#define MPI_ERR_REQUEST   19
#define MPI_ERR_LASTCODE  0x3fffffff

/* ---- Checkpoint/restart (MPC's interface) ------------------------------ */
typedef enum MPIX_CR_state_t {
    MPIX_CR_STATE_ERROR = -1,
    MPIX_CR_STATE_CHECKPOINT = 0,
    MPIX_CR_STATE_RESTART = 1,
    MPIX_CR_STATE_IGNORE = 2
} MPIX_CR_state_t;

/* ---- User functions ---------------------------------------------------- */
typedef void (MPI_User_function)(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
typedef int (MPI_Comm_copy_attr_function)(MPI_Comm oldcomm, int comm_keyval, void *extra_state,
                                          void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int (MPI_Comm_delete_attr_function)(MPI_Comm comm, int comm_keyval, void *attribute_val, void *extra_state);
#define MPI_COMM_NULL_COPY_FN   ((MPI_Comm_copy_attr_function *)0)
#define MPI_COMM_NULL_DELETE_FN ((MPI_Comm_delete_attr_function *)0)

/* ---- Functions: every one exists as MPI_name and as PMPI_name ------------ */
#define MPCRS_DECLARE(ret, name, args) ret MPI_##name args; ret PMPI_##name args;

MPCRS_DECLARE(int, Init, (int *argc, char ***argv))
MPCRS_DECLARE(int, Init_thread, (int *argc, char ***argv, int required, int *provided))
MPCRS_DECLARE(int, Initialized, (int *flag))
MPCRS_DECLARE(int, Finalize, (void))
MPCRS_DECLARE(int, Finalized, (int *flag))
MPCRS_DECLARE(int, Abort, (MPI_Comm comm, int errorcode))
MPCRS_DECLARE(int, Query_thread, (int *provided))
MPCRS_DECLARE(int, Is_thread_main, (int *flag))
MPCRS_DECLARE(int, Get_processor_name, (char *name, int *resultlen))
MPCRS_DECLARE(int, Get_version, (int *version, int *subversion))
MPCRS_DECLARE(int, Get_library_version, (char *version, int *resultlen))
MPCRS_DECLARE(int, Alloc_mem, (MPI_Aint size, MPI_Info info, void *baseptr))
MPCRS_DECLARE(int, Free_mem, (void *base))
MPCRS_DECLARE(double, Wtime, (void))
MPCRS_DECLARE(double, Wtick, (void))

MPCRS_DECLARE(int, Comm_size, (MPI_Comm comm, int *size))
MPCRS_DECLARE(int, Comm_rank, (MPI_Comm comm, int *rank))
MPCRS_DECLARE(int, Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm))
MPCRS_DECLARE(int, Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm))
MPCRS_DECLARE(int, Comm_free, (MPI_Comm *comm))
MPCRS_DECLARE(int, Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int *result))
MPCRS_DECLARE(int, Comm_split_type, (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm))
MPCRS_DECLARE(int, Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm))
MPCRS_DECLARE(int, Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm))
MPCRS_DECLARE(int, Comm_group, (MPI_Comm comm, MPI_Group *group))
MPCRS_DECLARE(int, Comm_get_parent, (MPI_Comm *parent))
MPCRS_DECLARE(int, Intercomm_create, (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag, MPI_Comm *newintercomm))
MPCRS_DECLARE(int, Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm *newintracomm))
MPCRS_DECLARE(int, Comm_test_inter, (MPI_Comm comm, int *flag))
MPCRS_DECLARE(int, Comm_remote_size, (MPI_Comm comm, int *size))
MPCRS_DECLARE(int, Comm_remote_group, (MPI_Comm comm, MPI_Group *group))
MPCRS_DECLARE(int, Comm_set_name, (MPI_Comm comm, const char *comm_name))
MPCRS_DECLARE(int, Comm_get_name, (MPI_Comm comm, char *comm_name, int *resultlen))
MPCRS_DECLARE(int, Comm_create_keyval, (MPI_Comm_copy_attr_function *comm_copy_attr_fn, MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval, void *extra_state))
MPCRS_DECLARE(int, Comm_free_keyval, (int *comm_keyval))
MPCRS_DECLARE(int, Comm_set_attr, (MPI_Comm comm, int comm_keyval, void *attribute_val))
MPCRS_DECLARE(int, Comm_get_attr, (MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag))
MPCRS_DECLARE(int, Comm_delete_attr, (MPI_Comm comm, int comm_keyval))
MPCRS_DECLARE(int, Group_size, (MPI_Group group, int *size))
MPCRS_DECLARE(int, Group_rank, (MPI_Group group, int *rank))
MPCRS_DECLARE(int, Group_translate_ranks, (MPI_Group group1, int n, const int *ranks1, MPI_Group group2, int *ranks2))
MPCRS_DECLARE(int, Group_incl, (MPI_Group group, int n, const int *ranks, MPI_Group *newgroup))
MPCRS_DECLARE(int, Group_excl, (MPI_Group group, int n, const int *ranks, MPI_Group *newgroup))
MPCRS_DECLARE(int, Group_union, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
MPCRS_DECLARE(int, Group_intersection, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
MPCRS_DECLARE(int, Group_difference, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
MPCRS_DECLARE(int, Group_compare, (MPI_Group group1, MPI_Group group2, int *result))
MPCRS_DECLARE(int, Group_free, (MPI_Group *group))
MPCRS_DECLARE(int, Dims_create, (int nnodes, int ndims, int *dims))
MPCRS_DECLARE(int, Cart_create, (MPI_Comm comm_old, int ndims, const int *dims, const int *periods, int reorder, MPI_Comm *comm_cart))
MPCRS_DECLARE(int, Cartdim_get, (MPI_Comm comm, int *ndims))
MPCRS_DECLARE(int, Cart_get, (MPI_Comm comm, int maxdims, int *dims, int *periods, int *coords))
MPCRS_DECLARE(int, Cart_rank, (MPI_Comm comm, const int *coords, int *rank))
MPCRS_DECLARE(int, Cart_coords, (MPI_Comm comm, int rank, int maxdims, int *coords))
MPCRS_DECLARE(int, Cart_shift, (MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest))
MPCRS_DECLARE(int, Cart_sub, (MPI_Comm comm, const int *remain_dims, MPI_Comm *newcomm))
MPCRS_DECLARE(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler errhandler))
MPCRS_DECLARE(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler *errhandler))
MPCRS_DECLARE(int, Errhandler_free, (MPI_Errhandler *errhandler))
MPCRS_DECLARE(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode))
MPCRS_DECLARE(int, Info_create, (MPI_Info *info))
MPCRS_DECLARE(int, Info_set, (MPI_Info info, const char *key, const char *value))
MPCRS_DECLARE(int, Info_get, (MPI_Info info, const char *key, int valuelen, char *value, int *flag))
MPCRS_DECLARE(int, Info_delete, (MPI_Info info, const char *key))
MPCRS_DECLARE(int, Info_get_nkeys, (MPI_Info info, int *nkeys))
MPCRS_DECLARE(int, Info_free, (MPI_Info *info))
MPCRS_DECLARE(int, Error_class, (int errorcode, int *errorclass))
MPCRS_DECLARE(int, Error_string, (int errorcode, char *string, int *resultlen))

MPCRS_DECLARE(int, Type_size, (MPI_Datatype datatype, int *size))
MPCRS_DECLARE(int, Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_vector, (int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_create_hvector, (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_indexed, (int count, const int *array_of_blocklengths, const int *array_of_displacements, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_create_hindexed, (int count, const int *array_of_blocklengths, const MPI_Aint *array_of_displacements, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_create_indexed_block, (int count, int blocklength, const int *array_of_displacements, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_create_struct, (int count, const int *array_of_blocklengths, const MPI_Aint *array_of_displacements, const MPI_Datatype *array_of_types, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_create_resized, (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_create_subarray, (int ndims, const int *array_of_sizes, const int *array_of_subsizes, const int *array_of_starts, int order, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_dup, (MPI_Datatype oldtype, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_commit, (MPI_Datatype *datatype))
MPCRS_DECLARE(int, Type_free, (MPI_Datatype *datatype))
MPCRS_DECLARE(int, Type_get_extent, (MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent))
MPCRS_DECLARE(int, Type_get_true_extent, (MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent))
MPCRS_DECLARE(int, Pack, (const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize, int *position, MPI_Comm comm))
MPCRS_DECLARE(int, Unpack, (const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype datatype, MPI_Comm comm))
MPCRS_DECLARE(int, Pack_size, (int incount, MPI_Datatype datatype, MPI_Comm comm, int *size))
MPCRS_DECLARE(int, Get_count, (const MPI_Status *status, MPI_Datatype datatype, int *count))
MPCRS_DECLARE(int, Op_create, (MPI_User_function *user_fn, int commute, MPI_Op *op))
MPCRS_DECLARE(int, Op_free, (MPI_Op *op))

MPCRS_DECLARE(int, Send, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
MPCRS_DECLARE(int, Ssend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
MPCRS_DECLARE(int, Recv, (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status))
MPCRS_DECLARE(int, Rsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
MPCRS_DECLARE(int, Bsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
MPCRS_DECLARE(int, Buffer_attach, (void *buffer, int size))
MPCRS_DECLARE(int, Buffer_detach, (void *buffer_addr, int *size))
MPCRS_DECLARE(int, Irsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ibsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Isend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Issend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Irecv, (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Sendrecv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status))
MPCRS_DECLARE(int, Sendrecv_replace, (void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status *status))
MPCRS_DECLARE(int, Mprobe, (int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status))
MPCRS_DECLARE(int, Improbe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status))
MPCRS_DECLARE(int, Mrecv, (void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status))
MPCRS_DECLARE(int, Imrecv, (void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request))
MPCRS_DECLARE(int, Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status))
MPCRS_DECLARE(int, Iprobe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status))
MPCRS_DECLARE(int, Wait, (MPI_Request *request, MPI_Status *status))
MPCRS_DECLARE(int, Waitall, (int count, MPI_Request *array_of_requests, MPI_Status *array_of_statuses))
MPCRS_DECLARE(int, Waitany, (int count, MPI_Request *array_of_requests, int *indx, MPI_Status *status))
MPCRS_DECLARE(int, Waitsome, (int incount, MPI_Request *array_of_requests, int *outcount, int *array_of_indices, MPI_Status *array_of_statuses))
MPCRS_DECLARE(int, Test, (MPI_Request *request, int *flag, MPI_Status *status))
MPCRS_DECLARE(int, Testall, (int count, MPI_Request *array_of_requests, int *flag, MPI_Status *array_of_statuses))
MPCRS_DECLARE(int, Testany, (int count, MPI_Request *array_of_requests, int *indx, int *flag, MPI_Status *status))
MPCRS_DECLARE(int, Testsome, (int incount, MPI_Request *array_of_requests, int *outcount, int *array_of_indices, MPI_Status *array_of_statuses))
MPCRS_DECLARE(int, Request_free, (MPI_Request *request))
MPCRS_DECLARE(int, Cancel, (MPI_Request *request))
MPCRS_DECLARE(int, Test_cancelled, (const MPI_Status *status, int *flag))
MPCRS_DECLARE(int, Get_elements, (const MPI_Status *status, MPI_Datatype datatype, int *count))
MPCRS_DECLARE(int, Send_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ssend_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Recv_init, (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Start, (MPI_Request *request))
MPCRS_DECLARE(int, Startall, (int count, MPI_Request *array_of_requests))

MPCRS_DECLARE(int, Barrier, (MPI_Comm comm))
MPCRS_DECLARE(int, Bcast, (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm))
MPCRS_DECLARE(int, Reduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm))
MPCRS_DECLARE(int, Allreduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MPCRS_DECLARE(int, Gather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
MPCRS_DECLARE(int, Scatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
MPCRS_DECLARE(int, Allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
MPCRS_DECLARE(int, Alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
MPCRS_DECLARE(int, Gatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int *recvcounts, const int *displs, MPI_Datatype recvtype, int root, MPI_Comm comm))
MPCRS_DECLARE(int, Scatterv, (const void *sendbuf, const int *sendcounts, const int *displs, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
MPCRS_DECLARE(int, Allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int *recvcounts, const int *displs, MPI_Datatype recvtype, MPI_Comm comm))
MPCRS_DECLARE(int, Alltoallv, (const void *sendbuf, const int *sendcounts, const int *sdispls, MPI_Datatype sendtype, void *recvbuf, const int *recvcounts, const int *rdispls, MPI_Datatype recvtype, MPI_Comm comm))
MPCRS_DECLARE(int, Alltoallw, (const void *sendbuf, const int *sendcounts, const int *sdispls, const MPI_Datatype *sendtypes, void *recvbuf, const int *recvcounts, const int *rdispls, const MPI_Datatype *recvtypes, MPI_Comm comm))
MPCRS_DECLARE(int, Reduce_scatter, (const void *sendbuf, void *recvbuf, const int *recvcounts, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MPCRS_DECLARE(int, Reduce_scatter_block, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MPCRS_DECLARE(int, Ibarrier, (MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ibcast, (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ireduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Iallreduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Igather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Iscatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Iallgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ialltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Scan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MPCRS_DECLARE(int, Exscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))

int MPIX_Checkpoint(MPIX_CR_state_t *state);

/* Fortran handle conversions: handles are the same integers. */
MPI_Fint MPI_Comm_c2f(MPI_Comm comm);
MPI_Comm MPI_Comm_f2c(MPI_Fint comm);
MPI_Fint MPI_Type_c2f(MPI_Datatype datatype);
MPI_Datatype MPI_Type_f2c(MPI_Fint datatype);
MPI_Fint MPI_Group_c2f(MPI_Group group);
MPI_Group MPI_Group_f2c(MPI_Fint group);
MPI_Fint MPI_Request_c2f(MPI_Request request);
MPI_Request MPI_Request_f2c(MPI_Fint request);
MPI_Fint MPI_Op_c2f(MPI_Op op);
MPI_Op MPI_Op_f2c(MPI_Fint op);
MPI_Fint MPI_Info_c2f(MPI_Info info);
MPI_Info MPI_Info_f2c(MPI_Fint info);
MPI_Fint MPI_Errhandler_c2f(MPI_Errhandler errhandler);
MPI_Errhandler MPI_Errhandler_f2c(MPI_Fint errhandler);
MPI_Fint MPI_Message_c2f(MPI_Message message);
MPI_Message MPI_Message_f2c(MPI_Fint message);

#undef MPCRS_DECLARE

#if defined(__cplusplus)
}
#endif

#endif /* MPCRS_MPI_H */
