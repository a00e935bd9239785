/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The CAQM/ECN stage's state (headers/caqm_stage.h) as JSON, for ubcaqm,
 * which runs the stage, and for ubperf --stage-pin, which only reads the
 * maps ubcaqm --pin leaves in a directory: a reader never changes the stage.
 */
#ifndef UBXDP_CAQM_PINS_H
#define UBXDP_CAQM_PINS_H

#include <stddef.h>

#include <json-c/json.h>

/* DIR/caqm_budget and DIR/caqm_stats, opened; 0 or -errno with one line in err. */
int caqm_pins_open(const char *dir, int *budget_fd, int *stats_fd, char *err, size_t errlen);
/* The counters by name, "queue_bytes" and "queue_high_bytes"; NULL with errno. */
struct json_object *caqm_stage_json(int budget_fd, int stats_fd);

#endif
