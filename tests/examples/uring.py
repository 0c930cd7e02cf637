#!/usr/bin/env python3
"""sotls-uring-server's own behaviour against Python's ssl (OpenSSL), on
both of its paths (--ktls off: the engine to the end; --ktls auto: handed
to the socket after the handshake, in userspace on a host without kTLS):
echoes of every size, files over HTTP/1.1 keep-alive (several requests on
one connection, pipelined, large bodies byte for byte, 404 and 400), the
drain on SIGTERM (an idle client gets close_notify, a download under way
completes, the statistics and status of sotls-event-echo-server) and SIGHUP.

    uring.py CASE --server BUILD/examples/sotls-uring-server --workdir DIR
"""
import argparse
import os
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

A = None


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


class Server:
    def __init__(self, *args):
        d = tempfile.mkdtemp(dir=A.workdir)
        self.log_path = os.path.join(d, 'server.log')
        pf = os.path.join(d, 'port')
        self.log = open(self.log_path, 'w')
        self.p = subprocess.Popen([A.server, '--port', '0', '--port-file', pf, *args],
                                  stdout=self.log, stderr=subprocess.STDOUT)
        end = time.monotonic() + 10
        while not (os.path.exists(pf) and os.path.getsize(pf) > 0):
            check(time.monotonic() < end and self.p.poll() is None,
                  'the server did not start: ' + self.text())
            time.sleep(0.05)
        self.port = int(open(pf).read())

    def text(self):
        self.log.flush()
        return open(self.log_path).read()

    def stop(self, sig=signal.SIGTERM):
        """The signal, then the exit status and the output."""
        self.p.send_signal(sig)
        return self.p.wait(20), self.text()


def tls(port):
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    c.check_hostname = False
    c.verify_mode = ssl.CERT_NONE
    c.maximum_version = ssl.TLSVersion.TLSv1_2
    c.set_alpn_protocols(['http/1.1'])
    raw = socket.create_connection(('127.0.0.1', port), timeout=20)
    return c.wrap_socket(raw, server_hostname='localhost')


def recv_exact(s, n):
    out = bytearray()
    while len(out) < n:
        d = s.recv(min(1 << 20, n - len(out)))
        check(d, f'the stream ended after {len(out)} of {n} bytes')
        out += d
    return bytes(out)


def response_head(s):
    """A response head, read a byte at a time (nothing of what follows)."""
    head = b''
    while b'\r\n\r\n' not in head:
        d = s.recv(1)
        check(d, 'the stream ended in a response head')
        head += d
    return head


def response(s):
    """One HTTP response: (status line, headers, body)."""
    lines = response_head(s).decode().split('\r\n')
    hdrs = {k.lower(): v.strip() for k, v in (x.split(':', 1) for x in lines[1:] if ':' in x)}
    return lines[0], hdrs, recv_exact(s, int(hdrs.get('content-length', '0')))


def stats(out):
    check('still open at exit' in out and 'turns cut by --event-budget' in out,
          'no statistics: ' + out)


def case_echo(ktls):
    srv = Server('--ktls', ktls)
    socks = [tls(srv.port) for _ in range(8)]
    for i, s in enumerate(socks):
        for n in (1, 100, 16384, 16385, 200000):
            msg = bytes((i + j) & 0xff for j in range(n))
            s.sendall(msg)
            check(recv_exact(s, n) == msg, f'echo of {n} bytes differs')
    for s in socks:
        s.unwrap()
        s.close()
    time.sleep(0.3)
    status, out = srv.stop()
    stats(out)
    check(status == 0 and 'served 8 connections' in out and '8 closed cleanly' in out, out)
    print(f'ok: echo --ktls {ktls}: 8 clients, 1 to 200000 bytes, closed cleanly')


def make_root():
    root = tempfile.mkdtemp(dir=A.workdir)
    with open(os.path.join(root, 'small.txt'), 'w') as f:
        f.write('small\n')
    big = os.urandom(3 << 20) + b'tail'
    with open(os.path.join(root, 'big.bin'), 'wb') as f:
        f.write(big)
    return root, big


def case_files(ktls):
    root, big = make_root()
    srv = Server('--root', root, '--ktls', ktls)
    s = tls(srv.port)
    check(s.selected_alpn_protocol() == 'http/1.1', 'no ALPN http/1.1')
    # Pipelined: two requests in one write, answered in order.
    s.sendall(b'GET /small.txt HTTP/1.1\r\nHost: x\r\n\r\n'
              b'HEAD /big.bin HTTP/1.1\r\nHost: x\r\n\r\n')
    st, h, body = response(s)
    check(st == 'HTTP/1.1 200 OK' and body == b'small\n', f'{st} {body!r}')
    line = response_head(s)  # HEAD: no body follows
    check(b'Content-Length: %d' % len(big) in line and line.startswith(b'HTTP/1.1 200'),
          f'HEAD: {line!r}')
    for _ in range(2):
        s.sendall(b'GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n')
        st, h, body = response(s)
        check(st == 'HTTP/1.1 200 OK' and body == big, 'the big body differs')
    s.sendall(b'GET /nope HTTP/1.1\r\nHost: x\r\n\r\n')
    check(response(s)[0] == 'HTTP/1.1 404 Not Found', '404')
    s.sendall(b'GET /../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n')
    check(response(s)[0] == 'HTTP/1.1 400 Bad Request', '400 outside the root')
    check(s.recv(1) == b'', 'not closed after the 400')
    status, out = srv.stop()
    stats(out)
    check('GET /big.bin -> 200, %d bytes' % len(big) in out, out)
    print(f'ok: files --ktls {ktls}: pipelined, HEAD, two 3 MiB bodies on one connection, '
          '404, 400')


def case_files_contended():
    """More clients at once than a thread has file buffers (16; --threads 1,
    the engine): 100 sotls-loadgen clients asking for the 3 MiB body over
    and over for 3 s, then all hanging up, many while they wait for a
    buffer. Every body arrives whole (loadgen checks each), a newcomer is
    still served, and SIGTERM stops the server at once (a connection queued
    twice for a buffer once made the queue a cycle: 100% CPU, no exit)."""
    root, big = make_root()
    srv = Server('--root', root, '--ktls', 'off', '--threads', '1', '--quiet',
                 '--allow-errors')
    loadgen = os.path.join(os.path.dirname(A.server), 'sotls-loadgen')
    r = subprocess.run([loadgen, '--port', str(srv.port), '--conns', '100', '--seconds', '3',
                        '--http', '/big.bin'], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=60)
    out = r.stdout.decode(errors='replace')
    print(out)
    check(r.returncode == 0 and 'failed=0' in out, 'loadgen: ' + out)
    s = tls(srv.port)
    s.sendall(b'GET /small.txt HTTP/1.1\r\nHost: x\r\n\r\n')
    check(response(s)[2] == b'small\n', 'a newcomer was not served')
    s.close()
    t0 = time.monotonic()
    try:
        status, out = srv.stop()
    except subprocess.TimeoutExpired:
        srv.p.kill()
        raise AssertionError('the server did not stop at SIGTERM')
    stats(out)
    check(time.monotonic() - t0 < 5, 'SIGTERM took %.1f s' % (time.monotonic() - t0))
    print('ok: 100 clients for 16 file buffers, every body whole; a newcomer served, '
          'SIGTERM at once')


def case_drain(ktls):
    root, big = make_root()
    srv = Server('--root', root, '--ktls', ktls)
    idle = tls(srv.port)
    idle.sendall(b'GET /small.txt HTTP/1.1\r\nHost: x\r\n\r\n')
    check(response(idle)[2] == b'small\n', 'not served')
    dl = tls(srv.port)
    dl.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    dl.sendall(b'GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n')
    got = {}

    def slow_reader():
        time.sleep(0.5)  # the body is under way when SIGTERM comes
        got['r'] = response(dl)
        got['end'] = dl.recv(1)
    t = threading.Thread(target=slow_reader)
    t.start()
    time.sleep(0.2)
    srv.p.send_signal(signal.SIGTERM)
    check(idle.recv(1) == b'', 'the idle client got no close_notify')
    t.join(20)
    check(got.get('r', (None, None, None))[2] == big, 'the download under way was cut')
    check(got.get('end') == b'', 'no close_notify after the last response')
    idle.close()
    dl.close()
    status = srv.p.wait(20)
    out = srv.text()
    stats(out)
    check(status == 0 and '0 still open at exit' in out, f'status {status}: {out}')
    print(f'ok: drain --ktls {ktls}: close_notify to the idle client, the download finished')


def case_reload():
    srv = Server('--ktls', 'off')
    srv.p.send_signal(signal.SIGHUP)
    end = time.monotonic() + 10
    while 'SIGHUP: reloaded' not in srv.text():
        check(time.monotonic() < end, 'no reload line: ' + srv.text())
        time.sleep(0.05)
    s = tls(srv.port)
    s.sendall(b'after reload')
    check(recv_exact(s, 12) == b'after reload', 'no echo after the reload')
    s.unwrap()
    s.close()
    status, out = srv.stop(signal.SIGINT)
    check(status == 0, out)
    print('ok: SIGHUP reloads, new connections served, SIGINT stops')


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument('case')
    ap.add_argument('--server', required=True)
    ap.add_argument('--workdir', required=True)
    A = ap.parse_args()
    os.makedirs(A.workdir, exist_ok=True)
    cases = {'echo-engine': lambda: case_echo('off'), 'echo-attached': lambda: case_echo('auto'),
             'files-engine': lambda: case_files('off'),
             'files-attached': lambda: case_files('auto'),
             'drain-engine': lambda: case_drain('off'),
             'drain-attached': lambda: case_drain('auto'), 'reload': case_reload,
             'files-contended': case_files_contended}
    if A.case not in cases:
        print(f'unknown case {A.case}', file=sys.stderr)
        return 2
    cases[A.case]()
    print(f'{A.case}: all ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
