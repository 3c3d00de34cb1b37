// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-ringfuzz: finding the rings librxe mapped, and reading and writing
 * them the way the user ABI lays them out.
 *
 * librxe keeps the rings in its private structures; the tool finds them as
 * the uverbs mappings a create call added. Creations that look for rings
 * hold rf_maps_lock(), so two of them never see each other's mappings.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ringfuzz.h"

static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;

void rf_maps_lock(void)
{
	pthread_mutex_lock(&maps_lock);
}

void rf_maps_unlock(void)
{
	pthread_mutex_unlock(&maps_lock);
}

/* The start (and length) of each mapping of a uverbs device. */
int rf_maps_snapshot(uintptr_t *lo, size_t *len, int max)
{
	unsigned long a, b;
	char line[512];
	FILE *f;
	int n = 0;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		if (!strstr(line, "/dev/infiniband/uverbs"))
			continue;
		if (sscanf(line, "%lx-%lx", &a, &b) != 2)
			continue;
		lo[n] = a;
		if (len)
			len[n] = b - a;
		n++;
	}
	fclose(f);
	return n;
}

int rf_ring_at(struct rf_ring *r, uintptr_t addr, size_t len)
{
	r->base = (uint8_t *)addr;
	r->len = len;
	r->log2 = rf_ring_get(r, RF_Q_LOG2);
	r->mask = rf_ring_get(r, RF_Q_MASK);
	if (r->log2 < 5 || r->log2 > 16 ||
	    RF_Q_DATA + ((size_t)r->mask + 1) * (1u << r->log2) > len)
		return -1;
	return 0;
}

/* The rings among the current mappings that @before did not list. */
int rf_maps_new(const uintptr_t *before, int nbefore, struct rf_ring *out,
		int max)
{
	uintptr_t now[256];
	size_t len[256];
	int n, i, j, found = 0;

	n = rf_maps_snapshot(now, len, 256);
	for (i = 0; i < n && found < max; i++) {
		for (j = 0; j < nbefore; j++)
			if (before[j] == now[i])
				break;
		if (j < nbefore)
			continue;
		if (!rf_ring_at(&out[found], now[i], len[i]))
			found++;
	}
	return found;
}

uint32_t rf_ring_get(const struct rf_ring *r, unsigned int off)
{
	return __atomic_load_n((uint32_t *)(r->base + off), __ATOMIC_ACQUIRE);
}

void rf_ring_set(struct rf_ring *r, unsigned int off, uint32_t v)
{
	__atomic_store_n((uint32_t *)(r->base + off), v, __ATOMIC_RELEASE);
}

/* Slot @idx, masked with the mask seen at creation, not the header's. */
uint8_t *rf_ring_slot(const struct rf_ring *r, uint32_t idx)
{
	return r->base + RF_Q_DATA + ((size_t)(idx & r->mask) << r->log2);
}

/*
 * The free slot at a send ring's producer index, zeroed, or NULL when the
 * ring is full. The caller holds whatever lock keeps librxe off the ring.
 */
uint8_t *rf_sq_next(struct rf_ring *r)
{
	uint32_t prod = rf_ring_get(r, RF_Q_PROD) & r->mask;
	uint8_t *slot;

	if (((prod + 1) & r->mask) == (rf_ring_get(r, RF_Q_CONS) & r->mask))
		return NULL;
	slot = rf_ring_slot(r, prod);
	memset(slot, 0, 1u << r->log2);
	return slot;
}

/* Hand the slot rf_sq_next() returned to the kernel. */
void rf_sq_publish(struct rf_ring *r)
{
	uint32_t prod = rf_ring_get(r, RF_Q_PROD) & r->mask;

	rf_ring_set(r, RF_Q_PROD, (prod + 1) & r->mask);
}
