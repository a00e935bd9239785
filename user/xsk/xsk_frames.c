// SPDX-License-Identifier: BSD-2-Clause
/* A thread's free frames and runs; the contract is in xsk_frames.h. */
#include "xsk/xsk_frames.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int xsk_frames_init(struct xsk_frames *fs, uint32_t nframes, uint32_t frame_size, uint32_t nruns,
		    uint32_t run_frames)
{
	memset(fs, 0, sizeof(*fs));
	fs->frame_size = frame_size;
	fs->run_base = (uint64_t)nframes * frame_size;
	fs->run_span = nruns ? (uint64_t)run_frames * frame_size : 0;
	fs->free = calloc(nframes ? nframes : 1, sizeof(*fs->free));
	fs->runs = calloc(nruns ? nruns : 1, sizeof(*fs->runs));
	if (!fs->free || !fs->runs) {
		xsk_frames_fini(fs);
		return -ENOMEM;
	}
	return 0;
}

void xsk_frames_fini(struct xsk_frames *fs)
{
	free(fs->free);
	free(fs->runs);
	fs->free = fs->runs = NULL;
}
