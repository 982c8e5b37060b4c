/* fti.h of mpcrs: the application-level checkpoint calls of FTI 1.6 that
 * applications use, implemented by mpcrs's libmpi (link with -lfti or not:
 * mpcrs-cc provides them either way). Calls of FTI not listed here are not
 * provided: a program that uses them fails to link.
 *
 * Differences from FTI: FTI_COMM_WORLD is every rank started (the "head" of
 * a node runs as helper tasks of mpcrs's scheduler, not as a rank), and the
 * configuration file is read, never rewritten: a restarted program finds the
 * last checkpoint in Glbl_dir. */
#ifndef MPCRS_FTI_H
#define MPCRS_FTI_H

#include <mpi.h>
#include <stdint.h>
#include <stddef.h>

#define FTI_BUFS 256
#define FTI_WORD 16

#define FTI_DONE 1
#define FTI_SCES 0
#define FTI_NSCS -1
#define FTI_NREC -2
#define FTI_HEAD 2

typedef int fti_id_t;
#define FTIT_type fti_id_t

/* Levels: 1 node-local, 2 plus a partner's copy, 3 plus Reed-Solomon
 * parity, 4 plus the global directory. */
typedef enum {
    FTI_L1 = 1,
    FTI_L2,
    FTI_L3,
    FTI_L4
} FTIT_level;

/* mpcrs's memory level: FTI_Checkpoint(id, MPCRS_FTI_MEMORY) keeps each
 * rank's protected data in the memory of the job's checkpoint service
 * (mpcrs-run --ckpt-service HOST), or in its process, flushed to the
 * checkpoint directory (--checkpoint DIR), instead of in files of the levels
 * (craas.h's checkpoints "fti-memory-0" and "fti-memory-1"). With Head = 0
 * the call returns once the data is held there; with Head = 1 once it is
 * staged (helper tasks send it). FTI_Status and FTI_Recover take it when it
 * is newer than any checkpoint in files. In config.fti, Ckpt_mem = M makes
 * FTI_Snapshot take it every M minutes when no level in files is due. */
#define MPCRS_FTI_MEMORY 5

/* HDF5 groups are not implemented; pass NULL where one is asked. */
typedef struct FTIT_H5Group FTIT_H5Group;

#ifdef __cplusplus
extern "C" {
#endif

extern MPI_Comm FTI_COMM_WORLD;

extern fti_id_t FTI_CHAR;
extern fti_id_t FTI_SHRT;
extern fti_id_t FTI_INTG;
extern fti_id_t FTI_LONG;
extern fti_id_t FTI_UCHR;
extern fti_id_t FTI_USHT;
extern fti_id_t FTI_UINT;
extern fti_id_t FTI_ULNG;
extern fti_id_t FTI_SFLT;
extern fti_id_t FTI_DBLE;
extern fti_id_t FTI_LDBE;

int FTI_Init(const char *configFile, MPI_Comm globalComm);
int FTI_Status(void);
int FTI_Protect(int id, void *ptr, int64_t count, fti_id_t tid);
int64_t FTI_GetStoredSize(int id);
void *FTI_Realloc(int id, void *ptr);
int FTI_Checkpoint(int id, int level);
int FTI_Recover(void);
int FTI_Snapshot(void);
int FTI_Finalize(void);
int FTI_RecoverVar(int id);
int FTI_RecoverVarInit(void);
int FTI_RecoverVarFinalize(void);
int FTI_InitType(fti_id_t *type, int size);
fti_id_t FTI_InitCompositeType(const char *name, size_t size, FTIT_H5Group *h5g);
int FTI_AddScalarField(fti_id_t id, const char *name, fti_id_t fid, int64_t offset);
int FTI_AddVectorField(fti_id_t id, const char *name, fti_id_t tid, int64_t offset,
                       int ndims, int64_t *dim_sizes);

#ifdef __cplusplus
}
#endif

#endif /* MPCRS_FTI_H */
