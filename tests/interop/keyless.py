#!/usr/bin/env python3
"""A TLS server without its private key, against openssl s_client:
sotls-keyless-server holds the certificate only and has each
ServerKeyExchange signed by sotls-key-server, another process holding the
key, through sotls's private-key method (SOTLS_WANT_PRIVATE_KEY, then
complete). s_client verifies the chain against the CA and the server's
signature; the key file is deleted once the key server has read it, before
the TLS server starts, and the TLS server's memory is searched for the
private key's secret number (which the same search finds in the key
server's). One test per invocation:

    keyless.py NAME --keyless-server B --key-server B --openssl B --workdir DIR
"""
import argparse
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop import Env, Fail, check  # noqa: E402

TIMEOUT = 30


def read_until(proc, text):
    """proc's output (all of it so far) once it holds text."""
    seen = getattr(proc, 'seen', '')
    deadline = time.time() + TIMEOUT
    fd = proc.stdout.fileno()
    while text not in seen:
        left = deadline - time.time()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise Fail('no "%s" from %s; got: %s' % (text, proc.args[0], seen))
        chunk = os.read(fd, 4096).decode(errors='replace')
        if chunk == '':
            raise Fail('%s exited before "%s"; got: %s' % (proc.args[0], text, seen))
        seen += chunk
    proc.seen = seen
    print(seen)
    return seen


def secret_forms(key_path):
    """The key's secret number (EC d, RSA p) as big- and little-endian bytes:
    mbedTLS and sotls keep numbers as little-endian limbs."""
    with open(key_path, 'rb') as f:
        key = serialization.load_pem_private_key(f.read(), password=None)
    if isinstance(key, ec.EllipticCurvePrivateKey):
        n, size = key.private_numbers().private_value, (key.curve.key_size + 7) // 8
    else:
        n = key.private_numbers().p
        size = (n.bit_length() + 7) // 8
    be = n.to_bytes(size, 'big')
    return [be, be[::-1]]


def memory_holds(pid, needles):
    """True if a readable, writable mapping of pid holds one of needles (a
    key parsed at run time lives in the heap, the stack or data); None if
    the kernel does not let this process read pid's memory. Mappings above
    1 GiB are reservations (ASan's shadow), not data, and are skipped."""
    try:
        maps = open('/proc/%d/maps' % pid).read().splitlines()
        mem = open('/proc/%d/mem' % pid, 'rb')
    except OSError:
        return None
    overlap = max(len(n) for n in needles) - 1
    with mem:
        for line in maps:
            fields = line.split()
            lo, hi = (int(x, 16) for x in fields[0].split('-'))
            if not fields[1].startswith('rw') or hi - lo > 1 << 30:
                continue
            tail = b''
            for at in range(lo, hi, 1 << 24):
                try:
                    mem.seek(at)
                    data = tail + mem.read(min(1 << 24, hi - at))
                except OSError:
                    break
                if any(n in data for n in needles):
                    return True
                tail = data[-overlap:]
    return False


class Keyless(Env):
    def key_server(self, key, sock):
        ks = self.spawn([self.a.key_server, '--key', key, '--socket', sock],
                        stderr=subprocess.STDOUT)
        read_until(ks, 'ready')
        return ks

    def tls_server(self, cert, sock):
        pf = self.path('port')
        srv = self.spawn([self.a.keyless_server, '--cert', cert, '--key-socket', sock,
                          '--port', '0', '--port-file', pf], stderr=subprocess.STDOUT)
        return srv, self.wait_port_file(pf, srv)

    def s_client(self, port):
        p = subprocess.run([self.a.openssl, 's_client', '-connect', '127.0.0.1:%d' % port,
                            '-tls1_2', '-CAfile', self.path('ca.crt'), '-verify_return_error',
                            '-servername', 'localhost', '-verify_hostname', 'localhost',
                            '-ign_eof'],
                           input=b'', stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=TIMEOUT, cwd=self.dir)
        out = p.stdout.decode(errors='replace')
        print('$ s_client\n' + out)
        return p.returncode, out


def handshake(env, keytype, sock):
    cert, key, _ = env.certs(keytype)
    secret = secret_forms(key)
    ks = env.key_server(key, sock)
    # From here on nobody can read the key but the key server.
    os.remove(key)
    srv, port = env.tls_server(cert, sock)
    rc, out = env.s_client(port)
    check(rc == 0 and 'Verify return code: 0 (ok)' in out, 's_client did not verify the server')
    want = 'ECDHE-ECDSA-' if keytype == 'ec' else 'ECDHE-RSA-'
    check('Cipher is ' + want in out, 'not an %s suite' % want)
    check('Peer signature type: ' + ('ECDSA' if keytype == 'ec' else 'RSA') in out,
          'not signed with the certificate\'s key type')
    check('hello from a server that does not hold its key' in out, 'no greeting')
    log = read_until(srv, 'handshake done')
    check('1 x SOTLS_WANT_PRIVATE_KEY' in log, 'the signature was not asynchronous')
    read_until(ks, 'signed #1')
    # The control: the search finds the secret where it is.
    in_key_server = memory_holds(ks.pid, secret)
    if in_key_server is None:
        print('this kernel does not let the test read the servers\' memory: not searched')
        return
    check(in_key_server, 'the memory search does not find the key in the key server')
    check(memory_holds(srv.pid, secret) is False, 'the TLS server holds the private key')
    print('the key is in the key server\'s memory, not in the TLS server\'s')


def key_server_gone(env, sock):
    cert, key, _ = env.certs('ec')
    ks = env.key_server(key, sock)
    srv, port = env.tls_server(cert, sock)
    ks.kill()
    ks.wait()
    rc, out = env.s_client(port)
    check(rc != 0 and 'alert internal error' in out, 's_client got no internal_error alert')
    log = read_until(srv, 'failed')
    check('private-key method' in log and '(sent internal_error)' in log,
          'the server did not say the method failed')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('name')
    ap.add_argument('--keyless-server', required=True)
    ap.add_argument('--key-server', required=True)
    ap.add_argument('--openssl', required=True)
    ap.add_argument('--workdir', required=True)
    a = ap.parse_args()
    tests = {
        'ecdsa-p256': lambda e, s: handshake(e, 'ec', s),
        'rsa-2048': lambda e, s: handshake(e, 'rsa', s),
        'key-server-gone': key_server_gone,
    }
    if a.name not in tests:
        print('unknown test ' + a.name)
        return 2
    env = Keyless(a)
    # sun_path holds 108 bytes: a short directory of its own.
    sock_dir = tempfile.mkdtemp(prefix='sotls-ks-')
    ok = False
    try:
        tests[a.name](env, os.path.join(sock_dir, 'sock'))
        ok = True
    except Fail as e:
        print('FAIL: %s' % e)
    except Exception as e:  # noqa: BLE001 - report anything as a failure
        print('FAIL: %r' % e)
    finally:
        env.cleanup(ok)
        shutil.rmtree(sock_dir, ignore_errors=True)
    print('1 passed, 0 failed' if ok else '0 passed, 1 failed')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
