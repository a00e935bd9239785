/* SPDX-License-Identifier: BSD-2-Clause */
/* File names of a UB2E instance's pins under <bpffs>/ubxdp/ub2e/<instance>/ (docs/UB2E.md shows bpftool use). */
#ifndef UBXDP_UB2E_PINS_H
#define UBXDP_UB2E_PINS_H

#define UB2E_PIN_CFG		"cfg"
#define UB2E_PIN_STATS		"stats"
#define UB2E_PIN_NPI2VLAN	"npi2vlan"
#define UB2E_PIN_VLAN2NPI	"vlan2npi"
#define UB2E_PIN_TX_IP		"tx_ip"
#define UB2E_PIN_TX_UB		"tx_ub"
#define UB2E_PIN_PROG_TO_UBOE	"prog_to_uboe"
#define UB2E_PIN_PROG_TO_UB	"prog_to_ub"
/* The TC slow path (bpf/ub2e_tc.bpf.c). */
#define UB2E_PIN_PROG_TC_INGRESS	"prog_tc_ingress"
#define UB2E_PIN_PROG_TC_EGRESS_IP	"prog_tc_egress_ip"
#define UB2E_PIN_PROG_TC_EGRESS_UB	"prog_tc_egress_ub"
#define UB2E_PIN_ICMP_LIMIT		"icmp_limit"
/* The XDP links (ubctl's link_* pins; the TC ones are link_tc_{ingress,egress}_{ub,ip}). */
#define UB2E_PIN_LINK_XDP_UB	"link_xdp_ub"
#define UB2E_PIN_LINK_XDP_IP	"link_xdp_ip"

#endif
