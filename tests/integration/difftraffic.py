#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The differential test's traffic: one script of frames, run against the
router in each mode, and what reached each side compared.

  difftraffic.py run LAN_NS RTR_NS WAN_NS LAN_RTR_MAC WAN_RTR_MAC OUT.json
      From one process that enters both hosts' namespaces (setns), send
      the script's frames with AF_PACKET from the LAN host and the WAN
      host to the router's MAC, step by step, and capture everything the
      hosts receive meanwhile (and set the router's lan0 MTU where a step
      says so, through RTR_NS). The WAN host also answers like a server:
      a UDP echo on port 5001 and a TCP listener on 5002 (IPv4 and IPv6),
      and both hosts' kernels answer the rest as they would (ICMP port
      unreachable, TCP resets). Writes, per step, the frames that arrived
      on each side in a normalized text form (see normalize()).

  difftraffic.py compare KERNEL.json XDP.json NAT_MD
      Compare two runs step by step. A step whose arrivals differ fails
      unless NAT_MD (docs/NAT.md) lists it in its table of differences
      between the modes (a row starting with the step's name in
      backquotes) and the difference is exactly the one EXPECTED below
      records for it (each listed step has its entry there). Also fails
      when the first run (kernel mode, the reference) does not show what
      the testbed must show: the normal steps' own frames (their marker,
      searched in the raw frames) reach the far side, unsolicited traffic
      never reaches the LAN. Exit status 0 or 1; prints every difference.

Normalization, so that only what a NAT may legitimately choose differs:
ports, echo ids, TCP sequence numbers and IP ids that appear in none of the
step's sent frames become symbols in order of appearance (P1, S1...);
checksums become "ok" / "bad" / "none" (verified from scratch); TCP
options, ICMP error quote lengths beyond the headers, and IP ids of
unfragmented packets are left out. Frames that are not the test's (ARP,
neighbour discovery, router solicitations, MLD) are ignored.
"""
import ctypes
import json
import os
import re
import select
import socket
import struct
import subprocess
import sys
import time

# The Internet checksum, the same for both scripts (same folder).
from rawpkt import csum

CLONE_NEWNET = 0x40000000
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
WINDOW = 0.6        # seconds each step's answers get to arrive
GAP = 0.02          # between the frames of one step

LAN4, WAN4, NAT4 = "198.18.1.10", "198.19.0.2", "198.19.0.1"
RTR_LAN4 = "198.18.1.1"
LAN6, WAN6, RTR_WAN6 = "2001:2:0:1::10", "2001:2:0:2::2", "2001:2:0:2::1"
UDP_ECHO, TCP_LISTEN = 5001, 5002

libc = ctypes.CDLL(None, use_errno=True)


def enter(ns):
    fd = os.open("/run/netns/" + ns, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET):
            e = ctypes.get_errno()
            raise OSError(e, "setns %s: %s" % (ns, os.strerror(e)))
    finally:
        os.close(fd)


# ---- building frames ------------------------------------------------------

def a4(x):
    return socket.inet_pton(socket.AF_INET, x)


def a6(x):
    return socket.inet_pton(socket.AF_INET6, x)


def ip4(src, dst, proto, payload, ttl=64, ident=0x1234, frag=0x4000,
        opts=b"", bad=False):
    ihl = 5 + len(opts) // 4
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0,
                      ihl * 4 + len(payload), ident, frag, ttl, proto, 0,
                      a4(src), a4(dst)) + opts
    c = csum(hdr) ^ (0x0101 if bad else 0)
    return hdr[:10] + struct.pack("!H", c) + hdr[12:] + payload


def ip6(src, dst, nh, payload, hlim=64):
    return struct.pack("!IHBB16s16s", 0x60000000, len(payload), nh, hlim,
                       a6(src), a6(dst)) + payload


def pseudo(src, dst, proto, length):
    if ":" in src:
        return a6(src) + a6(dst) + struct.pack("!IxxxB", length, proto)
    return a4(src) + a4(dst) + struct.pack("!xBH", proto, length)


def l4sum(src, dst, proto, seg, off, bad=False, zero=False):
    if zero:
        return seg
    c = csum(pseudo(src, dst, proto, len(seg)) + seg) if proto != 1 else \
        csum(seg)
    if proto == 17 and c == 0:
        c = 0xFFFF
    c ^= 0x5A5A if bad else 0
    return seg[:off] + struct.pack("!H", c) + seg[off + 2:]


def udp(src, dst, sp, dp, data, bad=False, zero=False):
    seg = struct.pack("!HHHH", sp, dp, 8 + len(data), 0) + data
    return l4sum(src, dst, 17, seg, 6, bad, zero)


def tcp(src, dst, sp, dp, flags, seq, ack=0, data=b"", bad=False, opts=b""):
    seg = struct.pack("!HHIIBBHHH", sp, dp, seq, ack,
                      (5 + len(opts) // 4) << 4, flags, 64240, 0, 0) + \
        opts + data
    return l4sum(src, dst, 6, seg, 16, bad)


def icmp(src, dst, typ, code, rest, data, v6=False, bad=False):
    seg = struct.pack("!BBH", typ, code, 0) + rest + data
    return l4sum(src, dst, 58 if v6 else 1, seg, 2, bad)


def echo(src, dst, ident, seq, data, v6=False, reply=False):
    typ = (129 if reply else 128) if v6 else (0 if reply else 8)
    return icmp(src, dst, typ, 0, struct.pack("!HH", ident, seq), data, v6)


SYN, ACK, RST, FIN, PSH = 0x02, 0x10, 0x04, 0x01, 0x08
LAN, WAN = "lan", "wan"


def v4(src, dst, proto, seg, **kw):
    return (0x0800, ip4(src, dst, proto, seg, **kw))


def v6(src, dst, nh, seg, **kw):
    return (0x86DD, ip6(src, dst, nh, seg, **kw))


def fragments(src, dst, proto, seg, ident, reverse=False):
    """SEG as two IPv4 fragments (the first carrying 8*k bytes)."""
    cut = (len(seg) // 2) & ~7
    first = v4(src, dst, proto, seg[:cut], ident=ident, frag=0x2000)
    last = v4(src, dst, proto, seg[cut:], ident=ident, frag=cut // 8)
    return [last, first] if reverse else [first, last]


def fragments6(src, dst, nh, seg, ident):
    """SEG as two IPv6 fragments (RFC 8200 4.5)."""
    cut = (len(seg) // 2) & ~7
    out = []
    for off, part, more in ((0, seg[:cut], 1), (cut, seg[cut:], 0)):
        fh = struct.pack("!BBHI", nh, 0, off | more, ident)
        out.append(v6(src, dst, 44, fh + part))
    return out


def m(step):
    return ("xnat-diff " + step).encode()


def steps():
    """(name, far side, expectation in kernel mode, [(side, frame)...]).
    Expectation: 'arrives' (a frame with the step's marker reaches the far
    side), 'blocked' (nothing reaches the LAN), None (either)."""
    S = []

    def add(name, far, expect, *frames):
        S.append((name, far, expect, list(frames)))

    big = b"x" * 600
    # Normal traffic, both directions; flows the later steps use.
    # The same three per family: UDP, a TCP SYN, an echo request.
    for fam, ip, lan, wan, icmp_nh, port, isn in (
            ("4", v4, LAN4, WAN4, 1, 40000, 1000),
            ("6", v6, LAN6, WAN6, 58, 40003, 2000)):
        name = "udp%s_out" % fam
        add(name, WAN, "arrives",
            (LAN, ip(lan, wan, 17, udp(lan, wan, port, UDP_ECHO, m(name)))))
        name = "tcp%s_out_syn" % fam
        add(name, WAN, "arrives",
            (LAN, ip(lan, wan, 6, tcp(lan, wan, port + 1, TCP_LISTEN, SYN, isn,
                                      data=m(name)))))
        name = "icmp%s_echo_out" % fam
        add(name, WAN, "arrives",
            (LAN, ip(lan, wan, icmp_nh, echo(lan, wan, port + 2, 1, m(name),
                                          v6=fam == "6"))))
    add("udp4_in_reply", LAN, "arrives",
        (WAN, v4(WAN4, NAT4, 17, udp(WAN4, NAT4, UDP_ECHO, 40000, m("udp4_in_reply")))))
    add("fwd_tcp_syn", LAN, "arrives",
        (WAN, v4(WAN4, NAT4, 6, tcp(WAN4, NAT4, 50000, 8080, SYN, 3000,
                                    data=m("fwd_tcp_syn")))))
    add("fwd_udp", LAN, "arrives",
        (WAN, v4(WAN4, NAT4, 17, udp(WAN4, NAT4, 50001, 5353, m("fwd_udp")))))
    # Edge cases.
    add("udp4_out_ttl1", WAN, None,
        (LAN, v4(LAN4, WAN4, 17, udp(LAN4, WAN4, 40000, UDP_ECHO, m("udp4_out_ttl1")),
                 ttl=1)))
    add("udp6_out_hop1", WAN, None,
        (LAN, v6(LAN6, WAN6, 17, udp(LAN6, WAN6, 40003, UDP_ECHO, m("udp6_out_hop1")),
                 hlim=1)))
    add("udp4_out_frag", WAN, "arrives",
        *[(LAN, f) for f in fragments(LAN4, WAN4, 17, udp(
            LAN4, WAN4, 40010, UDP_ECHO, m("udp4_out_frag") + big), 0x2001)])
    add("udp4_in_frag", LAN, "arrives",
        *[(WAN, f) for f in fragments(WAN4, NAT4, 17, udp(
            WAN4, NAT4, UDP_ECHO, 40000, m("udp4_in_frag") + big), 0x2002)])
    add("udp4_out_nocsum", WAN, "arrives",
        (LAN, v4(LAN4, WAN4, 17, udp(LAN4, WAN4, 40000, UDP_ECHO,
                                     m("udp4_out_nocsum"), zero=True))))
    # Malformed.
    add("udp4_out_bad_ipcsum", WAN, None,
        (LAN, v4(LAN4, WAN4, 17, udp(LAN4, WAN4, 40000, UDP_ECHO,
                                     m("udp4_out_bad_ipcsum")), bad=True)))
    add("udp4_out_bad_udpcsum", WAN, None,
        (LAN, v4(LAN4, WAN4, 17, udp(LAN4, WAN4, 40000, UDP_ECHO,
                                     m("udp4_out_bad_udpcsum"), bad=True))))
    add("udp4_in_bad_udpcsum", LAN, None,
        (WAN, v4(WAN4, NAT4, 17, udp(WAN4, NAT4, UDP_ECHO, 40000,
                                     m("udp4_in_bad_udpcsum"), bad=True))))
    add("tcp4_out_bad_tcpcsum", WAN, None,
        (LAN, v4(LAN4, WAN4, 6, tcp(LAN4, WAN4, 40001, TCP_LISTEN, ACK, 1001,
                                    1, m("tcp4_out_bad_tcpcsum"), bad=True))))
    good = ip4(LAN4, WAN4, 17, udp(LAN4, WAN4, 40000, UDP_ECHO, m("malformed")))
    add("ipv4_truncated", WAN, None, (LAN, (0x0800, good[:10])))
    add("ipv4_ihl4", WAN, None,
        (LAN, (0x0800, bytes([0x44]) + good[1:10] + b"\0\0" + good[12:])))
    add("ipv4_totlen_over_frame", WAN, None,
        (LAN, (0x0800, good[:2] + struct.pack("!H", len(good) + 200) + good[4:])))
    add("udp_len_over_payload", WAN, None,
        (LAN, v4(LAN4, WAN4, 17, struct.pack("!HHHH", 40000, UDP_ECHO, 200, 0) +
                 m("udp_len_over_payload"))))
    # Unsolicited inbound.
    add("in_udp4_xdp_range_no_mapping", LAN, "blocked",
        (WAN, v4(WAN4, NAT4, 17, udp(WAN4, NAT4, 6000, 30000,
                                     m("in_udp4_xdp_range_no_mapping")))))
    add("in_udp4_kernel_port", LAN, "blocked",
        (WAN, v4(WAN4, NAT4, 17, udp(WAN4, NAT4, 6000, 1000,
                                     m("in_udp4_kernel_port")))))
    add("in_udp4_mapping_other_port", LAN, None,
        (WAN, v4(WAN4, NAT4, 17, udp(WAN4, NAT4, 6001, 40000,
                                     m("in_udp4_mapping_other_port")))))
    add("in_udp4_to_lan_host", LAN, "blocked",
        (WAN, v4(WAN4, LAN4, 17, udp(WAN4, LAN4, 6000, 40000,
                                     m("in_udp4_to_lan_host")))))
    add("in_tcp4_syn_to_lan_host", LAN, "blocked",
        (WAN, v4(WAN4, LAN4, 6, tcp(WAN4, LAN4, 6000, 22, SYN, 9))))
    add("in_icmp4_echo_to_lan_host", LAN, "blocked",
        (WAN, v4(WAN4, LAN4, 1, echo(WAN4, LAN4, 7, 1, m("in_icmp4_echo_to_lan_host")))))
    add("in_udp6_to_lan_host", LAN, "blocked",
        (WAN, v6(WAN6, LAN6, 17, udp(WAN6, LAN6, 6000, 41000,
                                     m("in_udp6_to_lan_host")))))
    add("in_spoofed_lan_source_fwd", LAN, None,
        (WAN, v4(LAN4, NAT4, 6, tcp(LAN4, NAT4, 50002, 8080, SYN, 5))))
    add("in_icmp4_echo_router", LAN, "blocked",
        (WAN, v4(WAN4, NAT4, 1, echo(WAN4, NAT4, 9, 1, m("in_icmp4_echo_router")))))
    add("in_icmp4_fragneeded_udp_flow", LAN, "arrives",
        (WAN, v4(WAN4, NAT4, 1, icmp(WAN4, NAT4, 3, 4, struct.pack("!HH", 0, 1280),
            ip4(NAT4, WAN4, 17, udp(NAT4, WAN4, 40000, UDP_ECHO,
                                    m("in_icmp4_fragneeded_udp_flow")), ident=7)))))
    # Packets of a flow that go up to the kernel (which may not know
    # the flow): each on a flow of its own, opened in the same step, so
    # that what the kernel learns from one does not change another.
    def opened(sport, *frames):
        return [(LAN, v4(LAN4, WAN4, 17, udp(LAN4, WAN4, sport, UDP_ECHO,
                                             b"open")))] + list(frames)

    def opened6(sport, *frames):
        return [(LAN, v6(LAN6, WAN6, 17, udp(LAN6, WAN6, sport, UDP_ECHO,
                                             b"open")))] + list(frames)

    add("udp4_in_ttl1", LAN, None, *opened(
        40020, (WAN, v4(WAN4, NAT4, 17, udp(WAN4, NAT4, UDP_ECHO, 40020,
                                            m("udp4_in_ttl1")), ttl=1))))
    add("udp6_in_frag", LAN, "arrives", *opened6(
        40024, *[(WAN, f) for f in fragments6(WAN6, LAN6, 17, udp(
            WAN6, LAN6, UDP_ECHO, 40024, m("udp6_in_frag") + big), 0x2004)]))
    add("udp4_out_options", WAN, "arrives", *opened(
        40021, (LAN, v4(LAN4, WAN4, 17, udp(LAN4, WAN4, 40021, UDP_ECHO,
                                            m("udp4_out_options")),
                        opts=b"\x01\x01\x01\x00"))))
    add("udp4_in_frag_reversed", LAN, "arrives", *opened(
        40022, *[(WAN, f) for f in fragments(WAN4, NAT4, 17, udp(
            WAN4, NAT4, UDP_ECHO, 40022, m("udp4_in_frag_reversed") + big),
            0x2003, reverse=True)]))
    add("udp4_in_options", LAN, "arrives", *opened(
        40023, (WAN, v4(WAN4, NAT4, 17, udp(WAN4, NAT4, UDP_ECHO, 40023,
                                            m("udp4_in_options")),
                        opts=b"\x01\x01\x01\x00"))))
    # The router's LAN port drops to MTU 1400 (as behind a tunnel) and
    # a 1500-byte reply comes: with DF the sender must learn the path MTU
    # (RFC 1191), without it the router fragments. MTU back after.
    full = b"y" * (1500 - 20 - 8 - len(m("udp4_in_too_big_df")))
    add("udp4_in_too_big_df", WAN, None, *opened(
        40025, ("mtu", 1400),
        (WAN, v4(WAN4, NAT4, 17, udp(WAN4, NAT4, UDP_ECHO, 40025,
                                     m("udp4_in_too_big_df") + full))),
        ("mtu", 1500)))
    add("udp4_in_too_big", LAN, "arrives", *opened(
        40026, ("mtu", 1400),
        (WAN, v4(WAN4, NAT4, 17, udp(WAN4, NAT4, UDP_ECHO, 40026,
                                     m("udp4_in_too_big") + full[:-2]),
                 frag=0)),
        ("mtu", 1500)))
    # MSS clamping ([router] mss_clamp = pmtu): SYNs announcing the hosts'
    # MSS while the LAN port is at MTU 1400 leave with 1360 (IPv6 1340).
    mss = b"\x02\x04\x05\xb4\x01\x01\x04\x02"  # MSS 1460, NOP, NOP, SACK ok
    mss6 = b"\x02\x04\x05\xa0\x01\x01\x04\x02"  # MSS 1440
    add("tcp4_out_syn_mss", WAN, "arrives", ("mtu", 1400),
        (LAN, v4(LAN4, WAN4, 6, tcp(LAN4, WAN4, 40031, TCP_LISTEN, SYN, 1000,
                                    data=m("tcp4_out_syn_mss"), opts=mss))),
        ("mtu", 1500))
    add("tcp6_out_syn_mss", WAN, "arrives", ("mtu", 1400),
        (LAN, v6(LAN6, WAN6, 6, tcp(LAN6, WAN6, 40032, TCP_LISTEN, SYN, 2000,
                                    data=m("tcp6_out_syn_mss"), opts=mss6))),
        ("mtu", 1500))
    # [ipv6] inbound = stateful: a WAN host's SYN to a LAN host is
    # dropped, its echo request gets in (RFC 4890 4.3.1).
    add("in_tcp6_syn_to_lan_host", LAN, "blocked",
        (WAN, v6(WAN6, LAN6, 6, tcp(WAN6, LAN6, 6001, 22, SYN, 9,
                                    data=m("in_tcp6_syn_to_lan_host")))))
    add("in_icmp6_echo_to_lan_host", LAN, "arrives",
        (WAN, v6(WAN6, LAN6, 58, echo(WAN6, LAN6, 11, 1,
                                      m("in_icmp6_echo_to_lan_host"), v6=True))))
    # A TCP connection the LAN host really opens (a socket), then an RST
    # forged from the WAN far outside the window (RFC 5961 section 3).
    add("tcp4_in_rst_out_of_window", LAN, None,
        ("connect", (WAN4, TCP_LISTEN, 40030)),
        (WAN, v4(WAN4, NAT4, 6, tcp(WAN4, NAT4, TCP_LISTEN, 40030, RST,
                                    0x7000000))))
    return S


# ---- capturing and normalizing ---------------------------------------------

def get16(b, o):
    return struct.unpack_from("!H", b, o)[0]


class Symbols:
    """Numbers a NAT or a host chose, as symbols in order of appearance."""

    def __init__(self, known):
        self.known = known
        self.seen = {}

    def __call__(self, kind, v):
        if v in self.known:
            return str(v)
        key = (kind, v)
        if key not in self.seen:
            self.seen[key] = "%s%d" % (kind, 1 + sum(1 for k in self.seen
                                                    if k[0] == kind))
        return self.seen[key]


def known_numbers(frames):
    """Ports, ids, sequence numbers of the frames sent (found by parsing
    them as the capture is parsed)."""
    nums = set()
    for side, what in frames:
        if side == "connect":
            nums |= set(what[1:])
        elif side != "mtu":
            nums |= set(numbers_of(*what))
    return nums


def numbers_of(etype, l3):
    out = []
    try:
        if etype == 0x0800:
            ihl = (l3[0] & 15) * 4
            out.append(get16(l3, 4))
            proto, l4 = l3[9], l3[ihl:]
        else:
            proto, l4 = l3[6], l3[40:]
            if proto == 44:
                out.append(struct.unpack_from("!I", l4, 4)[0])
                proto, l4 = l4[0], l4[8:]
        if proto in (6, 17):
            out += [get16(l4, 0), get16(l4, 2)]
        if proto == 6:
            out += list(struct.unpack_from("!II", l4, 4))
        if proto in (1, 58):
            out.append(get16(l4, 4))
    except (IndexError, struct.error):
        pass
    return out


def l4_state(src, dst, proto, seg, v6):
    if proto == 17 and not v6 and len(seg) >= 8 and get16(seg, 6) == 0:
        return "none"
    if proto == 1:
        return "ok" if csum(seg) == 0 else "bad"
    return "ok" if csum(pseudo(src, dst, proto, len(seg)) + seg) == 0 else "bad"


def tcp_mss(seg):
    """The MSS option of a TCP header, or None (parsed as Linux does)."""
    opts, i = seg[20:(seg[12] >> 4) * 4], 0
    while i < len(opts) and opts[i] != 0:
        if opts[i] == 1:
            i += 1
            continue
        if i + 1 >= len(opts) or opts[i + 1] < 2 or i + opts[i + 1] > len(opts):
            return None
        if opts[i] == 2 and opts[i + 1] == 4:
            return get16(opts, i + 2)
        i += opts[i + 1]
    return None


def describe_l4(proto, seg, sym, src, dst, v6, quoted=False):
    """The L4 part of a normalized frame."""
    state = None  # the checksum's, when it must be taken before a cut
    if proto == 17 and len(seg) >= 8:
        d = "udp %s>%s len %d" % (sym("P", get16(seg, 0)), sym("P", get16(seg, 2)),
                                  get16(seg, 4))
    elif proto == 6 and len(seg) >= 20:
        sq, ak = struct.unpack_from("!II", seg, 4)
        state = l4_state(src, dst, proto, seg, v6)
        flags = "".join(c for c, b in zip("FSRPAU", (1, 2, 4, 8, 16, 32))
                        if seg[13] & b)
        d = "tcp %s>%s %s seq %s ack %s" % (
            sym("P", get16(seg, 0)), sym("P", get16(seg, 2)), flags,
            sym("S", sq), sym("S", ak) if seg[13] & 16 else "-")
        if seg[13] & 2 and not quoted and tcp_mss(seg) is not None:
            d += " mss %d" % tcp_mss(seg)
        seg = seg[:20] + seg[(seg[12] >> 4) * 4:] if not quoted else seg
    elif proto in (1, 58) and len(seg) >= 8:
        typ, code = seg[0], seg[1]
        error = (proto == 1 and typ in (3, 11, 12)) or (proto == 58 and typ < 128)
        d = "icmp%s %d/%d" % ("6" if v6 else "", typ, code)
        if not error:
            d += " id %s" % sym("P", get16(seg, 4))
        elif not quoted:
            if (proto == 1 and typ == 3 and code == 4) or (proto == 58 and typ == 2):
                d += " mtu %d" % (get16(seg, 6) if proto == 1 else
                                  struct.unpack_from("!I", seg, 4)[0])
            d += " quoting [%s]" % describe_l3(
                0x86DD if v6 else 0x0800, seg[8:], sym, quoted=True)
    else:
        d = "proto %d len %d" % (proto, len(seg))
    if not quoted:
        if state is None:
            state = l4_state(src, dst, proto, seg, v6)
        d += " csum " + state
        payload = seg[8:] if proto == 17 else seg[20:] if proto == 6 else b""
        mk = re.search(rb"xnat-diff [a-z0-9_]+", payload)
        if mk:
            d += " '%s'" % mk.group().decode()
    return d


def describe_l3(etype, l3, sym, quoted=False):
    try:
        if etype == 0x0800:
            ihl = (l3[0] & 15) * 4
            tot, ident, fo = get16(l3, 2), get16(l3, 4), get16(l3, 6)
            src = socket.inet_ntop(socket.AF_INET, l3[12:16])
            dst = socket.inet_ntop(socket.AF_INET, l3[16:20])
            d = "ip %s>%s ttl %d proto %d" % (src, dst, l3[8], l3[9])
            if not quoted:
                d += " len %d%s hcsum %s" % (
                    tot, " opts" if ihl > 20 else "",
                    "ok" if csum(l3[:ihl]) == 0 else "bad")
            if fo & 0x3FFF:
                d += " frag id %s off %d%s" % (sym("I", ident), (fo & 0x1FFF) * 8,
                                               " MF" if fo & 0x2000 else "")
                if fo & 0x1FFF:
                    return d
            seg = l3[ihl:tot] if not quoted else l3[ihl:]
            if fo & 0x2000:
                return d + " first %s" % describe_l4(l3[9], seg, sym, src, dst,
                                                     False, quoted=True)
            return d + " | " + describe_l4(l3[9], seg, sym, src, dst, False, quoted)
        src = socket.inet_ntop(socket.AF_INET6, l3[8:24])
        dst = socket.inet_ntop(socket.AF_INET6, l3[24:40])
        d = "ip6 %s>%s hlim %d nh %d" % (src, dst, l3[7], l3[6])
        seg = l3[40:40 + get16(l3, 4)] if not quoted else l3[40:]
        if l3[6] == 44 and len(seg) >= 8:
            nh, fo, ident = seg[0], get16(seg, 2), struct.unpack_from("!I", seg, 4)[0]
            d += " frag id %s off %d%s nh %d" % (sym("I", ident), fo & ~7,
                                                 " M" if fo & 1 else "", nh)
            if fo & ~7:
                return d
            return d + " first %s" % describe_l4(nh, seg[8:], sym, src, dst,
                                                 True, quoted=True)
        return d + " | " + describe_l4(l3[6], seg, sym, src, dst, True, quoted)
    except (IndexError, struct.error, ValueError):
        return "truncated %s" % l3[:40].hex()


def ignored(etype, l3):
    """Frames that are not the test's: ARP, neighbour discovery, MLD,
    router solicitations, multicast."""
    if etype == 0x86DD and len(l3) >= 42:
        if l3[24] == 0xFF or (l3[6] == 58 and l3[40] in (130, 131, 132, 133,
                                                           134, 135, 136, 143)):
            return True
        if l3[6] == 0:  # hop-by-hop: MLD
            return True
        return False
    return etype != 0x0800


def normalize(frame, sym):
    etype = get16(frame, 12)
    l3 = frame[14:]
    if etype == 0x8100:
        etype, l3 = get16(frame, 16), frame[18:]
    if ignored(etype, l3):
        return None
    return describe_l3(etype, l3, sym)


# ---- the run ----------------------------------------------------------------

def raw_socket(ifname="eth0"):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((ifname, 0))
    return s


def if_mac(s):
    return s.getsockname()[4]


def own_bytes(name, frames):
    """What only the step's own frames carry: its marker with the 4 bytes
    that follow it in the frame sent (so that "udp4_in_too_big" does not
    match a late frame of "udp4_in_too_big_df"). Searched in the raw
    frames that arrive: it is found in first fragments and in ICMP
    errors' quotes too, which the normalized text does not show."""
    mk = m(name)
    sigs = set()
    for side, what in frames:
        if side in (LAN, WAN):
            i = what[1].find(mk)
            if i >= 0:
                sigs.add(what[1][i:i + len(mk) + 4])
    return sigs


def cmd_run(a):
    enter(a.lan_ns)
    lan = raw_socket()
    # Client sockets of the LAN host, bound now (a socket stays in the
    # namespace it was made in).
    clients = {}
    for _, _, _, frames in steps():
        for side, what in frames:
            if side == "connect":
                c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                c.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                c.bind((LAN4, what[2]))
                clients[what] = c
    enter(a.wan_ns)
    wan = raw_socket()
    echo4 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    echo4.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    echo4.bind(("::", UDP_ECHO))
    listener = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("::", TCP_LISTEN))
    listener.listen(16)
    rtr = {LAN: bytes.fromhex(a.lan_rtr_mac.replace(":", "")),
           WAN: bytes.fromhex(a.wan_rtr_mac.replace(":", ""))}
    socks = {LAN: lan, WAN: wan}
    result = []
    accepted = []

    def pump(until, got):
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return
            r = select.select([lan, wan, echo4, listener], [], [], left)[0]
            for s in r:
                if s is echo4:
                    data, peer = echo4.recvfrom(65535)
                    echo4.sendto(data, peer)
                    continue
                if s is listener:
                    # Kept open: the connection stays established.
                    accepted.append(listener.accept()[0])
                    continue
                data, addr = s.recvfrom(65535)
                if addr[2] == PACKET_OUTGOING:
                    continue
                got.append((LAN if s is lan else WAN, data))

    for name, far, expect, frames in steps():
        got = []
        for side, what in frames:
            if side == "mtu":
                subprocess.run(["ip", "-n", a.rtr_ns, "link", "set", "lan0",
                                "mtu", str(what)], check=True, timeout=10)
                continue
            if side == "connect":
                # A real connection from the LAN host: the handshake
                # completes before the next frame goes.
                c = clients[what]
                c.setblocking(False)
                c.connect_ex(what[:2])
                pump(time.monotonic() + WINDOW, got)
                continue
            s = socks[side]
            etype, l3 = what
            s.send(rtr[side] + if_mac(s) + struct.pack("!H", etype) + l3)
            pump(time.monotonic() + GAP, got)
        pump(time.monotonic() + WINDOW, got)
        sym = Symbols(known_numbers(frames))
        sigs = own_bytes(name, frames)
        arrived = {LAN: [], WAN: []}
        marked = set()
        for side, data in got:
            if any(sig in data for sig in sigs):
                marked.add(side)
            n = normalize(data, sym)
            if n is not None:
                arrived[side].append(n)
        result.append(dict(step=name, far=far, expect=expect,
                           marked=sorted(marked), **arrived))
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)


def listed_differences(nat_md):
    """Step names in docs/NAT.md's table of differences between modes."""
    names = set()
    inside = False
    with open(nat_md) as f:
        for line in f:
            if line.startswith("## "):
                inside = "kernel and xdp mode differ" in line
            elif inside:
                mt = re.match(r"\|\s*`([a-z0-9_]+)`\s*\|", line)
                if mt:
                    names.add(mt.group(1))
    return names


# What each step docs/NAT.md lists differs in, exactly: any other
# difference on a listed step fails. Rules, by side (in the normalized
# form; "{P}" is any port, as a number or a symbol):
#   ("kernel", side, LINE)  a line only kernel mode's run shows
#   ("xdp", side, LINE)     a line only xdp mode's run shows
#   ("changed", side, K, X) kernel mode shows K where xdp mode shows X
#   ("late", side, LINE)    both show LINE, xdp mode's in one of the next
#                           LATE steps (XDP_TX'd errors reach the capture
#                           after their step's window)
# A rule applies when what it names is there (one line each); the lines
# left must then be the same.
LATE = 2
TE4_OUT = ("ip 198.18.1.1>198.18.1.10 ttl 64 proto 1 len 79 hcsum ok | "
           "icmp 11/0 quoting [ip 198.18.1.10>198.19.0.2 ttl 1 proto 17 | "
           "udp {P}>5001 len 31] csum ok")
TE6_OUT = ("ip6 2001:2:0:1::1>2001:2:0:1::10 hlim 64 nh 58 | icmp6 3/0 "
           "quoting [ip6 2001:2:0:1::10>2001:2:0:2::2 hlim 1 nh 17 | "
           "udp {P}>5001 len 31] csum ok")
TE4_IN = ("ip 198.19.0.1>198.19.0.2 ttl 64 proto 1 len 78 hcsum ok | "
          "icmp 11/0 quoting [ip 198.19.0.2>198.19.0.1 ttl 1 proto 17 | "
          "udp 5001>{P} len 30] csum ok")
FN_IN = ("ip 198.19.0.1>198.19.0.2 ttl 64 proto 1 len 576 hcsum ok | "
         "icmp 3/4 mtu 1400 quoting [ip 198.19.0.2>198.19.0.1 ttl 64 "
         "proto 17 | udp 5001>{P} len 1480] csum ok")
UNREACH_OTHER = ("ip 198.19.0.1>198.19.0.2 ttl %d proto 1 len 92 hcsum ok | "
                 "icmp 3/3 quoting [ip 198.19.0.2>198.19.0.1 ttl %d "
                 "proto 17 | udp 6001>{P} len 44] csum ok")
FRAG6 = "ip6 2001:2:0:2::2>2001:2:0:1::10 hlim 63 nh 44 frag id %s off "
EXPECTED = {
    "udp4_out_bad_udpcsum": [
        ("xdp", WAN, "ip 198.19.0.1>198.19.0.2 ttl 63 proto 17 len 58 "
         "hcsum ok | udp {P}>5001 len 38 csum bad "
         "'xnat-diff udp4_out_bad_udpcsum'")],
    "udp4_in_bad_udpcsum": [
        ("xdp", LAN, "ip 198.19.0.2>198.18.1.10 ttl 63 proto 17 len 57 "
         "hcsum ok | udp 5001>{P} len 37 csum bad "
         "'xnat-diff udp4_in_bad_udpcsum'")],
    "tcp4_out_bad_tcpcsum": [
        ("xdp", WAN, "ip 198.19.0.1>198.19.0.2 ttl 63 proto 6 len 70 "
         "hcsum ok | tcp {P}>5002 A seq 1001 ack 1 csum bad "
         "'xnat-diff tcp4_out_bad_tcpcsum'")],
    "in_udp4_xdp_range_no_mapping": [
        ("kernel", WAN, "ip 198.19.0.1>198.19.0.2 ttl 64 proto 1 len 94 "
         "hcsum ok | icmp 3/3 quoting [ip 198.19.0.2>198.19.0.1 ttl 64 "
         "proto 17 | udp 6000>30000 len 46] csum ok")],
    "in_udp4_mapping_other_port": [
        ("xdp", LAN, "ip 198.19.0.2>198.18.1.10 ttl 63 proto 17 len 64 "
         "hcsum ok | udp 6001>{P} len 44 csum ok "
         "'xnat-diff in_udp4_mapping_other_port'"),
        ("changed", WAN, UNREACH_OTHER % (64, 64), UNREACH_OTHER % (63, 63))],
    "udp4_out_ttl1": [("late", LAN, TE4_OUT)],
    "udp6_out_hop1": [("late", LAN, TE6_OUT)],
    "udp4_out_frag": [],            # the late errors of the two above
    "udp4_in_ttl1": [("late", WAN, TE4_IN)],
    "udp6_in_frag": [
        # Kernel mode re-fragments with an ID of its own.
        ("changed", LAN, FRAG6 % "I1" + "0 M nh 17 first udp 5001>40024 "
         "len 630", FRAG6 % "8196" + "0 M nh 17 first udp 5001>40024 len 630"),
        ("changed", LAN, FRAG6 % "I1" + "312 nh 17", FRAG6 % "8196" +
         "312 nh 17"),
        ("kernel", WAN, "ip6 2001:2:0:1::10>2001:2:0:2::2 hlim 63 nh 58 | "
         "icmp6 1/4 quoting [ip6 2001:2:0:2::2>2001:2:0:1::10 hlim 63 "
         "nh 17 | udp 5001>40024 len 630] csum ok")],
    "udp4_in_too_big_df": [("late", WAN, FN_IN)],
    "udp4_in_too_big": [],          # the late error of the step above
}


def line_re(text):
    return re.compile(re.escape(text).replace(re.escape("{P}"), r"(?:P\d+|\d+)"))


def take(lines, pat):
    """Remove the first line of LINES that PAT matches whole; True if any."""
    for i, line in enumerate(lines):
        if pat.fullmatch(line):
            del lines[i]
            return True
    return False


def has(lines, pat):
    return any(pat.fullmatch(line) for line in lines)


def apply_rules(rules, k, x, later):
    """Apply a listed step's RULES to copies K and X of its lines (side ->
    list); LATER: the xdp run's lines of the next steps, from which a late
    line is taken. Returns the problems (a late line that never came)."""
    problems = []
    for rule in rules:
        kind, side = rule[:2]
        pats = [line_re(t) for t in rule[2:]]
        if kind == "kernel" and has(k[side], pats[0]) and \
                not has(x[side], pats[0]):
            take(k[side], pats[0])
        elif kind == "xdp" and has(x[side], pats[0]) and \
                not has(k[side], pats[0]):
            take(x[side], pats[0])
        elif kind == "changed" and has(k[side], pats[0]) and \
                has(x[side], pats[1]):
            take(k[side], pats[0])
            take(x[side], pats[1])
        elif kind == "late" and has(k[side], pats[0]) and \
                not has(x[side], pats[0]):
            take(k[side], pats[0])
            if not any(take(n[side], pats[0]) for n in later[:LATE]):
                problems.append("xdp mode's %s never came: %s" %
                                (side, rule[2]))
    return problems


def cmd_compare(a):
    with open(a.kernel) as f:
        ref = json.load(f)
    with open(a.xdp) as f:
        xdp = {s["step"]: s for s in json.load(f)}
    listed = listed_differences(a.nat_md)
    failed = 0
    for name in sorted(listed ^ set(EXPECTED)):
        print("FAIL %s: %s" % (name, "listed in docs/NAT.md without its "
                               "lines in difftraffic.py's EXPECTED"
                               if name in listed else "in EXPECTED, not "
                               "listed in docs/NAT.md"))
        failed += 1
    # The xdp run's lines, as the rules leave them (late lines taken).
    left = [{side: list(xdp[k["step"]][side]) if k["step"] in xdp else []
             for side in (LAN, WAN)} for k in ref]
    for i, k in enumerate(ref):
        name = k["step"]
        reached = k["far"] in k.get("marked", [])
        if k["expect"] == "arrives" and not reached:
            print("FAIL %s: in kernel mode none of the step's own frames "
                  "reached the %s side (the testbed is broken)" %
                  (name, k["far"]))
            failed += 1
        if k["expect"] == "blocked" and k[LAN]:
            print("FAIL %s: in kernel mode this reached the LAN" % name)
            failed += 1
        x = xdp.get(name)
        if x is None:
            print("FAIL %s: missing from the xdp run" % name)
            failed += 1
            continue
        kl = {side: list(k[side]) for side in (LAN, WAN)}
        problems = apply_rules(EXPECTED.get(name, []), kl, left[i],
                               left[i + 1:])
        if x[LAN] == k[LAN] and x[WAN] == k[WAN]:
            note = " (listed in docs/NAT.md but agrees now: remove it)" \
                if name in listed else ""
            print("same %s%s%s" % (name, " (reaches far side)" if reached else "",
                                   note))
            continue
        if name in listed and kl == left[i] and not problems:
            tag = "listed"
        else:
            tag = "FAIL"
            failed += 1
            if name not in listed:
                problems.append("not listed in docs/NAT.md")
            elif kl != left[i]:
                problems.append("differs beyond its expected lines")
        print("%s %s: kernel and xdp differ%s" % (
            tag, name, "".join("; " + p for p in problems)))
        for side in (LAN, WAN):
            if x[side] == k[side]:
                continue
            for line in k[side]:
                print("    kernel %s: %s" % (side, line))
            for line in x[side]:
                print("    xdp    %s: %s" % (side, line))
            if tag == "FAIL":
                for line in kl[side]:
                    print("    kernel %s, not expected: %s" % (side, line))
                for line in left[i][side]:
                    print("    xdp    %s, not expected: %s" % (side, line))
    print("%d steps, %d unexplained" % (len(ref), failed))
    return 1 if failed else 0


def main():
    import argparse
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    for arg in ("lan_ns", "rtr_ns", "wan_ns", "lan_rtr_mac", "wan_rtr_mac",
                "out"):
        r.add_argument(arg)
    c = sub.add_parser("compare")
    for arg in ("kernel", "xdp", "nat_md"):
        c.add_argument(arg)
    a = p.parse_args()
    return cmd_run(a) if a.cmd == "run" else cmd_compare(a)


if __name__ == "__main__":
    sys.exit(main())
