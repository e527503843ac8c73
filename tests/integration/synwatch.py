#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The MSS option of the TCP SYNs a host receives (AF_PACKET, no tcpdump).

  synwatch.py IFACE PORT SECONDS [KIND...]

Watches the frames IFACE receives (not the ones it sends) for SECONDS;
prints "ready" once the socket is bound, then one line for each SYN (to
PORT) or SYN-ACK (from PORT), IPv4 or IPv6:

  v4 syn mss 1360 csum ok

("mss none" without the option; csum: the TCP checksum verified from
scratch over the pseudo-header, ok or bad). Ends early once it has seen
each KIND given (e.g. "v4 syn", "v6 synack").
"""
import socket
import struct
import sys
import time

from rawpkt import csum

ETH_P_ALL = 0x0003


def csum_ok(data):
    """A segment with its checksum in place sums to all ones."""
    return csum(data) == 0


def mss_of(l4):
    """The MSS option as the endpoint would read it, or None."""
    doff = (l4[12] >> 4) * 4
    opts, i = l4[20:doff], 0
    while i < len(opts):
        kind = opts[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if i + 1 >= len(opts) or opts[i + 1] < 2 or i + opts[i + 1] > len(opts):
            break
        if kind == 2 and opts[i + 1] == 4:
            return struct.unpack("!H", opts[i + 2:i + 4])[0]
        i += opts[i + 1]
    return None


def tcp_of(frame):
    """(family, TCP segment, pseudo-header) of an IPv4 or IPv6 frame."""
    etype = struct.unpack("!H", frame[12:14])[0]
    if etype == 0x0800 and frame[23] == 6:
        ihl = (frame[14] & 15) * 4
        tot = struct.unpack("!H", frame[16:18])[0]
        l4 = frame[14 + ihl:14 + tot]
        return "v4", l4, frame[26:34] + struct.pack("!BBH", 0, 6, len(l4))
    if etype == 0x86DD and frame[20] == 6:
        plen = struct.unpack("!H", frame[18:20])[0]
        l4 = frame[54:54 + plen]
        return "v6", l4, frame[22:54] + struct.pack("!I3xB", len(l4), 6)
    return None, None, None


def main():
    ifname, port, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    want = set(sys.argv[4:])
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETH_P_ALL))
    s.bind((ifname, 0))
    print("ready", flush=True)
    end = time.time() + secs
    while time.time() < end and want:
        s.settimeout(max(0.05, end - time.time()))
        try:
            frame, addr = s.recvfrom(65535)
        except socket.timeout:
            break
        if addr[2] == socket.PACKET_OUTGOING:
            continue
        fam, l4, pseudo = tcp_of(frame)
        if not fam or len(l4) < 20 or not l4[13] & 0x02:
            continue
        sport, dport = struct.unpack("!HH", l4[:4])
        kind = "synack" if l4[13] & 0x10 else "syn"
        if (kind == "syn" and dport != port) or \
           (kind == "synack" and sport != port):
            continue
        mss = mss_of(l4)
        print("%s %s mss %s csum %s" % (
            fam, kind, "none" if mss is None else mss,
            "ok" if csum_ok(pseudo + l4) else "bad"), flush=True)
        want.discard("%s %s" % (fam, kind))


if __name__ == "__main__":
    main()
