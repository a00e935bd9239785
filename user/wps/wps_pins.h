/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Pins of a WPS ingress instance under <bpffs>/ubxdp/wps/ingress/<name>/ and
 * of a boundary filter under <bpffs>/ubxdp/wps/boundary/<name>/, where
 * <name> is [<netns>:]<dev> (docs/WPS.md shows bpftool use).
 */
#ifndef UBXDP_WPS_PINS_H
#define UBXDP_WPS_PINS_H

#define WPS_ROLE_INGRESS	"wps/ingress"
#define WPS_ROLE_BOUNDARY	"wps/boundary"

#define WPS_PIN_CFG		"cfg"
#define WPS_PIN_RULES		"rules"
#define WPS_PIN_PATHS		"paths"
#define WPS_PIN_PATH_STATS	"path_stats"
#define WPS_PIN_PATH_LOAD	"path_load"
#define WPS_PIN_ECMP_STATS	"ecmp_stats"
#define WPS_PIN_FLOWS		"flows"
#define WPS_PIN_FLOW_HOT	"flow_hot"
#define WPS_PIN_FLOW_STATE	"flow_state"
#define WPS_PIN_FLOW_CACHE	"flow_cache"
#define WPS_PIN_FID_STATE	"fid_state"
#define WPS_PIN_STATS		"stats"
#define WPS_PIN_LIVE		"live"
#define WPS_PIN_PORTS		"ports"
#define WPS_PIN_PROG		"prog"
#define WPS_PIN_PROG_SEG	"prog_seg"
#define WPS_PIN_PROG_IN		"prog_in"
#define WPS_PIN_PROG_OUT	"prog_out"
/* tcx links, where the kernel has tcx (ubctl's link_* pins): the ingress on
 * DEV egress and on the detour; the boundary on DEV ingress and egress. */
#define WPS_PIN_LINK		"link_tc_egress"
#define WPS_PIN_LINK_SEG	"link_tc_seg"
#define WPS_PIN_LINK_IN		"link_tc_ingress"
#define WPS_PIN_LINK_OUT	"link_tc_egress"

/* TC filter identity (handle, priority) so detach removes ours and nothing else
 * (kernels without tcx, and instances an older ubctl attached). */
#define WPS_TC_HANDLE		0x57
#define WPS_TC_PRIO_INGRESS	0x5701
#define WPS_TC_PRIO_BOUNDARY	0x5702

/* The segmentation detour of device ifindex N: veth wpsgN (GSO off) -> wpsgNp. */
#define WPS_SEG_FMT		"wpsg%u"
#define WPS_SEG_PEER_FMT	"wpsg%up"

#endif
