"""The GSO cases of gen_wps_fixtures.py: a GSO skb goes whole only when all its
segments join the flow's open group, none of them S or E; any other takes the segmentation
detour with nothing decided for it, and every packet of a flow takes the detour
while it holds some of the flow's packets (wps_in_flow_det)."""

CB_DETOUR = 0x57500200  # WPS_IN_CB_MAGIC | WPS_IN_CB_COUNTED, Ingress Port ID 0


def add_cases(Case, frame, encap, inner4, G0):
    def tcp(fill, n):
        return inner4(proto="tcp", dport=5201, payload=bytes([fill]) * n)

    big = tcp(0x7A, 2800)
    small = [tcp(0x61 + i, 100) for i in range(4)]

    def s_then_detoured(c, big, size, w):
        """S on a small packet; big (len(w) segments of size) round the detour; w, its wire
        packets, through wps_ingress_seg inside the group."""
        c.pkt(frame(small[0]), "TC_ACT_REDIRECT", encap(small[0], 1, G0, 1, 0))
        c.pkt(frame(big), "TC_ACT_REDIRECT", frame(big), gso_segs=len(w), gso_size=size, cb0_out=CB_DETOUR)
        for p in w:
            c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, G0, 0, 0), cb0=CB_DETOUR, cb2=0, seg=True)

    c = Case("gso_skb_without_room_takes_detour_unchanged", opts=f"--gid0 {G0} --seg-ifindex 99",
             rules=("--dst 10.20.0.0/24 --quantum 4",),
             comment="3 segments with 3 packets left in the group: one would be E, which every segment "
                     "would copy: round the detour, nothing decided for it; its wire packets then take the "
                     "group as any three (the 3rd is E); the detour empty, the next packet goes from DEV")
    w = [tcp(0x30 + i, 1000) for i in range(2)] + [tcp(0x32, 800)]
    c.pkt(frame(small[0]), "TC_ACT_REDIRECT", encap(small[0], 1, G0, 1, 0))
    c.pkt(frame(big), "TC_ACT_REDIRECT", frame(big), gso_segs=3, gso_size=1000, cb0_out=CB_DETOUR)
    for i, p in enumerate(w):
        c.pkt(frame(p), "TC_ACT_REDIRECT", encap(p, 1, G0, 0, int(i == 2)), cb0=CB_DETOUR, cb2=0, seg=True)
    c.pkt(frame(small[1]), "TC_ACT_REDIRECT", encap(small[1], 1, G0 + 1, 1, 0))
    c.count(rx=6, tx_sprayed=5, redirect_gso_detour=1, flows_new=1, groups_opened=2)

    c = Case("detour_holds_flow_until_its_packets_are_handled", opts=f"--gid0 {G0} --seg-ifindex 99",
             rules=("--dst 10.20.0.0/24 --quantum 2",),
             comment="while the detour holds packets of the flow, its packets from DEV follow them there, "
                     "GSO or not; one the detour's backlog lost (b's) is skipped by the next skb's (c's), "
                     "whose start its program reads in cb[2]; then d goes from DEV again")
    w = [tcp(0x30 + i, 1400) for i in range(2)]
    b, cc, d = small[1], small[2], small[3]
    c.pkt(frame(small[0]), "TC_ACT_REDIRECT", encap(small[0], 1, G0, 1, 0))
    c.pkt(frame(big), "TC_ACT_REDIRECT", frame(big), gso_segs=2, gso_size=1400, cb0_out=CB_DETOUR)
    c.pkt(frame(b), "TC_ACT_REDIRECT", frame(b), cb0_out=CB_DETOUR)
    c.pkt(frame(w[0]), "TC_ACT_REDIRECT", encap(w[0], 1, G0, 0, 1), cb0=CB_DETOUR, cb2=0, seg=True)
    c.pkt(frame(cc), "TC_ACT_REDIRECT", frame(cc), cb0_out=CB_DETOUR)
    c.pkt(frame(w[1]), "TC_ACT_REDIRECT", encap(w[1], 1, G0 + 1, 1, 0), cb0=CB_DETOUR, cb2=0, seg=True)
    c.pkt(frame(cc), "TC_ACT_REDIRECT", encap(cc, 1, G0 + 1, 0, 1), cb0=CB_DETOUR, cb2=3, seg=True)
    c.pkt(frame(d), "TC_ACT_REDIRECT", encap(d, 1, G0 + 2, 1, 0))
    c.count(rx=8, tx_sprayed=5, redirect_gso_detour=3, flows_new=1, groups_opened=3)

    c = Case("gso_skb_too_big_to_go_whole_joins_nothing", opts=f"--gid0 {G0} --seg-ifindex 99",
             rules=("--dst 10.20.0.0/24 --quantum 4",),
             comment="segments of 1460 + 40 bytes of headers + 56 > 1500: round the detour before the group "
                     "is asked (its REM untouched: its two wire packets join, the next packet is E)")
    s_then_detoured(c, tcp(0x7A, 2920), 1460, [tcp(0x30 + i, 1000) for i in range(2)])
    c.pkt(frame(small[1]), "TC_ACT_REDIRECT", encap(small[1], 1, G0, 0, 1))
    c.count(rx=5, tx_sprayed=4, redirect_gso_detour=1, flows_new=1, groups_opened=1)

    c = Case("gso_skb_inside_group_refused_whole_takes_detour", opts=f"--gid0 {G0} --seg-ifindex 99",
             rules=("--dst 10.20.0.0/24 --quantum 8",),
             comment="2 segments inside the open group join it; BPF_PROG_TEST_RUN's GSO skb has no GSO "
                     "type, so adjust_room refuses to encapsulate it whole (as for a GSO kind it does not "
                     "take): round the detour, the 2 packets it took from the group spent (its E comes 2 "
                     "wire packets early)")
    s_then_detoured(c, big, 1400, [tcp(0x30 + i, 1400) for i in range(2)])
    for i in range(3):
        c.pkt(frame(small[1 + i]), "TC_ACT_REDIRECT", encap(small[1 + i], 1, G0, 0, int(i == 2)))
    c.count(rx=7, tx_sprayed=6, redirect_gso_detour=1, flows_new=1, groups_opened=1)
