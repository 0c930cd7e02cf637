#!/usr/bin/env python3
"""Server features against real peers: ALPN (RFC 7301), several certificates
chosen by SNI and by what the client can sign with, the SNI acknowledgement
and unrecognized_name (RFC 6066 §3), certificate reload on SIGHUP. The peers
are openssl s_client / s_server, curl and Python's ssl; the sotls ends are
sotls-https-server and sotls-peer. One test per invocation:

    server_features.py NAME --https-server B --peer B --openssl B --curl B
                       --workdir DIR
"""
import argparse
import os
import signal
import socket
import ssl
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop import Env, Fail, check, free_port, run_one, wait_listening  # noqa: E402

TIMEOUT = 30


class Features(Env):
    def __init__(self, args):
        super().__init__(args)
        self.make_ca('ca')

    def leaf(self, name, keytype, sans):
        """A leaf signed by the test CA with subjectAltName DNS:sans and
        CN=name; returns (cert, key)."""
        newkey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'] if keytype == 'ec' \
            else ['-newkey', 'rsa:2048']
        self.run_openssl('req', *newkey, '-nodes', '-keyout', name + '.key',
                         '-out', name + '.csr', '-subj', '/CN=' + name)
        with open(self.path(name + '.ext'), 'w') as f:
            f.write('subjectAltName=%s\nbasicConstraints=CA:FALSE\n'
                    % ','.join('DNS:' + s for s in sans))
        self.run_openssl('x509', '-req', '-in', name + '.csr', '-CA', 'ca.crt',
                         '-CAkey', 'ca.key', '-CAcreateserial', '-out', name + '.crt',
                         '-days', '2', '-extfile', name + '.ext')
        return self.path(name + '.crt'), self.path(name + '.key')

    def https(self, pairs, *extra):
        """sotls-https-server with the (cert, key) pairs, first the default;
        returns (process, port)."""
        os.makedirs(self.path('root'), exist_ok=True)
        with open(self.path('root/hello.txt'), 'w') as f:
            f.write('hello over sotls\n')
        pf = self.path('port-%d' % len(self.procs))
        argv = [self.a.https_server, '--root', self.path('root'), '--port', '0',
                '--port-file', pf, *extra]
        for cert, key in pairs:
            argv += ['--cert', cert, '--key', key]
        srv = self.spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        return srv, self.wait_port_file(pf, srv)

    def s_client(self, port, *opts):
        """openssl s_client, TLS 1.2, closed at once; its whole output."""
        p = subprocess.run([self.a.openssl, 's_client', '-connect', '127.0.0.1:%d' % port,
                            '-tls1_2', '-CAfile', self.path('ca.crt'), *opts],
                           input=b'', stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=TIMEOUT, cwd=self.dir)
        out = p.stdout.decode(errors='replace')
        print('$ s_client', ' '.join(opts), '\n', out)
        return out


def server_log(srv):
    """Stops the server and returns what it printed."""
    srv.terminate()
    out, _ = srv.communicate(timeout=TIMEOUT)
    text = out.decode(errors='replace')
    print('--- server ---\n' + text)
    return text


def subject_cn(out):
    for line in out.splitlines():
        if line.startswith('subject=CN = '):
            return line[len('subject=CN = '):].strip()
    return None


SNI_ACK = 'TLS server extension "server name" (id=0), len=0'


# ---- ALPN --------------------------------------------------------------------

def alpn_s_client(env):
    cert, key = env.leaf('a', 'ec', ['a.test'])
    srv, port = env.https([(cert, key)])
    # RFC 7301 §3.2: the server selects "the most highly preferred protocol
    # that it supports and that is also advertised by the client".
    out = env.s_client(port, '-servername', 'a.test', '-alpn', 'h2,http/1.1')
    check('ALPN protocol: http/1.1' in out, 'http/1.1 not negotiated')
    # RFC 7301 §3.2: no protocol in common -> fatal no_application_protocol.
    out = env.s_client(port, '-servername', 'a.test', '-alpn', 'h2')
    check('alert number 120' in out, 'an h2-only client got no no_application_protocol')
    # STRICT: a client without ALPN is served without a protocol.
    out = env.s_client(port, '-servername', 'a.test')
    check('No ALPN negotiated' in out and 'Verify return code: 0 (ok)' in out,
          'a client without ALPN was not served')
    log = server_log(srv)
    check('alpn=http/1.1 server_name=a.test cert=0' in log, 'server info lacks alpn')
    check('(sent no_application_protocol)' in log, 'server did not say which alert it sent')


def alpn_required(env):
    cert, key = env.leaf('a', 'ec', ['a.test'])
    srv, port = env.https([(cert, key)], '--require-alpn')
    out = env.s_client(port, '-servername', 'a.test')
    check('alert number 120' in out, 'a client without ALPN passed --require-alpn')
    out = env.s_client(port, '-servername', 'a.test', '-alpn', 'http/1.1')
    check('ALPN protocol: http/1.1' in out, 'http/1.1 refused under --require-alpn')
    log = server_log(srv)
    check('offers no ALPN protocol and the server requires one' in log, 'no clear reason')


def client_hello(alpn_ext_body):
    """A TLS 1.2 ClientHello (ECDHE-ECDSA-AES128-GCM-SHA256, P-256, ECDSA
    SHA-256) with an ALPN extension of the given body."""
    def ext(t, body):
        return t.to_bytes(2, 'big') + len(body).to_bytes(2, 'big') + body
    exts = (ext(10, b'\x00\x02\x00\x17') + ext(11, b'\x01\x00') + ext(13, b'\x00\x02\x04\x03')
            + ext(16, alpn_ext_body))
    body = (b'\x03\x03' + os.urandom(32) + b'\x00' + b'\x00\x02\xc0\x2b' + b'\x01\x00'
            + len(exts).to_bytes(2, 'big') + exts)
    hs = b'\x01' + len(body).to_bytes(3, 'big') + body
    return b'\x16\x03\x01' + len(hs).to_bytes(2, 'big') + hs


def alpn_malformed(env):
    cert, key = env.leaf('a', 'ec', ['a.test'])
    srv, port = env.https([(cert, key)])
    # RFC 7301 §3.1: ProtocolName<1..2^8-1>, "Empty strings MUST NOT be
    # included and byte strings MUST NOT be truncated"; RFC 5246 §7.2.2:
    # decode_error for a message that cannot be parsed.
    cases = {
        'empty name': b'\x00\x03\x00\x01h',           # list: "", then "h"
        'truncated name': b'\x00\x03\x05h2',          # name length 5, 2 bytes left
        'list too short': b'\x00\x00',                # protocol_name_list<2..2^16-1>
        'list length off': b'\x00\x09\x02h2',         # the list claims 9 bytes
    }
    for what, body in cases.items():
        s = socket.create_connection(('127.0.0.1', port), timeout=TIMEOUT)
        s.sendall(client_hello(body))
        reply = b''
        while len(reply) < 7:
            chunk = s.recv(7 - len(reply))
            if not chunk:
                break
            reply += chunk
        s.close()
        print(what, reply.hex())
        check(reply == b'\x15\x03\x03\x00\x02\x02\x32',
              '%s: expected a fatal decode_error alert, got %s' % (what, reply.hex()))
    log = server_log(srv)
    check('an empty protocol name in the ALPN list' in log, 'no detail for the empty name')


def curl_alpn(env, flag):
    cert, key = env.leaf('a', 'ec', ['a.test'])
    srv, port = env.https([(cert, key)])
    p = subprocess.run([env.a.curl, '-sS', '-v', flag, '--cacert', env.path('ca.crt'),
                        '--resolve', 'a.test:%d:127.0.0.1' % port,
                        'https://a.test:%d/hello.txt' % port],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
    err = p.stderr.decode(errors='replace')
    print(err)
    check(p.returncode == 0 and p.stdout == b'hello over sotls\n', 'curl %s failed' % flag)
    # curl --http2 offers h2,http/1.1 and, as the server picks http/1.1
    # (RFC 7301 §3.2), speaks HTTP/1.1.
    offers = 'h2,http/1.1' if flag == '--http2' else 'http/1.1'
    check('ALPN: offers %s' % offers in err, 'curl did not offer %s' % offers)
    check('ALPN: server accepted http/1.1' in err, 'curl saw no http/1.1 from ALPN')
    check('using HTTP/1.1' in err, 'curl did not go on in HTTP/1.1')
    server_log(srv)


def python_alpn_sni(env):
    a = env.leaf('a', 'ec', ['a.test'])
    b = env.leaf('b', 'ec', ['b.test'])
    srv, port = env.https([a, b])
    ctx = ssl.create_default_context(cafile=env.path('ca.crt'))
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_alpn_protocols(['h2', 'http/1.1'])
    for name, cn in (('a.test', 'a'), ('b.test', 'b')):
        with socket.create_connection(('127.0.0.1', port), timeout=TIMEOUT) as raw:
            # server_hostname sends SNI (RFC 6066 §3) and checks the name.
            with ctx.wrap_socket(raw, server_hostname=name) as s:
                check(s.selected_alpn_protocol() == 'http/1.1', 'Python got no http/1.1')
                got = dict(x[0] for x in s.getpeercert()['subject'])['commonName']
                check(got == cn, '%s: got the certificate of %s' % (name, got))
                s.sendall(b'GET /hello.txt HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n'
                          % name.encode())
                data = b''
                while True:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                check(data.endswith(b'hello over sotls\n'), 'no body')
    log = server_log(srv)
    check('alpn=http/1.1 server_name=a.test cert=0' in log, 'info for a.test')
    check('alpn=http/1.1 server_name=b.test cert=1' in log, 'info for b.test')


def sotls_client_alpn(env):
    cert, key = env.leaf('a', 'ec', ['a.test'])

    def against(alpn_server, alpn_client):
        port = free_port()
        srv = subprocess.Popen([env.a.openssl, 's_server', '-accept', '127.0.0.1:%d' % port,
                                '-naccept', '1', '-cert', cert, '-key', key,
                                '-alpn', alpn_server],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, cwd=env.dir)
        env.procs.append(srv)
        wait_listening(port, srv)
        cli = subprocess.run([env.a.peer, 'client', '--port', str(port), '--ca',
                              env.path('ca.crt'), '--verify', '--servername', 'a.test',
                              '--alpn', alpn_client],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT)
        sout = srv.communicate(timeout=TIMEOUT)[0].decode(errors='replace')
        cout = cli.stdout.decode(errors='replace')
        print(cout, sout)
        return cout, sout

    cout, sout = against('http/1.1', 'h2,http/1.1')
    # RFC 7301 §3.1: the client lists its protocols in its order.
    check('ALPN protocols advertised by the client: h2, http/1.1' in sout,
          's_server did not see the list')
    check('NEGOTIATED alpn=http/1.1 server_name=a.test cert=-1' in cout, 'no http/1.1')
    # RFC 7301 §3.2: s_server with nothing in common sends the alert.
    cout, _ = against('spdy/3', 'h2,http/1.1')
    check('no_application_protocol (120)' in cout, 'the client did not report the alert')


def alpn_callback_conn(env):
    """The connection callback (sotls_config_set_alpn_select_conn) against
    s_client: sotls-peer's callback picks the protocol its connection's user
    pointer names, so x-conn, the client's second choice, proves it saw the
    connection."""
    cert, key = env.leaf('a', 'ec', ['a.test'])

    def serve(alpn):
        pf = env.path('port-%d' % len(env.procs))
        srv = env.spawn([env.a.peer, 'server', '--port', '0', '--port-file', pf,
                         '--cert', cert, '--key', key, '--alpn-select-conn', 'x-conn'],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out = env.s_client(env.wait_port_file(pf, srv), '-servername', 'a.test',
                           '-alpn', alpn)
        log = srv.communicate(timeout=TIMEOUT)[0].decode(errors='replace')
        print('--- sotls-peer ---\n' + log)
        return out, log

    out, log = serve('h2,x-conn')
    check('ALPN protocol: x-conn' in out, 'x-conn not negotiated')
    check('ALPN-CALLBACK user=x-conn server_name=a.test offered=h2,x-conn' in log,
          'the callback did not see the connection, its name and the offer')
    check('NEGOTIATED alpn=x-conn' in log, 'sotls-peer did not report x-conn')
    # SOTLS_ALPN_NONE under the default STRICT policy: no_application_protocol.
    out, log = serve('h2')
    check('alert number 120' in out, 'no no_application_protocol when the callback chose none')
    check('HANDSHAKE-FAILED' in log, 'the server did not fail the handshake')


# ---- certificates by SNI and by signature algorithm --------------------------------

def two_names(env):
    a = env.leaf('a', 'ec', ['a.test'])
    b = env.leaf('b', 'ec', ['b.test', '*.b.test'])
    srv, port = env.https([a, b])
    for name, cn in (('a.test', 'a'), ('b.test', 'b'), ('x.b.test', 'b'), ('A.TEST', 'a')):
        out = env.s_client(port, '-servername', name, '-tlsextdebug', '-verify_hostname',
                           name.lower())
        check(subject_cn(out) == cn, '%s: got %s, wanted %s' % (name, subject_cn(out), cn))
        check('Verify return code: 0 (ok)' in out, '%s: did not verify' % name)
        # RFC 6066 §3: the server that used the name "SHALL include an
        # extension of type "server_name" ... The "extension_data" field of
        # this extension SHALL be empty."
        check(SNI_ACK in out, '%s: SNI not acknowledged' % name)
    # RFC 6125 §6.4.3: the wildcard covers one label only.
    out = env.s_client(port, '-servername', 'y.x.b.test', '-tlsextdebug')
    check(subject_cn(out) == 'a' and SNI_ACK not in out,
          'y.x.b.test should get the default, unacknowledged')
    log = server_log(srv)
    check('server_name=x.b.test cert=1' in log and 'server_name=a.test cert=0' in log,
          'server info')


def by_sigalgs(env):
    ec = env.leaf('ec', 'ec', ['a.test'])
    rsa = env.leaf('rsa', 'rsa', ['a.test'])
    srv, port = env.https([ec, rsa])
    # RFC 5246 §7.4.1.4.1: the client's signature_algorithms bound what
    # the server may sign with, so an RSA-only client needs the RSA chain.
    for sigalgs, cn, kind in (('RSA+SHA256', 'rsa', 'RSA'), ('ECDSA+SHA256', 'ec', 'ECDSA')):
        for sni in (['-servername', 'a.test'], ['-noservername']):
            out = env.s_client(port, '-sigalgs', sigalgs, *sni)
            check(subject_cn(out) == cn, '%s %s: got %s' % (sigalgs, sni, subject_cn(out)))
            check('Peer signature type: %s' % kind in out, '%s: signed otherwise' % sigalgs)
    log = server_log(srv)
    check('ECDHE_RSA' in log and 'server_name=a.test cert=1' in log, 'RSA index')
    check('server_name=a.test cert=0' in log, 'ECDSA index')


def unknown_name(env, strict):
    a = env.leaf('a', 'ec', ['a.test'])
    srv, port = env.https([a], *(['--sni-strict'] if strict else []))
    out = env.s_client(port, '-servername', 'nobody.test', '-tlsextdebug')
    if strict:
        # RFC 6066 §3: the server may "abort the handshake by sending a
        # fatal-level unrecognized_name(112) alert".
        check('alert number 112' in out, 'unknown name not refused')
    else:
        # RFC 6066 §3: "or continue the handshake" - with the default, and
        # no acknowledgement, since the name chose nothing.
        check(subject_cn(out) == 'a' and SNI_ACK not in out, 'default not sent')
    # No SNI at all is never refused.
    out = env.s_client(port, '-noservername')
    check(subject_cn(out) == 'a', 'a client without SNI did not get the default')
    log = server_log(srv)
    if strict:
        check('no certificate for the name nobody.test' in log and '(sent unrecognized_name)' in log,
              'no clear reason on the server')


def sni_ack_to_sotls_client(env):
    """The sotls client sends SNI and takes s_server's empty acknowledgement
    (RFC 6066 §3), after which it checks the chosen chain."""
    a = env.leaf('a', 'ec', ['a.test'])
    b = env.leaf('b', 'ec', ['b.test'])
    port = free_port()
    srv = subprocess.Popen([env.a.openssl, 's_server', '-accept', '127.0.0.1:%d' % port,
                            '-naccept', '1', '-cert', a[0], '-key', a[1],
                            '-servername', 'b.test', '-cert2', b[0], '-key2', b[1]],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, cwd=env.dir)
    env.procs.append(srv)
    wait_listening(port, srv)
    cli = subprocess.run([env.a.peer, 'client', '--port', str(port), '--ca', env.path('ca.crt'),
                          '--verify', '--servername', 'b.test'],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT)
    sout = srv.communicate(timeout=TIMEOUT)[0].decode(errors='replace')
    cout = cli.stdout.decode(errors='replace')
    print(cout, sout)
    check('Switching server context' in sout, 's_server did not use the name')
    check('NEGOTIATED alpn=- server_name=b.test cert=-1' in cout, 'sotls client failed')


def sighup_reload(env):
    a = env.leaf('a', 'ec', ['a.test'])
    srv, port = env.https([a])
    ctx = ssl.create_default_context(cafile=env.path('ca.crt'))
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2

    def connect():
        s = ctx.wrap_socket(socket.create_connection(('127.0.0.1', port), timeout=TIMEOUT),
                            server_hostname='a.test')
        return s, dict(x[0] for x in s.getpeercert()['subject'])['commonName']

    def get(s):
        s.sendall(b'GET /hello.txt HTTP/1.1\r\nHost: a.test\r\n\r\n')
        data = b''
        while not data.endswith(b'hello over sotls\n'):
            chunk = s.recv(4096)
            check(chunk, 'connection closed before the body')
            data += chunk

    old, cn = connect()
    check(cn == 'a', 'first certificate')
    get(old)
    # New files under the same names, then SIGHUP.
    fresh = env.leaf('a2', 'ec', ['a.test'])
    os.replace(fresh[0], a[0])
    os.replace(fresh[1], a[1])
    srv.send_signal(signal.SIGHUP)
    deadline = time.time() + TIMEOUT
    while True:
        new, cn = connect()
        if cn == 'a2':
            break
        new.close()
        check(time.time() < deadline, 'the new certificate never came')
        time.sleep(0.05)
    get(new)
    # The connection opened before the reload finishes on the old one.
    get(old)
    old.close()
    new.close()
    log = server_log(srv)
    check('SIGHUP: reloaded 1 certificate(s)' in log, 'no reload line')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('name')
    ap.add_argument('--https-server', required=True)
    ap.add_argument('--peer', required=True)
    ap.add_argument('--openssl', required=True)
    ap.add_argument('--curl', required=True)
    ap.add_argument('--workdir', required=True)
    a = ap.parse_args()
    tests = {
        'alpn-s_client': alpn_s_client,
        'alpn-required': alpn_required,
        'alpn-malformed': alpn_malformed,
        'alpn-curl-http1.1': lambda e: curl_alpn(e, '--http1.1'),
        'alpn-curl-http2': lambda e: curl_alpn(e, '--http2'),
        'alpn-sni-python': python_alpn_sni,
        'alpn-sotls-client': sotls_client_alpn,
        'alpn-callback-conn': alpn_callback_conn,
        'sni-two-names': two_names,
        'sni-by-sigalgs': by_sigalgs,
        'sni-unknown-default': lambda e: unknown_name(e, False),
        'sni-unknown-refused': lambda e: unknown_name(e, True),
        'sni-ack-to-sotls-client': sni_ack_to_sotls_client,
        'cert-reload-sighup': sighup_reload,
    }
    return run_one(tests, a, Features)


if __name__ == '__main__':
    sys.exit(main())
