/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Exit statuses, the same in ubctl, ubperf, ubpkt and ubcaqm (EXIT STATUS in
 * their man pages). A refusal (2-5) changes nothing that was running.
 */
#ifndef UBXDP_EXIT_CODES_H
#define UBXDP_EXIT_CODES_H

#define UB_EXIT_OK		0	/* done */
#define UB_EXIT_FAIL		1	/* failed on the way: I/O, memory, timeout, the peer */
#define UB_EXIT_USAGE		2	/* the command line or a configuration file is wrong */
#define UB_EXIT_NOTFOUND	3	/* no such device, instance, entry or pinned object */
#define UB_EXIT_CONFLICT	4	/* already there: an instance, a program on the port, an entry */
#define UB_EXIT_KERNEL		5	/* the kernel refused: loading, verifying or attaching BPF, permission */

#define OPTAB_EXIT_USAGE	UB_EXIT_USAGE

#endif
