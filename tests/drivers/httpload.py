#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Load for --listen's tests, loopback only, each run bounded by SECONDS.

httpload.py flood HOST PORT SOURCE CLIENTS SECONDS
    CLIENTS connections from address SOURCE that send nothing; each one the
    server drops is opened again at once. Prints
    "clients N reconnects R".
httpload.py scrape URL SECONDS INTERVAL [CAFILE USER:PASSWORD]
    A GET every INTERVAL seconds, each allowed $SCRAPE_TIMEOUT seconds (2 by
    default); one succeeds with a 200 and a body. Prints "scrapes N ok K max_ms M p99_ms P".
"""
import base64
import http.client
import os
import resource
import selectors
import socket
import ssl
import sys
import time
import urllib.parse


def flood(host, port, source, clients, secs):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < clients + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, clients + 64), hard))
    sel = selectors.DefaultSelector()

    def connect():
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.bind((source, 0))
        s.connect_ex((host, port))
        sel.register(s, selectors.EVENT_READ)

    for _ in range(clients):
        connect()
    reconnects = 0
    end = time.monotonic() + secs
    while time.monotonic() < end:
        for key, _ in sel.select(timeout=0.2):
            s = key.fileobj
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if data:
                continue
            sel.unregister(s)
            s.close()
            connect()
            reconnects += 1
    print(f"clients {clients} reconnects {reconnects}")


def scrape_once(url, ctx, auth):
    u = urllib.parse.urlsplit(url)
    limit = float(os.environ.get("SCRAPE_TIMEOUT", "2"))
    if u.scheme == "https":
        c = http.client.HTTPSConnection(u.hostname, u.port, timeout=limit, context=ctx)
    else:
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=limit)
    headers = {"Authorization": "Basic " + auth} if auth else {}
    try:
        c.request("GET", u.path, headers=headers)
        r = c.getresponse()
        return r.status == 200 and len(r.read()) > 0
    except (OSError, http.client.HTTPException) as e:
        print(f"scrape failed: {e!r}", file=sys.stderr)
        return False
    finally:
        c.close()


def scrape(url, secs, interval, cafile=None, user=None):
    ctx = ssl.create_default_context(cafile=cafile) if cafile else None
    auth = base64.b64encode(user.encode()).decode() if user else None
    lat, ok = [], 0
    end = time.monotonic() + secs
    while time.monotonic() < end:
        t = time.monotonic()
        ok += scrape_once(url, ctx, auth)
        lat.append(time.monotonic() - t)
        time.sleep(max(0.0, interval - (time.monotonic() - t)))
    lat.sort()
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] if lat else 0
    print(f"scrapes {len(lat)} ok {ok} max_ms {int(lat[-1] * 1000) if lat else 0} "
          f"p99_ms {int(p99 * 1000)}")


def main(argv):
    if len(argv) == 6 and argv[0] == "flood":
        flood(argv[1], int(argv[2]), argv[3], int(argv[4]), float(argv[5]))
    elif len(argv) in (4, 6) and argv[0] == "scrape":
        scrape(argv[1], float(argv[2]), float(argv[3]), *argv[4:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
