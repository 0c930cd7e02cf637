#!/usr/bin/env python3
"""Conformance cases for issue 12: hand-built TLS 1.2 records (tlsmsg.py)
against sotls-echo-server, and a hand-driven TLS 1.2 server against
sotls-echo-client (and sotls-peer where the echo client has no flag for the
case). Every failure case asserts the exact alert (level and description),
that it is the last record the peer sends, and that the peer then closes.
One case per invocation:

    conformance.py NAME --echo-server ... --echo-client ... --peer ...
                   --openssl openssl --workdir BUILD_DIR
    conformance.py list       (the case names, for meson.build)

Exit status 0 passed, 1 failed, 77 skipped (a kTLS case on a kernel without
kTLS).
"""
import argparse
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

from cryptography.hazmat.primitives import serialization

import tlsmsg as t
from tlsmsg import (ALERT, CT_ALERT, CT_APPDATA, CT_CCS, CT_HANDSHAKE, CT_HEARTBEAT, FATAL,
                    WARNING, Fail, check)

IO_TIMEOUT = 10  # seconds, every socket operation
PROC_TIMEOUT = 30
SKIP = 77
MESSAGE = b'sotls conformance echo\n'


class Skip(Exception):
    pass


class Env:
    """Work directory, certificates made with `openssl req`, and the
    processes a case starts (all killed at the end)."""

    def __init__(self, args):
        self.a = args
        self.dir = tempfile.mkdtemp(prefix='conformance-', dir=args.workdir)
        self.procs = []

    def path(self, name):
        return os.path.join(self.dir, name)

    def openssl(self, *argv):
        subprocess.run([self.a.openssl, *argv], check=True, cwd=self.dir,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)

    def cert(self, name, keytype='ec', cn='localhost', ca=None):
        """(cert, key) for CN=cn with a DNS SAN, signed by the CA named ca
        (made with ca_cert), or self-signed."""
        crt, key = self.path(name + '.crt'), self.path(name + '.key')
        if os.path.exists(crt):
            return crt, key
        newkey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'] if keytype == 'ec' \
            else ['-newkey', 'rsa:2048']
        with open(self.path(name + '.ext'), 'w') as f:
            f.write('subjectAltName=DNS:%s\nbasicConstraints=CA:FALSE\n' % cn)
        self.openssl('req', *newkey, '-nodes', '-keyout', key, '-out', name + '.csr',
                     '-subj', '/CN=' + cn)
        signer = ['-CA', ca + '.crt', '-CAkey', ca + '.key', '-CAcreateserial'] if ca \
            else ['-signkey', key]
        self.openssl('x509', '-req', '-in', name + '.csr', *signer, '-out', crt,
                     '-days', '2', '-extfile', name + '.ext')
        return crt, key

    def ca_cert(self, name):
        if not os.path.exists(self.path(name + '.crt')):
            self.openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256',
                         '-nodes', '-keyout', name + '.key', '-out', name + '.crt',
                         '-subj', '/CN=sotls conformance CA', '-days', '2')
        return self.path(name + '.crt')

    def spawn(self, argv, **kw):
        kw.setdefault('stdin', subprocess.DEVNULL)
        kw.setdefault('stdout', subprocess.PIPE)
        kw.setdefault('stderr', subprocess.PIPE)
        p = subprocess.Popen(argv, cwd=self.dir, **kw)
        self.procs.append((p, os.path.basename(argv[0])))
        return p

    def echo_server(self, *extra):
        """A sotls-echo-server for one client; returns (process, port)."""
        pf = self.path('port-%d' % len(self.procs))
        p = self.spawn([self.a.echo_server, '--once', '--port', '0', '--port-file', pf, *extra])
        deadline = time.time() + PROC_TIMEOUT
        while time.time() < deadline:
            if os.path.exists(pf):
                with open(pf) as f:
                    text = f.read()
                if text.endswith('\n'):
                    return p, int(text)
            if p.poll() is not None:
                raise Fail('echo server exited: ' + p.communicate()[1].decode(errors='replace'))
            time.sleep(0.02)
        raise Fail('echo server did not start')

    def finish(self, p, what):
        """Waits for p; logs its output for the report."""
        if p.stdin is not None and p.stdin.closed:
            p.stdin = None  # communicate() would flush it
        try:
            out, err = p.communicate(timeout=PROC_TIMEOUT)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            self.note('%s did not exit within %d s' % (what, PROC_TIMEOUT))
        self.note('%s exit %s: %s%s' % (what, p.returncode, out.decode(errors='replace'),
                                         err.decode(errors='replace')))
        return p.returncode, out.decode(errors='replace'), err.decode(errors='replace')

    def note(self, text):
        print(text.rstrip())

    def cleanup(self, ok):
        """Kills what still runs; logs the output finish() did not."""
        for p, name in self.procs:
            if p.returncode is None:
                if p.poll() is None:
                    p.kill()
                    name += ' (killed)'
                self.finish(p, name)
        if ok:
            shutil.rmtree(self.dir, ignore_errors=True)


def expect_alert(ep, level, desc, before=()):
    """Reads to EOF: the peer's last record must be exactly this alert, and
    only records of the content types in `before` may precede it. RFC 5246
    §7.2.2: "Upon transmission or receipt of a fatal alert message, both
    parties immediately close the connection." """
    recs = ep.conn.records_to_eof()
    got = t.describe(recs)
    print('peer sent after our input: %s, then %s' % (got, 'a reset' if ep.conn.reset else 'EOF'))
    want = t.describe([(CT_ALERT, 0, t.alert(level, desc))])
    check(recs, 'expected %s, but the peer closed with no alert' % want)
    ct, _, body = recs[-1]
    check(ct == CT_ALERT and body == t.alert(level, desc),
          'expected %s as the last record, got: %s' % (want, got))
    for r in recs[:-1]:
        check(r[0] in before, 'expected only %s, got: %s' % (want, got))


def fatal(ep, name, before=()):
    expect_alert(ep, FATAL, ALERT[name], before)


def finish_echo_close(c):
    c.echo(MESSAGE)
    c.close_notify()


def server_ok(env, srv):
    rc, _, _ = env.finish(srv, 'sotls-echo-server')
    check(rc == 0, 'echo server did not end cleanly')


# ---- server side: hand-built client against sotls-echo-server -------------

def connect(env, *server_args, group=t.SECP256R1):
    srv, port = env.echo_server(*server_args)
    return srv, t.Client(t.Conn.connect(port, IO_TIMEOUT), group)


def rsa_server_args(env):
    """An RSA certificate: X25519-only clients cannot use the default ECDSA
    P-256 certificate (RFC 8422 §4: the server must respect the client's
    curves), so the X25519 cases run ECDHE-RSA."""
    cert, key = env.cert('rsa', 'rsa')
    return ['--cert', cert, '--key', key]


def x25519_client(env):
    srv, c = connect(env, *rsa_server_args(env), group=t.X25519)
    c.hello(suites=(t.ECDHE_RSA_AES128_GCM,),
            extensions=t.default_client_extensions(groups=(t.X25519,)))
    c.read_flight()
    return srv, c


def after_flight(env, **hello):
    srv, c = connect(env)
    c.hello(**hello)
    c.read_flight()
    return srv, c


def first_message(env, data, alert_name):
    """data in place of the ClientHello: the alert must be the only reply."""
    srv, c = connect(env)
    c.conn.send_raw(data)
    fatal(c, alert_name)
    env.finish(srv, 'sotls-echo-server')


def hello_refused(env, alert_name, **hello):
    """A ClientHello the server must refuse before sending anything."""
    srv, c = connect(env)
    c.hello(**hello)
    fatal(c, alert_name)
    env.finish(srv, 'sotls-echo-server')


def exts_with(replace_type, new_ext):
    """The default extensions with one replaced (or added)."""
    out = [e for e in t.default_client_extensions() if e[:2] != t.u16(replace_type)]
    return out + [new_ext]


CASES = {}


def case(name):
    def register(fn):
        CASES[name] = fn
        return fn
    return register


# RFC 5246 §7.4: "The handshake protocol messages are presented below in the
# order they MUST be sent; sending handshake messages in an unexpected order
# results in a fatal error." §7.2.2 unexpected_message: "An inappropriate
# message was received."
@case('server-certificate-instead-of-client-hello')
def _(env):
    first_message(env, t.record(CT_HANDSHAKE, t.handshake(t.CERTIFICATE, t.certificate_body([]))),
                  'unexpected_message')


@case('server-server-hello-instead-of-client-hello')
def _(env):
    body = t.server_hello_body(t.random32(), t.ECDHE_ECDSA_AES128_GCM)
    first_message(env, t.record(CT_HANDSHAKE, t.handshake(t.SERVER_HELLO, body)),
                  'unexpected_message')


@case('server-client-key-exchange-without-client-hello')
def _(env):
    cke = t.handshake(t.CLIENT_KEY_EXCHANGE, t.vec8(t.KeyShare(t.SECP256R1).public))
    first_message(env, t.record(CT_HANDSHAKE, cke), 'unexpected_message')


@case('server-change-cipher-spec-without-client-hello')
def _(env):
    # RFC 5246 §7.1: ChangeCipherSpec is sent "during the handshake after the
    # security parameters have been agreed upon"; before a ClientHello it is
    # an inappropriate message (§7.2.2 unexpected_message).
    first_message(env, t.record(CT_CCS, b'\x01'), 'unexpected_message')


@case('server-sslv2-client-hello')
def _(env):
    # RFC 5246 §E.2 format: msg_length (high bit set), msg_type 1, version,
    # cipher_spec_length, session_id_length, challenge_length, specs, challenge.
    # sotls does not take SSLv2-format hellos (RFC 6176 §3: servers "MUST
    # abort the connection" for SSL 2.0). Read as a TLS record its first byte
    # is content type 0x80, and RFC 5246 §6: "If a TLS implementation
    # receives an unexpected record type, it MUST send an unexpected_message
    # alert." (protocol_version would claim a version was negotiated and
    # refused; nothing was: the record itself is not TLS.)
    specs = b''.join(b'\x00' + t.u16(s) for s in (t.ECDHE_ECDSA_AES128_GCM, t.ECDHE_RSA_AES128_GCM))
    challenge = os.urandom(32)
    msg = t.u8(1) + t.u16(t.TLS12) + t.u16(len(specs)) + t.u16(0) + t.u16(len(challenge)) \
        + specs + challenge
    first_message(env, t.u16(0x8000 | len(msg)) + msg, 'unexpected_message')


@case('server-change-cipher-spec-instead-of-client-key-exchange')
def _(env):
    # RFC 5246 §7.4.7: ClientKeyExchange "MUST be the first message sent by
    # the client after it receives the ServerHelloDone message" (no client
    # certificate was asked for).
    srv, c = after_flight(env)
    c.conn.send(CT_CCS, b'\x01')
    fatal(c, 'unexpected_message')
    env.finish(srv, 'sotls-echo-server')


@case('server-finished-instead-of-client-key-exchange')
def _(env):
    srv, c = after_flight(env)  # RFC 5246 §7.4.7, as above
    c.send_hs(t.handshake(t.FINISHED, os.urandom(12)))
    fatal(c, 'unexpected_message')
    env.finish(srv, 'sotls-echo-server')


@case('server-second-client-hello')
def _(env):
    # RFC 5246 §7.4 (order) and §7.4.1.2: a ClientHello comes first, or in
    # answer to a HelloRequest, or to renegotiate an established connection;
    # a second one before the ClientKeyExchange is out of order.
    srv, c = after_flight(env)
    c.hello()
    fatal(c, 'unexpected_message')
    env.finish(srv, 'sotls-echo-server')


@case('server-heartbeat-in-handshake')
def _(env):
    # RFC 6520 §2: heartbeats only once the extension is negotiated (it was
    # not); RFC 5246 §6: "If a TLS implementation receives an unexpected
    # record type, it MUST send an unexpected_message alert."
    srv, c = after_flight(env)
    payload = os.urandom(16)
    c.conn.send(CT_HEARTBEAT, t.u8(1) + t.u16(len(payload)) + payload + os.urandom(16))
    fatal(c, 'unexpected_message')
    env.finish(srv, 'sotls-echo-server')


# RFC 8422 §5.11: "With the NIST curves, each party MUST validate the public
# key sent by its peer in the ClientKeyExchange and ServerKeyExchange
# messages. A receiving party MUST check that the x and y parameters from
# the peer's public value satisfy the curve equation". A point that fails is
# a field out of range: RFC 5246 §7.2.2 illegal_parameter.
def bad_cke(env, point, alert_name, x25519=False):
    srv, c = x25519_client(env) if x25519 else after_flight(env)
    c.key_exchange(point)
    fatal(c, alert_name)
    env.finish(srv, 'sotls-echo-server')


@case('server-cke-point-zero')
def _(env):
    bad_cke(env, b'\x04' + bytes(64), 'illegal_parameter')


@case('server-cke-point-off-curve')
def _(env):
    bad_cke(env, t.p256_off_curve_point(), 'illegal_parameter')


@case('server-cke-point-compressed')
def _(env):
    # RFC 8422 §5.1.2: implementations "MUST NOT support other formats" than
    # uncompressed; the server's point formats offered only uncompressed.
    bad_cke(env, t.KeyShare(t.SECP256R1).compressed(), 'illegal_parameter')


@case('server-cke-point-truncated')
def _(env):
    # RFC 8422 §5.4.1: an uncompressed P-256 point is 65 bytes; 64 cannot be
    # decoded (RFC 5246 §7.2.2 decode_error).
    bad_cke(env, t.KeyShare(t.SECP256R1).public[:-1], 'decode_error')


@case('server-cke-point-length-past-message')
def _(env):
    # RFC 8422 §5.7 ecdh_Yc<1..2^8-1>: a vector length of 66 over 65 bytes
    # runs past the message (RFC 5246 §7.2.2 decode_error: "the length of the
    # message was incorrect").
    srv, c = after_flight(env)
    c.send_hs(t.handshake(t.CLIENT_KEY_EXCHANGE, t.u8(66) + t.KeyShare(t.SECP256R1).public))
    fatal(c, 'decode_error')
    env.finish(srv, 'sotls-echo-server')


# RFC 8422 §5.4: "For the X25519 and X448 curves, the only valid
# representation is the one specified in [RFC7748], a 32- or 56-octet
# representation of the u value of the point." Other lengths: decode_error.
@case('server-x25519-share-empty')
def _(env):
    bad_cke(env, b'', 'decode_error', x25519=True)


@case('server-x25519-share-short')
def _(env):
    bad_cke(env, os.urandom(31), 'decode_error', x25519=True)


@case('server-x25519-share-long')
def _(env):
    bad_cke(env, os.urandom(33), 'decode_error', x25519=True)


@case('server-x25519-share-zero')
def _(env):
    # RFC 8422 §5.11: "With X25519 and X448, a receiving party MUST check
    # whether the computed premaster secret is the all-zero value and abort
    # the handshake if so, as described in Section 6 of [RFC7748]." The zero
    # u-coordinate is a low-order point: the peer's field is out of range,
    # RFC 5246 §7.2.2 illegal_parameter (handshake_failure would say no
    # parameters could be agreed, which they were).
    bad_cke(env, bytes(32), 'illegal_parameter', x25519=True)


# A ClientHello in several records: RFC 5246 §6.2.1: "multiple client
# messages of the same ContentType MAY be coalesced into a single
# TLSPlaintext record, or a single message MAY be fragmented across several
# records".
def fragmented_hello(env, fragment, **hello):
    srv, c = connect(env)
    c.hello(fragment=fragment, **hello)
    c.read_flight()
    c.complete()
    finish_echo_close(c)
    server_ok(env, srv)


@case('server-client-hello-in-two-records')
def _(env):
    fragmented_hello(env, 40)


@case('server-client-hello-in-one-byte-records')
def _(env):
    fragmented_hello(env, 1)


@case('server-client-hello-padded-over-one-record')
def _(env):
    # RFC 7685 padding extension: 17000 bytes, so the ClientHello is larger
    # than one record (2^14, RFC 5246 §6.2.1) and must span two.
    fragmented_hello(env, t.MAX_FRAGMENT,
                     extensions=t.default_client_extensions() + [t.ext_padding(17000)])


def wait_for(p, needle, timeout):
    """Reads p.stdout until needle appears; returns what was read."""
    got = b''
    deadline = time.time() + timeout
    while needle not in got and time.time() < deadline:
        r, _, _ = select.select([p.stdout], [], [], 0.2)
        if r:
            d = os.read(p.stdout.fileno(), 65536)
            if not d:
                break
            got += d
    return got


@case('server-openssl-max-send-frag-512')
def _(env):
    # openssl s_client sends its ClientHello in records of -max_send_frag
    # bytes (RFC 5246 §6.2.1 fragmentation, as above). OpenSSL 3.0 refuses
    # values below 512 ("out of permitted range"), so 64 cannot be asked
    # for; 20 ALPN names of 94 bytes (RFC 7301, ignored by the server) make
    # the ClientHello about 2.2 KB: five records.
    srv, port = env.echo_server()
    alpn = ','.join('p%02d-' % i + 'x' * 90 for i in range(20))
    cli = env.spawn([env.a.openssl, 's_client', '-connect', '127.0.0.1:%d' % port,
                     '-max_send_frag', '512', '-alpn', alpn, '-brief'], stdin=subprocess.PIPE)
    try:
        cli.stdin.write(MESSAGE)
        cli.stdin.flush()
        got = wait_for(cli, MESSAGE, IO_TIMEOUT)
        cli.stdin.close()
    except BrokenPipeError:
        got = b''  # s_client is gone: finish() says why
    rc, _, err = env.finish(cli, 's_client')
    check(MESSAGE in got, 'no echo through s_client: %r' % got)
    check('Protocol version: TLSv1.2' in err, 's_client did not negotiate TLS 1.2')
    server_ok(env, srv)


# RFC 8422 §4: "servers MUST NOT negotiate the use of an ECC cipher suite
# unless they can complete the handshake while respecting the choice of
# curves specified by the client"; RFC 5246 §7.4.1.3: the ServerHello is sent
# "when it was able to find an acceptable set of algorithms. If it cannot
# find such a match, it will respond with a handshake failure alert."
# With an ECDSA P-256 certificate the curve list already rules out every
# suite; with RSA only the ECDHE groups do, and the server must not send a
# ServerHello it cannot follow with a ServerKeyExchange.
UNSUPPORTED_GROUPS = (t.X448, t.BRAINPOOL_P256, t.BRAINPOOL_P384, t.BRAINPOOL_P512,
                      t.SECP256K1)


@case('server-only-unsupported-groups-ecdsa')
def _(env):
    hello_refused(env, 'handshake_failure',
                  extensions=t.default_client_extensions(UNSUPPORTED_GROUPS))


@case('server-only-unsupported-groups-rsa')
def _(env):
    srv, c = connect(env, *rsa_server_args(env))
    c.hello(suites=(t.ECDHE_RSA_AES128_GCM,),
            extensions=t.default_client_extensions(UNSUPPORTED_GROUPS))
    fatal(c, 'handshake_failure')
    env.finish(srv, 'sotls-echo-server')


def s_client_x448(env, *server_args):
    srv, port = env.echo_server(*server_args)
    cli = env.spawn([env.a.openssl, 's_client', '-connect', '127.0.0.1:%d' % port,
                     '-groups', 'X448', '-msg'])
    rc, out, err = env.finish(cli, 's_client')
    env.finish(srv, 'sotls-echo-server')
    # -msg: one "<<< VERSION, TYPE [length N], ..." line per message received.
    received = [line for line in out.splitlines()
                if line.startswith('<<<') and 'RecordHeader' not in line]
    check(received, 's_client received nothing')
    check(not any('ServerHello' in line for line in received),
          'a ServerHello came before the alert: %s' % received)
    check(received[-1].endswith('Alert [length 0002], fatal handshake_failure'),
          'the last message s_client received is not a fatal handshake_failure: %s'
          % received[-1])
    check(rc != 0, 's_client succeeded')


@case('server-openssl-groups-x448-ecdsa')
def _(env):
    s_client_x448(env)


@case('server-openssl-groups-x448-rsa')
def _(env):
    s_client_x448(env, *rsa_server_args(env))


@case('server-point-formats-compressed-first')
def _(env):
    # RFC 8422 §5.1.2: implementations "MUST support the uncompressed format
    # for all of their supported curves and MUST NOT support other formats";
    # §5.4.1: the server's point is UncompressedPointRepresentation (0x04).
    srv, c = connect(env)
    c.hello(extensions=t.default_client_extensions(
        point_formats=(t.COMPRESSED_PRIME, t.UNCOMPRESSED)))
    _, _, point = c.read_flight()['ske']
    check(len(point) == 65 and point[0] == 4,
          'ServerKeyExchange point is not uncompressed: %s' % point[:1].hex())
    c.complete()
    finish_echo_close(c)
    server_ok(env, srv)


@case('server-point-formats-without-uncompressed')
def _(env):
    # RFC 8422 §5.1.2: "If the client sends the extension and the extension
    # does not contain the uncompressed point format, and the client has used
    # the Supported Groups extension to indicate support for any of the
    # curves defined in this specification, then the server MUST abort the
    # handshake and return an illegal_parameter alert."
    hello_refused(env, 'illegal_parameter', extensions=t.default_client_extensions(
        point_formats=(t.COMPRESSED_PRIME,)))


@case('server-point-formats-empty')
def _(env):
    # RFC 8422 §5.1.2: ECPointFormat ec_point_format_list<1..2^8-1>. An empty
    # list is outside the vector's legal lengths (RFC 5246 §4.3), so it fails
    # to decode before its content can be judged: RFC 5246 §7.2.2
    # decode_error ("some field was out of the specified range"). OpenSSL
    # sends decode_error for it too.
    hello_refused(env, 'decode_error', extensions=t.default_client_extensions(
        point_formats=()))


@case('server-compression-deflate-only')
def _(env):
    # RFC 5246 §7.4.1.2: compression_methods "MUST contain, and all
    # implementations MUST support, CompressionMethod.null". The list decodes
    # but its content is invalid: illegal_parameter (RFC 5246 §7.2.2: "A field
    # in the handshake was out of range"). (OpenSSL sends decode_error.)
    hello_refused(env, 'illegal_parameter', compression=(1,))


def higher_version(env, version):
    # RFC 5246 §E.1: "If a TLS server receives a ClientHello containing a
    # version number greater than the highest version supported by the
    # server, it MUST reply according to the highest version supported by
    # the server."
    srv, c = connect(env)
    c.hello(version=version)
    sh = c.read_flight()['server_hello']
    check(sh['version'] == t.TLS12, 'ServerHello version 0x%04x' % sh['version'])
    c.complete()
    finish_echo_close(c)
    server_ok(env, srv)


@case('server-client-version-0x0304')
def _(env):
    higher_version(env, 0x0304)


@case('server-client-version-0x0401')
def _(env):
    higher_version(env, 0x0401)


# Issue 20 item 6. RFC 5246 E.1: "Thus, a TLS server MUST accept any value
# {03,XX} as the record layer version number for ClientHello." Once the hello
# is in, TLS 1.2 is the version: a later record of another version is refused
# with protocol_version (as OpenSSL does).
def hello_record_version(env, version):
    srv, c = connect(env)
    c.hello(record_version=version)
    c.read_flight()
    c.complete()
    finish_echo_close(c)
    server_ok(env, srv)


@case('server-client-hello-record-version-0x0304')
def _(env):
    hello_record_version(env, 0x0304)


@case('server-client-hello-record-version-0x03fe')
def _(env):
    hello_record_version(env, 0x03FE)


@case('server-client-hello-record-version-0x0301')
def _(env):
    hello_record_version(env, 0x0301)


@case('server-record-version-after-hello')
def _(env):
    srv, c = after_flight(env)
    c.send_hs(t.handshake(t.CLIENT_KEY_EXCHANGE, t.vec8(c.share.public)), version=0x0301)
    fatal(c, 'protocol_version')
    env.finish(srv, 'sotls-echo-server')


def after_client_ccs(env):
    """A client past its ClientKeyExchange and ChangeCipherSpec, sealing."""
    srv, c = after_flight(env)
    c.key_exchange()
    c.conn.send(CT_CCS, b'\x01')
    c.conn.start_tx(c.s.own_keys())
    return srv, c, t.handshake(t.FINISHED, c.s.finished(True))


@case('server-finished-record-version-0x0301')
def _(env):
    # The same for the encrypted Finished: its header is checked before it
    # is opened.
    srv, c, fin = after_client_ccs(env)
    c.conn.send(CT_HANDSHAKE, fin, version=0x0301)
    fatal(c, 'protocol_version')
    env.finish(srv, 'sotls-echo-server')


# Issue 20 item 7. RFC 5246 §6.2.1: "a single message MAY be fragmented
# across several records"; that holds for the Finished, encrypted, too. Cut
# into records of 1, 2 or 3 bytes, its 4-byte header spans records. The echo
# afterwards checks that the record layer continues from the number of
# records the peer sent.
def split_finished_to_server(env, fragment):
    srv, c = connect(env)
    c.hello()
    c.read_flight()
    c.complete(finished_fragment=fragment)
    finish_echo_close(c)
    server_ok(env, srv)


for _n in (1, 2, 3, 5):
    CASES['server-client-finished-in-%d-byte-records' % _n] = \
        (lambda n: lambda e: split_finished_to_server(e, n))(_n)


@case('server-client-finished-split-bad-mac')
def _(env):
    # The reader now opens the Finished records itself: a forged one is
    # still bad_record_mac (RFC 5246 §7.2.2), whichever record it is.
    srv, c, fin = after_client_ccs(env)
    c.conn.send(CT_HANDSHAKE, fin[:2])
    sealed = c.conn.tx.seal(CT_HANDSHAKE, fin[2:])
    c.conn.send_raw(t.record(CT_HANDSHAKE, sealed[:-1] + bytes([sealed[-1] ^ 1])))
    fatal(c, 'bad_record_mac')
    env.finish(srv, 'sotls-echo-server')


# Issue 20 item 8. RFC 8422 §4: "A client that proposes ECC cipher suites may
# choose not to include these extensions. In this case, the server is free to
# choose any one of the elliptic curves or point formats listed in Section 5."
# sotls chooses P-256.
def no_supported_groups(env, *server_args, suite=t.ECDHE_ECDSA_AES128_GCM):
    srv, c = connect(env, *server_args)
    exts = [e for e in t.default_client_extensions() if e[:2] != t.u16(t.EXT_GROUPS)]
    c.hello(suites=(suite,), extensions=exts)
    _, group, _ = c.read_flight()['ske']
    check(group == t.SECP256R1, 'ServerKeyExchange on group %d, not P-256' % group)
    c.complete()
    finish_echo_close(c)
    server_ok(env, srv)


@case('server-no-supported-groups-ecdsa')
def _(env):
    no_supported_groups(env)


@case('server-no-supported-groups-rsa')
def _(env):
    no_supported_groups(env, *rsa_server_args(env), suite=t.ECDHE_RSA_AES128_GCM)


@case('server-no-supported-groups-nor-point-formats')
def _(env):
    # Neither ECC extension (RFC 8422 §4 speaks of both): points are then
    # uncompressed (§5.1.2), the group P-256.
    srv, c = connect(env)
    c.hello(extensions=[t.ext_sig_algs(t.DEFAULT_SIG_ALGS), t.ext_ems(),
                        t.ext_renegotiation_info()])
    _, group, point = c.read_flight()['ske']
    check(group == t.SECP256R1 and point[:1] == b'\x04',
          'ServerKeyExchange on group %d, point format %s' % (group, point[:1].hex()))
    c.complete()
    finish_echo_close(c)
    server_ok(env, srv)


# Issue 20 item 9. RFC 5246 §7.2.2 decode_error: "A message could not be
# decoded because some field was out of the specified range or the length of
# the message was incorrect." A hello that does not decode gets it, whatever
# else is wrong with it; what it means is judged only once it decodes.
@case('server-extensions-past-message-and-no-null-compression')
def _(env):
    exts = b''.join(t.default_client_extensions())
    hello_refused(env, 'decode_error', compression=(1,),
                  raw_extensions=t.u16(len(exts) + 10) + exts)


@case('server-bad-point-formats-then-malformed-extension')
def _(env):
    # ec_point_formats without uncompressed (illegal_parameter on its own)
    # before an empty signature_algorithms list, which does not decode.
    exts = [t.ext_point_formats([t.COMPRESSED_PRIME]), t.ext_groups([t.SECP256R1]),
            t.ext(t.EXT_SIG_ALGS, t.vec16(b''))]
    hello_refused(env, 'decode_error', extensions=exts)


# Issue 20 item 10: ClientHellos up to 32 KiB (32768 bytes, header included)
# are accepted, whatever makes them long; a longer one gets illegal_parameter
# (docs/protocol.md, "Records"). RFC 5246 §7.4.1.2 cipher_suites<2..2^16-2> allows
# such a list.
def long_hello_fields(size, via='suites'):
    """A ClientHello of exactly size bytes (handshake header included), long
    through its cipher list (unassigned suites, then the real one) or its
    signature_algorithms (pairs with no hash sotls has, then the usual)."""
    base = len(t.handshake(t.CLIENT_HELLO, t.client_hello_body(t.random32())))
    fill = size - base
    check(fill >= 0 and fill % 2 == 0, 'cannot make a ClientHello of %d bytes' % size)
    if via == 'suites':
        return {'suites': [0x0A00 + i for i in range(fill // 2)] + [t.ECDHE_ECDSA_AES128_GCM]}
    algs = [0x0100 + i % 256 for i in range(fill // 2)] + t.DEFAULT_SIG_ALGS
    return {'extensions': exts_with(t.EXT_SIG_ALGS, t.ext_sig_algs(algs))}


def long_hello(env, size, via='suites'):
    srv, c = connect(env)
    raw = c.hello(**long_hello_fields(size, via))
    check(len(raw) == size, 'ClientHello of %d bytes' % len(raw))
    c.read_flight()
    c.complete()
    finish_echo_close(c)
    server_ok(env, srv)


@case('server-client-hello-32768-bytes-long-cipher-list')
def _(env):
    long_hello(env, 32768)


@case('server-client-hello-16386-bytes-long-cipher-list')
def _(env):
    long_hello(env, 16386)


@case('server-client-hello-32768-bytes-long-signature-algorithms')
def _(env):
    long_hello(env, 32768, 'sig_algs')


@case('server-client-hello-32770-bytes')
def _(env):
    # Only the first record goes out: the header's length is enough for the
    # refusal, and a server that closes with unread bytes would reset the
    # connection, which can drop its alert before we read it.
    srv, c = connect(env)
    raw = t.handshake(t.CLIENT_HELLO, t.client_hello_body(t.random32(), **long_hello_fields(32770)))
    check(len(raw) == 32770, 'ClientHello of %d bytes' % len(raw))
    c.conn.send(CT_HANDSHAKE, raw[:t.MAX_FRAGMENT])
    fatal(c, 'illegal_parameter')
    env.finish(srv, 'sotls-echo-server')


# Lengths that do not decode: RFC 5246 §7.2.2 decode_error, "A message could
# not be decoded because some field was out of the specified range or the
# length of the message was incorrect."
@case('server-signature-algorithms-empty')
def _(env):
    # RFC 5246 §7.4.1.4.1: supported_signature_algorithms<2..2^16-2>.
    hello_refused(env, 'decode_error',
                  extensions=exts_with(t.EXT_SIG_ALGS, t.ext(t.EXT_SIG_ALGS, t.vec16(b''))))


@case('server-sni-name-length-past-list')
def _(env):
    # RFC 6066 §3: ServerNameList server_name_list<1..2^16-1> of
    # {NameType name_type; HostName host_name<1..2^16-1>}; here host_name's
    # length runs 10 bytes past the list.
    name = b'localhost'
    bad = t.ext(t.EXT_SERVER_NAME, t.vec16(t.u8(0) + t.u16(len(name) + 10) + name))
    hello_refused(env, 'decode_error', extensions=exts_with(t.EXT_SERVER_NAME, bad))


@case('server-cipher-suites-odd-length')
def _(env):
    # RFC 5246 §7.4.1.2: CipherSuite cipher_suites<2..2^16-2>, two bytes each.
    hello_refused(env, 'decode_error',
                  raw_suites=t.u16(3) + t.u16(t.ECDHE_ECDSA_AES128_GCM) + b'\x00')


@case('server-cipher-suites-length-past-message')
def _(env):
    hello_refused(env, 'decode_error',
                  raw_suites=t.u16(0x1000) + t.u16(t.ECDHE_ECDSA_AES128_GCM))


# CVE-2016-8610: warnings during the handshake must be capped. The shared
# interface allows 4 (any warning but close_notify counts); the 5th gets a
# fatal unexpected_message. unrecognized_name is a warning by RFC 6066 §3.
HANDSHAKE_WARNINGS_ACCEPTED = 4


def warnings_in_handshake(c, n):
    for _ in range(n):
        c.conn.send_alert(WARNING, ALERT['unrecognized_name'])


@case('server-handshake-warnings-within-cap')
def _(env):
    srv, c = after_flight(env)
    warnings_in_handshake(c, HANDSHAKE_WARNINGS_ACCEPTED)
    c.complete()
    finish_echo_close(c)
    server_ok(env, srv)


@case('server-handshake-warnings-past-cap')
def _(env):
    srv, c = after_flight(env)
    warnings_in_handshake(c, HANDSHAKE_WARNINGS_ACCEPTED + 1)
    fatal(c, 'unexpected_message')
    env.finish(srv, 'sotls-echo-server')


# After the handshake (issue 12 item 6). Both the userspace record layer and
# kTLS must answer the same way.
def ktls_args(path):
    if path == 'ktls':
        if not os.path.exists('/proc/net/tls_stat'):
            raise Skip('no kTLS in this kernel')
        return ['--ktls', 'require']
    return ['--ktls', 'off']


def established(env, path):
    srv, c = connect(env, *ktls_args(path))
    c.handshake()
    c.echo(MESSAGE)
    return srv, c


def post_handshake_refused(env, path, message, alert_name):
    srv, c = established(env, path)
    c.conn.send(CT_HANDSHAKE, message)
    fatal(c, alert_name)
    env.finish(srv, 'sotls-echo-server')


def server_post_handshake_client_hello(env, path):
    # RFC 5246 §7.2.2 no_renegotiation: "Sent by the client in response to a
    # hello request or by the server in response to a client hello after
    # initial handshaking. [...] This message is always a warning." RFC 5746
    # §4.4: a server that does not renegotiate answers so.
    srv, c = established(env, path)
    c.s.client_random = t.random32()
    c.conn.send(CT_HANDSHAKE, t.handshake(t.CLIENT_HELLO, t.client_hello_body(c.s.client_random)))
    r = c.conn.read_record()
    check(r is not None, 'server closed instead of answering no_renegotiation')
    check(r[0] == CT_ALERT and r[2] == t.alert(WARNING, ALERT['no_renegotiation']),
          'expected a no_renegotiation warning, got ' + t.describe([r]))
    finish_echo_close(c)
    server_ok(env, srv)


def server_post_handshake_cases():
    msgs = {
        # RFC 5246 §7.4: out-of-order handshake messages are fatal; only a
        # ClientHello may be refused with a warning (above).
        'finished': (t.handshake(t.FINISHED, os.urandom(12)), 'unexpected_message'),
        'certificate': (t.handshake(t.CERTIFICATE, t.certificate_body([])),
                        'unexpected_message'),
        # RFC 5246 §7.4.1.1: HelloRequest is sent by the server only.
        'hello-request': (t.handshake(t.HELLO_REQUEST, b''), 'unexpected_message'),
        # RFC 5246 §6.2.1: "Implementations MUST NOT send zero-length
        # fragments of Handshake, Alert, or ChangeCipherSpec content types."
        'empty-handshake-record': (b'', 'decode_error'),
    }
    for path in ('userspace', 'ktls'):
        CASES['server-post-handshake-client-hello-' + path] = \
            (lambda p: lambda e: server_post_handshake_client_hello(e, p))(path)
        for what, (msg, alert_name) in msgs.items():
            CASES['server-post-handshake-%s-%s' % (what, path)] = \
                (lambda p, m, a: lambda e: post_handshake_refused(e, p, m, a))(
                    path, msg, alert_name)


server_post_handshake_cases()


# ---- client side: sotls-echo-client against a hand-driven server ----------

def load_cert(cert_path, key_path):
    """([certificate DER], private key) for tlsmsg.Server."""
    with open(key_path, 'rb') as f:
        key = serialization.load_pem_private_key(f.read(), None)
    with open(cert_path) as f:
        return [ssl.PEM_cert_to_DER_cert(f.read())], key


class ClientRun:
    """A listening socket, the sotls client connecting to it, and our end."""

    def __init__(self, env, argv, cert='server', cert_args=None):
        ders, key = load_cert(*env.cert(cert, **(cert_args or {})))
        ls = socket.socket()
        ls.bind(('127.0.0.1', 0))
        ls.listen(1)
        ls.settimeout(IO_TIMEOUT)
        with open(env.path('stdin'), 'wb') as f:
            f.write(MESSAGE)
        stdin = open(env.path('stdin'), 'rb')
        self.env = env
        self.proc = env.spawn([a.replace('PORT', str(ls.getsockname()[1])) for a in argv],
                              stdin=stdin)
        stdin.close()
        try:
            sock, _ = ls.accept()
        except socket.timeout:
            raise Fail('the sotls client did not connect: %s' % (env.finish(self.proc,
                                                                              'client'),))
        finally:
            ls.close()
        self.srv = t.Server(t.Conn(sock, IO_TIMEOUT), ders, key)

    def result(self):
        return self.env.finish(self.proc, 'sotls client')

    def failed(self, ep_alert, before=()):
        expect_alert(self.srv, FATAL, ALERT[ep_alert], before)
        rc, out, err = self.result()
        check(rc == 1, 'the client exited %s, not 1' % rc)
        return out + err


def echo_client(env, *extra):
    return ClientRun(env, [env.a.echo_client, '--host', '127.0.0.1', '--port', 'PORT',
                           '--insecure', *extra])


def client_refuses_flight(env, alert_name, sh=None, **flight):
    run = echo_client(env)
    run.srv.read_client_hello()
    run.srv.flight(server_hello=sh(run.srv) if sh else None, **flight)
    run.failed(alert_name)
    return run


@case('client-server-hello-unoffered-suite')
def _(env):
    # RFC 5246 §7.4.1.3: cipher_suite is "The single cipher suite selected by
    # the server from the list in ClientHello.cipher_suites"; another one is
    # a field out of range (RFC 5246 §7.2.2 illegal_parameter).
    def sh(srv):
        check(t.TLS_RSA_WITH_AES_128_CBC_SHA not in srv.ch['suites'], 'the client offers it')
        return srv.server_hello(suite=t.TLS_RSA_WITH_AES_128_CBC_SHA)
    client_refuses_flight(env, 'illegal_parameter', sh)


@case('client-server-hello-deflate')
def _(env):
    # RFC 5246 §7.4.1.3: compression_method is "The single compression
    # algorithm selected by the server from the list in
    # ClientHello.compression_methods" (the client offers null only).
    client_refuses_flight(env, 'illegal_parameter', lambda srv: srv.server_hello(compression=1))


def client_version(env, version):
    # RFC 5246 §E.1: "If the version chosen by the server is not supported by
    # the client (or not acceptable), the client MUST send a
    # "protocol_version" alert message and close the connection."
    client_refuses_flight(env, 'protocol_version', lambda srv: srv.server_hello(version=version))


@case('client-server-hello-version-0x0302')
def _(env):
    client_version(env, 0x0302)


@case('client-server-hello-version-0x0304')
def _(env):
    client_version(env, 0x0304)


# Issue 20 item 6, the client: the ServerHello's record may carry any
# {03,XX} (as OpenSSL's client takes it); the records after it must carry
# TLS 1.2's {03,03}.
@case('client-server-hello-record-version-0x0301')
def _(env):
    run = echo_client(env)
    run.srv.read_client_hello()
    run.srv.flight(record_version=0x0301)
    run.srv.complete()
    client_echo_close(run, run.srv.read_data(len(MESSAGE)))


@case('client-record-version-after-server-hello')
def _(env):
    run = echo_client(env)
    srv = run.srv
    srv.read_client_hello()
    srv.send_hs(srv.server_hello())
    srv.send_hs(t.handshake(t.CERTIFICATE, t.certificate_body(srv.cert_ders)), version=0x0301)
    run.failed('protocol_version')


# Issue 20 item 7, the client: the server's Finished cut into records of 1,
# 2, 3 bytes (RFC 5246 §6.2.1), then the echo on the record layer.
def split_finished_to_client(env, fragment):
    run = echo_client(env)
    run.srv.read_client_hello()
    run.srv.flight()
    run.srv.complete(finished_fragment=fragment)
    client_echo_close(run, run.srv.read_data(len(MESSAGE)))


for _n in (1, 2, 3, 5):
    CASES['client-server-finished-in-%d-byte-records' % _n] = \
        (lambda n: lambda e: split_finished_to_client(e, n))(_n)


# Issue 20 item 9, the client: a ServerHello whose extensions block runs past
# the message is decode_error even when its compression method is also wrong
# (RFC 5246 §7.2.2).
@case('client-server-hello-extensions-past-message-and-deflate')
def _(env):
    def sh(srv):
        srv.s.server_random = t.random32()
        exts = t.ext_renegotiation_info() + t.ext_ems()
        return t.handshake(t.SERVER_HELLO, t.server_hello_body(
            srv.s.server_random, t.ECDHE_ECDSA_AES128_GCM, compression=1,
            raw_extensions=t.u16(len(exts) + 10) + exts))
    client_refuses_flight(env, 'decode_error', sh)


@case('client-ske-point-compressed')
def _(env):
    # RFC 8422 §5.1.2: no format but uncompressed may be used; the client
    # offered only uncompressed. A decodable point in a format not agreed is
    # illegal_parameter (RFC 5246 §7.2.2).
    client_refuses_flight(env, 'illegal_parameter', ske_point=t.KeyShare(t.SECP256R1).compressed())


@case('client-ske-point-off-curve')
def _(env):
    # RFC 8422 §5.11: the client MUST check the ServerKeyExchange point is on
    # the curve; RFC 5246 §7.2.2 illegal_parameter.
    client_refuses_flight(env, 'illegal_parameter', ske_point=t.p256_off_curve_point())


@case('client-ske-point-truncated')
def _(env):
    # RFC 8422 §5.4.1: 65 bytes for P-256; 64 do not decode (decode_error).
    client_refuses_flight(env, 'decode_error', ske_point=t.KeyShare(t.SECP256R1).public[:-1])


@case('client-wrong-name-ip-literal')
def _(env):
    # A certificate for evil.example, signed by the CA the client trusts,
    # while the client was asked for 127.0.0.1: RFC 6125 §6.2.1 / RFC 5280
    # §4.2.1.6 (an IP reference identity matches only an iPAddress SAN).
    # RFC 5246 §7.2.2 bad_certificate for a certificate that fails checks.
    ca = env.ca_cert('ca')
    run = ClientRun(env, [env.a.echo_client, '--host', '127.0.0.1', '--port', 'PORT',
                          '--ca', ca],
                    cert='evil', cert_args={'cn': 'evil.example', 'ca': 'ca'})
    run.srv.read_client_hello()
    run.srv.flight()
    text = run.failed('bad_certificate')
    check(any(w in text.lower() for w in ('name', 'host', 'ip address')),
          'the error does not say the name did not match: ' + text)


@case('client-verify-without-server-name')
def _(env):
    # Verification on and no server name: the client must fail closed
    # (issue 12 Deliver 4; CVE-2025-27809). No RFC names an alert for a local
    # policy: it may refuse before its ClientHello (no bytes at all) or send
    # one fatal alert after the Certificate; it must never go on to its
    # ClientKeyExchange.
    ca = env.ca_cert('ca')
    run = ClientRun(env, [env.a.peer, 'client', '--port', 'PORT', '--verify', '--ca', ca],
                    cert='leaf', cert_args={'ca': 'ca'})
    if run.srv.conn.peek():
        run.srv.read_client_hello()
        run.srv.flight()
        rest = run.srv.conn.records_to_eof()
        print('client sent after our flight: ' + t.describe(rest))
        check(len(rest) <= 1 and all(r[0] == CT_ALERT and r[2][:1] == t.u8(FATAL) for r in rest),
              'the client went on: ' + t.describe(rest))
    else:
        print('client closed before its ClientHello')
    rc, out, err = run.result()
    check(rc == 1, 'the client exited %s, not 1' % rc)
    check('name' in (out + err).lower(), 'the error does not name the missing server name')


def client_established(env, path):
    run = echo_client(env, *ktls_args(path))
    run.srv.handshake()
    return run


def client_post_handshake_hello_request(env, path):
    # RFC 5246 §7.2.2 no_renegotiation, "Sent by the client in response to a
    # hello request [...] This message is always a warning."; the connection
    # goes on: the client's data is echoed and both close_notify pass.
    run = client_established(env, path)
    srv = run.srv
    srv.conn.send(CT_HANDSHAKE, t.handshake(t.HELLO_REQUEST, b''))
    got, warned = b'', False
    while len(got) < len(MESSAGE) or not warned:
        r = srv.conn.read_record()
        check(r is not None, 'client closed; data %r, warning %s' % (got, warned))
        if r[0] == CT_APPDATA:
            got += r[2]
        else:
            check(r[0] == CT_ALERT and r[2] == t.alert(WARNING, ALERT['no_renegotiation']),
                  'expected a no_renegotiation warning, got ' + t.describe([r]))
            warned = True
    client_echo_close(run, got)


def client_echo_close(run, got):
    """Echoes the client's data, then close_notify both ways."""
    check(got == MESSAGE, 'client sent %r' % got)
    run.srv.conn.send(CT_APPDATA, got)
    r = run.srv.conn.read_record()
    check(r is not None and r[0] == CT_ALERT and r[2] == t.alert(WARNING, 0),
          'expected the client\'s close_notify, got ' + t.describe([r] if r else []))
    run.srv.conn.send_alert(WARNING, 0)
    rc, out, _ = run.result()
    check(rc == 0 and out.encode() == MESSAGE, 'client did not finish the echo')


def client_post_handshake_refused(env, path, message, alert_name):
    run = client_established(env, path)
    run.srv.conn.send(CT_HANDSHAKE, message)
    # The client may send its data before it reads our record.
    run.failed(alert_name, before=(CT_APPDATA,))


def client_post_handshake_cases():
    msgs = {
        # RFC 5246 §7.4.1.1: only a HelloRequest may be refused with a
        # warning; other handshake messages after the handshake are out of
        # order (§7.4).
        'server-hello': (t.handshake(t.SERVER_HELLO, t.server_hello_body(
            t.random32(), t.ECDHE_ECDSA_AES128_GCM)), 'unexpected_message'),
        'finished': (t.handshake(t.FINISHED, os.urandom(12)), 'unexpected_message'),
        # RFC 5246 §7.4.1.1: "struct { } HelloRequest;" has no body.
        'hello-request-with-body': (t.handshake(t.HELLO_REQUEST, b'\x00'),
                                    'unexpected_message'),
        # RFC 5246 §6.2.1: no zero-length Handshake fragments.
        'empty-handshake-record': (b'', 'decode_error'),
    }
    for path in ('userspace', 'ktls'):
        CASES['client-post-handshake-hello-request-' + path] = \
            (lambda p: lambda e: client_post_handshake_hello_request(e, p))(path)
        for what, (msg, alert_name) in msgs.items():
            CASES['client-post-handshake-%s-%s' % (what, path)] = \
                (lambda p, m, a: lambda e: client_post_handshake_refused(e, p, m, a))(
                    path, msg, alert_name)


client_post_handshake_cases()


@case('client-handshake-warnings-past-cap')
def _(env):
    run = echo_client(env)
    run.srv.read_client_hello()
    warnings_in_handshake(run.srv, HANDSHAKE_WARNINGS_ACCEPTED + 1)
    run.failed('unexpected_message')


@case('client-handshake-warnings-within-cap')
def _(env):
    run = echo_client(env)
    run.srv.read_client_hello()
    warnings_in_handshake(run.srv, HANDSHAKE_WARNINGS_ACCEPTED)
    run.srv.flight()
    run.srv.complete()
    client_echo_close(run, run.srv.read_data(len(MESSAGE)))


# ---- the builders themselves, against OpenSSL ------------------------------
# A conformance failure must mean sotls is wrong, not tlsmsg.py: these cases
# finish real handshakes with OpenSSL through the same code paths.

def python_ssl_echo(ls, cert, key):
    """One TLS 1.2 echo connection served by Python's ssl (OpenSSL) on ls."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(cert, key)
    conn, _ = ls.accept()
    conn.settimeout(IO_TIMEOUT)
    with ctx.wrap_socket(conn, server_side=True) as s:
        while True:
            d = s.recv(65536)
            if not d:
                break
            s.sendall(d)
        s.unwrap()


@case('selftest-client-vs-openssl')
def _(env):
    variants = [('ec', t.SECP256R1, t.ECDHE_ECDSA_AES128_GCM, 1, True),
                ('rsa', t.X25519, t.ECDHE_RSA_AES128_GCM, t.MAX_FRAGMENT, False)]
    for keytype, group, suite, fragment, ems in variants:
        cert, key = env.cert('self-' + keytype, keytype)
        ls = socket.socket()
        ls.bind(('127.0.0.1', 0))
        ls.listen(1)
        ls.settimeout(IO_TIMEOUT)
        errors = []

        def serve():
            try:
                python_ssl_echo(ls, cert, key)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)
        th = threading.Thread(target=serve)
        th.start()
        c = t.Client(t.Conn.connect(ls.getsockname()[1], IO_TIMEOUT), group)
        exts = t.default_client_extensions(groups=(group,))
        if not ems:
            exts = [e for e in exts if e[:2] != t.u16(t.EXT_EMS)]
        c.hello(fragment=fragment, suites=(suite,), extensions=exts)
        c.read_flight()
        check(c.s.ems == ems, 'extended master secret not as offered')
        c.complete()
        finish_echo_close(c)
        th.join(IO_TIMEOUT)
        ls.close()
        check(not errors, 'OpenSSL side: %r' % errors)


@case('selftest-server-vs-openssl')
def _(env):
    cert, key = env.cert('server')
    ls = socket.socket()
    ls.bind(('127.0.0.1', 0))
    ls.listen(1)
    ls.settimeout(IO_TIMEOUT)
    cli = env.spawn([env.a.openssl, 's_client', '-connect', '127.0.0.1:%d' % ls.getsockname()[1],
                     '-tls1_2', '-CAfile', cert, '-verify_return_error', '-servername',
                     'localhost', '-brief'], stdin=subprocess.PIPE)
    sock, _ = ls.accept()
    ls.close()
    srv = t.Server(t.Conn(sock, IO_TIMEOUT), *load_cert(cert, key))
    srv.handshake()
    check(srv.s.ems, 's_client did not get extended master secret')
    cli.stdin.write(MESSAGE)
    cli.stdin.flush()
    srv.conn.send(CT_APPDATA, srv.read_data(len(MESSAGE)))
    got = wait_for(cli, MESSAGE, IO_TIMEOUT)
    cli.stdin.close()
    rc, _, err = env.finish(cli, 's_client')
    check(got == MESSAGE, 's_client got %r' % got)
    check('Verification: OK' in err, 's_client did not verify the certificate')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('name')
    for opt in ('--echo-server', '--echo-client', '--peer', '--openssl', '--workdir'):
        ap.add_argument(opt)
    a = ap.parse_args()
    if a.name == 'list':  # for meson.build: one test per case
        print('\n'.join(CASES))
        return 0
    if None in (a.echo_server, a.echo_client, a.peer, a.openssl, a.workdir):
        ap.error('every path option is required to run a case')
    if a.name not in CASES:
        print('unknown case ' + a.name)
        return 2
    env = Env(a)
    ok, status = False, 1
    try:
        CASES[a.name](env)
        ok, status = True, 0
    except Skip as e:
        ok, status = True, SKIP
        print('SKIP: %s' % e)
    except Fail as e:
        print('FAIL: %s' % e)
    except Exception as e:  # noqa: BLE001 - anything else is a failure too
        print('FAIL: %r' % e)
    finally:
        env.cleanup(ok)
    print({0: 'PASS', SKIP: 'SKIP'}.get(status, 'FAIL') + ' ' + a.name)
    return status


if __name__ == '__main__':
    sys.exit(main())
