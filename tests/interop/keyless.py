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
import hashlib
import os
import select
import shutil
import socket
import ssl
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop import Env, Fail, check  # noqa: E402
from keylog import check_same_keylog  # noqa: E402

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
    def key_server(self, key, sock, *extra, umask=None):
        """sotls-key-server on sock; with umask, started under that umask."""
        old = os.umask(umask) if umask is not None else None
        try:
            ks = self.spawn([self.a.key_server, '--key', key, '--socket', sock, *extra],
                            stderr=subprocess.STDOUT)
        finally:
            if old is not None:
                os.umask(old)
        read_until(ks, 'ready')
        return ks

    def tls_server(self, cert, sock, env=None):
        pf = self.path('port')
        srv = subprocess.Popen([self.a.keyless_server, '--cert', cert, '--key-socket', sock,
                                '--port', '0', '--port-file', pf], cwd=self.dir, env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
        self.procs.append(srv)
        return srv, self.wait_port_file(pf, srv)

    def s_client(self, port, timeout=TIMEOUT):
        p = subprocess.run([self.a.openssl, 's_client', '-connect', '127.0.0.1:%d' % port,
                            '-tls1_2', '-CAfile', self.path('ca.crt'), '-verify_return_error',
                            '-servername', 'localhost', '-verify_hostname', 'localhost',
                            '-ign_eof'],
                           input=b'', stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, cwd=self.dir)
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


ECDSA_SHA256, ECDSA_SHA512 = 0x0403, 0x0603


def ks_connect(sock):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.settimeout(TIMEOUT)
    c.connect(sock)
    return c


def ks_ask(c, req_id, sigalg, digest):
    """One request on the key server's wire (keyless_wire.h): (status, body),
    or None if the key server closed the connection instead of answering."""
    try:
        c.send(struct.pack('>IHB', req_id, sigalg, len(digest)) + digest)
        resp = c.recv(2048)
    except (BrokenPipeError, ConnectionResetError):
        return None  # closed on before or after the request
    if resp == b'':
        return None
    check(len(resp) >= 5 and struct.unpack('>I', resp[:4])[0] == req_id,
          'an answer without the request\'s id: %r' % resp)
    return resp[4], resp[5:]


def ecdsa_verifies(pub, sig, digest):
    try:
        pub.verify(sig, digest, ec.ECDSA(utils.Prehashed(hashes.SHA256())))
        return True
    except InvalidSignature:
        return False


def key_server_digest_length(env, sock):
    """Only a digest as long as the sigalg's hash is signed: a 0-byte one
    made mbedTLS sign the hash's length of whatever the buffer held (here,
    the previous request's digest), a short one is no hash at all."""
    _, key, _ = env.certs('ec')
    with open(key, 'rb') as f:
        pub = serialization.load_pem_private_key(f.read(), password=None).public_key()
    ks = env.key_server(key, sock)
    c = ks_connect(sock)
    first = hashlib.sha256(b'the first client\'s handshake').digest()
    status, sig = ks_ask(c, 1, ECDSA_SHA256, first)
    check(status == 0 and ecdsa_verifies(pub, sig, first), 'a proper request was not signed')
    for n, (sigalg, digest, what) in enumerate([
            (ECDSA_SHA256, b'', 'a 0-byte digest'),
            (ECDSA_SHA256, first[:20], 'a 20-byte digest for SHA-256'),
            (ECDSA_SHA256, first + b'\0' * 16, 'a 48-byte digest for SHA-256'),
            (ECDSA_SHA512, first, 'a 32-byte digest for SHA-512')], 2):
        ans = ks_ask(c, n, sigalg, digest)
        check(ans is not None, 'the key server closed on %s instead of refusing it' % what)
        status, body = ans
        if status == 0 and ecdsa_verifies(pub, body, first):
            raise Fail('%s came back signed, over the previous request\'s digest' % what)
        check(status == 1, '%s came back signed (status %d)' % (what, status))
        check(b'digest' in body and body.isascii(),
              'the refusal of %s does not say why: %r' % (what, body))
        print('%s: refused: %s' % (what, body.decode()))
    status, sig = ks_ask(c, 9, ECDSA_SHA256, first)
    check(status == 0 and ecdsa_verifies(pub, sig, first), 'no signature after the refusals')
    c.close()
    read_until(ks, 'refused: a 32-byte digest for a 64-byte hash')


def key_server_access(env, sock):
    """The socket is 0600 under umask 0, and a client of another uid than
    --allow-uid is closed on, whatever the file's mode lets through."""
    _, key, _ = env.certs('ec')
    ks = env.key_server(key, sock, umask=0)
    mode = stat.S_IMODE(os.stat(sock).st_mode)
    check(mode == 0o600, 'socket mode %o under umask 0, want 600' % mode)
    print('socket mode 600 under umask 0')
    ks.kill()
    ks.wait()
    # Root passes any file mode: the uid check has to stand on its own.
    other = os.geteuid() + 1 if os.geteuid() != 65534 else 65533
    ks = env.key_server(key, sock, '--allow-uid', str(other))
    c = ks_connect(sock)
    ans = ks_ask(c, 1, ECDSA_SHA256, hashlib.sha256(b'x').digest())
    check(ans is None, 'a client of uid %d got an answer from a key server for uid %d'
          % (os.geteuid(), other))
    read_until(ks, 'refused a client of uid %d' % os.geteuid())
    for bad in ('-1', 'abc', '4294967295', '1x'):
        p = subprocess.run([env.a.key_server, '--allow-uid', bad, '--key', key, '--socket',
                            sock + '.bad'], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=TIMEOUT)
        check(p.returncode == 2 and b'--allow-uid' in p.stderr,
              '--allow-uid %s: status %d, %r' % (bad, p.returncode, p.stderr))


def key_server_concurrent(env, sock):
    """A client that connects and says nothing holds up no one, and is
    closed on at --idle-timeout."""
    _, key, _ = env.certs('ec')
    ks = env.key_server(key, sock)
    stuck = ks_connect(sock)
    t0 = time.monotonic()
    time.sleep(0.3)  # the key server has accepted it
    honest = ks_connect(sock)
    honest.settimeout(1.5)
    try:
        ans = ks_ask(honest, 7, ECDSA_SHA256, hashlib.sha256(b'honest').digest())
    except socket.timeout:
        ans = None
    check(ans is not None and ans[0] == 0, 'a silent client held up another\'s signature')
    print('answered in %.2f s beside a silent client' % (time.monotonic() - t0))
    honest.close()
    stuck.close()
    ks.kill()
    ks.wait()
    ks = env.key_server(key, sock, '--idle-timeout', '2')
    stuck = ks_connect(sock)
    t0 = time.monotonic()
    stuck.settimeout(6)
    try:
        closed = stuck.recv(16) == b''
    except (socket.timeout, ConnectionResetError) as e:
        closed = isinstance(e, ConnectionResetError)
    waited = time.monotonic() - t0
    check(closed and 1.5 <= waited <= 5, 'the silent client was closed on after %.2f s, want '
          'about 2 (--idle-timeout)' % waited)
    read_until(ks, '--idle-timeout')


# A TLS handshake record header announcing 1000 bytes, then its bytes: the
# server cannot begin the handshake before the whole record is in.
TRICKLE = b'\x16\x03\x01\x03\xe8' + b'\x01' * 1000


def keyless_trickle(env, sock):
    """A peer trickling its first record a byte a second holds no one up and
    is dropped at the handshake deadline (default 10 s), not served for ever."""
    cert, key, _ = env.certs('ec')
    env.key_server(key, sock)
    srv, port = env.tls_server(cert, sock)
    peer = socket.create_connection(('127.0.0.1', port))
    t0 = time.monotonic()
    state = {'sent': 0, 'closed_at': None}

    def trickle():
        peer.settimeout(1)
        for b in TRICKLE:
            try:
                peer.send(bytes([b]))
                state['sent'] += 1
                if peer.recv(1) == b'':
                    break
            except socket.timeout:
                continue
            except OSError:
                break
        state['closed_at'] = time.monotonic() - t0

    th = threading.Thread(target=trickle, daemon=True)
    th.start()
    time.sleep(1.5)
    t1 = time.monotonic()
    try:
        rc, out = env.s_client(port, timeout=8)
    except subprocess.TimeoutExpired:
        raise Fail('an honest client waited 8 s behind a trickling peer')
    check(rc == 0 and 'hello from a server' in out, 'the honest client was not served')
    print('honest client served in %.2f s beside a trickling peer' % (time.monotonic() - t1))
    th.join(20)
    at = state['closed_at']
    check(at is not None and 9 <= at <= 13, 'the trickling peer was dropped after %s s (%d bytes'
          ' sent), want about 10 (--handshake-timeout)' % (at, state['sent']))
    read_until(srv, '--handshake-timeout')


def keyless_keylog(env, sock):
    """SSLKEYLOGFILE: the server logs the line Python's ssl (OpenSSL) logs
    for the same connection, client random and master secret alike."""
    cert, key, ca = env.certs('ec')
    env.key_server(key, sock)
    srv_keys, cli_keys = env.path('server.keys'), env.path('client.keys')
    srv, port = env.tls_server(cert, sock, env=dict(os.environ, SSLKEYLOGFILE=srv_keys))
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    c.load_verify_locations(ca)
    c.maximum_version = ssl.TLSVersion.TLSv1_2
    c.keylog_filename = cli_keys
    with socket.create_connection(('127.0.0.1', port), timeout=TIMEOUT) as raw:
        with c.wrap_socket(raw, server_hostname='localhost') as t:
            check(b'hello from a server' in t.recv(100), 'no greeting')
    read_until(srv, 'handshake done')
    check_same_keylog(srv_keys, cli_keys)


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
        'key-server-digest-length': key_server_digest_length,
        'key-server-access': key_server_access,
        'key-server-concurrent': key_server_concurrent,
        'trickle': keyless_trickle,
        'keylog': keyless_keylog,
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
