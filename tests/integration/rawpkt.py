#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Raw Ethernet frames for xnat's integration tests (AF_PACKET, no scapy).

  rawpkt.py send IFACE DST_MAC SRC_IP DST_IP DPORT KIND... [--count N]
                 [--sport N] [--marker STR]
      Send COUNT frames of each KIND out of IFACE (from its own MAC) to
      DST_MAC. Prints one line per kind ("KIND sent N" or "KIND refused:
      WHY") and last "total N", the frames that went out.

  rawpkt.py recv IFACE SECONDS [--marker STR]
      Count the frames IFACE receives (not the ones it sends) for SECONDS;
      prints "ready" once the socket is bound, then one JSON line:
      frames, ipv4, ipv4_icmp, ipv4_other (IPv4 that is not ICMP, or too
      short to tell), marker (frames containing STR).

Kinds: well-formed ones (udp, tcp_syn, tcp_ack) and malformed ones, each
broken in exactly one way, everything else (checksums included) valid:
  ip_trunc      EtherType IPv4 followed by 10 bytes of an IPv4 header
  eth_only      EtherType IPv4 and nothing after the Ethernet header
  tiny          a 10-byte frame (AF_PACKET refuses frames shorter than an
                Ethernet header: reported as refused)
  ihl_lt5       IHL 4 (16-byte header claimed), UDP behind a 20-byte header
  totlen_big    IPv4 total length 200 bytes beyond the frame
  tcp_doff_lt5  TCP data offset 4
  udp_len_big   UDP length 100 bytes beyond the IP payload
Frames that can carry one end with the marker, so a receiver can tell them
from other traffic.
"""
import argparse
import json
import os
import select
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
PACKET_OUTGOING = 4


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def mac_bytes(mac):
    return bytes(int(x, 16) for x in mac.split(":"))


def if_mac(ifname):
    with open("/sys/class/net/%s/address" % ifname) as f:
        return mac_bytes(f.read().strip())


def ipv4(src, dst, proto, payload, ihl=5, tot_len=None, ttl=64):
    """An IPv4 header (20 bytes whatever IHL says) plus PAYLOAD."""
    tot = 20 + len(payload) if tot_len is None else tot_len
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, tot, 0x1234, 0x4000,
                      ttl, proto, 0, socket.inet_aton(src),
                      socket.inet_aton(dst))
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + payload


def pseudo(src, dst, proto, length):
    return socket.inet_aton(src) + socket.inet_aton(dst) + \
        struct.pack("!BBH", 0, proto, length)


def udp(src, dst, sport, dport, payload, length=None):
    ulen = 8 + len(payload) if length is None else length
    h = struct.pack("!HHHH", sport, dport, ulen, 0)
    c = csum(pseudo(src, dst, socket.IPPROTO_UDP, 8 + len(payload)) + h +
             payload) or 0xFFFF
    return struct.pack("!HHHH", sport, dport, ulen, c) + payload


def tcp(src, dst, sport, dport, flags, payload=b"", doff=5, seq=1000,
        ack=0):
    def hdr(c):
        return struct.pack("!HHIIBBHHH", sport, dport, seq, ack, doff << 4,
                           flags, 64240, c, 0)
    seg = hdr(0) + payload
    c = csum(pseudo(src, dst, socket.IPPROTO_TCP, len(seg)) + seg)
    return hdr(c) + payload


TCP_SYN, TCP_ACK = 0x02, 0x10


def frame(kind, a):
    """(frame bytes without the Ethernet header, EtherType) for KIND."""
    m = a.marker.encode()
    src, dst = a.src_ip, a.dst_ip
    P = socket.IPPROTO_UDP
    if kind == "udp":
        return ipv4(src, dst, P, udp(src, dst, a.sport, a.dport, m))
    if kind == "tcp_syn":
        return ipv4(src, dst, socket.IPPROTO_TCP,
                    tcp(src, dst, a.sport, a.dport, TCP_SYN))
    if kind == "tcp_ack":
        return ipv4(src, dst, socket.IPPROTO_TCP,
                    tcp(src, dst, a.sport, a.dport, TCP_ACK, m, ack=4242))
    if kind == "ip_trunc":
        return ipv4(src, dst, P, udp(src, dst, a.sport, a.dport, m))[:10]
    if kind == "eth_only":
        return b""
    if kind == "ihl_lt5":
        return ipv4(src, dst, P, udp(src, dst, a.sport, a.dport, m), ihl=4)
    if kind == "totlen_big":
        l4 = udp(src, dst, a.sport, a.dport, m)
        return ipv4(src, dst, P, l4, tot_len=20 + len(l4) + 200)
    if kind == "tcp_doff_lt5":
        return ipv4(src, dst, socket.IPPROTO_TCP,
                    tcp(src, dst, a.sport, a.dport, TCP_ACK, m, doff=4,
                        ack=4242))
    if kind == "udp_len_big":
        return ipv4(src, dst, P,
                    udp(src, dst, a.sport, a.dport, m, length=8 + len(m) + 100))
    raise SystemExit("unknown kind %s" % kind)


KINDS = ("udp", "tcp_syn", "tcp_ack", "ip_trunc", "eth_only", "tiny",
         "ihl_lt5", "totlen_big", "tcp_doff_lt5", "udp_len_big")


def cmd_send(a):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((a.iface, 0))
    eth = mac_bytes(a.dst_mac) + if_mac(a.iface)
    total = 0
    for kind in a.kinds:
        if kind == "tiny":
            data = eth[:10]
        else:
            data = eth + struct.pack("!H", ETH_P_IP) + frame(kind, a)
        sent = 0
        try:
            for _ in range(a.count):
                s.send(data)
                sent += 1
                time.sleep(0.002)
        except OSError as e:
            print("%s refused: %s (frame of %d bytes)" %
                  (kind, os.strerror(e.errno), len(data)))
        if sent:
            print("%s sent %d (frame of %d bytes)" % (kind, sent, len(data)))
        total += sent
    print("total %d" % total)


def cmd_recv(a):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETH_P_ALL))
    s.bind((a.iface, 0))
    m = a.marker.encode() if a.marker else None
    c = dict(frames=0, ipv4=0, ipv4_icmp=0, ipv4_other=0, marker=0)
    print("ready", flush=True)
    end = time.monotonic() + a.seconds
    while True:
        left = end - time.monotonic()
        if left <= 0:
            break
        if not select.select([s], [], [], left)[0]:
            continue
        data, addr = s.recvfrom(65535)
        if addr[2] == PACKET_OUTGOING:
            continue
        c["frames"] += 1
        if m and m in data:
            c["marker"] += 1
        if len(data) >= 14 and struct.unpack("!H", data[12:14])[0] == ETH_P_IP:
            c["ipv4"] += 1
            if len(data) >= 34 and data[23] == socket.IPPROTO_ICMP:
                c["ipv4_icmp"] += 1
            else:
                c["ipv4_other"] += 1
    print(json.dumps(c), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("send")
    s.add_argument("iface")
    s.add_argument("dst_mac")
    s.add_argument("src_ip")
    s.add_argument("dst_ip")
    s.add_argument("dport", type=int)
    s.add_argument("kinds", nargs="+", choices=KINDS)
    s.add_argument("--sport", type=int, default=40999)
    s.add_argument("--count", type=int, default=1)
    s.add_argument("--marker", default="xnat-rawpkt")
    r = sub.add_parser("recv")
    r.add_argument("iface")
    r.add_argument("seconds", type=float)
    r.add_argument("--marker", default="")
    a = p.parse_args()
    if a.cmd == "send":
        cmd_send(a)
    else:
        cmd_recv(a)


if __name__ == "__main__":
    sys.exit(main())
