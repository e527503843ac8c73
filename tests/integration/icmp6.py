#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""ICMPv6 for xnat's integration tests (raw sockets, no scapy).

  icmp6.py echo DST ID
      Send an echo request with identifier ID to DST (up to 3 tries, 1 s
      each) and print "reply" when the matching echo reply comes back,
      else "noreply".

  icmp6.py ptb DST QSRC QDST ID MTU
      Send DST a "packet too big" (RFC 4443 3.2) announcing MTU, quoting
      an echo request with identifier ID from QSRC to QDST, as a router
      between QSRC and QDST would; prints "sent".

The kernel fills in the ICMPv6 checksum of raw ICMPv6 sockets.
"""
import socket
import struct
import sys
import time


def echo(dst, ident):
    s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
    req = struct.pack("!BBHHH", 128, 0, 0, ident, 1) + b"xnat-icmp6"
    for _ in range(3):
        s.sendto(req, (dst, 0))
        end = time.time() + 1
        while time.time() < end:
            s.settimeout(max(0.05, end - time.time()))
            try:
                data, _ = s.recvfrom(2048)
            except socket.timeout:
                break
            if data[0] == 129 and struct.unpack("!H", data[4:6])[0] == ident:
                print("reply")
                return
    print("noreply")


def ptb(dst, qsrc, qdst, ident, mtu):
    inner = struct.pack("!BBHHH", 128, 0, 0x1234, ident, 1) + b"xnat-icmp6"
    ip6 = struct.pack("!IHBB", 6 << 28, len(inner), 58, 64) + \
        socket.inet_pton(socket.AF_INET6, qsrc) + \
        socket.inet_pton(socket.AF_INET6, qdst)
    msg = struct.pack("!BBHI", 2, 0, 0, mtu) + ip6 + inner
    s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
    s.sendto(msg, (dst, 0))
    print("sent")


def main():
    if sys.argv[1] == "echo":
        echo(sys.argv[2], int(sys.argv[3], 0))
    else:
        ptb(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5], 0),
            int(sys.argv[6]))


if __name__ == "__main__":
    main()
