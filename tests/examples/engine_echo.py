#!/usr/bin/env python3
"""sotls-engine-echo-server (the engine driven by an application's own epoll
loop) against peers sotls did not write:

    engine_echo.py CASE --server BIN --workdir DIR

python-echo: Python's ssl (OpenSSL) echoes 200 KiB in uneven writes, 20
    clients at once, each ending with close_notify, which the server answers
    (RFC 5246 §7.2.1: "the other party MUST respond with a close_notify").
s_client-aria: openssl s_client with ECDHE-ECDSA-ARIA128-GCM-SHA256 only
    sends a line and gets it back, the suite is the ARIA one.
bad-client: a client that sends garbage instead of a ClientHello gets a fatal
    alert from the server, and the server goes on serving the next client.
async-cert: the server answers each certificate selection a loop turn later
    (--select-cert); 5 Python clients at once that trust only the certificate
    made here for localhost (not the server's default one) verify the chain
    and the name, and echo.
"""
import argparse
import os
import socket
import ssl
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'interop'))
from interop import Fail, check  # noqa: E402


def selected_cert(workdir):
    """A certificate for localhost that only the selection callback serves."""
    chain, key = os.path.join(workdir, 'selected.pem'), os.path.join(workdir, 'selected.key')
    subprocess.run(['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt',
                    'ec_paramgen_curve:P-256', '-nodes', '-days', '2', '-subj', '/CN=localhost',
                    '-addext', 'subjectAltName=DNS:localhost', '-keyout', key, '-out', chain],
                   check=True, capture_output=True)
    return chain, key


def start(a):
    os.makedirs(a.workdir, exist_ok=True)
    pf = os.path.join(a.workdir, 'port')
    if os.path.exists(pf):
        os.unlink(pf)
    extra = []
    if a.case == 'async-cert':
        extra = ['--select-cert', *selected_cert(a.workdir)]
    srv = subprocess.Popen([a.server, '--port', '0', '--port-file', pf, *extra],
                           stderr=subprocess.PIPE, text=True)
    for _ in range(200):
        if os.path.exists(pf):
            return srv, int(open(pf).read())
        time.sleep(0.05)
    srv.kill()
    raise Fail('the server wrote no port file')


def ctx():
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    c.check_hostname = False
    c.verify_mode = ssl.CERT_NONE
    c.maximum_version = ssl.TLSVersion.TLSv1_2
    return c


def python_echo(port, seed, errors, context=None):
    try:
        data = bytes((i * 7 + seed) & 0xff for i in range(200 * 1024))
        with socket.create_connection(('127.0.0.1', port), timeout=30) as raw:
            s = (context or ctx()).wrap_socket(raw, server_hostname='localhost')
            got = bytearray()
            off, step = 0, 1
            while off < len(data):
                n = min(step, len(data) - off)
                s.sendall(data[off:off + n])
                off += n
                step = step * 3 % 40000 + 1
                while len(got) < off:
                    got += s.recv(65536)
            check(bytes(got) == data, 'the echo differs')
            s.unwrap()  # our close_notify, and the server's back
    except Exception as e:  # noqa: BLE001 - reported by the main thread
        errors.append('%s: %r' % (seed, e))


def case_python_echo(a, port, clients=20, context=None):
    errors = []
    ts = [threading.Thread(target=python_echo, args=(port, i, errors, context))
          for i in range(clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    check(not errors, 'clients failed: %s' % errors[:3])


def case_s_client_aria(a, port):
    p = subprocess.Popen(['openssl', 's_client', '-connect', '127.0.0.1:%d' % port,
                          '-tls1_2', '-cipher', 'ECDHE-ECDSA-ARIA128-GCM-SHA256', '-ign_eof'],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    try:
        p.stdin.write(b'hello from s_client\n')
        p.stdin.flush()
        out = b''
        deadline = time.time() + 20
        # The line comes back after the session summary (which names the suite).
        while out.count(b'hello from s_client') < 1 and time.time() < deadline:
            chunk = os.read(p.stdout.fileno(), 4096)
            if not chunk:
                break
            out += chunk
    finally:
        p.kill()
        p.wait()
    check(b'hello from s_client' in out, 's_client got no echo: %r' % out[-800:])
    check(b'ECDHE-ECDSA-ARIA128-GCM-SHA256' in out, 'not the ARIA suite: %r' % out[-800:])


def case_bad_client(a, port):
    with socket.create_connection(('127.0.0.1', port), timeout=10) as raw:
        raw.sendall(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
        reply = raw.recv(100)
        # RFC 5246 §6.2.1/§7.2: an alert record (21), fatal (2).
        check(len(reply) >= 7 and reply[0] == 21 and reply[5] == 2,
              'no fatal alert for garbage: %r' % reply)
    case_python_echo_one(port)


def case_python_echo_one(port):
    errors = []
    python_echo(port, 99, errors)
    check(not errors, 'the next client failed: %s' % errors)


def case_async_cert(a, port):
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies chain and name
    c.maximum_version = ssl.TLSVersion.TLSv1_2
    c.load_verify_locations(os.path.join(a.workdir, 'selected.pem'))
    case_python_echo(a, port, clients=5, context=c)


CASES = {'python-echo': case_python_echo, 's_client-aria': case_s_client_aria,
         'bad-client': case_bad_client, 'async-cert': case_async_cert}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('case', choices=sorted(CASES))
    ap.add_argument('--server', required=True)
    ap.add_argument('--workdir', required=True)
    a = ap.parse_args()
    srv, port = start(a)
    try:
        CASES[a.case](a, port)
    except Fail as e:
        print('FAIL:', e)
        return 1
    finally:
        srv.terminate()
        _, err = srv.communicate(timeout=10)
        if err:
            print('server stderr:', err[-2000:])
    print('ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
