// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-mpicheck: a small MPI program whose every result is checked, for
 * running Open MPI over UCX over sroce.
 *
 *   mpirun -np N ... sroce-mpicheck [-s BYTES]
 *
 * Each rank, over a ring (rank r talks to r + 1 and r - 1):
 *
 *   p2p:       sends a message of BYTES (default 1 MiB) and of 8 bytes to
 *              the next rank and receives the previous rank's; the
 *              receiver checks every byte and returns it, incremented,
 *              which the sender checks;
 *   allreduce: MPI_Allreduce (sum) of 4096 values, each rank's computable
 *              by all; every element of the result compared;
 *   put/get:   in a window of 64 Ki ints per rank, MPI_Put of this rank's
 *              pattern into the next rank's window (checked there after a
 *              fence), then MPI_Get of the previous rank's window (checked
 *              here).
 *
 * Rank 0 prints one line per check with the number of ranks that failed
 * it; the exit status is 1 when any check failed anywhere.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#define MC_REDUCE	4096
#define MC_WIN		(64 * 1024)

static int rank, size;

/* Byte I of the message sent by rank FROM: differs per rank and place. */
static uint8_t msg_byte(int from, size_t i)
{
	uint32_t x = (uint32_t)(from + 1) * 2654435761u ^ (uint32_t)i * 40503u;

	return x ^ x >> 13 ^ (uint32_t)(i >> 8);
}

static int32_t win_val(int from, int i)
{
	return (from + 1) * 1000003 + i * 7;
}

/* Count the failure of a check on this rank; rank 0 reports the total. */
static int report(const char *what, int failed)
{
	int total = 0;

	MPI_Reduce(&failed, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%s %s: %d of %d ranks failed\n",
		       total ? "FAIL" : "PASS", what, total, size);
	fflush(stdout);
	return total != 0;
}

static int p2p(size_t len)
{
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	uint8_t *out = malloc(len), *in = malloc(len), *back = malloc(len);
	size_t i, bad = 0;

	if (!out || !in || !back)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (i = 0; i < len; i++)
		out[i] = msg_byte(rank, i);
	memset(in, 0, len);
	MPI_Sendrecv(out, len, MPI_BYTE, next, 1, in, len, MPI_BYTE, prev, 1,
		     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	for (i = 0; i < len; i++) {
		if (in[i] != msg_byte(prev, i))
			bad++;
		in[i]++;
	}
	/* Back to where it came from, each byte one more. */
	MPI_Sendrecv(in, len, MPI_BYTE, prev, 2, back, len, MPI_BYTE, next, 2,
		     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	for (i = 0; i < len; i++)
		if (back[i] != (uint8_t)(out[i] + 1))
			bad++;
	if (bad)
		fprintf(stderr, "rank %d: p2p %zu bytes: %zu bad\n", rank,
			len, bad);
	free(out);
	free(in);
	free(back);
	return bad != 0;
}

static int allreduce(void)
{
	static int64_t mine[MC_REDUCE], sum[MC_REDUCE];
	int64_t want;
	int i, r, bad = 0;

	for (i = 0; i < MC_REDUCE; i++)
		mine[i] = (int64_t)(rank + 1) * (i + 1) + rank * 17;
	MPI_Allreduce(mine, sum, MC_REDUCE, MPI_INT64_T, MPI_SUM,
		      MPI_COMM_WORLD);
	for (i = 0; i < MC_REDUCE; i++) {
		want = 0;
		for (r = 0; r < size; r++)
			want += (int64_t)(r + 1) * (i + 1) + r * 17;
		if (sum[i] != want)
			bad++;
	}
	if (bad)
		fprintf(stderr, "rank %d: allreduce: %d bad\n", rank, bad);
	return bad != 0;
}

static int one_sided(int *put_bad, int *get_bad)
{
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	int32_t *base, *mine, *got;
	MPI_Win win;
	int i;

	mine = malloc(MC_WIN * sizeof(*mine));
	got = malloc(MC_WIN * sizeof(*got));
	if (!mine || !got)
		MPI_Abort(MPI_COMM_WORLD, 2);
	MPI_Win_allocate(MC_WIN * sizeof(*base), sizeof(*base), MPI_INFO_NULL,
			 MPI_COMM_WORLD, &base, &win);
	for (i = 0; i < MC_WIN; i++) {
		base[i] = -1;
		mine[i] = win_val(rank, i);
	}
	MPI_Win_fence(0, win);
	MPI_Put(mine, MC_WIN, MPI_INT32_T, next, 0, MC_WIN, MPI_INT32_T, win);
	MPI_Win_fence(0, win);
	*put_bad = 0;
	for (i = 0; i < MC_WIN; i++)
		if (base[i] != win_val(prev, i))
			(*put_bad)++;

	/* The window now holds the previous rank's values: read them back. */
	memset(got, 0, MC_WIN * sizeof(*got));
	MPI_Get(got, MC_WIN, MPI_INT32_T, prev, 0, MC_WIN, MPI_INT32_T, win);
	MPI_Win_fence(0, win);
	*get_bad = 0;
	for (i = 0; i < MC_WIN; i++)
		if (got[i] != win_val((prev + size - 1) % size, i))
			(*get_bad)++;
	if (*put_bad || *get_bad)
		fprintf(stderr, "rank %d: put %d bad, get %d bad\n", rank,
			*put_bad, *get_bad);
	MPI_Win_free(&win);
	free(mine);
	free(got);
	return 0;
}

int main(int argc, char **argv)
{
	size_t len = 1 << 20;
	int c, failed = 0, put_bad, get_bad;
	char name[MPI_MAX_PROCESSOR_NAME];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	while ((c = getopt(argc, argv, "s:")) != -1) {
		if (c == 's') {
			len = strtoul(optarg, NULL, 0);
		} else {
			if (rank == 0)
				fprintf(stderr, "usage: %s [-s BYTES]\n",
					argv[0]);
			MPI_Finalize();
			return 2;
		}
	}
	MPI_Get_processor_name(name, &c);
	printf("rank %d of %d on %s\n", rank, size, name);
	fflush(stdout);
	MPI_Barrier(MPI_COMM_WORLD);

	failed |= report("p2p 8 bytes and back", p2p(8));
	failed |= report("p2p large message and back", p2p(len));
	failed |= report("allreduce sum of 4096 int64", allreduce());
	one_sided(&put_bad, &get_bad);
	failed |= report("MPI_Put into the next rank's window", put_bad != 0);
	failed |= report("MPI_Get from the previous rank's window",
			 get_bad != 0);
	MPI_Finalize();
	return failed;
}
