#!/usr/bin/env python3
"""The example servers' resource limits against real peers: Python's ssl
(OpenSSL), curl, and raw sockets for peers that trickle or stall. Each limit
gets a short value so that a case takes seconds; each case checks what the
peer sees (no ServerHello at the cap, a close at the deadline, not before,
not never) and what the server logs.

    limits.py CASE --bin-dir BUILD/examples --workdir DIR

A CASE named uring-X runs event-X, and uring-https-X runs https-X, with
sotls-uring-server in place of the event or HTTPS server.
"""
import argparse
import atexit
import os
import resource
import select
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

A = None
SERVERS = []
# The servers the https-* and event-* cases start. A case named uring-NAME
# runs event-NAME (uring-https-NAME: https-NAME) against sotls-uring-server,
# which takes those servers' flags and prints their lines.
HTTPS_SERVER = 'sotls-https-server'
EVENT_SERVER = 'sotls-event-echo-server'


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


class Server:
    """An example server on a free port, its output in a log file."""

    def __init__(self, name, *args, root=None, preexec=None):
        self.dir = tempfile.mkdtemp(dir=A.workdir)
        self.log_path = os.path.join(self.dir, 'server.log')
        pf = os.path.join(self.dir, 'port')
        argv = [os.path.join(A.bin_dir, name), '--port', '0', '--port-file', pf]
        if root is not None:
            argv += ['--root', root]
        self.log = open(self.log_path, 'w')
        self.p = subprocess.Popen(argv + list(args), stdout=self.log, stderr=subprocess.STDOUT,
                                  preexec_fn=preexec)
        for _ in range(100):
            if os.path.exists(pf) and os.path.getsize(pf) > 0:
                break
            time.sleep(0.05)
        check(os.path.exists(pf), f'{name} did not start: {self.text()}')
        self.port = int(open(pf).read())
        SERVERS.append(self)

    def text(self):
        self.log.flush()
        return open(self.log_path).read()

    def wait_log(self, needle, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if needle in self.text():
                return True
            time.sleep(0.05)
        return False

    def threads(self):
        for line in open(f'/proc/{self.p.pid}/status'):
            if line.startswith('Threads:'):
                return int(line.split()[1])
        return -1

    def stop(self):
        """SIGTERM; returns the output."""
        if self.p.poll() is None:
            self.p.terminate()
            self.p.wait(10)
        return self.text()


def ctx():
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    c.check_hostname = False
    c.verify_mode = ssl.CERT_NONE
    c.maximum_version = ssl.TLSVersion.TLSv1_2
    return c


def tls(port, timeout=5):
    raw = socket.create_connection(('127.0.0.1', port), timeout=timeout)
    return ctx().wrap_socket(raw, server_hostname='localhost')


def no_server_hello(port, wait):
    """A TCP connection that gets no byte back within wait seconds (it waits in
    the listen backlog: connected, not accepted, not closed)."""
    s = socket.create_connection(('127.0.0.1', port), timeout=wait)
    c = ctx()
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = c.wrap_bio(inc, out, server_hostname='localhost')
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    s.sendall(out.read())
    r, _, _ = select.select([s], [], [], wait)
    check(not r, 'a client past the cap got an answer (or was closed) instead of waiting')
    return s, obj, inc, out


def finish_handshake(s, obj, inc, out, timeout):
    """Completes a handshake begun by no_server_hello."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            obj.do_handshake()
            s.sendall(out.read())
            return True
        except ssl.SSLWantReadError:
            s.sendall(out.read())
            r, _, _ = select.select([s], [], [], max(0.0, end - time.monotonic()))
            if r:
                data = s.recv(65536)
                check(data, 'closed while waiting at the cap')
                inc.write(data)
    return False


def time_to_close(s, limit, trickle=b'', interval=0.0):
    """Seconds until the server closes s (EOF or reset), sending one byte of
    trickle every interval meanwhile; None if still open after limit."""
    t0 = time.monotonic()
    sent = 0
    while time.monotonic() - t0 < limit:
        if sent < len(trickle) and time.monotonic() - t0 >= sent * interval:
            try:
                s.send(trickle[sent:sent + 1])
            except OSError:
                return time.monotonic() - t0
            sent += 1
        r, _, _ = select.select([s], [], [], 0.02)
        if r:
            try:
                data = s.recv(65536)
            except (ssl.SSLError, OSError):
                return time.monotonic() - t0
            if not data:
                return time.monotonic() - t0
    return None


def send_until_dropped(s, limit):
    """Sends and never reads, so the echo backs up until the server's sends
    stall; returns the bytes sent once the server has dropped s (our send
    fails), None if it still takes them after limit seconds."""
    s.setblocking(False)
    t0 = time.monotonic()
    sent = 0
    while time.monotonic() - t0 < limit:
        try:
            sent += s.send(b's' * 65536)
        except ssl.SSLWantWriteError:
            time.sleep(0.01)
        except (ssl.SSLError, OSError):
            return sent
    return None


def dropped_at(t, deadline, what):
    check(t is not None, f'{what}: still open long past the {deadline} s deadline')
    check(deadline - 0.1 <= t <= deadline + 2.0, f'{what}: closed after {t:.2f} s, deadline {deadline} s')
    print(f'ok: {what}: closed after {t:.2f} s (deadline {deadline} s)')


def http_get(s, path):
    s.sendall(f'GET {path} HTTP/1.1\r\nHost: x\r\n\r\n'.encode())
    head = b''
    while b'\r\n\r\n' not in head:
        d = s.recv(65536)
        check(d, f'GET {path}: closed before the response head')
        head += d
    hdr, body = head.split(b'\r\n\r\n', 1)
    length = int([l for l in hdr.split(b'\r\n') if l.lower().startswith(b'content-length:')][0].split(b':')[1])
    while len(body) < length:
        d = s.recv(65536)
        check(d, f'GET {path}: body cut short')
        body += d
    return hdr.split(b'\r\n')[0].decode(), body


def make_root():
    root = tempfile.mkdtemp(dir=A.workdir)
    with open(os.path.join(root, 'f1'), 'wb') as f:
        f.write(b'x' * 1000)
    return root


def curl(port, path, timeout=10):
    r = subprocess.run(['curl', '-sS', '-k', '--tlsv1.2', '--max-time', str(timeout), '-o', '/dev/null',
                        '-w', '%{http_code}', f'https://127.0.0.1:{port}{path}'],
                       capture_output=True, text=True)
    return r.stdout.strip()


TRICKLE_HELLO = b'\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03' + b'\x5a' * 40

# ---- sotls-https-server ---------------------------------------------------------


def case_https_cap():
    srv = Server(HTTPS_SERVER, '--max-conns', '2', root=make_root())
    a, b = tls(srv.port), tls(srv.port)
    check(http_get(a, '/f1')[0].startswith('HTTP/1.1 200'), 'first client not served')
    base = srv.threads()
    pending = no_server_hello(srv.port, 1.0)
    check(srv.threads() == base, f'a thread was started past the cap ({srv.threads()} > {base})')
    print(f'ok: a third client waits unanswered at --max-conns 2 ({base} threads)')
    a.close()
    check(finish_handshake(*pending, 5), 'the waiting client was not served once a slot was free')
    print('ok: the waiting client is served once a slot frees')
    b.close()
    srv.stop()


def case_https_handshake_timeout():
    srv = Server(HTTPS_SERVER, '--handshake-timeout', '1', root=make_root())
    s = socket.create_connection(('127.0.0.1', srv.port))
    dropped_at(time_to_close(s, 6, TRICKLE_HELLO, 0.2), 1.0,
               'a ClientHello trickled a byte every 0.2 s')
    check(curl(srv.port, '/f1') == '200', 'curl not served after the drop')
    check(srv.wait_log('--handshake-timeout', 2), 'no log line for the handshake deadline')
    srv.stop()


def case_https_idle_timeout():
    srv = Server(HTTPS_SERVER, '--idle-timeout', '1', root=make_root())
    s = tls(srv.port)
    check(http_get(s, '/f1')[0].startswith('HTTP/1.1 200'), 'not served')
    dropped_at(time_to_close(s, 6), 1.0, 'a silent kept-alive client')
    check(srv.wait_log('idle past --idle-timeout', 2), 'no log line for the idle drop')
    srv.stop()


def case_https_slowloris():
    """A request head a byte every 0.3 s: each byte comes well within any
    per-read timeout, but the whole head must be in within 1.5 s."""
    srv = Server(HTTPS_SERVER, '--header-timeout', '1.5', '--idle-timeout', '10',
                 root=make_root())
    peers = [tls(srv.port) for _ in range(20)]
    req = b'GET /f1 HTTP/1.1\r\nHost: x\r\nX-a: ' + b'a' * 100
    results = [None] * len(peers)

    def run(i):
        results[i] = time_to_close(peers[i], 8, req, 0.3)
    ts = [threading.Thread(target=run, args=(i,)) for i in range(len(peers))]
    for t in ts:
        t.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    check(curl(srv.port, '/f1') == '200', 'an honest client was not served among slowloris peers')
    took = time.monotonic() - t0
    for t in ts:
        t.join()
    check(took < 1.0, f'the honest client took {took:.2f} s')
    for i, r in enumerate(results):
        dropped_at(r, 1.5, f'slowloris peer {i}')
    check(srv.wait_log('request head not complete within --header-timeout', 2), 'no log line')
    print(f'ok: honest curl served in {took * 1e3:.0f} ms among 20 slowloris peers')
    srv.stop()


def case_https_send_timeout():
    """A 64 MiB body the client never reads: the thread gives up after
    --send-timeout without progress, and the connection ends."""
    root = make_root()
    with open(os.path.join(root, 'big'), 'wb') as f:
        f.truncate(64 << 20)
    srv = Server(HTTPS_SERVER, '--send-timeout', '1', '--max-conns', '1', root=root)
    s = tls(srv.port, timeout=30)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    s.sendall(b'GET /big HTTP/1.1\r\nHost: x\r\n\r\n')
    t0 = time.monotonic()
    check(srv.wait_log('timed out', 10), 'the server still waits for a client that never reads')
    print(f'ok: the send gave up {time.monotonic() - t0:.2f} s after the request (--send-timeout 1)')
    got = 0
    try:
        while True:
            d = s.recv(1 << 20)
            if not d:
                break
            got += len(d)
    except (ssl.SSLError, OSError):
        pass
    check(got < 64 << 20, 'the whole body arrived: nothing was cut')
    print(f'ok: connection ended after {got} bytes of 64 MiB')
    # --max-conns 1: the slot (and its thread) came back.
    check(curl(srv.port, '/f1') == '200', 'not served after the drop')
    srv.stop()


def case_https_fifo():
    root = make_root()
    os.mkfifo(os.path.join(root, 'fifo'))
    dev = os.path.join(root, 'null')
    try:
        os.mknod(dev, 0o666 | 0o020000, os.makedev(1, 3))
    except OSError:
        dev = None
    srv = Server(HTTPS_SERVER, '--max-conns', '1', root=root)
    for path in ['/fifo'] + (['/null'] if dev else []):
        t0 = time.monotonic()
        code = curl(srv.port, path, timeout=5)
        check(code == '404', f'GET {path}: {code}, want 404')
        print(f'ok: GET {path} -> 404 in {(time.monotonic() - t0) * 1e3:.0f} ms')
    # With one slot, a thread stuck on the FIFO would leave none for this.
    check(curl(srv.port, '/f1', timeout=5) == '200', 'not served after the FIFO')
    check(srv.wait_log('(not a regular file)', 2), 'no log line')
    srv.stop()

# ---- sotls-echo-server ----------------------------------------------------------


def echo_once(s, n=1000):
    s.sendall(b'e' * n)
    got = b''
    while len(got) < n:
        d = s.recv(65536)
        check(d, 'echo cut short')
        got += d
    check(got == b'e' * n, 'echo differs')


def case_echo_limits():
    srv = Server('sotls-echo-server', '--max-conns', '1', '--handshake-timeout', '1',
                 '--idle-timeout', '1.5')
    a = tls(srv.port)
    echo_once(a)
    t_echo = time.monotonic()
    pending = no_server_hello(srv.port, 0.8)
    print('ok: a second client waits unanswered at --max-conns 1')
    t = time_to_close(a, 6)
    # The idle time runs from the echo, before the wait above.
    dropped_at(None if t is None else time.monotonic() - t_echo, 1.5, 'a silent echo client')
    check(finish_handshake(*pending, 5), 'the waiting client was not served once a slot was free')
    print('ok: the waiting client is served once the slot frees')
    pending[0].close()
    s = socket.create_connection(('127.0.0.1', srv.port))
    dropped_at(time_to_close(s, 6, TRICKLE_HELLO, 0.2), 1.0, 'a trickled ClientHello')
    out = srv.stop()
    check('idle past --idle-timeout' in out and '(--handshake-timeout)' in out, f'log: {out}')


def case_echo_send_timeout():
    srv = Server('sotls-echo-server', '--send-timeout', '1')
    s = tls(srv.port)
    t0 = time.monotonic()
    sent = send_until_dropped(s, 15)
    check(sent is not None, 'a client that never reads was kept')
    check(srv.wait_log('(--send-timeout)', 3), f'no send timeout after {sent} bytes: {srv.text()}')
    print(f'ok: a client that never reads was dropped ({sent} bytes sent to it, {time.monotonic() - t0:.2f} s)')
    srv.stop()

# ---- sotls-event-echo-server ----------------------------------------------------


def stats(out, key):
    """The number before key in the server's exit statistics."""
    words = out.replace(',', ' ').replace(';', ' ').split()
    i = ' '.join(words).find(key)
    check(i >= 0, f'no "{key}" in: {out}')
    return int(' '.join(words)[:i].split()[-1])


def case_event_cap():
    srv = Server(EVENT_SERVER, '--max-conns', '2')
    a, b = tls(srv.port), tls(srv.port)
    echo_once(a)
    pending = no_server_hello(srv.port, 1.0)
    print('ok: a third client waits unanswered at --max-conns 2')
    a.close()
    check(finish_handshake(*pending, 5), 'the waiting client was not served once a slot was free')
    print('ok: the waiting client is served once a slot frees')
    b.close()
    pending[0].close()
    out = srv.stop()
    check(stats(out, 'times at --max-conns') >= 1, 'accept was never paused')


def case_event_timeouts():
    srv = Server(EVENT_SERVER, '--handshake-timeout', '1', '--idle-timeout', '1.5',
                 '--send-timeout', '1', '--allow-errors')
    s = socket.create_connection(('127.0.0.1', srv.port))
    dropped_at(time_to_close(s, 6, TRICKLE_HELLO, 0.2), 1.0, 'a trickled ClientHello')
    a = tls(srv.port)
    echo_once(a)
    dropped_at(time_to_close(a, 6), 1.5, 'a silent echo client')
    # A client that sends and never reads.
    w = tls(srv.port)
    w.setblocking(False)
    t0 = time.monotonic()
    check(send_until_dropped(w, 15) is not None, 'a client that never reads was kept')
    out = srv.stop()
    check(stats(out, 'dropped at --handshake-timeout') == 1, out)
    check(stats(out, 'at --idle/--send-timeout') == 2, out)
    print('ok: a client that never reads was dropped after --send-timeout')


def case_event_budget():
    """A flooding connection is cut into turns of --event-budget bytes, and
    another client is served meanwhile."""
    # Slow under ASan on a loaded machine: the default 30 s deadlines must
    # not end the flood (they are tested in their own cases).
    srv = Server(EVENT_SERVER, '--event-budget', '16384', '--send-timeout', '600',
                 '--idle-timeout', '600')
    f = tls(srv.port)
    flowing = threading.Event()  # the echo has started to come back
    stop = threading.Event()     # the other client is served: the flood may end
    done = threading.Event()

    def flood():
        """Writes the flood and reads its echo from one thread (an SSL object
        is not to be used by two threads at once) until told to stop: a
        fixed size could all be echoed before the other client connects on
        a fast machine, and then nothing would be shown."""
        f.setblocking(False)
        chunk = b'f' * 65536
        got = 0
        deadline = time.monotonic() + 100
        while not stop.is_set() and time.monotonic() < deadline:
            if f.pending() == 0:
                select.select([f], [f], [], 1)
            try:
                f.send(chunk)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                pass
            try:
                d = f.recv(1 << 20)
                if not d:
                    break
                got += len(d)
                if got >= 1 << 20:
                    flowing.set()
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                pass
        done.set()
    ft = threading.Thread(target=flood)
    ft.start()
    check(flowing.wait(60), 'the flood\'s echo never came back')
    t0 = time.monotonic()
    h = tls(srv.port)
    echo_once(h)
    took = time.monotonic() - t0
    flooding = not done.is_set()
    stop.set()
    h.close()
    ft.join()
    f.close()
    out = srv.stop()
    check(flooding, 'the flood ended before the other client was served: nothing shown')
    print(f'ok: another client served in {took * 1e3:.0f} ms during a flood')
    check(stats(out, 'turns cut by --event-budget') > 0, out)
    print(f'ok: {stats(out, "turns cut by --event-budget")} turns cut by the budget')


def limits_of(pid):
    for line in open(f'/proc/{pid}/limits'):
        if line.startswith('Max open files'):
            return int(line.split()[3]), int(line.split()[4])
    return None


def case_event_nofile():
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    check(hard >= 200, f'hard RLIMIT_NOFILE {hard}: too low for this test')
    srv = Server(EVENT_SERVER, '--max-conns', '100',
                 preexec=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard)))
    soft, h = limits_of(srv.p.pid)
    check(soft == 132 and h == hard, f'soft {soft} hard {h}: want 132 (100 + 32 reserve), {hard}')
    print(f'ok: --max-conns 100 raised the soft limit from 64 to {soft}, not to the hard {hard}')
    srv.stop()
    srv = Server(EVENT_SERVER, '--max-conns', '100',
                 preexec=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (64, 80)))
    check(srv.wait_log('--max-conns lowered from 100 to 48', 2), srv.text())
    socks = [socket.create_connection(('127.0.0.1', srv.port)) for _ in range(60)]
    time.sleep(0.5)
    out = srv.stop()
    for s in socks:
        s.close()
    check('peak 48 at once' in out, out)
    print('ok: under a hard limit of 80 the cap came down to 48, and held')


def main():
    global A, HTTPS_SERVER, EVENT_SERVER
    ap = argparse.ArgumentParser()
    ap.add_argument('case')
    ap.add_argument('--bin-dir', required=True)
    ap.add_argument('--workdir', required=True)
    A = ap.parse_args()
    atexit.register(lambda: [s.p.kill() for s in SERVERS if s.p.poll() is None])
    os.makedirs(A.workdir, exist_ok=True)
    name = A.case
    if name.startswith('uring-'):
        HTTPS_SERVER = EVENT_SERVER = 'sotls-uring-server'
        name = name[len('uring-'):]
        if not name.startswith('https-'):
            name = 'event-' + name
    fn = globals().get('case_' + name.replace('-', '_'))
    if fn is None:
        print(f'unknown case {A.case}', file=sys.stderr)
        return 2
    fn()
    print(f'{A.case}: all ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
