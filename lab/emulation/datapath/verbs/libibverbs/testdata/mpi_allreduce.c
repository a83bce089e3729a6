/*
 * mpi_allreduce: an MPI_Allreduce (sum of floats) over every rank, checked
 * element by element, then timed over ITERS more calls. Rank 0 prints the
 * time per call and the bus bandwidth in wall-clock units (the lab's
 * fabric runs k times slower: multiply by k). Exits 1 if a rank's result
 * is wrong. Usage: mpi_allreduce [BYTES [ITERS]].
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long bytes = argc > 1 ? atol(argv[1]) : 4 << 20;
	int iters = argc > 2 ? atoi(argv[2]) : 5;
	int n = (int)(bytes / sizeof(float));
	float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
	for (int i = 0; i < n; i++)
		a[i] = (float)(rank + 1 + i % 7);
	/* The first call also sets the connections up: checked, not timed. */
	MPI_Allreduce(a, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	int bad = 0;
	for (int i = 0; i < n; i++)
		if (b[i] != (float)(size * (size + 1) / 2 + size * (i % 7)))
			bad++;
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int k = 0; k < iters; k++)
		MPI_Allreduce(a, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	double t = (MPI_Wtime() - t0) / iters;
	int allbad = 0;
	MPI_Reduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("allreduce: %d ranks, %ld bytes, %d wrong elements, %.6f s per call, busbw %.1f MB/s (wall clock)\n",
		       size, bytes, allbad, t, bytes / t * 2 * (size - 1) / size / 1e6);
	MPI_Finalize();
	return bad != 0;
}
