// SPDX-License-Identifier: BSD-2-Clause
/* Help texts of `ubctl ub2e` (ubctl help ub2e [SUB], ubctl ub2e SUB --help). */
#include <stddef.h>

#include "ubctl.h"

#define SEL "  Instance: --ub-dev DEV --ip-dev DEV, --name NAME or --pin-path DIR; the only\n" \
	    "  instance when none is given. Commands that touch ports enter the instance's\n" \
	    "  network namespace (recorded at attach) or refuse.\n"

const struct ubctl_help help_ub2e[] = {
	{ NULL,
	  "usage: ubctl ub2e attach|detach|status|map ...\n"
	  "\n"
	  "The UB2E switch of draft-li-uboe-00: native UB frames on the UB-side port\n"
	  "<-> UBoE (UB over UDP/IP) on the IP-side port, converted in XDP.\n"
	  "\n"
	  "  attach   load and attach the switch to two ports (ubctl help ub2e attach)\n"
	  "  detach   take it off its ports and remove its pins\n"
	  "  status   ports, XDP mode and configuration of an instance\n"
	  "  map      add, del or list NPI<->VLAN entries of a running instance\n" },
	{ "attach",
	  "usage: ubctl ub2e attach --ub-dev DEV --ip-dev DEV [OPTIONS]\n"
	  "       ubctl ub2e attach --config FILE [OPTIONS]\n"
	  "\n"
	  "  --ub-dev DEV               UB-side port (native UB frames, EtherType --ub-ethertype)\n"
	  "  --ip-dev DEV               IP-side port (UBoE)\n"
	  "  --generic                  generic (skb) XDP, for drivers without native XDP\n"
	  "  --name NAME                instance name (default [<netns>:]<ub-dev>-<ip-dev>)\n"
	  "  --pin-path DIR             pin directory instead of /sys/fs/bpf/ubxdp/ub2e/NAME\n"
	  "  --map PID=VLAN             baseline NPI<->VLAN entry (repeatable)\n"
	  "  --map PID/PERM=VLAN        enhanced entry: each (Partition ID, Permission) its VLAN\n"
	  "  --partition PID            a partition using the default VLAN (lower 12 bits)\n"
	  "  --strict                   drop partitions/VLANs not in the table\n"
	  "  --untagged                 UB -> UBoE sends untagged frames (NPI discarded)\n"
	  "  --light-ce ce|ect0|ect1    IP ECN for FECN Light CE (default ce)\n"
	  "  --markable ect0|ect1       IP ECN for FECN Markable (default ect0)\n"
	  "  --ce-to severe|light       FECN for IP CE (default severe)\n"
	  "  --ect1-to markable|light   FECN for IP ECT(1) (default markable)\n"
	  "  --cci-policy forward|drop  native packets whose CCI is not in FECN mode\n"
	  "  --rt 0-3, --vl 0-15        RT and VL written into the LPH on UBoE -> UB\n"
	  "  --default-pid PID          NPI of untagged UBoE (default 1)\n"
	  "  --default-perm 0|1         its Permission (default 0)\n"
	  "  --no-ttl-dec               leave TTL / hop limit alone\n"
	  "  --caqm-tag                 a CAQM CCI crosses the IP side in an Ethernet CAQM tag\n"
	  "                             (docs/CC.md), read back into the CCI; off by default:\n"
	  "                             plain IP routers do not know the tag\n"
	  "  --caqm-ethertype NUM       the tag's EtherType (default 0x88b6)\n"
	  "  --ub-ethertype NUM         EtherType of native UB frames (default 0x88b5)\n"
	  "  --icmp-rate N              the switch's own Fragmentation Needed / Packet Too\n"
	  "                             Big answers per second per port (default 1000, 0: no\n"
	  "                             limit; suppressed ones count slow_icmp_ratelimited)\n"
	  "  --icmp-burst N             answers sent at once before the rate applies (default 50)\n"
	  "  --config FILE              options from FILE: one \"key value\" per line, keys the\n"
	  "                             long options above without \"--\" (flags alone), '#'\n"
	  "                             comments; the command line applies after the file\n"
	  "\n"
	  "Numbers are decimal or 0x hex (010 is ten). Anything wrong gets one line and\n"
	  "exit status 2 (usage) or 1, with nothing attached.\n" },
	{ "detach",
	  "usage: ubctl ub2e detach [--ub-dev DEV --ip-dev DEV | --name NAME | --pin-path DIR]\n"
	  "\n"
	  "Takes both programs off the instance's ports (in the instance's own network\n"
	  "namespace) and removes its pins. Refuses, changing nothing, when the ports\n"
	  "cannot be reached.\n" SEL },
	{ "status",
	  "usage: ubctl ub2e status [--json] [--ub-dev DEV --ip-dev DEV | --name NAME | --pin-path DIR]\n"
	  "\n"
	  "Ports, XDP mode and program ids, and the configuration of an instance.\n" SEL },
	{ "map",
	  "usage: ubctl ub2e map add PID[/PERM]=VLAN|PID ... [instance]\n"
	  "       ubctl ub2e map del PID[/PERM] ... [instance]\n"
	  "       ubctl ub2e map list [--json] [instance]\n"
	  "\n"
	  "Edits the NPI<->VLAN table of a running switch. Every argument is checked\n"
	  "(syntax, collisions, presence) before anything changes.\n" SEL },
	{ 0 },
};
