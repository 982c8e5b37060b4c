/* CRaaS: checkpoints of a rank's indices and arrays held in the memory of a
 * checkpoint service (mpcrs-run --ckpt-service HOST), flushed to the job's
 * checkpoint directory now and then, and restored from memory first.
 *
 * Every call acts for the calling MPI rank (after MPI_Init); names are scoped
 * by the rank. Checkpoint names: letters, digits, '.', '_' and '-', at most
 * CRAAS_MAX_NAME bytes; index and array names: any text of at most
 * CRAAS_MAX_NAME bytes.
 *
 * - CRaaS_Ckpt_array / CRaaS_Ckpt_index stage an update (the array is copied:
 *   the program may change it at once).
 * - CRaaS_Commit makes every update of the checkpoint since its last commit
 *   visible at once, or none: a failure before or during the commit leaves
 *   the previous commit whole. It returns once the update is staged in the
 *   process; only the blocks of an array that changed are sent.
 * - CRaaS_Exists, CRaaS_Rst_index, CRaaS_Rst_array read the newest commit
 *   (this run's, or an earlier run's after a failure).
 * - The first commit of a run that did not restore a checkpoint starts it
 *   again: arrays of earlier runs not given again are gone.
 *
 * Errors print one line naming the call and the rank. Link with -lcraas
 * (the calls are libmpi's). */
#ifndef MPCRS_CRAAS_H
#define MPCRS_CRAAS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CRAAS_SUCCESS 0
/* A NULL pointer where data or a name is needed. */
#define CRAAS_ERR_ARG 1
/* An empty name, one over CRAAS_MAX_NAME bytes, or a checkpoint name with
 * other characters. */
#define CRAAS_ERR_NAME 2
/* The rank has no committed checkpoint of that name. */
#define CRAAS_ERR_NO_CKPT 3
/* The checkpoint has no index or array of that name. */
#define CRAAS_ERR_NO_NAME 4
/* The restore buffer is not the size of the stored array. */
#define CRAAS_ERR_SIZE 5
/* No place to keep checkpoints, or the stored data cannot be read. */
#define CRAAS_ERR_STORE 6
/* Called outside an MPI rank (before MPI_Init). */
#define CRAAS_ERR_NOT_RANK 7

#define CRAAS_MAX_NAME 64

int CRaaS_Ckpt_array(const char *ckpt, const char *name, const void *data, size_t bytes);
int CRaaS_Ckpt_index(const char *ckpt, const char *name, long value);
int CRaaS_Commit(const char *ckpt);
/* 1 when a committed ckpt exists for this rank, else 0. */
int CRaaS_Exists(const char *ckpt);
/* 0 when the rank has no commit of ckpt (loops start at 0). */
long CRaaS_Rst_index(const char *ckpt, const char *name);
int CRaaS_Rst_array(const char *ckpt, const char *name, void *data, size_t bytes);
int CRaaS_Delete(const char *ckpt);
/* mpcrs extension: waits until the last commit of ckpt is held where it is
 * kept (the service's memory, or files written now). Commits do not wait. */
int CRaaSX_Wait(const char *ckpt);

#ifdef __cplusplus
}
#endif

#endif
