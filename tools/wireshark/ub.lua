-- ub.lua: Wireshark/tshark dissector for Unified Bus (UB) traffic
--
--   * UBoE (UDP port 4792): RTPH/UTPH, CETPH, SAETPH, CNPETPH, TAH, MAETAH,
--     IMMETAH, TVETAH, atomic operands, payload and the ICRC, verified like
--     Wireshark verifies checksums.
--   * Native UB frames on an emulated UB port (EtherType 0x88B5, a preference):
--     LPH and NTH, then the IP packet goes to Wireshark's own ip/ipv6 dissector,
--     so the UDP/4792 part above applies to it as well.
--   * CTP on a native port (UDP port 4794, docs/TRANSPORT.md): the 1-byte CTPH,
--     TAH, MAETAH, payload and ICRC; and the LPH's LBF (byte 3).
--   * The WPS IPv6 option (type 0x81) in Hop-by-Hop or Destination Options.
--
-- Wire layouts: docs/WIRE.md. Filter fields: ub.*, wpsopt.*
-- ("wps" belongs to Wi-Fi Protected Setup).
-- Written for Wireshark 4.0 (Lua 5.2: bit32, no native integer operators).

local band, bor, bxor, rshift = bit32.band, bit32.bor, bit32.bxor, bit32.rshift

local UBOE_PORT = 4792
local CTP_PORT = 4794       -- [chosen] headers/ub_wire.h UB_CTP_UDP_PORT
local ICRC_LEN = 4
local TPH_LEN, TAH_LEN, MAETAH_LEN, IMMETAH_LEN, TVETAH_LEN = 16, 8, 16, 16, 4
local CETPH_LEN, SAETPH_FIXED_LEN, CNPETPH_LEN = 8, 4, 16
local TA_TAACK = 0x11

---------------------------------------------------------------------------
-- Names (docs/WIRE.md §3-§5)
---------------------------------------------------------------------------
local tp_opcode_names = {
    [0x0] = "UTP data", [0x1] = "RTP data", [0x2] = "TPACK",
    [0x3] = "TPACK+CETPH", [0x5] = "TPSACK+SAETPH",
    [0x6] = "TPSACK+CETPH+SAETPH", [0x8] = "CNP",
}
local rspst_names = {
    [0] = "ACK", [1] = "RNR", [2] = "Page fault", [3] = "NAK", [4] = "Completer error",
    [5] = "Reserved", [6] = "Reserved", [7] = "Reserved",
}
local RSPST_NAK = 3
local nlp_names = { [0] = "TAH follows" }
local ctp_opcode_names = { [0] = "Transaction packet", [1] = "CNP" }
local CTP_OP_CNP, NLP_NONE = 1, 1     -- [chosen] headers/ub_wire.h UB_CTP_OP_CNP, UB_NLP_NONE
local ta_opcode_names = {
    [0x00] = "Send", [0x01] = "Send with immediate", [0x03] = "Write",
    [0x04] = "Write with immediate", [0x06] = "Read", [0x07] = "Atomic compare-swap",
    [0x08] = "Atomic swap", [0x09] = "Atomic store", [0x0A] = "Atomic load",
    [0x0B] = "Atomic fetch-add", [0x0C] = "Atomic fetch-sub", [0x0D] = "Atomic fetch-and",
    [0x0E] = "Atomic fetch-or", [0x0F] = "Atomic fetch-xor", [0x10] = "Message",
    [0x11] = "TAACK", [0x12] = "Read response", [0x13] = "Atomic response",
}
-- UB 2.0 §7.2 Table 7-2 (headers/ub_wire.h agrees): MAETAH after the TAH of the
-- memory transactions (Write, Write with immediate, Read, the atomics 0x07-0x0F);
-- IMMETAH after it for Send and Write with immediate; a TVETAH last when a
-- request's TV_EN is set. Answers (ATAH) have RSPST.RSPINFO in byte 4, and bit 3
-- of byte 1 is their SV, not TV_EN.
local ta_has_maetah = { [0x03] = true, [0x04] = true, [0x06] = true }
for op = 0x07, 0x0F do ta_has_maetah[op] = true end
local ta_has_immetah = { [0x01] = true, [0x04] = true }
local ta_is_answer = { [0x11] = true, [0x12] = true, [0x13] = true }
local TA_CAS, TA_FADD, TA_ATOMIC_RESP = 0x07, 0x0B, 0x13
local sack_size_names = {
    [0] = "64 bits", [1] = "128 bits", [2] = "256 bits", [3] = "512 bits", [4] = "1024 bits",
}
local cnp_ecn_names = { [1] = "Minor congestion", [3] = "Severe congestion" }
local cnp_loc_names = { [0] = "Not the last hop", [1] = "Last-hop switch" }
-- Same values and names as Wireshark's own checksum status fields (udp.checksum.status).
local STATUS_BAD, STATUS_GOOD, STATUS_UNVERIFIED = 0, 1, 2
local checksum_status_names = { [0] = "Bad", [1] = "Good", [2] = "Unverified" }

local lph_config_names = { [3] = "IPv4 follows", [4] = "IPv6 follows" }
local lbmode_names = { [0] = "Per-flow", [1] = "Per-packet" }
local route_policy_names = { [0] = "All available paths", [1] = "Shortest paths only" }
local rt_names = {   -- draft-li-uboe-00 §5.1, Table 3
    [0] = "Per-flow, all paths", [1] = "Per-packet, all paths",
    [2] = "Per-flow, shortest paths", [3] = "Per-packet, shortest paths",
}
local CCI_MODE_FECN = 4
local cci_mode_names = { [0] = "CAQM", [2] = "FECN_RTT", [4] = "FECN" }
local cci_loc_names = { [0] = "Intermediate switch", [1] = "Last hop" }
local fecn_names = { [0] = "Unmarkable", [1] = "Light CE", [2] = "Markable", [3] = "Severe CE" }
local perm_names = { [0] = "High privilege", [1] = "Low privilege" }

---------------------------------------------------------------------------
-- UB transport over UDP/4792: protocol "ub"
---------------------------------------------------------------------------
local ub = Proto("ub", "Unified Bus transport")

local F = {
    tph         = ProtoField.none("ub.tph", "Transport header"),
    tph_last    = ProtoField.bool("ub.tph.last", "Last", 8, nil, 0x80),
    tph_opcode  = ProtoField.uint8("ub.tph.opcode", "TPOpcode", base.HEX, tp_opcode_names, 0x7F),
    tph_ver     = ProtoField.uint8("ub.tph.ver", "TPVer", base.DEC, nil, 0xC0),
    tph_pad     = ProtoField.uint8("ub.tph.pad", "Pad", base.DEC, nil, 0x30),
    tph_nlp     = ProtoField.uint8("ub.tph.nlp", "NLP", base.DEC, nlp_names, 0x0F),
    tph_src_tpn = ProtoField.uint24("ub.tph.src_tpn", "SrcTPN", base.DEC),
    tph_dst_tpn = ProtoField.uint24("ub.tph.dst_tpn", "DstTPN", base.DEC),
    tph_ackreq  = ProtoField.bool("ub.tph.ackreq", "AckReq", 8, nil, 0x80),
    tph_err     = ProtoField.bool("ub.tph.err", "ErrFlag", 8, nil, 0x40),
    tph_rsv     = ProtoField.uint8("ub.tph.rsv", "Reserved", base.HEX, nil, 0x3F),
    tph_psn     = ProtoField.uint24("ub.tph.psn", "PSN", base.DEC),
    tph_rspst   = ProtoField.uint8("ub.tph.rspst", "RSPST", base.DEC, rspst_names, 0xE0),
    tph_rspinfo = ProtoField.uint8("ub.tph.rspinfo", "RSPINFO", base.DEC, nil, 0x1F),
    tph_tpmsn   = ProtoField.uint24("ub.tph.tpmsn", "TPMSN", base.DEC),
    tph_nak     = ProtoField.bool("ub.tph.nak", "TPNAK (TPACK with RSPST NAK)"),
    -- UTPH [chosen] (docs/TRANSPORT.md "UTP"): bytes 2-15 reserved, no TPN, no PSN.
    utph_rsv    = ProtoField.bytes("ub.utph.rsv", "Reserved"),

    ctph        = ProtoField.none("ub.ctph", "Compact transport header (CTPH)"),
    ctph_opcode = ProtoField.uint8("ub.ctph.opcode", "TPOpcode", base.DEC, ctp_opcode_names, 0xC0),
    ctph_pad    = ProtoField.uint8("ub.ctph.pad", "Padding", base.DEC, nil, 0x30),
    ctph_nlp    = ProtoField.uint8("ub.ctph.nlp", "NLP", base.DEC, nlp_names, 0x0F),

    cetph         = ProtoField.none("ub.cetph", "CETPH"),
    cetph_ack_seq = ProtoField.uint32("ub.cetph.ack_seq", "AckSequence", base.DEC),
    cetph_rsv     = ProtoField.uint8("ub.cetph.rsv", "Reserved", base.HEX, nil, 0xFC),
    cetph_loc     = ProtoField.uint8("ub.cetph.loc", "Loc", base.DEC, nil, 0x02),
    cetph_i       = ProtoField.uint8("ub.cetph.i", "I", base.DEC, nil, 0x01),
    cetph_c       = ProtoField.uint8("ub.cetph.c", "C", base.DEC),
    cetph_hint    = ProtoField.uint16("ub.cetph.hint", "Hint", base.DEC),

    saetph      = ProtoField.none("ub.saetph", "SAETPH"),
    sae_rsv     = ProtoField.uint8("ub.saetph.rsv", "Reserved", base.HEX, nil, 0xF8),
    sae_size    = ProtoField.uint8("ub.saetph.size", "BitmapSize", base.DEC, sack_size_names, 0x07),
    sae_max_psn = ProtoField.uint24("ub.saetph.max_rcv_psn", "MaxRcvPSN", base.DEC),
    sae_bitmap  = ProtoField.bytes("ub.saetph.bitmap", "Bitmap"),
    sae_psn     = ProtoField.uint24("ub.saetph.psn", "Acknowledged PSN", base.DEC),
    sae_count   = ProtoField.uint16("ub.saetph.count", "PSNs acknowledged by the bitmap", base.DEC),

    cnp       = ProtoField.none("ub.cnpetph", "CNPETPH"),
    cnp_ecn   = ProtoField.uint8("ub.cnpetph.ecn", "ECN", base.HEX, cnp_ecn_names, 0xC0),
    cnp_loc   = ProtoField.uint8("ub.cnpetph.loc", "Loc", base.DEC, cnp_loc_names, 0x20),
    cnp_rsv   = ProtoField.uint8("ub.cnpetph.rsv", "Reserved", base.HEX, nil, 0x1F),
    cnp_rsv2  = ProtoField.bytes("ub.cnpetph.rsv2", "Reserved"),
    cnp_vl    = ProtoField.uint8("ub.cnpetph.vl", "VL (CTP: its {Dest Entity, VL} context)", base.DEC, nil, 0x0F),

    tah          = ProtoField.none("ub.tah", "Transaction header"),
    tah_opcode   = ProtoField.uint8("ub.tah.opcode", "TAOpcode", base.HEX, ta_opcode_names),
    tah_taver    = ProtoField.uint8("ub.tah.taver", "TAVer", base.DEC, nil, 0xC0),
    tah_ee       = ProtoField.uint8("ub.tah.ee", "EE", base.DEC, nil, 0x30),
    tah_tv_en    = ProtoField.bool("ub.tah.tv_en", "TV_EN", 8, nil, 0x08),
    tah_poison   = ProtoField.bool("ub.tah.poison", "Poison", 8, nil, 0x04),
    tah_rsv0     = ProtoField.uint8("ub.tah.rsv0", "Reserved", base.HEX, nil, 0x02),
    tah_ud_flg   = ProtoField.bool("ub.tah.ud_flg", "UD_FLG", 8, nil, 0x01),
    tah_tassn    = ProtoField.uint16("ub.tah.ini_tassn", "IniTASSN", base.DEC),
    tah_no_taack = ProtoField.bool("ub.tah.no_taack", "NoTAACK", 8, nil, 0x80),
    tah_order    = ProtoField.uint8("ub.tah.order", "Order", base.DEC, nil, 0x70),
    tah_mt_en    = ProtoField.bool("ub.tah.mt_en", "MT_EN", 8, nil, 0x08),
    tah_fce      = ProtoField.bool("ub.tah.fce", "FCE", 8, nil, 0x04),
    tah_retry    = ProtoField.bool("ub.tah.retry", "Retry", 8, nil, 0x02),
    tah_alloc    = ProtoField.bool("ub.tah.alloc", "Alloc", 8, nil, 0x01),
    tah_rspst    = ProtoField.uint8("ub.tah.rspst", "RSPST", base.DEC, rspst_names, 0xE0),
    tah_rspinfo  = ProtoField.uint8("ub.tah.rspinfo", "RSPINFO", base.DEC, nil, 0x1F),
    tah_rsv1     = ProtoField.uint8("ub.tah.rsv1", "Reserved", base.HEX, nil, 0x80),
    tah_excl     = ProtoField.bool("ub.tah.excl", "Excl", 8, nil, 0x40),
    tah_rc_type  = ProtoField.uint8("ub.tah.ini_rc_type", "IniRCType", base.DEC, nil, 0x30),
    tah_rcid     = ProtoField.uint24("ub.tah.ini_rcid", "IniRCID", base.HEX, nil, 0x0FFFFF),

    maetah       = ProtoField.none("ub.maetah", "MAETAH"),
    mae_va       = ProtoField.uint64("ub.maetah.va", "VA", base.HEX),
    mae_rsv0     = ProtoField.uint24("ub.maetah.rsv0", "Reserved", base.HEX, nil, 0xF00000),
    mae_token    = ProtoField.uint24("ub.maetah.token_id", "TokenID", base.HEX, nil, 0x0FFFFF),
    mae_rsv1     = ProtoField.uint8("ub.maetah.rsv1", "Reserved", base.HEX),
    mae_length   = ProtoField.uint32("ub.maetah.length", "Length", base.DEC),

    immetah      = ProtoField.none("ub.immetah", "IMMETAH"),
    imm_data     = ProtoField.uint64("ub.immetah.imm", "Immediate data", base.HEX),
    imm_token    = ProtoField.uint32("ub.immetah.token_value", "Immediate_TokenValue", base.HEX),
    imm_len      = ProtoField.uint32("ub.immetah.msg_len", "Msg_Length", base.DEC),

    tvetah       = ProtoField.none("ub.tvetah", "TVETAH"),
    tv_value     = ProtoField.uint32("ub.tvetah.token_value", "TokenValue", base.HEX),

    -- [chosen] big-endian 8-byte operands (docs/WIRE.md §4.5)
    atomic       = ProtoField.none("ub.atomic", "Atomic operands"),
    atomic_op1   = ProtoField.uint64("ub.atomic.operand1", "Operand 1", base.HEX),
    atomic_op2   = ProtoField.uint64("ub.atomic.operand2", "Operand 2", base.HEX),
    atomic_orig  = ProtoField.uint64("ub.atomic.original", "Original value", base.HEX),

    payload      = ProtoField.bytes("ub.payload", "Payload"),
    undecoded    = ProtoField.bytes("ub.undecoded", "Undecoded bytes"),
    icrc         = ProtoField.uint32("ub.icrc", "ICRC", base.HEX),
    icrc_calc    = ProtoField.uint32("ub.icrc.calculated", "Calculated ICRC", base.HEX),
    icrc_status  = ProtoField.uint8("ub.icrc.status", "ICRC status", base.DEC, checksum_status_names),
}
ub.fields = F

local E = {
    truncated = ProtoExpert.new("ub.truncated", "Truncated UB packet",
                                expert.group.MALFORMED, expert.severity.ERROR),
    reserved_opcode = ProtoExpert.new("ub.tph.opcode.reserved", "Reserved or non-UBoE TPOpcode",
                                      expert.group.MALFORMED, expert.severity.ERROR),
    sack_size = ProtoExpert.new("ub.saetph.size.reserved", "Reserved SAETPH BitmapSize",
                                expert.group.MALFORMED, expert.severity.ERROR),
    resp_payload = ProtoExpert.new("ub.response_payload", "Response packet carries payload",
                                   expert.group.PROTOCOL, expert.severity.WARN),
    icrc_bad = ProtoExpert.new("ub.icrc.bad", "Bad ICRC",
                               expert.group.CHECKSUM, expert.severity.ERROR),
}
ub.experts = E

-- A string, so that the EtherType can be given in hex (Pref.uint is decimal only).
ub.prefs.ethertype = Pref.string("Native UB EtherType", "0x88B5",
    "EtherType carrying native UB frames (LPH | NTH | IP) on an emulated UB port, e.g. 0x88B5")

---------------------------------------------------------------------------
-- ICRC (docs/WIRE.md §2): zlib crc32 over IP header..payload, some fields as all ones
---------------------------------------------------------------------------
local CRC_TABLE = {}   -- reflected CRC-32/IEEE, computed once at load
for i = 0, 255 do
    local c = i
    for _ = 1, 8 do
        c = band(c, 1) ~= 0 and bxor(0xEDB88320, rshift(c, 1)) or rshift(c, 1)
    end
    CRC_TABLE[i] = c
end

-- crc32 of string s where byte at 0-based offset o is OR-ed with masks[o]
local function crc32(s, masks)
    local crc = 0xFFFFFFFF
    for i = 1, #s do
        local b = s:byte(i)
        local m = masks[i - 1]
        if m then b = bor(b, m) end
        crc = bxor(CRC_TABLE[band(bxor(crc, b), 0xFF)], rshift(crc, 8))
    end
    return bxor(crc, 0xFFFFFFFF)
end

-- The UDP dissector hands us only the UDP payload; the IP header in front of it
-- is found through the fields Wireshark has already added for this frame.
local f_ip, f_ipv6 = Field.new("ip"), Field.new("ipv6")

local function ip_header_before(raw_offset)
    local best
    for _, list in ipairs({ { f_ip() }, { f_ipv6() } }) do
        for _, fi in ipairs(list) do
            if fi.offset < raw_offset and (best == nil or fi.offset > best.offset) then
                best = fi
            end
        end
    end
    return best
end

-- Returns the ICRC this UDP payload should carry, or nil if it cannot be computed
-- (no IP header found, capture cut short).
local function compute_icrc(tvb)
    if tvb:len() < tvb:reported_len() then return nil end
    local ipfi = ip_header_before(tvb:offset())
    if ipfi == nil or ipfi.source == nil then return nil end
    local src, ip_off = ipfi.source, ipfi.offset
    local udp_rel = tvb:offset() - 8 - ip_off   -- UDP header, relative to the IP header
    local covered = tvb:offset() + tvb:len() - ICRC_LEN - ip_off
    if udp_rel < 0 or covered <= 0 or ip_off + covered > src:len() then return nil end
    local version = rshift(src(ip_off, 1):uint(), 4)
    local masks
    if version == 4 then      -- ToS, TTL, header checksum
        masks = { [1] = 0xFF, [8] = 0xFF, [10] = 0xFF, [11] = 0xFF }
    elseif version == 6 then  -- traffic class, flow label, hop limit
        masks = { [0] = 0x0F, [1] = 0xFF, [2] = 0xFF, [3] = 0xFF, [7] = 0xFF }
    else
        return nil
    end
    masks[udp_rel + 6], masks[udp_rel + 7] = 0xFF, 0xFF   -- UDP checksum
    return crc32(src:raw(ip_off, covered), masks)
end

---------------------------------------------------------------------------
-- Header dissectors: (tvb, tree, off) -> next offset (add_tph: the header's item).
---------------------------------------------------------------------------
local function add_tph(tvb, tree, off)
    local t = tree:add(F.tph, tvb(off, TPH_LEN))
    t:add(F.tph_last, tvb(off, 1))
    t:add(F.tph_opcode, tvb(off, 1))
    t:add(F.tph_ver, tvb(off + 1, 1))
    t:add(F.tph_pad, tvb(off + 1, 1))
    t:add(F.tph_nlp, tvb(off + 1, 1))
    t:add(F.tph_src_tpn, tvb(off + 2, 3))
    t:add(F.tph_dst_tpn, tvb(off + 5, 3))
    t:add(F.tph_ackreq, tvb(off + 8, 1))
    t:add(F.tph_err, tvb(off + 8, 1))
    t:add(F.tph_rsv, tvb(off + 8, 1))
    t:add(F.tph_psn, tvb(off + 9, 3))
    t:add(F.tph_rspst, tvb(off + 12, 1))
    t:add(F.tph_rspinfo, tvb(off + 12, 1))
    t:add(F.tph_tpmsn, tvb(off + 13, 3))
    return t
end

-- UTPH: Last . TPOpcode, TPVer . Pad . NLP as in the RTPH; the rest reserved.
local function add_utph(tvb, tree, off)
    local t = tree:add(F.tph, tvb(off, TPH_LEN))
    t:add(F.tph_last, tvb(off, 1))
    t:add(F.tph_opcode, tvb(off, 1))
    t:add(F.tph_ver, tvb(off + 1, 1))
    t:add(F.tph_pad, tvb(off + 1, 1))
    t:add(F.tph_nlp, tvb(off + 1, 1))
    t:add(F.utph_rsv, tvb(off + 2, TPH_LEN - 2))
    return t
end

local function add_cetph(tvb, tree, off)
    local t = tree:add(F.cetph, tvb(off, CETPH_LEN))
    t:add(F.cetph_ack_seq, tvb(off, 4))
    -- The 4 algorithm bytes, as laid out for CAQM.
    t:add(F.cetph_rsv, tvb(off + 4, 1))
    t:add(F.cetph_loc, tvb(off + 4, 1))
    t:add(F.cetph_i, tvb(off + 4, 1))
    t:add(F.cetph_c, tvb(off + 5, 1))
    t:add(F.cetph_hint, tvb(off + 6, 2))
    return off + CETPH_LEN
end

-- SAETPH: shows the bitmap as the PSNs it acknowledges (bit k = base + k, where the
-- base is RTPH.PSN, the cumulative ack). Returns the next offset and the number of
-- PSNs, or the offset after the fixed part and nil if the bitmap is unusable.
local function add_saetph(tvb, tree, off, limit, base_psn)
    local t = tree:add(F.saetph, tvb(off, SAETPH_FIXED_LEN))
    t:add(F.sae_rsv, tvb(off, 1))
    local size_item = t:add(F.sae_size, tvb(off, 1))
    t:add(F.sae_max_psn, tvb(off + 1, 3))
    local code = band(tvb(off, 1):uint(), 0x07)
    off = off + SAETPH_FIXED_LEN
    if sack_size_names[code] == nil then
        size_item:add_proto_expert_info(E.sack_size, "Reserved BitmapSize " .. code .. " (valid: 0-4)")
        return off, nil
    end
    local nbytes = 8 * 2 ^ code   -- 64 << code bits
    if off + nbytes > limit then
        t:add_proto_expert_info(E.truncated, string.format(
            "Truncated: SAETPH bitmap needs %d bytes, %d left before the ICRC", nbytes, limit - off))
        return off, nil
    end
    t:set_len(SAETPH_FIXED_LEN + nbytes)
    local bm = t:add(F.sae_bitmap, tvb(off, nbytes))
    local acked = {}
    for byte = 0, nbytes - 1 do
        local v = tvb(off + byte, 1):uint()
        for bitno = 0, 7 do   -- bit k is byte k/8, bit k%8 counted from the LSB
            if band(v, 2 ^ bitno) ~= 0 then
                local psn = (base_psn + byte * 8 + bitno) % 0x1000000  -- PSN is 24 bits
                bm:add(F.sae_psn, tvb(off + byte, 1), psn):set_generated()
                acked[#acked + 1] = psn
            end
        end
    end
    t:add(F.sae_count, tvb(off, nbytes), #acked):set_generated()
    bm:append_text(" (PSNs " .. (#acked > 0 and table.concat(acked, ", ") or "none") .. ")")
    return off + nbytes, #acked
end

-- ctp: a CTP CNP, whose byte 1 names the VL ([chosen] docs/TRANSPORT.md).
local function add_cnpetph(tvb, tree, off, ctp)
    local t = tree:add(F.cnp, tvb(off, CNPETPH_LEN))
    t:add(F.cnp_ecn, tvb(off, 1))
    t:add(F.cnp_loc, tvb(off, 1))
    t:add(F.cnp_rsv, tvb(off, 1))
    if ctp then t:add(F.cnp_vl, tvb(off + 1, 1)) end
    t:add(F.cnp_rsv2, tvb(off + 1, 15))
    return off + CNPETPH_LEN
end

local function add_tah(tvb, tree, off)
    local t = tree:add(F.tah, tvb(off, TAH_LEN))
    local op = tvb(off, 1):uint()
    t:add(F.tah_opcode, tvb(off, 1))
    t:add(F.tah_taver, tvb(off + 1, 1))
    t:add(F.tah_ee, tvb(off + 1, 1))
    t:add(F.tah_tv_en, tvb(off + 1, 1))
    t:add(F.tah_poison, tvb(off + 1, 1))
    t:add(F.tah_rsv0, tvb(off + 1, 1))
    t:add(F.tah_ud_flg, tvb(off + 1, 1))
    t:add(F.tah_tassn, tvb(off + 2, 2))
    if ta_is_answer[op] then   -- an answer (ATAH) carries RSPST/RSPINFO in byte 4
        t:add(F.tah_rspst, tvb(off + 4, 1))
        t:add(F.tah_rspinfo, tvb(off + 4, 1))
    else
        t:add(F.tah_no_taack, tvb(off + 4, 1))
        t:add(F.tah_order, tvb(off + 4, 1))
        t:add(F.tah_mt_en, tvb(off + 4, 1))
        t:add(F.tah_fce, tvb(off + 4, 1))
        t:add(F.tah_retry, tvb(off + 4, 1))
        t:add(F.tah_alloc, tvb(off + 4, 1))
    end
    t:add(F.tah_rsv1, tvb(off + 5, 1))
    t:add(F.tah_excl, tvb(off + 5, 1))
    t:add(F.tah_rc_type, tvb(off + 5, 1))
    t:add(F.tah_rcid, tvb(off + 5, 3))
    t:append_text(": " .. (ta_opcode_names[op] or string.format("Unknown 0x%02x", op)))
    return off + TAH_LEN, op
end

local function add_maetah(tvb, tree, off)
    local t = tree:add(F.maetah, tvb(off, MAETAH_LEN))
    t:add(F.mae_va, tvb(off, 8))
    t:add(F.mae_rsv0, tvb(off + 8, 3))
    t:add(F.mae_token, tvb(off + 8, 3))
    t:add(F.mae_rsv1, tvb(off + 11, 1))
    t:add(F.mae_length, tvb(off + 12, 4))
    return off + MAETAH_LEN
end

local function add_immetah(tvb, tree, off)
    local t = tree:add(F.immetah, tvb(off, IMMETAH_LEN))
    t:add(F.imm_data, tvb(off, 8))
    t:add(F.imm_token, tvb(off + 8, 4))
    t:add(F.imm_len, tvb(off + 12, 4))
    return off + IMMETAH_LEN
end

local function add_tvetah(tvb, tree, off)
    local t = tree:add(F.tvetah, tvb(off, TVETAH_LEN))
    t:add(F.tv_value, tvb(off, 4))
    return off + TVETAH_LEN
end

-- The operands at the start of an atomic's payload (the payload stays shown whole).
local function add_atomic(tvb, tree, op, off, limit)
    if op == TA_ATOMIC_RESP then
        if limit - off < 8 then return end
        local t = tree:add(F.atomic, tvb(off, 8))
        t:add(F.atomic_orig, tvb(off, 8))
        return
    end
    if limit - off < 16 then return end
    local t = tree:add(F.atomic, tvb(off, 16))
    local n1, n2 = "Operand 1", "Operand 2"
    if op == TA_CAS then n1, n2 = "Swap", "Compare"
    elseif op == TA_FADD then n1, n2 = "Add", "Operand 2 (ignored)" end
    t:add(F.atomic_op1, tvb(off, 8)):prepend_text(n1 .. ": ")
    t:add(F.atomic_op2, tvb(off + 8, 8)):prepend_text(n2 .. ": ")
end

---------------------------------------------------------------------------
-- UDP/4792 dissector
---------------------------------------------------------------------------

-- Adds RTPH/UTPH and what follows it up to the payload. Returns the offset where
-- decoding stopped, whether the bytes from there on are a real payload (false after a
-- truncated, reserved or unusable header, which has expert info), and whether this is
-- a response packet (which carries no payload).
-- fits(off, n, what): whether n bytes at off end before limit; expert info if not.
local function fits_before(root, limit, info)
    return function(off, n, what)
        if off + n <= limit then return true end
        root:add_proto_expert_info(E.truncated, string.format(
            "Truncated: %s needs %d bytes, %d left before the ICRC", what, n, math.max(limit - off, 0)))
        info[#info + 1] = "[Truncated " .. what .. "]"
        return false
    end
end

-- TAH [MAETAH] [IMMETAH] [TVETAH] from off; returns where decoding stopped and
-- whether they fit. limit: where the payload ends (atomic operands).
local function dissect_ta(tvb, root, off, fits, info, limit)
    if not fits(off, TAH_LEN, "TAH") then return off, false end
    local ta_op
    local tv = band(tvb(off + 1, 1):uint(), 0x08) ~= 0
    off, ta_op = add_tah(tvb, root, off)
    info[#info + 1] = ta_opcode_names[ta_op] or string.format("TA 0x%02x", ta_op)
    if ta_has_maetah[ta_op] then
        if not fits(off, MAETAH_LEN, "MAETAH") then return off, false end
        off = add_maetah(tvb, root, off)
    end
    if ta_has_immetah[ta_op] then
        if not fits(off, IMMETAH_LEN, "IMMETAH") then return off, false end
        off = add_immetah(tvb, root, off)
    end
    if tv and not ta_is_answer[ta_op] then
        if not fits(off, TVETAH_LEN, "TVETAH") then return off, false end
        off = add_tvetah(tvb, root, off)
    end
    if (ta_op == TA_ATOMIC_RESP or (ta_op >= 0x07 and ta_op <= 0x0F)) and limit then
        add_atomic(tvb, root, ta_op, off, limit)
    end
    return off, true
end

-- CTP (UDP/4794): CTPH | TAH | [MAETAH] | payload, or a CNP: CTPH | CNPETPH.
-- Same returns as below.
local function dissect_ctp(tvb, root, limit, info)
    local fits = fits_before(root, limit, info)
    if not fits(0, 1, "CTPH") then return 0, false end
    local b = tvb(0, 1):uint()
    local t = root:add(F.ctph, tvb(0, 1))
    t:add(F.ctph_opcode, tvb(0, 1))
    t:add(F.ctph_pad, tvb(0, 1))
    t:add(F.ctph_nlp, tvb(0, 1))
    info[#info + 1] = "CTP"
    if rshift(b, 6) == CTP_OP_CNP and band(b, 0x0F) == NLP_NONE then
        if not fits(1, CNPETPH_LEN, "CNPETPH") then return 1, false end
        info[#info + 1] = string.format("CNP VL=%d", band(tvb(2, 1):uint(), 0x0F))
        return add_cnpetph(tvb, root, 1, true), true, true
    end
    if rshift(b, 6) ~= 0 or band(b, 0x0F) ~= 0 then
        root:add_proto_expert_info(E.reserved_opcode, string.format(
            "CTPH 0x%02x: reserved TPOpcode or no TAH (a CTP packet is a whole operation)", b))
        return 1, false
    end
    local off, ok = dissect_ta(tvb, root, 1, fits, info, limit)
    if not ok then return off, false end
    info[#info + 1] = string.format("IniRCID=%d IniTASSN=%d", tvb(6, 3):bitfield(4, 20), tvb(3, 2):uint())
    return off, true
end

local function dissect_headers(tvb, root, limit, info)
    local fits = fits_before(root, limit, info)

    if not fits(0, TPH_LEN, "RTPH") then return 0, false end
    local op = band(tvb(0, 1):uint(), 0x7F)
    local nlp = band(tvb(1, 1):uint(), 0x0F)
    local psn = tvb(9, 3):uint()
    local rspst = rshift(tvb(12, 1):uint(), 5)
    local off = TPH_LEN
    local kind = tp_opcode_names[op]
    if op == 0 then
        -- UTP: no PSN, no TPN; the receiver is the jetty the TAH's IniRCID names.
        local t = add_utph(tvb, root, 0)
        t:append_text(" (UTPH): " .. kind)
        info[#info + 1] = kind
        if nlp ~= 0 then return off, true end
        local ta_off, ok = dissect_ta(tvb, root, off, fits, info, limit)
        if ok then
            info[#info + 1] = string.format("IniRCID=%d IniTASSN=%d",
                tvb(off + 5, 3):bitfield(4, 20), tvb(off + 2, 2):uint())
        end
        return ta_off, ok
    end
    local t = add_tph(tvb, root, 0)
    t:append_text(" (RTPH): " .. (kind or "reserved"))
    if op == 2 and rspst == RSPST_NAK then
        kind = "TPNAK"
        t:add(F.tph_nak, tvb(12, 1), true):set_generated()
        t:append_text(" (TPNAK)")
    end
    info[#info + 1] = string.format("%s PSN=%d SrcTPN=%d DstTPN=%d",
        kind or string.format("Reserved TPOpcode 0x%02x", op), psn, tvb(2, 3):uint(), tvb(5, 3):uint())

    if kind == nil then
        -- 0x4, 0x7 and anything above CNP (CTP, TP bypass) are invalid in UBoE.
        root:add_proto_expert_info(E.reserved_opcode, string.format(
            "TPOpcode 0x%02x is reserved or not carried in UBoE", op))
        return off, false
    end

    if op <= 1 then                                 -- data: TAH [MAETAH] payload
        if nlp ~= 0 then return off, true end       -- no TAH: all payload
        return dissect_ta(tvb, root, off, fits, info, limit)
    end

    -- response: RTPH | CETPH | SAETPH | (TAACK), or RTPH | CNPETPH
    if op == 3 or op == 6 then
        if not fits(off, CETPH_LEN, "CETPH") then return off, false end
        off = add_cetph(tvb, root, off)
    end
    if op == 5 or op == 6 then
        if not fits(off, SAETPH_FIXED_LEN, "SAETPH") then return off, false end
        local n
        off, n = add_saetph(tvb, root, off, limit, psn)
        if n == nil then return off, false end
        info[#info + 1] = "SACK " .. n .. " PSNs"
    end
    if op == 8 then
        if not fits(off, CNPETPH_LEN, "CNPETPH") then return off, false end
        off = add_cnpetph(tvb, root, off)
    end
    if limit - off >= TAH_LEN and tvb(off, 1):uint() == TA_TAACK then
        off = add_tah(tvb, root, off)
        info[#info + 1] = "TAACK"
    end
    return off, true, true
end

function ub.dissector(tvb, pinfo, tree)
    pinfo.cols.protocol = "UB"
    local root = tree:add(ub, tvb())
    -- The ICRC is the last 4 bytes of the UDP payload; headers stop before it.
    local icrc_off = tvb:reported_len() - ICRC_LEN
    local limit = math.max(math.min(icrc_off, tvb:len()), 0)
    local info = {}

    local off, decoded, response
    if pinfo.dst_port == CTP_PORT then
        off, decoded, response = dissect_ctp(tvb, root, limit, info)
    else
        off, decoded, response = dissect_headers(tvb, root, limit, info)
    end
    if off < limit then
        if not decoded then
            root:add(F.undecoded, tvb(off, limit - off))
        else
            local p = root:add(F.payload, tvb(off, limit - off))
            if response then p:add_proto_expert_info(E.resp_payload) end
        end
    end

    -- ICRC, shown like Wireshark shows checksums.
    if icrc_off >= 0 and icrc_off + ICRC_LEN <= tvb:len() then
        local range = tvb(icrc_off, ICRC_LEN)
        local stored = range:le_uint()   -- stored least-significant byte first
        local item = root:add_le(F.icrc, range)
        local calc = compute_icrc(tvb)
        local status
        if calc == nil then
            status = STATUS_UNVERIFIED
            item:append_text(" [unverified]")
        else
            root:add(F.icrc_calc, range, calc):set_generated()
            if calc == stored then
                status = STATUS_GOOD
                item:append_text(" [correct]")
            else
                status = STATUS_BAD
                item:append_text(string.format(" incorrect, should be 0x%08x", calc))
                item:add_proto_expert_info(E.icrc_bad)
                info[#info + 1] = "[Bad ICRC]"
            end
        end
        root:add(F.icrc_status, range, status):set_generated()
    end

    pinfo.cols.info = table.concat(info, " ")
    return tvb:len()
end

DissectorTable.get("udp.port"):add(UBOE_PORT, ub)
DissectorTable.get("udp.port"):add(CTP_PORT, ub)

---------------------------------------------------------------------------
-- Native UB frame (docs/WIRE.md §5): Eth | LPH (4) | NTH (6) | IP ...
-- Two protocols so that `ub.lph` and `ub.nth` work as filters on their own.
---------------------------------------------------------------------------
local ub_lph = Proto("ub.lph", "UB Link Packet Header")
local ub_nth = Proto("ub.nth", "UB IP-compliant Network Header")

local L = {
    crd        = ProtoField.bool("ub.lph.crd", "Crd", 8, nil, 0x80),
    ack        = ProtoField.bool("ub.lph.ack", "ACK", 8, nil, 0x40),
    crd_vl     = ProtoField.uint8("ub.lph.crd_target_vl", "CrdTargetVL", base.DEC, nil, 0x3C),
    rsv0       = ProtoField.uint8("ub.lph.rsv0", "Reserved", base.HEX, nil, 0x02),
    vl         = ProtoField.uint16("ub.lph.vl", "VL", base.DEC, nil, 0x01E0),
    rsv1       = ProtoField.uint8("ub.lph.rsv1", "Reserved", base.HEX, nil, 0x10),
    config     = ProtoField.uint8("ub.lph.config", "Config", base.DEC, lph_config_names, 0x0F),
    lbmode     = ProtoField.uint8("ub.lph.lbmode", "LBMode", base.DEC, lbmode_names, 0x80),
    route_pol  = ProtoField.uint8("ub.lph.route_policy", "RoutePolicy", base.DEC, route_policy_names, 0x40),
    link_len   = ProtoField.uint16("ub.lph.link_len", "Link length fields", base.HEX, nil, 0x3FFF),
    lbf        = ProtoField.uint8("ub.lph.lbf", "LBF (load-balancing field, byte 3)", base.DEC),
    rt         = ProtoField.uint8("ub.lph.rt", "RT", base.DEC, rt_names),
}
ub_lph.fields = L

local N = {
    cci        = ProtoField.uint16("ub.nth.cci", "CCI", base.HEX),
    cci_rsv    = ProtoField.uint16("ub.cci.rsv", "Reserved", base.HEX, nil, 0x8000),
    cci_mode   = ProtoField.uint16("ub.cci.mode", "Mode", base.DEC, cci_mode_names, 0x7000),
    cci_loc    = ProtoField.uint16("ub.cci.loc", "LoC", base.DEC, cci_loc_names, 0x0800),
    cci_fecn   = ProtoField.uint16("ub.cci.fecn", "FECN", base.DEC, fecn_names, 0x0003),
    cci_info   = ProtoField.uint16("ub.cci.info", "Mode-specific bits", base.HEX, nil, 0x0FFF),
    rsv        = ProtoField.uint8("ub.nth.rsv", "Reserved", base.HEX, nil, 0xFE),
    perm       = ProtoField.uint8("ub.nth.perm", "Permission", base.DEC, perm_names, 0x01),
    pid        = ProtoField.uint24("ub.nth.pid", "Partition ID", base.DEC),
    npi        = ProtoField.uint32("ub.nth.npi", "NPI (Permission . Partition ID)", base.HEX),
}
ub_nth.fields = N

local NE = {
    config = ProtoExpert.new("ub.lph.config.not_ip", "Config is not an IP-compliant network header",
                             expert.group.PROTOCOL, expert.severity.WARN),
    pid0 = ProtoExpert.new("ub.nth.pid.invalid", "Partition ID 0 is invalid",
                           expert.group.PROTOCOL, expert.severity.WARN),
    truncated = ProtoExpert.new("ub.lph.truncated", "Truncated native UB frame",
                                expert.group.MALFORMED, expert.severity.ERROR),
}
ub_lph.experts = { NE.config, NE.truncated }
ub_nth.experts = { NE.pid0 }

local ip_dissectors = { [3] = Dissector.get("ip"), [4] = Dissector.get("ipv6") }
local data_dissector = Dissector.get("data")

function ub_lph.dissector(tvb, pinfo, tree)
    pinfo.cols.protocol = "UB"
    if tvb:len() < 4 + 6 then
        tree:add(ub_lph, tvb()):add_proto_expert_info(NE.truncated)
        return
    end
    local lt = tree:add(ub_lph, tvb(0, 4))
    lt:add(L.crd, tvb(0, 1))
    lt:add(L.ack, tvb(0, 1))
    lt:add(L.crd_vl, tvb(0, 1))
    lt:add(L.rsv0, tvb(0, 1))
    lt:add(L.vl, tvb(0, 2))
    lt:add(L.rsv1, tvb(1, 1))
    local config_item = lt:add(L.config, tvb(1, 1))
    lt:add(L.lbmode, tvb(2, 1))
    lt:add(L.route_pol, tvb(2, 1))
    lt:add(L.link_len, tvb(2, 2))
    lt:add(L.lbf, tvb(3, 1))
    local b2 = tvb(2, 1):uint()
    local rt = band(rshift(b2, 6), 1) * 2 + rshift(b2, 7)   -- (RoutePolicy << 1) | LBMode
    lt:add(L.rt, tvb(2, 1), rt):set_generated()
    local config = band(tvb(1, 1):uint(), 0x0F)
    lt:append_text(string.format(", VL %d, Config %d, RT %d", tvb(0, 2):bitfield(7, 4), config, rt))

    local ip = ip_dissectors[config]
    if ip == nil then
        -- Only Config 3/4 put the IP-compliant NTH next; a UB2E switch drops the rest.
        config_item:add_proto_expert_info(NE.config)
        pinfo.cols.info = string.format("Native UB frame, Config %d: not an IP-compliant network header", config)
        data_dissector:call(tvb(4):tvb(), pinfo, tree)
        return
    end

    local nt = tree:add(ub_nth, tvb(4, 6))
    local cci = tvb(4, 2):uint()
    local ct = nt:add(N.cci, tvb(4, 2))
    ct:add(N.cci_rsv, tvb(4, 2))
    ct:add(N.cci_mode, tvb(4, 2))
    if band(rshift(cci, 12), 7) == CCI_MODE_FECN then
        ct:add(N.cci_loc, tvb(4, 2))
        ct:add(N.cci_fecn, tvb(4, 2))
        ct:append_text(" (FECN " .. fecn_names[band(cci, 3)] .. ")")
    else
        ct:add(N.cci_info, tvb(4, 2))
    end
    nt:add(N.rsv, tvb(6, 1))
    local perm = band(tvb(6, 1):uint(), 1)
    nt:add(N.perm, tvb(6, 1))
    local pid = tvb(7, 3):uint()
    local pid_item = nt:add(N.pid, tvb(7, 3))
    if pid == 0 then
        pid_item:add_proto_expert_info(NE.pid0)
    elseif pid == 1 then
        pid_item:append_text(" (default partition)")
    end
    nt:add(N.npi, tvb(6, 4), perm * 0x1000000 + pid):set_generated()
    nt:append_text(string.format(", PID %d, %s", pid, perm_names[perm]))

    -- A malformed inner packet is already shown as "Malformed Packet" by Dissector.call;
    -- pcall keeps that exception from also being reported as a Lua error.
    pcall(ip.call, ip, tvb(10):tvb(), pinfo, tree)
end

-- The EtherType is a preference (docs/WIRE.md §5: 0x88B5 is the configurable default).
local registered_ethertype
local function register_ethertype()
    local value = tonumber(ub.prefs.ethertype)   -- accepts 0x88B5 and 34997
    if value == nil or value < 0x600 or value > 0xFFFF or value % 1 ~= 0 then
        report_failure("ub.lua: invalid EtherType preference '" .. ub.prefs.ethertype ..
                       "', keeping " .. string.format("0x%04X", registered_ethertype or 0x88B5))
        value = registered_ethertype or 0x88B5
    end
    if value == registered_ethertype then return end
    local ethertype = DissectorTable.get("ethertype")
    if registered_ethertype then ethertype:remove(registered_ethertype, ub_lph) end
    registered_ethertype = value
    ethertype:add(value, ub_lph)
end
ub.prefs_changed = register_ethertype
register_ethertype()

---------------------------------------------------------------------------
-- WPS IPv6 option (docs/WIRE.md §6, draft-wps-ipv6-option): protocol "wpsopt"
--
-- Wireshark 4.0 has no dissector table for IPv6 option types, and replacing its
-- Hop-by-Hop / Destination Options dissectors would mean re-implementing them.
-- Instead a post-dissector looks at the extension headers Wireshark already
-- dissected (so the inner packet stays dissected normally) and decodes 0x81.
---------------------------------------------------------------------------
local WPS_OPT_TYPE, WPS_OPT_LEN = 0x81, 12
local wpsopt = Proto("wpsopt", "WPS IPv6 option")

local W = {
    header   = ProtoField.uint8("wpsopt.header", "Carried in", base.DEC,
                                { [0] = "Hop-by-Hop Options", [60] = "Destination Options" }),
    type     = ProtoField.uint8("wpsopt.type", "Option Type", base.HEX),
    len      = ProtoField.uint8("wpsopt.len", "Opt Data Len", base.DEC),
    s        = ProtoField.bool("wpsopt.s", "S (Start)", 8, nil, 0x80),
    e        = ProtoField.bool("wpsopt.e", "E (End)", 8, nil, 0x40),
    r        = ProtoField.bool("wpsopt.r", "R (Reorder)", 8, nil, 0x20),
    rsvd     = ProtoField.uint8("wpsopt.rsvd", "Rsvd", base.HEX, nil, 0x1F),
    reserved = ProtoField.uint8("wpsopt.reserved", "Reserved", base.HEX),
    flow_id  = ProtoField.uint16("wpsopt.flow_id", "Flow ID", base.DEC),
    ingress  = ProtoField.uint16("wpsopt.ingress_node", "Ingress Node ID", base.DEC),
    egress   = ProtoField.uint16("wpsopt.egress_node", "Egress Node ID", base.DEC),
    group    = ProtoField.uint16("wpsopt.group", "Group ID", base.DEC),
    in_port  = ProtoField.uint8("wpsopt.ingress_port", "Ingress Port ID", base.DEC),
    out_port = ProtoField.uint8("wpsopt.egress_port", "Egress Port ID", base.DEC),
    data     = ProtoField.bytes("wpsopt.data", "Option Data"),
}
wpsopt.fields = W

local WE = {
    bad_len = ProtoExpert.new("wpsopt.len.bad", "WPS Opt Data Len is not 12: packet must be discarded",
                              expert.group.MALFORMED, expert.severity.ERROR),
    duplicate = ProtoExpert.new("wpsopt.duplicate", "More than one WPS option in the packet",
                                expert.group.PROTOCOL, expert.severity.WARN),
}
wpsopt.experts = WE

local f_hopopts, f_dstopts = Field.new("ipv6.hopopts"), Field.new("ipv6.dstopts")

-- Appends {tvb, offset of the option's type byte, header kind, header end} to
-- `found` for each 0x81 option in the extension header that FieldInfo fi covers.
local function wps_options_in(fi, kind, found)
    local src, hdr = fi.source, fi.offset
    if src == nil or hdr + 2 > src:len() then return end
    local hdr_end = math.min(hdr + (src(hdr + 1, 1):uint() + 1) * 8, src:len())
    local off = hdr + 2
    while off < hdr_end do
        local otype = src(off, 1):uint()
        if otype == 0 then                        -- Pad1 has no length byte
            off = off + 1
        else
            if off + 2 > hdr_end then return end
            if otype == WPS_OPT_TYPE then found[#found + 1] = { src, off, kind, hdr_end } end
            off = off + 2 + src(off + 1, 1):uint()
        end
    end
end

local function add_wps(tree, pinfo, src, off, kind, hdr_end)
    local olen = src(off + 1, 1):uint()
    local t = tree:add(wpsopt, src(off, math.min(2 + olen, hdr_end - off)))
    t:add(W.header, src(off, 1), kind):set_generated()
    t:add(W.type, src(off, 1))
    local len_item = t:add(W.len, src(off + 1, 1))
    if olen ~= WPS_OPT_LEN or off + 2 + olen > hdr_end then
        len_item:add_proto_expert_info(WE.bad_len, string.format(
            "Opt Data Len %d, must be %d: the packet must be discarded", olen, WPS_OPT_LEN))
        if olen > 0 and off + 2 < hdr_end then
            t:add(W.data, src(off + 2, math.min(olen, hdr_end - off - 2)))
        end
        return t
    end
    local d = off + 2
    t:add(W.s, src(d, 1))
    t:add(W.e, src(d, 1))
    t:add(W.r, src(d, 1))
    t:add(W.rsvd, src(d, 1))
    t:add(W.reserved, src(d + 1, 1))
    t:add(W.flow_id, src(d + 2, 2))
    t:add(W.ingress, src(d + 4, 2))
    t:add(W.egress, src(d + 6, 2))
    t:add(W.group, src(d + 8, 2))
    t:add(W.in_port, src(d + 10, 1))
    t:add(W.out_port, src(d + 11, 1))
    local flags = src(d, 1):uint()
    local summary = string.format("Flow %d, Group %d%s%s", src(d + 2, 2):uint(), src(d + 8, 2):uint(),
                                  band(flags, 0x80) ~= 0 and ", S" or "",
                                  band(flags, 0x40) ~= 0 and ", E" or "")
    t:append_text(", " .. summary)
    pinfo.cols.info:append(" [WPS " .. summary .. "]")
    return t
end

function wpsopt.dissector(tvb, pinfo, tree)
    local found = {}
    for _, fi in ipairs({ f_hopopts() }) do wps_options_in(fi, 0, found) end
    for _, fi in ipairs({ f_dstopts() }) do wps_options_in(fi, 60, found) end
    for i, o in ipairs(found) do
        local t = add_wps(tree, pinfo, o[1], o[2], o[3], o[4])
        if i > 1 then
            -- Never both headers, never two options (docs/WIRE.md §6).
            t:add_proto_expert_info(WE.duplicate)
        end
    end
end

register_postdissector(wpsopt)
