// SPDX-License-Identifier: BSD-2-Clause
/* test_xsk_handoff, built with -fsanitize=thread where the compiler has it
 * (Makefile): the two-thread test then reports a slot read before it was
 * published, which plain runs on x86 would rarely show. */
#include "test_xsk_handoff.c"
