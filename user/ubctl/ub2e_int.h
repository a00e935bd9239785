/* SPDX-License-Identifier: BSD-2-Clause */
/* ubctl ub2e: what ub2e.c (commands, detach, status, map) and ub2e_attach.c share. */
#ifndef UBCTL_UB2E_INT_H
#define UBCTL_UB2E_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/ub2e_cfg.h"
#include "lib/npimap.h"
#include "ubctl/ubctl.h"

struct ub2e_args {
	struct instance_sel sel;
	struct ub2e_cfg cfg;
	bool generic, json;
	__u32 icmp_rate, icmp_burst;
	struct npimap_entry *plan;
	size_t nplan;
	char **rest;		/* positional arguments */
	int nrest;
};

/* ub2e attach, its options parsed into a. Returns the exit status (said). */
int ub2e_do_attach(struct ub2e_args *a);
/* The switch's clsact filters off a port where they run `ingress_fd`/`egress_fd`. Returns the failures (said). */
int ub2e_tc_detach(unsigned ifindex, int ingress_fd, int egress_fd);

#endif
