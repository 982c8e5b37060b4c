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
typedef int MPI_Session;
typedef int MPI_Message;
typedef int MPI_Win;
/* MPICH's MPI_File is a pointer to an opaque structure; only its size matters. */
typedef struct mpcrs_file *MPI_File;

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
#define MPI_SESSION_NULL    ((MPI_Session)0x38000000)
#define MPI_MESSAGE_NULL    ((MPI_Message)0x2c000000)
#define MPI_MESSAGE_NO_PROC ((MPI_Message)0x6c000000)
#define MPI_WIN_NULL        ((MPI_Win)0x20000000)
#define MPI_FILE_NULL       ((MPI_File)0)
#define MPI_INFO_ENV        ((MPI_Info)0x5c000001)

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
#define MPI_LB                 ((MPI_Datatype)0x4c000010)
#define MPI_UB                 ((MPI_Datatype)0x4c000011)
#define MPI_C_FLOAT_COMPLEX    ((MPI_Datatype)0x4c000840)
#define MPI_C_COMPLEX          MPI_C_FLOAT_COMPLEX
#define MPI_C_DOUBLE_COMPLEX   ((MPI_Datatype)0x4c001041)
#define MPI_C_LONG_DOUBLE_COMPLEX ((MPI_Datatype)0x4c002042)
#define MPI_CXX_BOOL           ((MPI_Datatype)0x4c000133)
#define MPI_CXX_FLOAT_COMPLEX  ((MPI_Datatype)0x4c000834)
#define MPI_CXX_DOUBLE_COMPLEX ((MPI_Datatype)0x4c001035)
#define MPI_CXX_LONG_DOUBLE_COMPLEX ((MPI_Datatype)0x4c002036)
/* Fortran datatypes (for programs that exchange data with Fortran code) */
#define MPI_CHARACTER          ((MPI_Datatype)0x4c00011a)
#define MPI_LOGICAL            ((MPI_Datatype)0x4c00041d)
#define MPI_INTEGER            ((MPI_Datatype)0x4c00041b)
#define MPI_REAL               ((MPI_Datatype)0x4c00041c)
#define MPI_DOUBLE_PRECISION   ((MPI_Datatype)0x4c00081f)
#define MPI_COMPLEX            ((MPI_Datatype)0x4c00081e)
#define MPI_DOUBLE_COMPLEX     ((MPI_Datatype)0x4c001022)
#define MPI_2INTEGER           ((MPI_Datatype)0x4c000820)
#define MPI_2REAL              ((MPI_Datatype)0x4c000821)
#define MPI_2DOUBLE_PRECISION  ((MPI_Datatype)0x4c001023)
#define MPI_INTEGER1           ((MPI_Datatype)0x4c00012d)
#define MPI_INTEGER2           ((MPI_Datatype)0x4c00022f)
#define MPI_INTEGER4           ((MPI_Datatype)0x4c000430)
#define MPI_INTEGER8           ((MPI_Datatype)0x4c000831)
#define MPI_INTEGER16          ((MPI_Datatype)0x0c000000)
#define MPI_REAL4              ((MPI_Datatype)0x4c000427)
#define MPI_REAL8              ((MPI_Datatype)0x4c000829)
#define MPI_REAL16             ((MPI_Datatype)0x4c00102b)
#define MPI_COMPLEX8           ((MPI_Datatype)0x4c000828)
#define MPI_COMPLEX16          ((MPI_Datatype)0x4c00102a)
#define MPI_COMPLEX32          ((MPI_Datatype)0x4c00202c)
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
#define MPI_COMM_TYPE_HW_GUIDED   2
#define MPI_COMM_TYPE_HW_UNGUIDED 3
#define MPI_DISTRIBUTE_BLOCK     121
#define MPI_DISTRIBUTE_CYCLIC    122
#define MPI_DISTRIBUTE_NONE      123
#define MPI_DISTRIBUTE_DFLT_DARG (-49767)
#define MPI_TYPECLASS_REAL    1
#define MPI_TYPECLASS_INTEGER 2
#define MPI_TYPECLASS_COMPLEX 3
#define MPI_MAX_PORT_NAME      256
#define MPI_MAX_DATAREP_STRING 128
#define MPI_MAX_STRINGTAG_LEN  256
#define MPI_MAX_PSET_NAME_LEN  256
#define MPI_ERRCODES_IGNORE ((int *)0)
#define MPI_ARGV_NULL       ((char **)0)
#define MPI_ARGVS_NULL      ((char ***)0)
#define MPI_AINT_FMT_DEC_SPEC "%ld"
#define MPI_AINT_FMT_HEX_SPEC "%lx"
#define MPI_LASTUSEDCODE    0x6440000b
/* Window attributes, assertions and lock types */
#define MPI_WIN_BASE          0x66000001
#define MPI_WIN_SIZE          0x66000003
#define MPI_WIN_DISP_UNIT     0x66000005
#define MPI_WIN_CREATE_FLAVOR 0x66000007
#define MPI_WIN_MODEL         0x66000009
#define MPI_MODE_NOCHECK      1024
#define MPI_MODE_NOSTORE      2048
#define MPI_MODE_NOPUT        4096
#define MPI_MODE_NOPRECEDE    8192
#define MPI_MODE_NOSUCCEED   16384
#define MPI_LOCK_EXCLUSIVE  234
#define MPI_LOCK_SHARED     235
/* File access modes and positions */
#define MPI_MODE_CREATE              1
#define MPI_MODE_RDONLY              2
#define MPI_MODE_WRONLY              4
#define MPI_MODE_RDWR                8
#define MPI_MODE_DELETE_ON_CLOSE    16
#define MPI_MODE_UNIQUE_OPEN        32
#define MPI_MODE_EXCL               64
#define MPI_MODE_APPEND            128
#define MPI_MODE_SEQUENTIAL        256
#define MPI_SEEK_SET            600
#define MPI_SEEK_CUR            602
#define MPI_SEEK_END            604
#define MPI_DISPLACEMENT_CURRENT (-54278278)
/* Fortran status layout */
#define MPI_F_STATUS_SIZE 5
#define MPI_F_SOURCE 2
#define MPI_F_TAG 3
#define MPI_F_ERROR 4

/* Kinds of topology (MPI_Topo_test), window flavors and memory models. */
enum { MPI_GRAPH = 1, MPI_CART = 2, MPI_DIST_GRAPH = 3 };
enum {
    MPI_WIN_FLAVOR_CREATE = 1, MPI_WIN_FLAVOR_ALLOCATE = 2,
    MPI_WIN_FLAVOR_DYNAMIC = 3, MPI_WIN_FLAVOR_SHARED = 4
};
enum { MPI_WIN_SEPARATE = 1, MPI_WIN_UNIFIED = 2 };
/* Datatype constructors, as MPI_Type_get_envelope reports them. */
enum {
    MPI_COMBINER_NAMED = 1, MPI_COMBINER_DUP, MPI_COMBINER_CONTIGUOUS,
    MPI_COMBINER_VECTOR, MPI_COMBINER_HVECTOR_INTEGER, MPI_COMBINER_HVECTOR,
    MPI_COMBINER_INDEXED, MPI_COMBINER_HINDEXED_INTEGER, MPI_COMBINER_HINDEXED,
    MPI_COMBINER_INDEXED_BLOCK, MPI_COMBINER_STRUCT_INTEGER, MPI_COMBINER_STRUCT,
    MPI_COMBINER_SUBARRAY, MPI_COMBINER_DARRAY, MPI_COMBINER_F90_REAL,
    MPI_COMBINER_F90_COMPLEX, MPI_COMBINER_F90_INTEGER, MPI_COMBINER_RESIZED,
    MPI_COMBINER_HINDEXED_BLOCK
};

/* Neighbour weights of graph topologies: addresses exported by the library. */
extern int *const MPI_UNWEIGHTED;
extern int *const MPI_WEIGHTS_EMPTY;
/* Fortran status arguments that are ignored. */
extern MPI_Fint *MPI_F_STATUS_IGNORE;
extern MPI_Fint *MPI_F_STATUSES_IGNORE;
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
#define MPI_ERR_ACCESS    20
#define MPI_ERR_AMODE     21
#define MPI_ERR_BAD_FILE  22
#define MPI_ERR_CONVERSION 23
#define MPI_ERR_DUP_DATAREP 24
#define MPI_ERR_FILE_EXISTS 25
#define MPI_ERR_FILE_IN_USE 26
#define MPI_ERR_FILE      27
#define MPI_ERR_INFO      28
#define MPI_ERR_INFO_KEY  29
#define MPI_ERR_INFO_VALUE 30
#define MPI_ERR_INFO_NOKEY 31
#define MPI_ERR_IO        32
#define MPI_ERR_NAME      33
#define MPI_ERR_NO_MEM    34
#define MPI_ERR_NOT_SAME  35
#define MPI_ERR_NO_SPACE  36
#define MPI_ERR_NO_SUCH_FILE 37
#define MPI_ERR_PORT      38
#define MPI_ERR_QUOTA     39
#define MPI_ERR_READ_ONLY 40
#define MPI_ERR_SERVICE   41
#define MPI_ERR_SPAWN     42
#define MPI_ERR_UNSUPPORTED_DATAREP 43
#define MPI_ERR_UNSUPPORTED_OPERATION 44
#define MPI_ERR_WIN       45
#define MPI_ERR_BASE      46
#define MPI_ERR_LOCKTYPE  47
#define MPI_ERR_KEYVAL    48
#define MPI_ERR_RMA_CONFLICT 49
#define MPI_ERR_RMA_SYNC  50
#define MPI_ERR_SIZE      51
#define MPI_ERR_DISP      52
#define MPI_ERR_ASSERT    53
#define MPI_ERR_RMA_RANGE 55
#define MPI_ERR_RMA_ATTACH 56
#define MPI_ERR_RMA_SHARED 57
#define MPI_ERR_RMA_FLAVOR 58
/* Error codes of the tool information interface */
#define MPI_T_ERR_MEMORY            59
#define MPI_T_ERR_NOT_INITIALIZED   60
#define MPI_T_ERR_CANNOT_INIT       61
#define MPI_T_ERR_INVALID_INDEX     62
#define MPI_T_ERR_INVALID_ITEM      63
#define MPI_T_ERR_INVALID_HANDLE    64
#define MPI_T_ERR_OUT_OF_HANDLES    65
#define MPI_T_ERR_OUT_OF_SESSIONS   66
#define MPI_T_ERR_INVALID_SESSION   67
#define MPI_T_ERR_CVAR_SET_NOT_NOW  68
#define MPI_T_ERR_CVAR_SET_NEVER    69
#define MPI_T_ERR_PVAR_NO_STARTSTOP 70
#define MPI_T_ERR_PVAR_NO_WRITE     71
#define MPI_T_ERR_PVAR_NO_ATOMIC    72
#define MPI_T_ERR_INVALID_NAME      73
#define MPI_T_ERR_INVALID           74
#define MPI_ERR_SESSION   75
#define MPI_ERR_PROC_ABORTED 76
#define MPI_ERR_VALUE_TOO_LARGE 77
#define MPI_T_ERR_NOT_SUPPORTED     78
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
typedef void (MPI_User_function_c)(void *invec, void *inoutvec, MPI_Count *len, MPI_Datatype *datatype);
typedef int (MPI_Comm_copy_attr_function)(MPI_Comm oldcomm, int comm_keyval, void *extra_state,
                                          void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int (MPI_Comm_delete_attr_function)(MPI_Comm comm, int comm_keyval, void *attribute_val, void *extra_state);
typedef int (MPI_Type_copy_attr_function)(MPI_Datatype oldtype, int type_keyval, void *extra_state,
                                          void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int (MPI_Type_delete_attr_function)(MPI_Datatype datatype, int type_keyval, void *attribute_val, void *extra_state);
typedef int (MPI_Win_copy_attr_function)(MPI_Win oldwin, int win_keyval, void *extra_state,
                                         void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int (MPI_Win_delete_attr_function)(MPI_Win win, int win_keyval, void *attribute_val, void *extra_state);
/* MPI-1 names of the communicator attribute callbacks */
typedef int (MPI_Copy_function)(MPI_Comm oldcomm, int keyval, void *extra_state,
                                void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int (MPI_Delete_function)(MPI_Comm comm, int keyval, void *attribute_val, void *extra_state);
/* Error handlers get the object and the error code, then arguments of the implementation's choice. */
typedef void (MPI_Comm_errhandler_function)(MPI_Comm *comm, int *errcode, ...);
typedef void (MPI_Win_errhandler_function)(MPI_Win *win, int *errcode, ...);
typedef void (MPI_File_errhandler_function)(MPI_File *fh, int *errcode, ...);
typedef void (MPI_Session_errhandler_function)(MPI_Session *session, int *errcode, ...);
typedef MPI_Comm_errhandler_function MPI_Handler_function;
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef MPI_Win_errhandler_function MPI_Win_errhandler_fn;
typedef MPI_File_errhandler_function MPI_File_errhandler_fn;
typedef int (MPI_Grequest_query_function)(void *extra_state, MPI_Status *status);
typedef int (MPI_Grequest_free_function)(void *extra_state);
typedef int (MPI_Grequest_cancel_function)(void *extra_state, int complete);
typedef int (MPI_Datarep_conversion_function)(void *userbuf, MPI_Datatype datatype, int count,
                                              void *filebuf, MPI_Offset position, void *extra_state);
typedef int (MPI_Datarep_conversion_function_c)(void *userbuf, MPI_Datatype datatype, MPI_Count count,
                                                void *filebuf, MPI_Offset position, void *extra_state);
typedef int (MPI_Datarep_extent_function)(MPI_Datatype datatype, MPI_Aint *extent, void *extra_state);

/* The predefined copy callback that copies the attribute's value. */
int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                void *attribute_val_out, int *flag);
#define MPI_DUP_FN MPIR_Dup_fn
#define MPI_NULL_COPY_FN        ((MPI_Copy_function *)0)
#define MPI_NULL_DELETE_FN      ((MPI_Delete_function *)0)
#define MPI_COMM_NULL_COPY_FN   ((MPI_Comm_copy_attr_function *)0)
#define MPI_COMM_NULL_DELETE_FN ((MPI_Comm_delete_attr_function *)0)
#define MPI_COMM_DUP_FN         ((MPI_Comm_copy_attr_function *)MPI_DUP_FN)
#define MPI_TYPE_NULL_COPY_FN   ((MPI_Type_copy_attr_function *)0)
#define MPI_TYPE_NULL_DELETE_FN ((MPI_Type_delete_attr_function *)0)
#define MPI_TYPE_DUP_FN         ((MPI_Type_copy_attr_function *)MPI_DUP_FN)
#define MPI_WIN_NULL_COPY_FN    ((MPI_Win_copy_attr_function *)0)
#define MPI_WIN_NULL_DELETE_FN  ((MPI_Win_delete_attr_function *)0)
#define MPI_WIN_DUP_FN          ((MPI_Win_copy_attr_function *)MPI_DUP_FN)
#define MPI_CONVERSION_FN_NULL  ((MPI_Datarep_conversion_function *)0)

/* ---- Tool information interface (MPI_T) -------------------------------- */
typedef struct mpcrs_t_enum *MPI_T_enum;
typedef struct mpcrs_t_cvar_handle *MPI_T_cvar_handle;
typedef struct mpcrs_t_pvar_handle *MPI_T_pvar_handle;
typedef struct mpcrs_t_pvar_session *MPI_T_pvar_session;
#define MPI_T_ENUM_NULL         ((MPI_T_enum)0)
#define MPI_T_CVAR_HANDLE_NULL  ((MPI_T_cvar_handle)0)
#define MPI_T_PVAR_HANDLE_NULL  ((MPI_T_pvar_handle)0)
#define MPI_T_PVAR_SESSION_NULL ((MPI_T_pvar_session)0)
enum {
    MPI_T_VERBOSITY_INVALID = 0,
    MPI_T_VERBOSITY_USER_BASIC = 221, MPI_T_VERBOSITY_USER_DETAIL, MPI_T_VERBOSITY_USER_ALL,
    MPI_T_VERBOSITY_TUNER_BASIC, MPI_T_VERBOSITY_TUNER_DETAIL, MPI_T_VERBOSITY_TUNER_ALL,
    MPI_T_VERBOSITY_MPIDEV_BASIC, MPI_T_VERBOSITY_MPIDEV_DETAIL, MPI_T_VERBOSITY_MPIDEV_ALL
};
enum {
    MPI_T_BIND_INVALID = 0,
    MPI_T_BIND_NO_OBJECT = 9700, MPI_T_BIND_MPI_COMM, MPI_T_BIND_MPI_DATATYPE,
    MPI_T_BIND_MPI_ERRHANDLER, MPI_T_BIND_MPI_FILE, MPI_T_BIND_MPI_GROUP, MPI_T_BIND_MPI_OP,
    MPI_T_BIND_MPI_REQUEST, MPI_T_BIND_MPI_WIN, MPI_T_BIND_MPI_MESSAGE, MPI_T_BIND_MPI_INFO
};
enum {
    MPI_T_SCOPE_INVALID = 0,
    MPI_T_SCOPE_CONSTANT = 60438, MPI_T_SCOPE_READONLY, MPI_T_SCOPE_LOCAL, MPI_T_SCOPE_GROUP,
    MPI_T_SCOPE_GROUP_EQ, MPI_T_SCOPE_ALL, MPI_T_SCOPE_ALL_EQ
};
enum {
    MPI_T_PVAR_CLASS_INVALID = 0,
    MPI_T_PVAR_CLASS_STATE = 240, MPI_T_PVAR_CLASS_LEVEL, MPI_T_PVAR_CLASS_SIZE,
    MPI_T_PVAR_CLASS_PERCENTAGE, MPI_T_PVAR_CLASS_HIGHWATERMARK, MPI_T_PVAR_CLASS_LOWWATERMARK,
    MPI_T_PVAR_CLASS_COUNTER, MPI_T_PVAR_CLASS_AGGREGATE, MPI_T_PVAR_CLASS_TIMER,
    MPI_T_PVAR_CLASS_GENERIC
};

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
MPCRS_DECLARE(int, Bsend_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Rsend_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
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

/* Environment, errors and info objects */
MPCRS_DECLARE(int, Add_error_class, (int *errorclass))
MPCRS_DECLARE(int, Add_error_code, (int errorclass, int *errorcode))
MPCRS_DECLARE(int, Add_error_string, (int errorcode, const char *string))
MPCRS_DECLARE(int, Comm_create_errhandler, (MPI_Comm_errhandler_function *comm_errhandler_fn, MPI_Errhandler *errhandler))
MPCRS_DECLARE(int, Errhandler_create, (MPI_Comm_errhandler_function *comm_errhandler_fn, MPI_Errhandler *errhandler))
MPCRS_DECLARE(int, Errhandler_get, (MPI_Comm comm, MPI_Errhandler *errhandler))
MPCRS_DECLARE(int, Errhandler_set, (MPI_Comm comm, MPI_Errhandler errhandler))
MPCRS_DECLARE(int, Info_dup, (MPI_Info info, MPI_Info *newinfo))
MPCRS_DECLARE(int, Info_get_nthkey, (MPI_Info info, int n, char *key))
MPCRS_DECLARE(int, Info_get_valuelen, (MPI_Info info, const char *key, int *valuelen, int *flag))
MPCRS_DECLARE(int, Info_get_string, (MPI_Info info, const char *key, int *buflen, char *value, int *flag))
MPCRS_DECLARE(int, Info_create_env, (int argc, char *argv[], MPI_Info *info))
/* MPI-4 sessions and communicators made from groups */
#define MPI_MAX_PSET_NAME_LEN  256
#define MPI_MAX_STRINGTAG_LEN  256
MPCRS_DECLARE(int, Session_init, (MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session))
MPCRS_DECLARE(int, Session_finalize, (MPI_Session *session))
MPCRS_DECLARE(int, Session_get_info, (MPI_Session session, MPI_Info *info_used))
MPCRS_DECLARE(int, Session_get_num_psets, (MPI_Session session, MPI_Info info, int *npset_names))
MPCRS_DECLARE(int, Session_get_nth_pset, (MPI_Session session, MPI_Info info, int n, int *pset_len, char *pset_name))
MPCRS_DECLARE(int, Session_get_pset_info, (MPI_Session session, const char *pset_name, MPI_Info *info))
MPCRS_DECLARE(int, Group_from_session_pset, (MPI_Session session, const char *pset_name, MPI_Group *newgroup))
MPCRS_DECLARE(int, Comm_create_from_group, (MPI_Group group, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler, MPI_Comm *newcomm))
MPCRS_DECLARE(int, Intercomm_create_from_groups, (MPI_Group local_group, int local_leader, MPI_Group remote_group, int remote_leader, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler, MPI_Comm *newintercomm))
/* Requests, statuses and persistent operations */
MPCRS_DECLARE(int, Pcontrol, (const int level, ...))
MPCRS_DECLARE(int, Grequest_start, (MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn, MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request))
MPCRS_DECLARE(int, Grequest_complete, (MPI_Request request))
MPCRS_DECLARE(int, Request_get_status, (MPI_Request request, int *flag, MPI_Status *status))
MPCRS_DECLARE(int, Status_c2f, (const MPI_Status *c_status, MPI_Fint *f_status))
MPCRS_DECLARE(int, Status_f2c, (const MPI_Fint *f_status, MPI_Status *c_status))
/* Communicators, groups and attributes (MPI-1 names included) */
MPCRS_DECLARE(int, Attr_delete, (MPI_Comm comm, int keyval))
MPCRS_DECLARE(int, Attr_get, (MPI_Comm comm, int keyval, void *attribute_val, int *flag))
MPCRS_DECLARE(int, Attr_put, (MPI_Comm comm, int keyval, void *attribute_val))
MPCRS_DECLARE(int, Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm))
MPCRS_DECLARE(int, Comm_get_info, (MPI_Comm comm, MPI_Info *info_used))
MPCRS_DECLARE(int, Comm_idup, (MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request))
MPCRS_DECLARE(int, Comm_set_info, (MPI_Comm comm, MPI_Info info))
MPCRS_DECLARE(int, Group_range_excl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup))
MPCRS_DECLARE(int, Group_range_incl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup))
MPCRS_DECLARE(int, Keyval_create, (MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval, void *extra_state))
MPCRS_DECLARE(int, Keyval_free, (int *keyval))
/* Datatypes, addresses, packing and local reductions */
MPCRS_DECLARE(int, Address, (void *location, MPI_Aint *address))
MPCRS_DECLARE(MPI_Aint, Aint_add, (MPI_Aint base, MPI_Aint disp))
MPCRS_DECLARE(MPI_Aint, Aint_diff, (MPI_Aint addr1, MPI_Aint addr2))
MPCRS_DECLARE(int, Get_address, (const void *location, MPI_Aint *address))
MPCRS_DECLARE(int, Get_elements_x, (const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count))
MPCRS_DECLARE(int, Op_commutative, (MPI_Op op, int *commute))
MPCRS_DECLARE(int, Pack_external, (const char *datarep, const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, MPI_Aint outsize, MPI_Aint *position))
MPCRS_DECLARE(int, Pack_external_size, (const char *datarep, int incount, MPI_Datatype datatype, MPI_Aint *size))
MPCRS_DECLARE(int, Reduce_local, (const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op))
MPCRS_DECLARE(int, Status_set_cancelled, (MPI_Status *status, int flag))
MPCRS_DECLARE(int, Status_set_elements, (MPI_Status *status, MPI_Datatype datatype, int count))
MPCRS_DECLARE(int, Status_set_elements_x, (MPI_Status *status, MPI_Datatype datatype, MPI_Count count))
MPCRS_DECLARE(int, Type_create_darray, (int size, int rank, int ndims, const int array_of_gsizes[], const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_create_f90_complex, (int p, int r, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_create_f90_integer, (int r, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_create_f90_real, (int p, int r, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_create_hindexed_block, (int count, int blocklength, const MPI_Aint array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_create_keyval, (MPI_Type_copy_attr_function *type_copy_attr_fn, MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval, void *extra_state))
MPCRS_DECLARE(int, Type_delete_attr, (MPI_Datatype datatype, int type_keyval))
MPCRS_DECLARE(int, Type_extent, (MPI_Datatype datatype, MPI_Aint *extent))
MPCRS_DECLARE(int, Type_free_keyval, (int *type_keyval))
MPCRS_DECLARE(int, Type_get_attr, (MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag))
MPCRS_DECLARE(int, Type_get_contents, (MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]))
MPCRS_DECLARE(int, Type_get_envelope, (MPI_Datatype datatype, int *num_integers, int *num_addresses, int *num_datatypes, int *combiner))
MPCRS_DECLARE(int, Type_get_extent_x, (MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent))
MPCRS_DECLARE(int, Type_get_name, (MPI_Datatype datatype, char *type_name, int *resultlen))
MPCRS_DECLARE(int, Type_get_true_extent_x, (MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent))
MPCRS_DECLARE(int, Type_hindexed, (int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_hvector, (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_lb, (MPI_Datatype datatype, MPI_Aint *displacement))
MPCRS_DECLARE(int, Type_match_size, (int typeclass, int size, MPI_Datatype *datatype))
MPCRS_DECLARE(int, Type_set_attr, (MPI_Datatype datatype, int type_keyval, void *attribute_val))
MPCRS_DECLARE(int, Type_set_name, (MPI_Datatype datatype, const char *type_name))
MPCRS_DECLARE(int, Type_size_x, (MPI_Datatype datatype, MPI_Count *size))
MPCRS_DECLARE(int, Type_struct, (int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[], MPI_Datatype array_of_types[], MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_ub, (MPI_Datatype datatype, MPI_Aint *displacement))
MPCRS_DECLARE(int, Unpack_external, (const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype))
/* MPI-4 large-count variants: counts as MPI_Count */
MPCRS_DECLARE(int, Get_count_c, (const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count))
MPCRS_DECLARE(int, Get_elements_c, (const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count))
MPCRS_DECLARE(int, Type_size_c, (MPI_Datatype datatype, MPI_Count *size))
MPCRS_DECLARE(int, Type_get_extent_c, (MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent))
MPCRS_DECLARE(int, Type_get_true_extent_c, (MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent))
MPCRS_DECLARE(int, Type_contiguous_c, (MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_create_hindexed_c, (MPI_Count count, const MPI_Count array_of_blocklengths[], const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_create_indexed_block_c, (MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Send_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
MPCRS_DECLARE(int, Ssend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
MPCRS_DECLARE(int, Recv_c, (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status))
MPCRS_DECLARE(int, Bcast_c, (void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm))
MPCRS_DECLARE(int, Alltoallv_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm))
MPCRS_DECLARE(int, Accumulate_c, (const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
MPCRS_DECLARE(int, Allgather_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm))
MPCRS_DECLARE(int, Allgather_init_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Allgatherv_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm))
MPCRS_DECLARE(int, Allgatherv_init_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Allreduce_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MPCRS_DECLARE(int, Allreduce_init_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Alltoall_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm))
MPCRS_DECLARE(int, Alltoall_init_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Alltoallv_init_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Alltoallw_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))
MPCRS_DECLARE(int, Alltoallw_init_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Bcast_init_c, (void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Bsend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
MPCRS_DECLARE(int, Bsend_init_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Buffer_attach_c, (void *buffer, MPI_Count size))
MPCRS_DECLARE(int, Buffer_detach_c, (void *buffer_addr, MPI_Count *size))
MPCRS_DECLARE(int, Exscan_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MPCRS_DECLARE(int, Exscan_init_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, File_get_type_extent_c, (MPI_File fh, MPI_Datatype datatype, MPI_Count *extent))
MPCRS_DECLARE(int, File_iread_all_c, (MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
MPCRS_DECLARE(int, File_iread_at_all_c, (MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
MPCRS_DECLARE(int, File_iread_at_c, (MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
MPCRS_DECLARE(int, File_iread_c, (MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
MPCRS_DECLARE(int, File_iread_shared_c, (MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
MPCRS_DECLARE(int, File_iwrite_all_c, (MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
MPCRS_DECLARE(int, File_iwrite_at_all_c, (MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
MPCRS_DECLARE(int, File_iwrite_at_c, (MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
MPCRS_DECLARE(int, File_iwrite_c, (MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
MPCRS_DECLARE(int, File_iwrite_shared_c, (MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
MPCRS_DECLARE(int, File_read_all_begin_c, (MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype))
MPCRS_DECLARE(int, File_read_all_c, (MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, File_read_at_all_begin_c, (MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype))
MPCRS_DECLARE(int, File_read_at_all_c, (MPI_File fh, MPI_Offset offset, void * buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, File_read_at_c, (MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, File_read_c, (MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, File_read_ordered_begin_c, (MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype))
MPCRS_DECLARE(int, File_read_ordered_c, (MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, File_read_shared_c, (MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, File_write_all_begin_c, (MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype))
MPCRS_DECLARE(int, File_write_all_c, (MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, File_write_at_all_begin_c, (MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype))
MPCRS_DECLARE(int, File_write_at_all_c, (MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, File_write_at_c, (MPI_File fh, MPI_Offset offset, const void * buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, File_write_c, (MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, File_write_ordered_begin_c, (MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype))
MPCRS_DECLARE(int, File_write_ordered_c, (MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, File_write_shared_c, (MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, Gather_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
MPCRS_DECLARE(int, Gather_init_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Gatherv_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root, MPI_Comm comm))
MPCRS_DECLARE(int, Gatherv_init_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Get_accumulate_c, (const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
MPCRS_DECLARE(int, Get_c, (void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win))
MPCRS_DECLARE(int, Iallgather_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Iallgatherv_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Iallreduce_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ialltoall_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ialltoallv_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ialltoallw_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ibcast_c, (void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ibsend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Iexscan_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Igather_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Igatherv_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Imrecv_c, (void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request))
MPCRS_DECLARE(int, Ineighbor_allgather_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ineighbor_allgatherv_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ineighbor_alltoall_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ineighbor_alltoallv_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ineighbor_alltoallw_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Irecv_c, (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ireduce_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ireduce_scatter_block_c, (const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ireduce_scatter_c, (const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Irsend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Iscan_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Iscatter_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Iscatterv_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Isend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Isendrecv_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Isendrecv_replace_c, (void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Issend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Mrecv_c, (void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status))
MPCRS_DECLARE(int, Neighbor_allgather_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm))
MPCRS_DECLARE(int, Neighbor_allgather_init_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Neighbor_allgatherv_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm))
MPCRS_DECLARE(int, Neighbor_allgatherv_init_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Neighbor_alltoall_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm))
MPCRS_DECLARE(int, Neighbor_alltoall_init_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Neighbor_alltoallv_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm))
MPCRS_DECLARE(int, Neighbor_alltoallv_init_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Neighbor_alltoallw_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))
MPCRS_DECLARE(int, Neighbor_alltoallw_init_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Op_create_c, (MPI_User_function_c *user_fn, int commute, MPI_Op *op))
MPCRS_DECLARE(int, Pack_c, (const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf, MPI_Count outsize, MPI_Count *position, MPI_Comm comm))
MPCRS_DECLARE(int, Pack_external_c, (const char *datarep, const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf, MPI_Count outsize, MPI_Count *position))
MPCRS_DECLARE(int, Pack_external_size_c, (const char *datarep, MPI_Count incount, MPI_Datatype datatype, MPI_Count *size))
MPCRS_DECLARE(int, Pack_size_c, (MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size))
MPCRS_DECLARE(int, Put_c, (const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win))
MPCRS_DECLARE(int, Raccumulate_c, (const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request))
MPCRS_DECLARE(int, Recv_init_c, (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Reduce_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm))
MPCRS_DECLARE(int, Reduce_init_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Reduce_local_c, (const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op))
MPCRS_DECLARE(int, Reduce_scatter_block_c, (const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MPCRS_DECLARE(int, Reduce_scatter_block_init_c, (const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Reduce_scatter_c, (const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MPCRS_DECLARE(int, Reduce_scatter_init_c, (const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Register_datarep_c, (const char *datarep, MPI_Datarep_conversion_function_c *read_conversion_fn, MPI_Datarep_conversion_function_c *write_conversion_fn, MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state))
MPCRS_DECLARE(int, Rget_accumulate_c, (const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request))
MPCRS_DECLARE(int, Rget_c, (void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request))
MPCRS_DECLARE(int, Rput_c, (const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request))
MPCRS_DECLARE(int, Rsend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
MPCRS_DECLARE(int, Rsend_init_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Scan_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MPCRS_DECLARE(int, Scan_init_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Scatter_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
MPCRS_DECLARE(int, Scatter_init_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Scatterv_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
MPCRS_DECLARE(int, Scatterv_init_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Send_init_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Sendrecv_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status))
MPCRS_DECLARE(int, Sendrecv_replace_c, (void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status *status))
MPCRS_DECLARE(int, Ssend_init_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Type_create_darray_c, (int size, int rank, int ndims, const MPI_Count array_of_gsizes[], const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_create_hindexed_block_c, (MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_create_hvector_c, (MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_create_resized_c, (MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_create_struct_c, (MPI_Count count, const MPI_Count array_of_blocklengths[], const MPI_Count array_of_displacements[], const MPI_Datatype array_of_types[], MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_create_subarray_c, (int ndims, const MPI_Count array_of_sizes[], const MPI_Count array_of_subsizes[], const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_get_contents_c, (MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses, MPI_Count max_large_counts, MPI_Count max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[]))
MPCRS_DECLARE(int, Type_get_envelope_c, (MPI_Datatype datatype, MPI_Count *num_integers, MPI_Count *num_addresses, MPI_Count *num_large_counts, MPI_Count *num_datatypes, int *combiner))
MPCRS_DECLARE(int, Type_indexed_c, (MPI_Count count, const MPI_Count array_of_blocklengths[], const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Type_vector_c, (MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
MPCRS_DECLARE(int, Unpack_c, (const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm))
MPCRS_DECLARE(int, Unpack_external_c, (const char datarep[], const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount, MPI_Datatype datatype))
MPCRS_DECLARE(int, Win_allocate_c, (MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win))
MPCRS_DECLARE(int, Win_allocate_shared_c, (MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win))
MPCRS_DECLARE(int, Win_create_c, (void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win))
MPCRS_DECLARE(int, Win_shared_query_c, (MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr))
MPCRS_DECLARE(int, Status_set_elements_c, (MPI_Status *status, MPI_Datatype datatype, MPI_Count count))
MPCRS_DECLARE(int, Comm_attach_buffer_c, (MPI_Comm comm, void *buffer, MPI_Count size))
MPCRS_DECLARE(int, Comm_detach_buffer_c, (MPI_Comm comm, void *buffer_addr, MPI_Count *size))
MPCRS_DECLARE(int, Session_attach_buffer_c, (MPI_Session session, void *buffer, MPI_Count size))
MPCRS_DECLARE(int, Session_detach_buffer_c, (MPI_Session session, void *buffer_addr, MPI_Count *size))
/* MPI-4.0: persistent neighbourhood collectives, partitioned communication, session error handlers */
MPCRS_DECLARE(int, Neighbor_allgather_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Neighbor_allgatherv_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Neighbor_alltoall_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Neighbor_alltoallv_init, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Neighbor_alltoallw_init, (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Psend_init, (const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Precv_init, (void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Pready, (int partition, MPI_Request request))
MPCRS_DECLARE(int, Pready_range, (int partition_low, int partition_high, MPI_Request request))
MPCRS_DECLARE(int, Pready_list, (int length, const int array_of_partitions[], MPI_Request request))
MPCRS_DECLARE(int, Parrived, (MPI_Request request, int partition, int *flag))
MPCRS_DECLARE(int, Session_create_errhandler, (MPI_Session_errhandler_function *session_errhandler_fn, MPI_Errhandler *errhandler))
MPCRS_DECLARE(int, Session_get_errhandler, (MPI_Session session, MPI_Errhandler *errhandler))
MPCRS_DECLARE(int, Session_set_errhandler, (MPI_Session session, MPI_Errhandler errhandler))
MPCRS_DECLARE(int, Session_call_errhandler, (MPI_Session session, int errorcode))
MPCRS_DECLARE(MPI_Fint, Session_c2f, (MPI_Session session))
MPCRS_DECLARE(MPI_Session, Session_f2c, (MPI_Fint session))
/* MPI-4.1 */
MPCRS_DECLARE(int, Status_get_source, (MPI_Status *status, int *source))
MPCRS_DECLARE(int, Status_set_source, (MPI_Status *status, int source))
MPCRS_DECLARE(int, Status_get_tag, (MPI_Status *status, int *tag))
MPCRS_DECLARE(int, Status_set_tag, (MPI_Status *status, int tag))
MPCRS_DECLARE(int, Status_get_error, (MPI_Status *status, int *error))
MPCRS_DECLARE(int, Status_set_error, (MPI_Status *status, int error))
MPCRS_DECLARE(int, Request_get_status_all, (int count, const MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[]))
MPCRS_DECLARE(int, Request_get_status_any, (int count, const MPI_Request array_of_requests[], int *indx, int *flag, MPI_Status *status))
MPCRS_DECLARE(int, Request_get_status_some, (int incount, const MPI_Request array_of_requests[], int *outcount, int array_of_indices[], MPI_Status array_of_statuses[]))
MPCRS_DECLARE(int, Type_get_value_index, (MPI_Datatype value_type, MPI_Datatype index_type, MPI_Datatype *pair_type))
MPCRS_DECLARE(int, Remove_error_class, (int errorclass))
MPCRS_DECLARE(int, Remove_error_code, (int errorcode))
MPCRS_DECLARE(int, Remove_error_string, (int errorcode))
MPCRS_DECLARE(int, Comm_attach_buffer, (MPI_Comm comm, void *buffer, int size))
MPCRS_DECLARE(int, Comm_detach_buffer, (MPI_Comm comm, void *buffer_addr, int *size))
MPCRS_DECLARE(int, Comm_flush_buffer, (MPI_Comm comm))
MPCRS_DECLARE(int, Comm_iflush_buffer, (MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Session_attach_buffer, (MPI_Session session, void *buffer, int size))
MPCRS_DECLARE(int, Session_detach_buffer, (MPI_Session session, void *buffer_addr, int *size))
MPCRS_DECLARE(int, Session_flush_buffer, (MPI_Session session))
MPCRS_DECLARE(int, Session_iflush_buffer, (MPI_Session session, MPI_Request *request))
MPCRS_DECLARE(int, Buffer_flush, (void))
MPCRS_DECLARE(int, Buffer_iflush, (MPI_Request *request))
MPCRS_DECLARE(int, Get_hw_resource_info, (MPI_Info *hw_info))
/* Handles as ints (identities, MPI_File as MPI_File_c2f) */
MPCRS_DECLARE(int, Comm_toint, (MPI_Comm comm))
MPCRS_DECLARE(MPI_Comm, Comm_fromint, (int comm))
MPCRS_DECLARE(int, Errhandler_toint, (MPI_Errhandler errhandler))
MPCRS_DECLARE(MPI_Errhandler, Errhandler_fromint, (int errhandler))
MPCRS_DECLARE(int, File_toint, (MPI_File file))
MPCRS_DECLARE(MPI_File, File_fromint, (int file))
MPCRS_DECLARE(int, Group_toint, (MPI_Group group))
MPCRS_DECLARE(MPI_Group, Group_fromint, (int group))
MPCRS_DECLARE(int, Info_toint, (MPI_Info info))
MPCRS_DECLARE(MPI_Info, Info_fromint, (int info))
MPCRS_DECLARE(int, Message_toint, (MPI_Message message))
MPCRS_DECLARE(MPI_Message, Message_fromint, (int message))
MPCRS_DECLARE(int, Op_toint, (MPI_Op op))
MPCRS_DECLARE(MPI_Op, Op_fromint, (int op))
MPCRS_DECLARE(int, Request_toint, (MPI_Request request))
MPCRS_DECLARE(MPI_Request, Request_fromint, (int request))
MPCRS_DECLARE(int, Session_toint, (MPI_Session session))
MPCRS_DECLARE(MPI_Session, Session_fromint, (int session))
MPCRS_DECLARE(int, Type_toint, (MPI_Datatype datatype))
MPCRS_DECLARE(MPI_Datatype, Type_fromint, (int datatype))
MPCRS_DECLARE(int, Win_toint, (MPI_Win win))
MPCRS_DECLARE(MPI_Win, Win_fromint, (int win))
/* MPI-5.0's standard ABI: this library implements MPICH's ABI, not it */
MPCRS_DECLARE(int, Abi_get_version, (int *abi_major, int *abi_minor))
MPCRS_DECLARE(int, Abi_get_info, (MPI_Info *info))
MPCRS_DECLARE(int, Abi_get_fortran_info, (MPI_Info *info))
/* Non-blocking collectives */
MPCRS_DECLARE(int, Iallgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ialltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ialltoallw, (const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Iexscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Igatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ireduce_scatter, (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ireduce_scatter_block, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Iscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Iscatterv, (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
/* MPI-4: persistent collectives, MPI_Isendrecv(_replace), MPI_Comm_idup_with_info */
MPCRS_DECLARE(int, Barrier_init, (MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Bcast_init, (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Reduce_init, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Allreduce_init, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Scan_init, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Exscan_init, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Reduce_scatter_init, (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Reduce_scatter_block_init, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Gather_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Gatherv_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Scatter_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Scatterv_init, (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Allgather_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Allgatherv_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Alltoall_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Alltoallv_init, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Alltoallw_init, (const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request *request))
MPCRS_DECLARE(int, Isendrecv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Isendrecv_replace, (void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Comm_idup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request))
/* Process topologies and neighbourhood collectives */
MPCRS_DECLARE(int, Cart_map, (MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank))
MPCRS_DECLARE(int, Topo_test, (MPI_Comm comm, int *status))
MPCRS_DECLARE(int, Graph_create, (MPI_Comm comm_old, int nnodes, const int indx[], const int edges[], int reorder, MPI_Comm *comm_graph))
MPCRS_DECLARE(int, Graph_get, (MPI_Comm comm, int maxindex, int maxedges, int indx[], int edges[]))
MPCRS_DECLARE(int, Graph_map, (MPI_Comm comm, int nnodes, const int indx[], const int edges[], int *newrank))
MPCRS_DECLARE(int, Graph_neighbors, (MPI_Comm comm, int rank, int maxneighbors, int neighbors[]))
MPCRS_DECLARE(int, Graph_neighbors_count, (MPI_Comm comm, int rank, int *nneighbors))
MPCRS_DECLARE(int, Graphdims_get, (MPI_Comm comm, int *nnodes, int *nedges))
MPCRS_DECLARE(int, Dist_graph_create, (MPI_Comm comm_old, int n, const int sources[], const int degrees[], const int destinations[], const int weights[], MPI_Info info, int reorder, MPI_Comm *comm_dist_graph))
MPCRS_DECLARE(int, Dist_graph_create_adjacent, (MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[], int outdegree, const int destinations[], const int destweights[], MPI_Info info, int reorder, MPI_Comm *comm_dist_graph))
MPCRS_DECLARE(int, Dist_graph_neighbors, (MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree, int destinations[], int destweights[]))
MPCRS_DECLARE(int, Neighbor_allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
MPCRS_DECLARE(int, Neighbor_allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm))
MPCRS_DECLARE(int, Neighbor_alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
MPCRS_DECLARE(int, Neighbor_alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm))
MPCRS_DECLARE(int, Neighbor_alltoallw, (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))
MPCRS_DECLARE(int, Ineighbor_allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ineighbor_allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ineighbor_alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ineighbor_alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Ineighbor_alltoallw, (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request))
MPCRS_DECLARE(int, Dist_graph_neighbors_count, (MPI_Comm comm, int *indegree, int *outdegree, int *weighted))

/* The functions below exist so that every program links; they fail with
 * MPI_ERR_UNSUPPORTED_OPERATION through the error handler (README: "Not yet"). */
/* One-sided communication */
MPCRS_DECLARE(int, Accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
MPCRS_DECLARE(int, Compare_and_swap, (const void *origin_addr, const void *compare_addr, void *result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win))
MPCRS_DECLARE(int, Fetch_and_op, (const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win))
MPCRS_DECLARE(int, Get, (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win))
MPCRS_DECLARE(int, Get_accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
MPCRS_DECLARE(int, Put, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win))
MPCRS_DECLARE(int, Raccumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request))
MPCRS_DECLARE(int, Rget, (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request))
MPCRS_DECLARE(int, Rget_accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request))
MPCRS_DECLARE(int, Rput, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request))
MPCRS_DECLARE(int, Win_allocate, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win))
MPCRS_DECLARE(int, Win_allocate_shared, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win))
MPCRS_DECLARE(int, Win_attach, (MPI_Win win, void *base, MPI_Aint size))
MPCRS_DECLARE(int, Win_call_errhandler, (MPI_Win win, int errorcode))
MPCRS_DECLARE(int, Win_complete, (MPI_Win win))
MPCRS_DECLARE(int, Win_create, (void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win))
MPCRS_DECLARE(int, Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win *win))
MPCRS_DECLARE(int, Win_create_errhandler, (MPI_Win_errhandler_function *win_errhandler_fn, MPI_Errhandler *errhandler))
MPCRS_DECLARE(int, Win_create_keyval, (MPI_Win_copy_attr_function *win_copy_attr_fn, MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval, void *extra_state))
MPCRS_DECLARE(int, Win_delete_attr, (MPI_Win win, int win_keyval))
MPCRS_DECLARE(int, Win_detach, (MPI_Win win, const void *base))
MPCRS_DECLARE(int, Win_fence, (int assert, MPI_Win win))
MPCRS_DECLARE(int, Win_flush, (int rank, MPI_Win win))
MPCRS_DECLARE(int, Win_flush_all, (MPI_Win win))
MPCRS_DECLARE(int, Win_flush_local, (int rank, MPI_Win win))
MPCRS_DECLARE(int, Win_flush_local_all, (MPI_Win win))
MPCRS_DECLARE(int, Win_free, (MPI_Win *win))
MPCRS_DECLARE(int, Win_free_keyval, (int *win_keyval))
MPCRS_DECLARE(int, Win_get_attr, (MPI_Win win, int win_keyval, void *attribute_val, int *flag))
MPCRS_DECLARE(int, Win_get_errhandler, (MPI_Win win, MPI_Errhandler *errhandler))
MPCRS_DECLARE(int, Win_get_group, (MPI_Win win, MPI_Group *group))
MPCRS_DECLARE(int, Win_get_info, (MPI_Win win, MPI_Info *info_used))
MPCRS_DECLARE(int, Win_get_name, (MPI_Win win, char *win_name, int *resultlen))
MPCRS_DECLARE(int, Win_lock, (int lock_type, int rank, int assert, MPI_Win win))
MPCRS_DECLARE(int, Win_lock_all, (int assert, MPI_Win win))
MPCRS_DECLARE(int, Win_post, (MPI_Group group, int assert, MPI_Win win))
MPCRS_DECLARE(int, Win_set_attr, (MPI_Win win, int win_keyval, void *attribute_val))
MPCRS_DECLARE(int, Win_set_errhandler, (MPI_Win win, MPI_Errhandler errhandler))
MPCRS_DECLARE(int, Win_set_info, (MPI_Win win, MPI_Info info))
MPCRS_DECLARE(int, Win_set_name, (MPI_Win win, const char *win_name))
MPCRS_DECLARE(int, Win_shared_query, (MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr))
MPCRS_DECLARE(int, Win_start, (MPI_Group group, int assert, MPI_Win win))
MPCRS_DECLARE(int, Win_sync, (MPI_Win win))
MPCRS_DECLARE(int, Win_test, (MPI_Win win, int *flag))
MPCRS_DECLARE(int, Win_unlock, (int rank, MPI_Win win))
MPCRS_DECLARE(int, Win_unlock_all, (MPI_Win win))
MPCRS_DECLARE(int, Win_wait, (MPI_Win win))
/* Dynamic processes */
MPCRS_DECLARE(int, Close_port, (const char *port_name))
MPCRS_DECLARE(int, Comm_accept, (const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm))
MPCRS_DECLARE(int, Comm_connect, (const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm))
MPCRS_DECLARE(int, Comm_disconnect, (MPI_Comm *comm))
MPCRS_DECLARE(int, Comm_join, (int fd, MPI_Comm *intercomm))
MPCRS_DECLARE(int, Comm_spawn, (const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]))
MPCRS_DECLARE(int, Comm_spawn_multiple, (int count, char *array_of_commands[], char **array_of_argv[], const int array_of_maxprocs[], const MPI_Info array_of_info[], int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]))
MPCRS_DECLARE(int, Lookup_name, (const char *service_name, MPI_Info info, char *port_name))
MPCRS_DECLARE(int, Open_port, (MPI_Info info, char *port_name))
MPCRS_DECLARE(int, Publish_name, (const char *service_name, MPI_Info info, const char *port_name))
MPCRS_DECLARE(int, Unpublish_name, (const char *service_name, MPI_Info info, const char *port_name))
/* Parallel I/O */
MPCRS_DECLARE(MPI_Fint, File_c2f, (MPI_File file))
MPCRS_DECLARE(int, File_call_errhandler, (MPI_File fh, int errorcode))
MPCRS_DECLARE(int, File_close, (MPI_File *fh))
MPCRS_DECLARE(int, File_create_errhandler, (MPI_File_errhandler_function *file_errhandler_fn, MPI_Errhandler *errhandler))
MPCRS_DECLARE(int, File_delete, (const char *filename, MPI_Info info))
MPCRS_DECLARE(MPI_File, File_f2c, (MPI_Fint file))
MPCRS_DECLARE(int, File_get_amode, (MPI_File fh, int *amode))
MPCRS_DECLARE(int, File_get_atomicity, (MPI_File fh, int *flag))
MPCRS_DECLARE(int, File_get_byte_offset, (MPI_File fh, MPI_Offset offset, MPI_Offset *disp))
MPCRS_DECLARE(int, File_get_errhandler, (MPI_File file, MPI_Errhandler *errhandler))
MPCRS_DECLARE(int, File_get_group, (MPI_File fh, MPI_Group *group))
MPCRS_DECLARE(int, File_get_info, (MPI_File fh, MPI_Info *info_used))
MPCRS_DECLARE(int, File_get_position, (MPI_File fh, MPI_Offset *offset))
MPCRS_DECLARE(int, File_get_position_shared, (MPI_File fh, MPI_Offset *offset))
MPCRS_DECLARE(int, File_get_size, (MPI_File fh, MPI_Offset *size))
MPCRS_DECLARE(int, File_get_type_extent, (MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent))
MPCRS_DECLARE(int, File_get_view, (MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype, char *datarep))
MPCRS_DECLARE(int, File_iread, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
MPCRS_DECLARE(int, File_iread_all, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
MPCRS_DECLARE(int, File_iread_at, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
MPCRS_DECLARE(int, File_iread_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
MPCRS_DECLARE(int, File_iread_shared, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
MPCRS_DECLARE(int, File_iwrite, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
MPCRS_DECLARE(int, File_iwrite_all, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
MPCRS_DECLARE(int, File_iwrite_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
MPCRS_DECLARE(int, File_iwrite_at_all, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
MPCRS_DECLARE(int, File_iwrite_shared, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
MPCRS_DECLARE(int, File_open, (MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh))
MPCRS_DECLARE(int, File_preallocate, (MPI_File fh, MPI_Offset size))
MPCRS_DECLARE(int, File_read, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, File_read_all, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, File_read_all_begin, (MPI_File fh, void *buf, int count, MPI_Datatype datatype))
MPCRS_DECLARE(int, File_read_all_end, (MPI_File fh, void *buf, MPI_Status *status))
MPCRS_DECLARE(int, File_read_at, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, File_read_at_all, (MPI_File fh, MPI_Offset offset, void * buf, int count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, File_read_at_all_begin, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype))
MPCRS_DECLARE(int, File_read_at_all_end, (MPI_File fh, void *buf, MPI_Status *status))
MPCRS_DECLARE(int, File_read_ordered, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, File_read_ordered_begin, (MPI_File fh, void *buf, int count, MPI_Datatype datatype))
MPCRS_DECLARE(int, File_read_ordered_end, (MPI_File fh, void *buf, MPI_Status *status))
MPCRS_DECLARE(int, File_read_shared, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, File_seek, (MPI_File fh, MPI_Offset offset, int whence))
MPCRS_DECLARE(int, File_seek_shared, (MPI_File fh, MPI_Offset offset, int whence))
MPCRS_DECLARE(int, File_set_atomicity, (MPI_File fh, int flag))
MPCRS_DECLARE(int, File_set_errhandler, (MPI_File file, MPI_Errhandler errhandler))
MPCRS_DECLARE(int, File_set_info, (MPI_File fh, MPI_Info info))
MPCRS_DECLARE(int, File_set_size, (MPI_File fh, MPI_Offset size))
MPCRS_DECLARE(int, File_set_view, (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep, MPI_Info info))
MPCRS_DECLARE(int, File_sync, (MPI_File fh))
MPCRS_DECLARE(int, File_write, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, File_write_all, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, File_write_all_begin, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype))
MPCRS_DECLARE(int, File_write_all_end, (MPI_File fh, const void *buf, MPI_Status *status))
MPCRS_DECLARE(int, File_write_at, (MPI_File fh, MPI_Offset offset, const void * buf, int count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, File_write_at_all, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, File_write_at_all_begin, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype))
MPCRS_DECLARE(int, File_write_at_all_end, (MPI_File fh, const void *buf, MPI_Status *status))
MPCRS_DECLARE(int, File_write_ordered, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, File_write_ordered_begin, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype))
MPCRS_DECLARE(int, File_write_ordered_end, (MPI_File fh, const void *buf, MPI_Status *status))
MPCRS_DECLARE(int, File_write_shared, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
MPCRS_DECLARE(int, Register_datarep, (const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn, MPI_Datarep_conversion_function *write_conversion_fn, MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state))
/* Tool information interface */
MPCRS_DECLARE(int, T_category_changed, (int *update_number))
MPCRS_DECLARE(int, T_category_get_categories, (int cat_index, int len, int indices[]))
MPCRS_DECLARE(int, T_category_get_cvars, (int cat_index, int len, int indices[]))
MPCRS_DECLARE(int, T_category_get_index, (const char *name, int *cat_index))
MPCRS_DECLARE(int, T_category_get_info, (int cat_index, char *name, int *name_len, char *desc, int *desc_len, int *num_cvars, int *num_pvars, int *num_categories))
MPCRS_DECLARE(int, T_category_get_num, (int *num_cat))
MPCRS_DECLARE(int, T_category_get_pvars, (int cat_index, int len, int indices[]))
MPCRS_DECLARE(int, T_cvar_get_index, (const char *name, int *cvar_index))
MPCRS_DECLARE(int, T_cvar_get_info, (int cvar_index, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope))
MPCRS_DECLARE(int, T_cvar_get_num, (int *num_cvar))
MPCRS_DECLARE(int, T_cvar_handle_alloc, (int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count))
MPCRS_DECLARE(int, T_cvar_handle_free, (MPI_T_cvar_handle *handle))
MPCRS_DECLARE(int, T_cvar_read, (MPI_T_cvar_handle handle, void *buf))
MPCRS_DECLARE(int, T_cvar_write, (MPI_T_cvar_handle handle, const void *buf))
MPCRS_DECLARE(int, T_enum_get_info, (MPI_T_enum enumtype, int *num, char *name, int *name_len))
MPCRS_DECLARE(int, T_enum_get_item, (MPI_T_enum enumtype, int indx, int *value, char *name, int *name_len))
MPCRS_DECLARE(int, T_finalize, (void))
MPCRS_DECLARE(int, T_init_thread, (int required, int *provided))
MPCRS_DECLARE(int, T_pvar_get_index, (const char *name, int var_class, int *pvar_index))
MPCRS_DECLARE(int, T_pvar_get_info, (int pvar_index, char *name, int *name_len, int *verbosity, int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *readonly, int *continuous, int *atomic))
MPCRS_DECLARE(int, T_pvar_get_num, (int *num_pvar))
MPCRS_DECLARE(int, T_pvar_handle_alloc, (MPI_T_pvar_session session, int pvar_index, void *obj_handle, MPI_T_pvar_handle *handle, int *count))
MPCRS_DECLARE(int, T_pvar_handle_free, (MPI_T_pvar_session session, MPI_T_pvar_handle *handle))
MPCRS_DECLARE(int, T_pvar_read, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf))
MPCRS_DECLARE(int, T_pvar_readreset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf))
MPCRS_DECLARE(int, T_pvar_reset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
MPCRS_DECLARE(int, T_pvar_session_create, (MPI_T_pvar_session *session))
MPCRS_DECLARE(int, T_pvar_session_free, (MPI_T_pvar_session *session))
MPCRS_DECLARE(int, T_pvar_start, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
MPCRS_DECLARE(int, T_pvar_stop, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
MPCRS_DECLARE(int, T_pvar_write, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf))
int MPIX_Checkpoint(MPIX_CR_state_t *state);
/* MPICH's extensions taking back added error classes, codes and strings */
int MPIX_Delete_error_class(int errorclass);
int MPIX_Delete_error_code(int errorcode);
int MPIX_Delete_error_string(int errorcode);

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
MPI_Fint PMPI_Message_c2f(MPI_Message message);
MPI_Message PMPI_Message_f2c(MPI_Fint message);
MPI_Fint MPI_Win_c2f(MPI_Win win);
MPI_Win MPI_Win_f2c(MPI_Fint win);

#undef MPCRS_DECLARE

#if defined(__cplusplus)
}
#endif

#endif /* MPCRS_MPI_H */
