"""Scapy layers for UB, UBoE and the WPS option, written from
../shared/design/WIRE.md alone: the independent encoder that the project's
golden vectors come from. Nothing here is derived from the C code. docs/WIRE.md
documents the same layouts as the code sends them (its §8: where they differ).

Use /usr/bin/python3 (Debian's python3-scapy).
"""
import zlib

from scapy.fields import (BitField, BitEnumField, ByteEnumField, ByteField,
                          ShortField, IntField, LongField, ThreeBytesField,
                          XShortField, StrFixedLenField)
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether, Dot1Q
from scapy.packet import Packet, bind_layers, Raw

UBOE_PORT = 4792
CTP_PORT = 4794      # [chosen] CTP behind a native NTH (docs/TRANSPORT.md)
UB_ETHERTYPE = 0x88B5

TP_OPCODES = {0x0: "UTP", 0x1: "RTP", 0x2: "TPACK", 0x3: "TPACK_CE",
              0x5: "TPSACK", 0x6: "TPSACK_CE", 0x8: "CNP"}
TA_OPCODES = {0x00: "Send", 0x01: "SendImm", 0x03: "Write", 0x04: "WriteImm",
              0x06: "Read", 0x07: "CAS", 0x0B: "FAdd", 0x10: "Message", 0x11: "TAACK",
              0x12: "ReadResp", 0x13: "AtomicResp"}
# UB 2.0 §7.2.1 Table 7-2: MAETAH with memory transactions (Write, Write with
# immediate, Read, the atomics 0x07-0x0F), IMMETAH with Send and Write with
# immediate, TVETAH (after both) when the TAH's TV_EN is set; the answers
# 0x11-0x13 (ATAH) have RSPST.RSPINFO in byte 4 and no TV_EN (bit 3 is SV).
TA_MAETAH = (0x03, 0x04, 0x06) + tuple(range(0x07, 0x10))
TA_IMMETAH = (0x01, 0x04)
TA_ANSWERS = (0x11, 0x12, 0x13)


class UBLPH(Packet):
    """Link packet header, 4 bytes (docs/WIRE.md §5). rt = (RoutePolicy<<1)|LBMode."""
    name = "UB LPH"
    fields_desc = [BitField("crd", 0, 1), BitField("ack", 0, 1),
                   BitField("crd_target_vl", 0, 4), BitField("rsv0", 0, 1),
                   BitField("vl", 0, 4), BitField("rsv1", 0, 1),
                   BitField("config", 3, 4),
                   BitField("lbmode", 0, 1), BitField("route_policy", 1, 1),
                   BitField("link_len", 0, 14)]


class UBNTH(Packet):
    """IP-compliant network header, 6 bytes: CCI, Permission, Partition ID."""
    name = "UB NTH"
    fields_desc = [XShortField("cci", 0x4000), BitField("rsv", 0, 7),
                   BitField("perm", 0, 1), ThreeBytesField("pid", 1)]


def cci_fecn(fecn, loc=0):
    """CCI in FECN mode (Mode 100): LoC in bit 11, FECN in bits 1-0."""
    return (0b100 << 12) | (loc << 11) | (fecn & 3)


def cci_caqm(en=1, c=0, i=0, hint=0, loc=0):
    """CCI in CAQM mode (Mode 000, docs/WIRE.md §5): LoC 11, EN 10, C 9, I 8, Hint 7-0."""
    return (loc << 11) | (en << 10) | (c << 9) | (i << 8) | (hint & 0xFF)


CAQM_TAG_ETHERTYPE = 0x88B6


class CAQMTag(Packet):
    """The Ethernet CAQM tag, 4 bytes: openEuler's struct caqm_hdr, whose info
    is struct caqm_hdr_info in network bit order (docs/WIRE.md §5, docs/CC.md)."""
    name = "CAQM tag"
    fields_desc = [BitField("cc_type", 0, 3), BitField("is_last_hop", 0, 1),
                   BitField("padding", 0, 1), BitField("caqm_en", 0, 1),
                   BitField("c_bit", 0, 1), BitField("i_bit", 0, 1),
                   ByteField("hint", 0), XShortField("type", 0x0800)]


class UBTPH(Packet):
    """RTPH, 16 bytes (docs/WIRE.md §3). (Bound to UDP 4792; a UTP packet is a UBUTPH:
    tph_class() tells them apart by the opcode.)"""
    name = "UB TPH"
    fields_desc = [BitField("last", 0, 1), BitEnumField("opcode", 1, 7, TP_OPCODES),
                   BitField("ver", 0, 2), BitField("pad", 0, 2), BitField("nlp", 0, 4),
                   ThreeBytesField("src_tpn", 0), ThreeBytesField("dst_tpn", 0),
                   BitField("ackreq", 0, 1), BitField("err", 0, 1), BitField("rsv", 0, 6),
                   ThreeBytesField("psn", 0),
                   BitField("rspst", 0, 3), BitField("rspinfo", 0, 5),
                   ThreeBytesField("tpmsn", 0)]


class UBUTPH(Packet):
    """UTPH, 16 bytes [chosen] (docs/TRANSPORT.md "UTP"): UB 2.0 §6 says mostly
    reserved, no PSN, no TPN. Byte 0 Last . TPOpcode (0) and byte 1 TPVer . Pad .
    NLP where the RTPH has them; bytes 2-15 reserved, sent 0, ignored on receipt.
    A UTP message is one packet (Last 1); its receiver is the channel whose peer
    jetty is the TAH's IniRCID."""
    name = "UB UTPH"
    fields_desc = [BitField("last", 1, 1), BitEnumField("opcode", 0, 7, TP_OPCODES),
                   BitField("ver", 0, 2), BitField("pad", 0, 2), BitField("nlp", 0, 4),
                   StrFixedLenField("rsv", b"\x00" * 14, 14)]


def tph_class(first_byte):
    """The transport header class for a packet starting with first_byte."""
    return UBUTPH if first_byte & 0x7F == 0 else UBTPH


class UBTAH(Packet):
    name = "UB TAH"
    fields_desc = [ByteEnumField("opcode", 0, TA_OPCODES),
                   BitField("taver", 0, 2), BitField("ee", 0, 2), BitField("tv_en", 0, 1),
                   BitField("poison", 0, 1), BitField("rsv0", 0, 1), BitField("ud_flg", 0, 1),
                   ShortField("ini_tassn", 0),
                   BitField("no_taack", 0, 1), BitField("order", 0, 3), BitField("mt_en", 0, 1),
                   BitField("fce", 0, 1), BitField("retry", 0, 1), BitField("alloc", 0, 1),
                   BitField("rsv1", 0, 1), BitField("excl", 0, 1),
                   BitField("ini_rc_type", 0, 2), BitField("ini_rcid", 0, 20)]


class UBMAETAH(Packet):
    name = "UB MAETAH"
    fields_desc = [LongField("va", 0), BitField("rsv0", 0, 4), BitField("token_id", 0, 20),
                   BitField("rsv1", 0, 8), IntField("length", 0)]


class UBIMMETAH(Packet):
    """IMMETAH, 16 bytes (UB 2.0 §7.2.8): the immediate data; Immediate_TokenValue
    and Msg_Length are a Write with immediate's (reserved in a Send)."""
    name = "UB IMMETAH"
    fields_desc = [LongField("imm", 0), IntField("token_value", 0), IntField("msg_len", 0)]


class UBTVETAH(Packet):
    """TVETAH, 4 bytes (UB 2.0 §7.2.5): the token value (TAH TV_EN)."""
    name = "UB TVETAH"
    fields_desc = [IntField("token_value", 0)]


def atomic_operands(op1, op2=0):
    """An atomic request's payload [chosen: big-endian]: operand 1 | operand 2
    (CAS: swap | compare; FADD: add | 0), 8 bytes each."""
    return op1.to_bytes(8, "big") + op2.to_bytes(8, "big")


class UBCETPH(Packet):
    name = "UB CETPH"
    fields_desc = [IntField("ack_seq", 0), BitField("rsv", 0, 6), BitField("loc", 0, 1),
                   BitField("i", 0, 1), ByteField("c", 0), ShortField("hint", 0)]


class UBSAETPH(Packet):
    """Fixed part; the bitmap (64 << size bits) follows as Raw."""
    name = "UB SAETPH"
    fields_desc = [BitField("rsv", 0, 5), BitField("size", 0, 3),
                   ThreeBytesField("max_rcv_psn", 0)]


class UBCNPETPH(Packet):
    name = "UB CNPETPH"
    fields_desc = [BitField("ecn", 0, 2), BitField("loc", 0, 1), BitField("rsv", 0, 5),
                   StrFixedLenField("rsv2", b"\x00" * 15, 15)]


def sack_bitmap(size_code, psn_offsets):
    """SAETPH bitmap: bit k (byte k/8, bit k%8 from the LSB) = PSN base + k."""
    bm = bytearray((64 << size_code) // 8)
    for k in psn_offsets:
        bm[k // 8] |= 1 << (k % 8)
    return bytes(bm)


bind_layers(Ether, UBLPH, type=UB_ETHERTYPE)
bind_layers(UBLPH, UBNTH)
bind_layers(UDP, UBTPH, dport=UBOE_PORT)


# ---- ICRC (docs/WIRE.md §2) ----------------------------------------------

def _masked(ip_bytes):
    b = bytearray(ip_bytes)
    ver = b[0] >> 4
    if ver == 4:
        ihl = (b[0] & 0xF) * 4
        b[1] = 0xFF           # ToS (DSCP + ECN)
        b[8] = 0xFF           # TTL
        b[10:12] = b"\xff\xff"  # header checksum
        udp = ihl
    elif ver == 6:
        b[0] |= 0x0F          # traffic class high nibble
        b[1] = 0xFF           # traffic class low nibble + flow label
        b[2:4] = b"\xff\xff"  # flow label
        b[7] = 0xFF           # hop limit
        udp = 40
    else:
        raise ValueError("not IP")
    b[udp + 6:udp + 8] = b"\xff\xff"  # UDP checksum
    return bytes(b)


def icrc(ip_bytes_without_icrc):
    """zlib crc32 over the masked copy; returned as the 4 stored bytes (LSB first)."""
    return (zlib.crc32(_masked(ip_bytes_without_icrc)) & 0xFFFFFFFF).to_bytes(4, "little")


def with_icrc(ip_pkt):
    """Append a correct ICRC to an IP/UDP/UB packet, fixing lengths to include it.

    IP lengths and the IPv4 header checksum are computed by scapy first (with
    the 4 ICRC bytes as placeholder), then the ICRC over the final bytes.
    UDP checksum is 0 (docs/WIRE.md §1)."""
    pkt = ip_pkt.copy()
    pkt[UDP].chksum = 0
    raw = bytes(pkt / Raw(b"\x00" * 4))
    return IP(raw) if raw[0] >> 4 == 4 else IPv6(raw), raw[:-4] + icrc(raw[:-4])


class UBCTPH(Packet):
    """CTPH, 1 byte [chosen] (docs/TRANSPORT.md): TPOpcode(2) . Pad(2) . NLP(4)."""
    name = "UB CTPH"
    fields_desc = [BitField("opcode", 0, 2), BitField("pad", 0, 2), BitField("nlp", 0, 4)]


def uboe_ip(src, dst, tph, tah=None, payload=b"", v6=False, sport=0x1234,
            ecn=0, dscp=0, ttl=64, maetah=None, dport=UBOE_PORT, immetah=None,
            tvetah=None):
    """The IP packet of a UBoE frame (IP..ICRC) as bytes (dport CTP_PORT with a
    UBCTPH as tph: the IP packet of a native CTP frame)."""
    if v6:
        ip = IPv6(src=src, dst=dst, tc=(dscp << 2) | ecn, hlim=ttl, nh=17)
    else:
        ip = IP(src=src, dst=dst, tos=(dscp << 2) | ecn, ttl=ttl, flags="DF", id=0)
    pkt = ip / UDP(sport=sport, dport=dport, chksum=0) / tph
    if tah is not None:
        pkt = pkt / tah
    for ext in (maetah, immetah, tvetah):
        if ext is not None:
            pkt = pkt / ext
    pkt = pkt / Raw(payload)
    return with_icrc(pkt)[1]


# ---- WPS option (docs/WIRE.md §6) ----------------------------------------

class WPSOption(Packet):
    """The 12 data bytes of IPv6 option 0x81 (with type and length)."""
    name = "WPS option"
    fields_desc = [ByteField("otype", 0x81), ByteField("olen", 12),
                   BitField("s", 0, 1), BitField("e", 0, 1), BitField("r", 0, 1),
                   BitField("rsvd", 0, 5), ByteField("rsvd2", 0),
                   ShortField("flow_id", 0), ShortField("ingress_node", 0),
                   ShortField("egress_node", 0), ShortField("group", 0),
                   ByteField("ingress_port", 0), ByteField("egress_port", 0)]
