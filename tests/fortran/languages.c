/* The C side of languages.f90: reads the attribute Fortran set, and sets one
 * of its own (a pointer) for Fortran to read. */
#include <mpi.h>

static int target;

/* Returns the number of errors: the value must be readable through the pointer
 * C gets, as MPI_Aint. */
int c_reads_fortran_(const int *keyval, const int *expected)
{
    MPI_Aint *val;
    int flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, *keyval, &val, &flag);
    return !flag || *val != *expected;
}

/* Sets the attribute to the address of a static int, and tells Fortran the address. */
int c_sets_pointer_(const int *keyval, MPI_Aint *address)
{
    *address = (MPI_Aint) &target;
    return MPI_Comm_set_attr(MPI_COMM_WORLD, *keyval, &target) != MPI_SUCCESS;
}
