#!/usr/bin/env python3
"""Interop tests: sotls against real OpenSSL peers (openssl s_server/s_client
processes, and Python's ssl module where the test needs byte-exact control of
what goes into one TCP write). One test per invocation:

    interop.py NAME --peer sotls-peer --echo-server ... --echo-client ...
               --openssl openssl --workdir BUILD_DIR

Certificates (ECDSA P-256 and RSA 2048 leaves under a test CA, and an
unrelated CA) are generated at test time with `openssl req` into a fresh
directory under the build directory.
"""
import argparse
import hashlib
import os
import select
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

MIB = 1024 * 1024
BULK = 16 * MIB  # bytes each way in the data tests
TIMEOUT = 120

SUITES = {
    # OpenSSL name: (IANA name, key type)
    'ECDHE-ECDSA-ARIA128-GCM-SHA256': ('TLS_ECDHE_ECDSA_WITH_ARIA_128_GCM_SHA256', 'ec'),
    'ECDHE-ECDSA-ARIA256-GCM-SHA384': ('TLS_ECDHE_ECDSA_WITH_ARIA_256_GCM_SHA384', 'ec'),
    'ECDHE-ARIA128-GCM-SHA256': ('TLS_ECDHE_RSA_WITH_ARIA_128_GCM_SHA256', 'rsa'),
    'ECDHE-ARIA256-GCM-SHA384': ('TLS_ECDHE_RSA_WITH_ARIA_256_GCM_SHA384', 'rsa'),
    'ECDHE-ECDSA-AES128-GCM-SHA256': ('TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'ec'),
    'ECDHE-ECDSA-AES256-GCM-SHA384': ('TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'ec'),
    'ECDHE-RSA-AES128-GCM-SHA256': ('TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'rsa'),
    'ECDHE-RSA-AES256-GCM-SHA384': ('TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'rsa'),
}

# What a peer with OpenSSL's default cipher list (no ARIA in it) negotiates
# with a sotls peer on sotls's default list (ARIA first, then AES-GCM; ECDSA
# before RSA, 128 before 256): the first AES-GCM suite for the certificate.
# sotls as server picks by its own order (mbedTLS's default); OpenSSL's
# s_server by the client's (no -serverpref).
DEFAULT_AES = {
    'ec': 'ECDHE-ECDSA-AES128-GCM-SHA256',
    'rsa': 'ECDHE-RSA-AES128-GCM-SHA256',
}


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


class Env:
    def __init__(self, args):
        self.a = args
        self.dir = tempfile.mkdtemp(prefix='interop-', dir=args.workdir)
        self.procs = []

    def path(self, name):
        return os.path.join(self.dir, name)

    def run_openssl(self, *argv):
        subprocess.run([self.a.openssl, *argv], check=True, cwd=self.dir,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)

    def make_ca(self, name):
        self.run_openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256',
                         '-nodes', '-keyout', name + '.key', '-out', name + '.crt',
                         '-subj', '/CN=sotls interop ' + name, '-days', '2')

    def make_leaf(self, name, ca, keytype, cn='localhost'):
        newkey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'] if keytype == 'ec' \
            else ['-newkey', 'rsa:2048']
        self.run_openssl('req', *newkey, '-nodes', '-keyout', name + '.key',
                         '-out', name + '.csr', '-subj', '/CN=' + cn)
        with open(self.path(name + '.ext'), 'w') as f:
            f.write('subjectAltName=DNS:%s\nbasicConstraints=CA:FALSE\n' % cn)
        self.run_openssl('x509', '-req', '-in', name + '.csr', '-CA', ca + '.crt',
                         '-CAkey', ca + '.key', '-CAcreateserial', '-out', name + '.crt',
                         '-days', '2', '-extfile', name + '.ext')

    def certs(self, keytype):
        """(cert, key, ca) paths for a leaf of keytype signed by the test CA."""
        if not os.path.exists(self.path('ca.crt')):
            self.make_ca('ca')
        leaf = 'leaf-' + keytype
        if not os.path.exists(self.path(leaf + '.crt')):
            self.make_leaf(leaf, 'ca', keytype)
        return self.path(leaf + '.crt'), self.path(leaf + '.key'), self.path('ca.crt')

    def other_ca(self):
        if not os.path.exists(self.path('other.crt')):
            self.make_ca('other')
        return self.path('other.crt')

    def data(self, name, size):
        p = self.path(name)
        with open(p, 'wb') as f:
            f.write(os.urandom(size))
        return p

    def spawn(self, argv, stdin=subprocess.DEVNULL, stdout=None, stderr=None):
        p = subprocess.Popen(argv, cwd=self.dir, stdin=stdin,
                             stdout=stdout or subprocess.PIPE,
                             stderr=stderr or subprocess.PIPE)
        self.procs.append(p)
        return p

    def wait_port_file(self, path, proc):
        deadline = time.time() + 20
        while time.time() < deadline:
            if os.path.exists(path):
                with open(path) as f:
                    return int(f.read())
            if proc.poll() is not None:
                raise Fail('server exited early: %s' % proc.communicate()[1].decode())
            time.sleep(0.02)
        raise Fail('server did not start listening')

    def cleanup(self, ok):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        if ok:
            shutil.rmtree(self.dir, ignore_errors=True)


def ssl_echo(s, data, step=None):
    """Writes data to the SSLSocket s, in writes of the sizes step(n) gives
    from n = 1 (of 64 KiB without it), while reading the echo
    back, all from this one thread; returns what came back, len(data) bytes
    unless EOF came first. One thread because an OpenSSL SSL object, hence a
    Python SSLSocket, must not be read and written from two threads at once:
    with a reader thread beside a writer, eight Python clients echoing 4 MiB
    at once against Python's own asyncio TLS echo server saw a spurious
    SSLEOFError in 19 of 80 runs, and it made uring-python-bulk flaky."""
    got = bytearray()
    view = memoryview(data)  # no copy a write, nor a retry
    off, n = 0, (1 if step else 1 << 16)
    timeout = s.gettimeout()
    deadline = time.monotonic() + TIMEOUT
    s.setblocking(False)
    try:
        while len(got) < len(data):
            moved = False
            if off < len(data):
                try:  # a write that wants a retry is retried with the same bytes
                    off += s.send(view[off:off + n])
                    n = step(n) if step else n
                    moved = True
                except (ssl.SSLWantWriteError, ssl.SSLWantReadError):
                    pass
            try:
                chunk = s.recv(1 << 20)
                if not chunk:
                    break
                got += chunk
                moved = True
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                pass
            if not moved:
                left = deadline - time.monotonic()
                check(left > 0, 'the echo stalled: %d of %d bytes written, %d back'
                      % (off, len(data), len(got)))
                select.select([s], [s] if off < len(data) else [], [], left)
    finally:
        s.settimeout(timeout)
    return bytes(got)


def s_client_converse(env, argv, token):
    """openssl s_client (argv, without -quiet, which would wait for the
    server to close): sends token, waits until it comes back, then ends its
    input, which makes s_client close (close_notify). Returns its whole
    output and whether the token came back."""
    p = env.spawn(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = bytearray()

    def reader():
        for chunk in iter(lambda: p.stdout.read1(65536), b''):
            out.extend(chunk)
    t = threading.Thread(target=reader)
    t.start()
    p.stdin.write(token)
    p.stdin.flush()
    deadline = time.time() + TIMEOUT
    while token not in out and p.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    p.stdin.close()
    p.wait(timeout=TIMEOUT)
    t.join()
    text = out.decode(errors='replace')
    return text, token.decode() in text


def run_one(tests, a, make_env):
    """Runs the test a.name of tests in an environment make_env(a) makes,
    prints the plain summary line, and returns the exit status."""
    if a.name not in tests:
        print('unknown test ' + a.name)
        return 2
    env = make_env(a)
    ok = False
    try:
        tests[a.name](env)
        ok = True
    except Fail as e:
        print('FAIL: %s' % e)
    except Exception as e:  # noqa: BLE001 - report anything as a failure
        print('FAIL: %r' % e)
    finally:
        env.cleanup(ok)
    print('1 passed, 0 failed' if ok else '0 passed, 1 failed')
    return 0 if ok else 1


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def listening(port):
    # Read the kernel's socket table rather than probing: a probe connection
    # would count as s_server's one accepted client (-naccept 1).
    for table in ('/proc/net/tcp', '/proc/net/tcp6'):
        try:
            with open(table) as f:
                for line in f.readlines()[1:]:
                    fields = line.split()
                    if fields[3] == '0A' and int(fields[1].split(':')[1], 16) == port:
                        return True
        except OSError:
            pass
    return False


def wait_listening(port, proc):
    deadline = time.time() + 20
    while time.time() < deadline:
        if proc.poll() is not None:
            raise Fail('peer exited early: ' + proc.communicate()[1].decode(errors='replace'))
        if listening(port):
            return
        time.sleep(0.05)
    raise Fail('nothing listening on %d' % port)


def same_file(a, b):
    def h(p):
        with open(p, 'rb') as f:
            return hashlib.sha256(f.read()).hexdigest()
    return h(a) == h(b)


def sotls_lines(out):
    return out.decode(errors='replace')


# ---- tests ------------------------------------------------------------------

def converse_with_s_server(srv, srv_out, cli, to_client):
    """Feeds to_client to openssl s_server's stdin while the sotls client runs;
    returns the client's sotls lines once both have finished."""
    with open(to_client, 'rb') as f:
        data = f.read()

    def feed():
        try:
            srv.stdin.write(data)
            srv.stdin.flush()
        except BrokenPipeError:
            pass
    t = threading.Thread(target=feed)
    t.start()
    out, err = cli.communicate(timeout=TIMEOUT)
    t.join()
    try:
        srv.wait(timeout=30)
    finally:
        srv_out.close()
    text = sotls_lines(out)
    print(text, err.decode(errors='replace'))
    return text


# ECDHE groups: each one forced on the OpenSSL side, so that every ECDH path
# under mbedTLS (lib/crypto/ec_mbedtls_alt.c: sotls's P-256, libsodium's
# X25519, mbedTLS's own P-384 and P-521) meets a real peer. With an RSA
# certificate: a client that offers only X25519 cannot take a P-256 ECDSA
# one (RFC 8422 §5.1); the ECDSA suites above check ECDSA P-256.
GROUPS = ['P-256', 'X25519', 'P-384', 'P-521']
GROUP_SUITE = 'ECDHE-RSA-AES128-GCM-SHA256'


def client_vs_s_server(env, suite, groups=None):
    """sotls client <-> openssl s_server: BULK bytes each way, close_notify both ways."""
    iana, kt = SUITES[suite]
    extra = ['-groups', groups] if groups else []
    cert, key, ca = env.certs(kt)
    to_client = env.data('to-client', BULK)
    to_server = env.data('to-server', BULK)
    port = free_port()
    srv_out = open(env.path('s_server.out'), 'wb')
    # -quiet: raw data on stdin/stdout, no command letters. Stdin stays
    # open until the end so s_server never sees EOF.
    srv = env.spawn([env.a.openssl, 's_server', '-accept', str(port), '-tls1_2',
                     '-cipher', suite, '-cert', cert, '-key', key, '-naccept', '1', '-quiet']
                    + extra, stdin=subprocess.PIPE, stdout=srv_out)
    wait_listening(port, srv)
    cli = env.spawn([env.a.peer, 'client', '--port', str(port), '--verify', '--ca', ca,
                     '--servername', 'localhost', '--cipher', iana, '--send', to_server,
                     '--expect', str(BULK), '--recv', env.path('client.in')])
    text = converse_with_s_server(srv, srv_out, cli, to_client)
    check('HANDSHAKE ' + iana in text, 'wrong or no suite: ' + text)
    check('END close_notify' in text, 'no close_notify from s_server: ' + text)
    check(cli.returncode == 0, 'sotls client failed')
    check(same_file(env.path('client.in'), to_client), 'client received wrong bytes')
    with open(env.path('s_server.out'), 'rb') as f:
        got = f.read()
    check(hashlib.sha256(got[:BULK]).digest() == hashlib.sha256(open(to_server, 'rb').read()).digest(),
          's_server received wrong bytes (%d)' % len(got))


def server_vs_s_client(env, suite, groups=None):
    """openssl s_client <-> sotls server: BULK bytes each way, close_notify both ways."""
    iana, kt = SUITES[suite]
    extra = ['-groups', groups] if groups else []
    cert, key, ca = env.certs(kt)
    to_client = env.data('to-client', BULK)
    to_server = env.data('to-server', BULK)
    pf = env.path('port')
    srv = env.spawn([env.a.peer, 'server', '--port', '0', '--port-file', pf, '--cert', cert,
                     '--key', key, '--cipher', suite, '--send', to_client,
                     '--expect', str(BULK), '--recv', env.path('server.in')])
    port = env.wait_port_file(pf, srv)
    cli_out = open(env.path('s_client.out'), 'wb')
    with open(to_server, 'rb') as stdin:
        cli = env.spawn([env.a.openssl, 's_client', '-connect', '127.0.0.1:%d' % port,
                         '-tls1_2', '-cipher', suite, '-CAfile', ca, '-verify_return_error',
                         '-servername', 'localhost', '-verify_hostname', 'localhost', '-quiet']
                        + extra, stdin=stdin, stdout=cli_out)
        out, err = srv.communicate(timeout=TIMEOUT)
        cli.wait(timeout=30)
    cli_out.close()
    text = sotls_lines(out)
    print(text, err.decode(errors='replace'))
    check('HANDSHAKE ' + iana in text, 'wrong or no suite: ' + text)
    check('END close_notify' in text, 'no close_notify from s_client: ' + text)
    check(srv.returncode == 0, 'sotls server failed')
    check(cli.returncode == 0, 's_client failed: %s' % cli.stderr.read().decode())
    check(same_file(env.path('server.in'), to_server), 'server received wrong bytes')
    check(same_file(env.path('s_client.out'), to_client), 's_client received wrong bytes')


def server_default_vs_plain_s_client(env, kt):
    """sotls server on its default suite list, a plain `openssl s_client` (no
    -cipher, no -tls1_2: it offers TLS 1.3 and OpenSSL's default TLS 1.2
    list, which has no ARIA): TLS 1.2 with the first AES-GCM suite for the
    certificate, seen the same on both sides; data both ways, close_notify."""
    suite = DEFAULT_AES[kt]
    iana = SUITES[suite][0]
    cert, key, ca = env.certs(kt)
    size = MIB
    to_client = env.data('to-client', size)
    to_server = env.data('to-server', size)
    pf = env.path('port')
    srv = env.spawn([env.a.peer, 'server', '--port', '0', '--port-file', pf, '--cert', cert,
                     '--key', key, '--send', to_client, '--expect', str(size),
                     '--recv', env.path('server.in')])
    port = env.wait_port_file(pf, srv)
    cli_out = open(env.path('s_client.out'), 'wb')
    cli_err = open(env.path('s_client.err'), 'wb')
    with open(to_server, 'rb') as stdin:
        # -quiet keeps stdout for data only (and waits for the server to
        # close); -brief puts the negotiated version and suite on stderr.
        cli = env.spawn([env.a.openssl, 's_client', '-connect', '127.0.0.1:%d' % port,
                         '-CAfile', ca, '-verify_return_error', '-quiet', '-brief'],
                        stdin=stdin, stdout=cli_out, stderr=cli_err)
        out, err = srv.communicate(timeout=TIMEOUT)
        cli.wait(timeout=30)
    cli_out.close()
    cli_err.close()
    text = sotls_lines(out)
    with open(env.path('s_client.err'), 'rb') as f:
        ctext = f.read().decode(errors='replace')
    print(text, err.decode(errors='replace'), ctext)
    check('HANDSHAKE ' + iana + ' ' in text, 'sotls negotiated another suite: ' + text)
    check('Protocol version: TLSv1.2' in ctext, 's_client did not report TLS 1.2: ' + ctext)
    check('Ciphersuite: ' + suite + '\n' in ctext, 's_client reports another suite: ' + ctext)
    check('Verification: OK' in ctext, 's_client did not verify the certificate: ' + ctext)
    check('END close_notify' in text, 'no close_notify from s_client: ' + text)
    check(srv.returncode == 0, 'sotls server failed')
    check(cli.returncode == 0, 's_client failed')
    check(same_file(env.path('server.in'), to_server), 'server received wrong bytes')
    check(same_file(env.path('s_client.out'), to_client), 's_client received wrong bytes')


def client_default_vs_plain_s_server(env, kt):
    """sotls client on its default suite list, a plain `openssl s_server` (no
    -cipher, no -tls1_2): TLS 1.2 with the first AES-GCM suite for the
    certificate; data both ways, close_notify."""
    suite = DEFAULT_AES[kt]
    iana = SUITES[suite][0]
    cert, key, ca = env.certs(kt)
    size = MIB
    to_client = env.data('to-client', size)
    to_server = env.data('to-server', size)
    port = free_port()
    srv_out = open(env.path('s_server.out'), 'wb')
    srv = env.spawn([env.a.openssl, 's_server', '-accept', str(port), '-cert', cert,
                     '-key', key, '-naccept', '1', '-quiet'],
                    stdin=subprocess.PIPE, stdout=srv_out)
    wait_listening(port, srv)
    cli = env.spawn([env.a.peer, 'client', '--port', str(port), '--verify', '--ca', ca,
                     '--servername', 'localhost', '--send', to_server,
                     '--expect', str(size), '--recv', env.path('client.in')])
    text = converse_with_s_server(srv, srv_out, cli, to_client)
    check('HANDSHAKE ' + iana + ' ' in text, 'sotls negotiated another suite: ' + text)
    check('END close_notify' in text, 'no close_notify from s_server: ' + text)
    check(cli.returncode == 0, 'sotls client failed')
    check(same_file(env.path('client.in'), to_client), 'client received wrong bytes')
    with open(env.path('s_server.out'), 'rb') as f, open(to_server, 'rb') as g:
        check(f.read()[:size] == g.read(), 's_server received wrong bytes')


def server_vs_python_ssl(env):
    """Python's ssl (OpenSSL) client against sotls-echo-server, every suite,
    echo of BULK bytes checked, close_notify both ways (unwrap)."""
    for suite, (iana, kt) in SUITES.items():
        cert, key, ca = env.certs(kt)
        pf = env.path('port-' + suite)
        srv = env.spawn([env.a.echo_server, '--once', '--port', '0', '--port-file', pf,
                         '--cert', cert, '--key', key])
        port = env.wait_port_file(pf, srv)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        ctx.set_ciphers(suite)
        ctx.load_verify_locations(ca)
        raw = socket.create_connection(('127.0.0.1', port))
        s = ctx.wrap_socket(raw, server_hostname='localhost', suppress_ragged_eofs=False)
        check(s.cipher()[0] == suite, 'negotiated ' + str(s.cipher()))
        data = os.urandom(BULK)
        got = ssl_echo(s, data)
        check(len(got) == len(data), 'server closed early: %d of %d bytes back'
              % (len(got), len(data)))
        check(got == data, 'echo differs')
        s.unwrap()  # sends close_notify, waits for the server's
        raw.close()
        out, err = srv.communicate(timeout=30)
        print(out.decode(), err.decode())
        check(srv.returncode == 0, 'sotls server did not end cleanly')
        check(iana in out.decode(), 'server reports another suite')
        check('closed with close_notify' in out.decode(), 'no close_notify seen by server')


def finished_and_data_in_one_segment(env):
    """A server (Python ssl over memory BIOs) puts its Finished and application
    data in a single write: the sotls client must lose no byte of it."""
    cert, key, ca = env.certs('ec')
    ls = socket.socket()
    ls.bind(('127.0.0.1', 0))
    ls.listen(1)
    port = ls.getsockname()[1]
    greeting = os.urandom(50000)
    reply = env.data('reply', 3000)
    cli = env.spawn([env.a.peer, 'client', '--port', str(port), '--verify', '--ca', ca,
                     '--servername', 'localhost', '--send', reply,
                     '--expect', str(len(greeting)), '--recv', env.path('client.in')])
    conn, _ = ls.accept()
    conn.settimeout(30)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_ciphers('ECDHE-ECDSA-ARIA128-GCM-SHA256')
    ctx.load_cert_chain(cert, key)
    inc, outg = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, outg, server_side=True)
    one_write = None
    while True:
        try:
            obj.do_handshake()
            # Handshake done: our CCS+Finished are in outg. Add the data
            # and send all of it with one send().
            obj.write(greeting)
            one_write = outg.read()
            conn.sendall(one_write)
            break
        except ssl.SSLWantReadError:
            pending = outg.read()
            if pending:
                conn.sendall(pending)
            d = conn.recv(65536)
            check(d, 'client closed during handshake')
            inc.write(d)
    # Read the client's reply and its close_notify.
    got = b''
    while True:
        try:
            chunk = obj.read(65536)
            if not chunk:
                break
            got += chunk
        except ssl.SSLWantReadError:
            d = conn.recv(65536)
            if not d:
                inc.write_eof()
                continue
            inc.write(d)
        except ssl.SSLZeroReturnError:
            break
    # Answer with our close_notify.
    try:
        obj.unwrap()
    except (ssl.SSLWantReadError, ssl.SSLZeroReturnError):
        pass
    conn.sendall(outg.read())
    out, err = cli.communicate(timeout=TIMEOUT)
    conn.close()
    ls.close()
    print(out.decode(), err.decode())
    check(one_write is not None and len(one_write) > len(greeting), 'no combined write')
    check(got == open(reply, 'rb').read(), 'server got wrong reply')
    check('END close_notify' in out.decode(), 'no clean close')
    check(cli.returncode == 0, 'sotls client failed')
    with open(env.path('client.in'), 'rb') as f:
        check(f.read() == greeting, 'client lost or changed bytes behind the Finished')


def renegotiation_refused_by_server(env):
    """openssl s_client asks to renegotiate ('R'): sotls refuses with
    no_renegotiation; OpenSSL gives up with a fatal alert."""
    cert, key, ca = env.certs('ec')
    pf = env.path('port')
    srv = env.spawn([env.a.echo_server, '--once', '--port', '0', '--port-file', pf,
                     '--cert', cert, '--key', key])
    port = env.wait_port_file(pf, srv)
    cli = env.spawn([env.a.openssl, 's_client', '-connect', '127.0.0.1:%d' % port, '-tls1_2',
                     '-cipher', 'ARIA', '-CAfile', ca], stdin=subprocess.PIPE)
    cli.stdin.write(b'ping\n')
    cli.stdin.flush()
    time.sleep(1)
    cli.stdin.write(b'R\n')
    cli.stdin.flush()
    time.sleep(1)
    out, err = cli.communicate(timeout=30)
    sout, serr = srv.communicate(timeout=30)
    text = out.decode(errors='replace') + err.decode(errors='replace')
    stext = sout.decode() + serr.decode()
    print(stext)
    print(err.decode(errors='replace'))
    check('Secure Renegotiation IS supported' in text, 'RFC 5746 extension missing')
    check('ping' in out.decode(errors='replace'), 'no echo before renegotiation')
    check('no renegotiation' in text, 'OpenSSL did not see no_renegotiation')
    check('alert 40 from the peer' in stext, 'server did not report the peer giving up')


def renegotiation_refused_by_client(env):
    """openssl s_server sends HelloRequest ('r'): the sotls client answers
    no_renegotiation; OpenSSL ends the connection with a fatal alert."""
    cert, key, ca = env.certs('ec')
    port = free_port()
    srv = env.spawn([env.a.openssl, 's_server', '-accept', str(port), '-tls1_2', '-cipher',
                     'ARIA', '-cert', cert, '-key', key, '-naccept', '1'],
                    stdin=subprocess.PIPE)
    wait_listening(port, srv)
    cli = env.spawn([env.a.peer, 'client', '--port', str(port), '--expect', '1000000'])
    time.sleep(1.5)
    srv.stdin.write(b'r\n')
    srv.stdin.flush()
    out, err = cli.communicate(timeout=30)
    sout, serr = srv.communicate(timeout=30)
    text = out.decode()
    print(text, serr.decode(errors='replace'))
    check('HANDSHAKE' in text, 'no handshake')
    check('no renegotiation' in serr.decode(errors='replace') + sout.decode(errors='replace'),
          'OpenSSL did not see no_renegotiation')
    check('PEER-ALERT 40' in text, 'sotls did not see the fatal alert')


def wrong_ca(env):
    """Verification against a CA that did not sign the server: clear failure."""
    cert, key, ca = env.certs('ec')
    other = env.other_ca()
    port = free_port()
    srv = env.spawn([env.a.openssl, 's_server', '-accept', str(port), '-tls1_2', '-cipher',
                     'ARIA', '-cert', cert, '-key', key, '-naccept', '1'],
                    stdin=subprocess.PIPE)
    wait_listening(port, srv)
    cli = env.spawn([env.a.peer, 'client', '--port', str(port), '--verify', '--ca', other,
                     '--servername', 'localhost'])
    out, err = cli.communicate(timeout=30)
    print(out.decode())
    check(cli.returncode == 1, 'client should fail')
    check('HANDSHAKE-FAILED the peer\'s certificate failed verification' in out.decode(),
          'wrong message')
    check('not correctly signed by the trusted CA' in out.decode(), 'no detail')


def wrong_hostname(env):
    cert, key, ca = env.certs('ec')
    port = free_port()
    srv = env.spawn([env.a.openssl, 's_server', '-accept', str(port), '-tls1_2', '-cipher',
                     'ARIA', '-cert', cert, '-key', key, '-naccept', '1'],
                    stdin=subprocess.PIPE)
    wait_listening(port, srv)
    cli = env.spawn([env.a.peer, 'client', '--port', str(port), '--verify', '--ca', ca,
                     '--servername', 'www.example.org'])
    out, err = cli.communicate(timeout=30)
    print(out.decode())
    check(cli.returncode == 1, 'client should fail')
    check('certificate verification failed' in out.decode(), 'wrong message')
    check('CN' in out.decode() or 'name' in out.decode(), 'no detail about the name')


def suite_mismatch_client(env):
    """sotls client offers only ARIA-128; s_server allows only ARIA-256."""
    cert, key, ca = env.certs('ec')
    port = free_port()
    srv = env.spawn([env.a.openssl, 's_server', '-accept', str(port), '-tls1_2', '-cipher',
                     'ECDHE-ECDSA-ARIA256-GCM-SHA384', '-cert', cert, '-key', key,
                     '-naccept', '1'], stdin=subprocess.PIPE)
    wait_listening(port, srv)
    cli = env.spawn([env.a.peer, 'client', '--port', str(port), '--cipher', 'ARIA-128-GCM'])
    out, err = cli.communicate(timeout=30)
    sout, serr = srv.communicate(timeout=30)
    print(out.decode(), serr.decode(errors='replace'))
    check(cli.returncode == 1, 'client should fail')
    check('handshake_failure' in out.decode(), 'no clear error: ' + out.decode())
    check('no shared cipher' in serr.decode(errors='replace'), 'OpenSSL side unclear')


def suite_mismatch_server(env):
    """sotls server allows only ARIA-128; s_client offers only ARIA-256."""
    cert, key, ca = env.certs('ec')
    pf = env.path('port')
    srv = env.spawn([env.a.peer, 'server', '--port', '0', '--port-file', pf, '--cert', cert,
                     '--key', key, '--cipher', 'ARIA-128-GCM'])
    port = env.wait_port_file(pf, srv)
    cli = env.spawn([env.a.openssl, 's_client', '-connect', '127.0.0.1:%d' % port, '-tls1_2',
                     '-cipher', 'ECDHE-ECDSA-ARIA256-GCM-SHA384', '-CAfile', ca])
    cout, cerr = cli.communicate(timeout=30)
    out, err = srv.communicate(timeout=30)
    print(out.decode(), cerr.decode(errors='replace'))
    check(srv.returncode == 1, 'server should fail')
    check('no cipher suite in common' in out.decode() and 'handshake_failure' in out.decode(),
          'no clear error: ' + out.decode())
    # RFC 5246 §7.4.1.3: the server "MUST respond with a handshake failure alert".
    check('alert handshake failure' in cerr.decode(errors='replace'), 'no handshake_failure alert')
    check('handshake failure' in cerr.decode(errors='replace'), 'OpenSSL side unclear')


def sotls_to_sotls(env):
    """sotls-echo-client <-> sotls-echo-server, ARIA and AES-GCM, both sizes,
    verified CA chain."""
    for kt, names in (('ec', ['ARIA-128-GCM', 'TLS_ECDHE_ECDSA_WITH_ARIA_256_GCM_SHA384',
                              'AES-128-GCM', 'ECDHE-ECDSA-AES256-GCM-SHA384']),
                      ('rsa', ['TLS_ECDHE_RSA_WITH_ARIA_128_GCM_SHA256',
                               'ECDHE-ARIA256-GCM-SHA384',
                               'ECDHE-RSA-AES128-GCM-SHA256',
                               'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384'])):
        cert, key, ca = env.certs(kt)
        for name in names:
            pf = env.path('port-%s-%s' % (kt, name))
            srv = env.spawn([env.a.echo_server, '--once', '--port', '0', '--port-file', pf,
                             '--cert', cert, '--key', key])
            port = env.wait_port_file(pf, srv)
            cli = env.spawn([env.a.echo_client, '--host', 'localhost', '--port', str(port),
                             '--ca', ca, '--cipher', name, '--bytes', str(BULK)])
            out, err = cli.communicate(timeout=TIMEOUT)
            sout, serr = srv.communicate(timeout=30)
            print(out.decode(), err.decode(), sout.decode(), serr.decode())
            check(cli.returncode == 0, 'echo client failed')
            check(srv.returncode == 0, 'echo server failed')
            check('verified' in out.decode() and 'close_notify both ways' in out.decode(),
                  'no verified clean transfer')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('name')
    ap.add_argument('--peer', required=True)
    ap.add_argument('--echo-server', required=True)
    ap.add_argument('--echo-client', required=True)
    ap.add_argument('--openssl', required=True)
    ap.add_argument('--workdir', required=True)
    a = ap.parse_args()

    tests = {
        'server-vs-python-ssl': server_vs_python_ssl,
        'finished-and-data-in-one-segment': finished_and_data_in_one_segment,
        'renegotiation-refused-by-server': renegotiation_refused_by_server,
        'renegotiation-refused-by-client': renegotiation_refused_by_client,
        'wrong-ca': wrong_ca,
        'wrong-hostname': wrong_hostname,
        'suite-mismatch-client': suite_mismatch_client,
        'suite-mismatch-server': suite_mismatch_server,
        'sotls-to-sotls': sotls_to_sotls,
        'server-default-suites-vs-plain-s_client-ecdsa':
            lambda e: server_default_vs_plain_s_client(e, 'ec'),
        'server-default-suites-vs-plain-s_client-rsa':
            lambda e: server_default_vs_plain_s_client(e, 'rsa'),
        'client-default-suites-vs-plain-s_server-ecdsa':
            lambda e: client_default_vs_plain_s_server(e, 'ec'),
        'client-default-suites-vs-plain-s_server-rsa':
            lambda e: client_default_vs_plain_s_server(e, 'rsa'),
    }
    for suite in SUITES:
        tests['client-vs-s_server-' + suite] = (lambda s: lambda e: client_vs_s_server(e, s))(suite)
        tests['server-vs-s_client-' + suite] = (lambda s: lambda e: server_vs_s_client(e, s))(suite)
    for g in GROUPS:
        tests['client-vs-s_server-group-' + g] = (
            lambda g: lambda e: client_vs_s_server(e, GROUP_SUITE, g))(g)
        tests['server-vs-s_client-group-' + g] = (
            lambda g: lambda e: server_vs_s_client(e, GROUP_SUITE, g))(g)
    return run_one(tests, a, Env)


if __name__ == '__main__':
    sys.exit(main())
