#!/usr/bin/env python3
"""sotls-uring-server (io_uring, the engine) against real peers: openssl
s_client for every suite, Python's ssl echoing bulk data on several
connections at once (so the rings' threads and the provided buffers are all
in use), curl fetching files over one kept-alive connection, and SIGTERM
while a body is on its way. One test per invocation:

    uring.py NAME --uring-server B --openssl B --curl B --workdir DIR
"""
import argparse
import hashlib
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop import SUITES, Env, check, run_one, s_client_converse, ssl_echo  # noqa: E402

TIMEOUT = 60
MIB = 1 << 20


class Uring(Env):
    def server(self, *extra, keytype='ec', root=None):
        """sotls-uring-server on a leaf of keytype (and files under root);
        returns (process, port)."""
        cert, key, _ = self.certs(keytype)
        pf = self.path('port-%d' % len(self.procs))
        argv = [self.a.uring_server, '--port', '0', '--port-file', pf, '--cert', cert,
                '--key', key, *extra]
        if root is not None:
            argv += ['--root', root]
        srv = self.spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        return srv, self.wait_port_file(pf, srv)

    def client_ctx(self, cipher=None):
        c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        c.maximum_version = ssl.TLSVersion.TLSv1_2
        c.load_verify_locations(self.certs('ec')[2])
        if cipher:
            c.set_ciphers(cipher)
        return c


def stop(srv, sig=signal.SIGTERM):
    """Signals the server, waits for it; (exit status, what it printed)."""
    srv.send_signal(sig)
    out, _ = srv.communicate(timeout=TIMEOUT)
    text = out.decode(errors='replace')
    print('--- server ---\n' + text)
    return srv.returncode, text


def suites_s_client(env):
    """Each of the eight suites, negotiated by openssl s_client with the
    server's ECDSA or RSA leaf, a line echoed back."""
    for keytype in ('ec', 'rsa'):
        srv, port = env.server(keytype=keytype)
        for name, (_, kt) in SUITES.items():
            if kt != keytype:
                continue
            token = ('uring %s %s\n' % (name, os.urandom(6).hex())).encode()
            text, echoed = s_client_converse(
                env, [env.a.openssl, 's_client', '-connect', '127.0.0.1:%d' % port, '-tls1_2',
                      '-cipher', name, '-CAfile', env.certs(kt)[2], '-verify_return_error'],
                token)
            check(echoed and 'Cipher is ' + name in text,
                  '%s: no echo: %s' % (name, text))
            print('ok: %s echoed through s_client' % name)
        rc, text = stop(srv)
        check(rc == 0, 'the server did not stop cleanly (status %d)' % rc)
        # s_client sends close_notify at the end of its input (RFC 5246 §7.2.1).
        check('served 4 connections' in text and '4 closed cleanly, 0 failed' in text,
              'statistics: ' + text)


def python_bulk(env):
    """Eight Python ssl clients at once, each echoing 4 MiB of random bytes in
    writes of every size, then close_notify both ways (unwrap): every byte
    back in order, every connection counted as closed cleanly."""
    srv, port = env.server('--verbose')  # a failed connection's reason
    errors = []

    def one(i):
        try:
            raw = socket.create_connection(('127.0.0.1', port), timeout=TIMEOUT)
            s = env.client_ctx().wrap_socket(raw, server_hostname='localhost',
                                             suppress_ragged_eofs=False)
            data = os.urandom(4 * MIB)
            got = ssl_echo(s, data, step=lambda n: n * 7 % 40000 + 1)
            if got != data:
                errors.append('client %d: the echo differs (%d of %d bytes)'
                              % (i, len(got), len(data)))
            s.unwrap()
            raw.close()
        except Exception as e:  # noqa: BLE001 - collected and reported below
            errors.append('client %d: %r' % (i, e))
    ts = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    # The server's account first: a client's failure is explained there.
    rc, text = stop(srv)
    check(not errors, '; '.join(errors))
    print('ok: 8 clients each got their 4 MiB back')
    check(rc == 0, 'server status %d' % rc)
    check('served 8 connections' in text and '8 closed cleanly, 0 failed' in text,
          'statistics: ' + text)
    check('%d bytes echoed' % (8 * 4 * MIB) in text, 'bytes echoed: ' + text)


def make_root(env, sizes):
    root = env.path('root')
    os.makedirs(root, exist_ok=True)
    digests = {}
    for name, size in sizes.items():
        data = os.urandom(size)
        with open(os.path.join(root, name), 'wb') as f:
            f.write(data)
        digests[name] = hashlib.sha256(data).hexdigest()
    return root, digests


def curl_keepalive(env):
    """curl fetches four files over one connection (HTTP/1.1 keep-alive), for
    ARIA and AES-GCM: each body byte for byte, the connection reused, a 404
    for a name outside the root and a HEAD with the length."""
    root, digests = make_root(env, {'a': 1, 'b': 1024, 'c': MIB, 'd': 5 * MIB + 17})
    srv, port = env.server(root=root)
    for cipher in ('ECDHE-ECDSA-ARIA128-GCM-SHA256', 'ECDHE-ECDSA-AES256-GCM-SHA384'):
        outs = [env.path('out-%s-%s' % (cipher, n)) for n in digests]
        argv = [env.a.curl, '-sS', '-v', '--tlsv1.2', '--tls-max', '1.2', '--ciphers', cipher,
                '--cacert', env.certs('ec')[2], '--resolve', 'localhost:%d:127.0.0.1' % port]
        for name, out in zip(digests, outs):
            argv += ['-o', out, 'https://localhost:%d/%s' % (port, name)]
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=TIMEOUT)
        err = p.stderr.decode(errors='replace')
        check(p.returncode == 0, 'curl failed: ' + err[-2000:])
        for name, out in zip(digests, outs):
            with open(out, 'rb') as f:
                check(hashlib.sha256(f.read()).hexdigest() == digests[name],
                      '%s: body differs' % name)
        check(err.count('Re-using existing connection') >= 3
              or err.count('Reusing existing connection') >= 3,
              'the connection was not kept alive: ' + err[-3000:])
        check(cipher in err or 'ARIA' in err or 'AES' in err, 'suite not shown')
        print('ok: 4 files over one connection with %s' % cipher)
    code = subprocess.run([env.a.curl, '-sk', '--tlsv1.2', '-o', '/dev/null', '-w',
                           '%{http_code}', '--path-as-is',
                           'https://127.0.0.1:%d/../etc/passwd' % port],
                          stdout=subprocess.PIPE, timeout=TIMEOUT).stdout.decode()
    check(code in ('400', '404'), 'GET outside the root: %s' % code)
    head = subprocess.run([env.a.curl, '-skI', '--tlsv1.2', 'https://127.0.0.1:%d/c' % port],
                          stdout=subprocess.PIPE, timeout=TIMEOUT).stdout.decode()
    check('200' in head.splitlines()[0] and ('content-length: %d' % MIB) in head.lower(),
          'HEAD: ' + head)
    print('ok: a name outside the root is refused, HEAD gives the length')
    rc, text = stop(srv)
    check(rc == 0, 'server status %d' % rc)


def sigterm_drain(env):
    """SIGTERM while a 32 MiB body is on its way to a late reader and another
    client sits idle between requests: the body still arrives whole, the idle
    client gets close_notify at once, nobody new is let in, and the server
    then exits 0. Then a client that stops reading: dropped at
    --drain-timeout, and the server says so in its status."""
    root, digests = make_root(env, {'big': 32 * MIB, 'small': 100})
    srv, port = env.server('--idle-timeout', '60', '--drain-timeout', '60', root=root)
    ctx = env.client_ctx()

    def connect():
        return ctx.wrap_socket(socket.create_connection(('127.0.0.1', port), timeout=TIMEOUT),
                               server_hostname='localhost', suppress_ragged_eofs=False)
    idle = connect()
    idle.sendall(b'GET /small HTTP/1.1\r\nHost: x\r\n\r\n')
    head = b''
    while b'\r\n\r\n' not in head:
        head += idle.recv(4096)
    busy = connect()
    busy.sendall(b'GET /big HTTP/1.1\r\nHost: x\r\n\r\n')
    first = busy.recv(65536)
    check(first.startswith(b'HTTP/1.1 200'), 'big: %r' % first[:100])
    srv.send_signal(signal.SIGTERM)
    # The idle keep-alive client is told at once (RFC 5246 §7.2.1 close_notify).
    t0 = time.monotonic()
    try:
        while idle.recv(4096):
            pass
        idle.unwrap()
        closed_cleanly = True
    except (ssl.SSLError, OSError) as e:
        print('idle client: %r' % e)
        closed_cleanly = False
    check(closed_cleanly, 'the idle client did not get close_notify')
    check(time.monotonic() - t0 < 5, 'the idle client waited for the drain')
    print('ok: the idle client got close_notify %.0f ms after SIGTERM'
          % ((time.monotonic() - t0) * 1e3))
    # Nobody new once draining.
    refused = False
    try:
        late = socket.create_connection(('127.0.0.1', port), timeout=2)
        late.settimeout(2)
        refused = late.recv(1) == b''
    except OSError:
        refused = True
    check(refused, 'a new connection was accepted while draining')
    # The body in flight arrives whole, read only now.
    body = bytearray(first[first.index(b'\r\n\r\n') + 4:])
    while len(body) < 32 * MIB:
        chunk = busy.recv(1 << 16)
        check(chunk, 'the body was cut at %d bytes' % len(body))
        body += chunk
    check(hashlib.sha256(body[:32 * MIB]).hexdigest() == digests['big'], 'the body differs')
    print('ok: the 32 MiB body in flight arrived whole after SIGTERM')
    busy.close()
    srv.wait(TIMEOUT)
    out = srv.stdout.read().decode(errors='replace')
    print('--- server ---\n' + out)
    check(srv.returncode == 0, 'server status %d after the drain' % srv.returncode)

    srv, port = env.server('--drain-timeout', '1', root=root)
    stuck = connect()
    stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    stuck.sendall(b'GET /big HTTP/1.1\r\nHost: x\r\n\r\n')
    check(stuck.recv(100).startswith(b'HTTP/1.1 200'), 'big: no answer')
    t0 = time.monotonic()
    rc, text = stop(srv)
    took = time.monotonic() - t0
    check(1.0 <= took < 3.0, 'a client that stopped reading held the exit %.2f s, '
          '--drain-timeout 1' % took)
    check(rc == 1 and '1 still open at exit' in text,
          'the dropped client is not in the status (%d) or the statistics' % rc)
    print('ok: a client that stopped reading was dropped %.2f s after SIGTERM' % took)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('name')
    ap.add_argument('--uring-server', required=True)
    ap.add_argument('--openssl', required=True)
    ap.add_argument('--curl', required=True)
    ap.add_argument('--workdir', required=True)
    a = ap.parse_args()
    tests = {
        'suites-s_client': suites_s_client,
        'python-bulk': python_bulk,
        'curl-keepalive': curl_keepalive,
        'sigterm-drain': sigterm_drain,
    }
    return run_one(tests, a, Uring)


if __name__ == '__main__':
    sys.exit(main())
