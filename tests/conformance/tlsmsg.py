"""TLS 1.2 by hand, for the conformance tests: record and handshake message
builders, a record reader over a socket with a timeout on every operation,
and just enough cryptography (ECDHE P-256 / X25519, the RFC 5246 PRF,
AES-128-GCM records) to finish a real handshake as client or server.

Only the suites ECDHE-ECDSA-AES128-GCM-SHA256 (0xC02B) and
ECDHE-RSA-AES128-GCM-SHA256 (0xC02F) are implemented: both use the SHA-256
PRF and the same record protection, which is all a test needs. Builders take
every field as an argument so that a test can put any wrong value in any one
of them.
"""
import hashlib
import hmac
import os
import socket
import struct

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, x25519
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

TLS12 = 0x0303

# RFC 5246 §6.2.1 ContentType; 24 is heartbeat (RFC 6520 §3).
CT_CCS, CT_ALERT, CT_HANDSHAKE, CT_APPDATA, CT_HEARTBEAT = 20, 21, 22, 23, 24

# RFC 5246 §7.4 HandshakeType.
HELLO_REQUEST, CLIENT_HELLO, SERVER_HELLO = 0, 1, 2
CERTIFICATE, SERVER_KEY_EXCHANGE = 11, 12
SERVER_HELLO_DONE, CLIENT_KEY_EXCHANGE, FINISHED = 14, 16, 20

# RFC 5246 §7.2 AlertLevel and AlertDescription (RFC 6066 §3 for 112).
WARNING, FATAL = 1, 2
ALERTS = {
    0: 'close_notify', 10: 'unexpected_message', 20: 'bad_record_mac',
    22: 'record_overflow', 40: 'handshake_failure', 42: 'bad_certificate',
    43: 'unsupported_certificate', 45: 'certificate_expired', 46: 'certificate_unknown',
    47: 'illegal_parameter', 48: 'unknown_ca', 50: 'decode_error', 51: 'decrypt_error',
    70: 'protocol_version', 71: 'insufficient_security', 80: 'internal_error',
    90: 'user_canceled', 100: 'no_renegotiation', 110: 'unsupported_extension',
    112: 'unrecognized_name',
}
ALERT = {name: code for code, name in ALERTS.items()}

# Extension types: RFC 6066 §3 (0), RFC 8422 §5.1 (10, 11), RFC 5246 §7.4.1.4.1
# (13), RFC 7685 (21), RFC 7627 §5.1 (23), RFC 5746 §3.2 (0xff01).
EXT_SERVER_NAME, EXT_GROUPS, EXT_POINT_FORMATS, EXT_SIG_ALGS = 0, 10, 11, 13
EXT_PADDING, EXT_EMS, EXT_RENEGOTIATION_INFO = 21, 23, 0xff01

# RFC 8422 §5.1.1 NamedCurve, RFC 7027 (brainpool), RFC 8446 §4.2.7 (x448).
SECP256K1, SECP256R1 = 22, 23
BRAINPOOL_P256, BRAINPOOL_P384, BRAINPOOL_P512 = 26, 27, 28
X25519, X448 = 29, 30

# RFC 8422 §5.1.2 ECPointFormat.
UNCOMPRESSED, COMPRESSED_PRIME = 0, 1

ECDHE_ECDSA_AES128_GCM = 0xC02B
ECDHE_RSA_AES128_GCM = 0xC02F
EMPTY_RENEGOTIATION_INFO_SCSV = 0x00FF  # RFC 5746 §3.3
# Suites a sotls peer never offers (RSA key exchange, CBC): RFC 5246 §A.5.
TLS_RSA_WITH_AES_128_CBC_SHA = 0x002F

# RFC 5246 §7.4.1.4.1 SignatureAndHashAlgorithm, as 16-bit code points.
SIG_ECDSA_SHA256 = 0x0403
DEFAULT_SIG_ALGS = [0x0403, 0x0503, 0x0603, 0x0401, 0x0501, 0x0601]

# The P-256 field prime (SEC 2 §2.4.2), to build points that are not on it.
P256_P = 2**256 - 2**224 + 2**192 + 2**96 - 1
P256_B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B


class Fail(Exception):
    """A conformance check failed."""


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def u8(v):
    return struct.pack('!B', v)


def u16(v):
    return struct.pack('!H', v)


def u24(v):
    return struct.pack('!I', v)[1:]


def vec8(b):
    return u8(len(b)) + b


def vec16(b):
    return u16(len(b)) + b


def vec24(b):
    return u24(len(b)) + b


def u16_list(values):
    return b''.join(u16(v) for v in values)


def record(ct, body, version=TLS12):
    """RFC 5246 §6.2.1 TLSPlaintext; body is not checked against 2^14."""
    return u8(ct) + u16(version) + u16(len(body)) + body


def handshake(ht, body):
    """RFC 5246 §7.4 Handshake: type, uint24 length, body."""
    return u8(ht) + vec24(body)


def alert(level, desc):
    return u8(level) + u8(desc)


def ext(etype, data):
    """RFC 5246 §7.4.1.4 Extension."""
    return u16(etype) + vec16(data)


def ext_groups(groups):
    return ext(EXT_GROUPS, vec16(u16_list(groups)))


def ext_point_formats(formats):
    return ext(EXT_POINT_FORMATS, vec8(bytes(formats)))


def ext_sig_algs(algs):
    return ext(EXT_SIG_ALGS, vec16(u16_list(algs)))


def ext_padding(n):
    return ext(EXT_PADDING, bytes(n))


def ext_ems():
    return ext(EXT_EMS, b'')


def ext_renegotiation_info():
    return ext(EXT_RENEGOTIATION_INFO, vec8(b''))


def default_client_extensions(groups=(SECP256R1,), point_formats=(UNCOMPRESSED,)):
    return [ext_groups(groups), ext_point_formats(point_formats),
            ext_sig_algs(DEFAULT_SIG_ALGS), ext_ems(), ext_renegotiation_info()]


def client_hello_body(random, suites=(ECDHE_ECDSA_AES128_GCM,), compression=(0,),
                      extensions=None, version=TLS12, session_id=b'', raw_suites=None,
                      raw_extensions=None):
    """RFC 5246 §7.4.1.2 ClientHello. raw_suites replaces the whole
    length-prefixed cipher_suites field, raw_extensions the extensions block
    (for malformed lengths)."""
    if extensions is None:
        extensions = default_client_extensions()
    suites_field = raw_suites if raw_suites is not None else vec16(u16_list(suites))
    body = u16(version) + random + vec8(session_id) + suites_field + vec8(bytes(compression))
    if raw_extensions is not None:
        body += raw_extensions
    elif extensions is not False:
        body += vec16(b''.join(extensions))
    return body


def server_hello_body(random, suite, compression=0, extensions=(), version=TLS12,
                      session_id=b'', raw_extensions=None):
    """RFC 5246 §7.4.1.3 ServerHello; raw_extensions replaces the extensions
    block."""
    body = u16(version) + random + vec8(session_id) + u16(suite) + u8(compression)
    if raw_extensions is not None:
        body += raw_extensions
    elif extensions:
        body += vec16(b''.join(extensions))
    return body


def certificate_body(ders):
    """RFC 5246 §7.4.2 Certificate: certificate_list<0..2^24-1> of ASN.1Cert<1..2^24-1>."""
    return vec24(b''.join(vec24(d) for d in ders))


def ecdh_params(group, point):
    """RFC 8422 §5.4 ServerECDHParams: named_curve (3), NamedCurve, ECPoint."""
    return u8(3) + u16(group) + vec8(point)


def parse_handshakes(buf):
    """Splits complete handshake messages off buf: ([(type, body, raw)], rest)."""
    out = []
    while len(buf) >= 4:
        n = int.from_bytes(buf[1:4], 'big')
        if len(buf) < 4 + n:
            break
        out.append((buf[0], bytes(buf[4:4 + n]), bytes(buf[:4 + n])))
        buf = buf[4 + n:]
    return out, buf


def parse_hello(body):
    """ClientHello or ServerHello fields we need: version, random, and
    (ClientHello) cipher suites or (ServerHello) the chosen suite, and the
    extensions as {type: data}."""
    version = int.from_bytes(body[0:2], 'big')
    random = body[2:34]
    sid_len = body[34]
    p = 35 + sid_len
    return version, random, p


def parse_extensions(data):
    exts = {}
    while len(data) >= 4:
        t = int.from_bytes(data[0:2], 'big')
        n = int.from_bytes(data[2:4], 'big')
        exts[t] = data[4:4 + n]
        data = data[4 + n:]
    return exts


def parse_client_hello(body):
    version, random, p = parse_hello(body)
    n = int.from_bytes(body[p:p + 2], 'big')
    suites = [int.from_bytes(body[p + 2 + i:p + 4 + i], 'big') for i in range(0, n, 2)]
    p += 2 + n
    p += 1 + body[p]
    exts = parse_extensions(body[p + 2:]) if len(body) > p else {}
    return {'version': version, 'random': random, 'suites': suites, 'extensions': exts}


def parse_server_hello(body):
    version, random, p = parse_hello(body)
    suite = int.from_bytes(body[p:p + 2], 'big')
    compression = body[p + 2]
    exts = parse_extensions(body[p + 5:]) if len(body) > p + 3 else {}
    return {'version': version, 'random': random, 'suite': suite,
            'compression': compression, 'extensions': exts}


def parse_server_key_exchange(body):
    """RFC 8422 §5.4: (curve_type, group, point)."""
    return body[0], int.from_bytes(body[1:3], 'big'), body[4:4 + body[3]]


# ---- cryptography -----------------------------------------------------------

def p_sha256(secret, seed, n):
    """RFC 5246 §5 P_hash with SHA-256."""
    out, a = b'', seed
    while len(out) < n:
        a = hmac.new(secret, a, hashlib.sha256).digest()
        out += hmac.new(secret, a + seed, hashlib.sha256).digest()
    return out[:n]


def prf(secret, label, seed, n):
    """RFC 5246 §5: PRF(secret, label, seed) = P_SHA256(secret, label + seed)."""
    return p_sha256(secret, label + seed, n)


class KeyShare:
    """An ephemeral ECDHE key on P-256 or X25519."""

    def __init__(self, group):
        self.group = group
        if group == X25519:
            self.key = x25519.X25519PrivateKey.generate()
            self.public = self.key.public_key().public_bytes(
                serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        elif group == SECP256R1:
            self.key = ec.generate_private_key(ec.SECP256R1())
            self.public = self.key.public_key().public_bytes(
                serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        else:
            raise ValueError('group %d not implemented' % group)

    def compressed(self):
        return self.key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.CompressedPoint)

    def shared(self, peer):
        """The premaster secret: RFC 8422 §5.10 (x of the shared point) and
        RFC 7748 §6.1 (X25519 output)."""
        if self.group == X25519:
            return self.key.exchange(x25519.X25519PublicKey.from_public_bytes(peer))
        pub = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), peer)
        return self.key.exchange(ec.ECDH(), pub)


def p256_off_curve_point():
    """An uncompressed point (x, y) with y^2 != x^3 - 3x + b mod p."""
    x, y = 1, 1
    check((y * y - (x ** 3 - 3 * x + P256_B)) % P256_P != 0, 'point is on the curve')
    return b'\x04' + x.to_bytes(32, 'big') + y.to_bytes(32, 'big')


class Session:
    """Handshake transcript and key schedule of one side of a connection."""

    def __init__(self, is_client):
        self.is_client = is_client
        self.transcript = b''
        self.client_random = b''
        self.server_random = b''
        self.ems = False
        self.master = None

    def add(self, raw):
        self.transcript += raw

    def derive(self, premaster):
        """RFC 5246 §8.1 master secret, or RFC 7627 §4 extended master secret
        over the transcript up to and including the ClientKeyExchange."""
        if self.ems:
            self.master = prf(premaster, b'extended master secret',
                              hashlib.sha256(self.transcript).digest(), 48)
        else:
            self.master = prf(premaster, b'master secret',
                              self.client_random + self.server_random, 48)
        # RFC 5246 §6.3 key_block: client key, server key, client IV, server IV.
        kb = prf(self.master, b'key expansion', self.server_random + self.client_random, 40)
        self.keys = {'client': (kb[0:16], kb[32:36]), 'server': (kb[16:32], kb[36:40])}

    def finished(self, by_client):
        """RFC 5246 §7.4.9 verify_data over the transcript so far."""
        label = b'client finished' if by_client else b'server finished'
        return prf(self.master, label, hashlib.sha256(self.transcript).digest(), 12)

    def own_keys(self):
        return self.keys['client' if self.is_client else 'server']

    def peer_keys(self):
        return self.keys['server' if self.is_client else 'client']


class GcmState:
    """RFC 5288 §3 AES-GCM record protection of one direction."""

    def __init__(self, key, salt):
        self.aead = AESGCM(key)
        self.salt = salt
        self.seq = 0

    def _aad(self, ct, n):
        return struct.pack('!QBHH', self.seq, ct, TLS12, n)

    def seal(self, ct, plaintext):
        explicit = struct.pack('!Q', self.seq)
        out = explicit + self.aead.encrypt(self.salt + explicit, plaintext,
                                           self._aad(ct, len(plaintext)))
        self.seq += 1
        return out

    def open(self, ct, body):
        check(len(body) >= 24, 'encrypted record of %d bytes is too short' % len(body))
        pt = self.aead.decrypt(self.salt + body[:8], body[8:], self._aad(ct, len(body) - 24))
        self.seq += 1
        return pt


class Sealed(bytes):
    """The body of a record the peer protected with keys we do not hold."""


class Conn:
    """A TCP connection carrying TLS records. Every socket operation is bound
    by the socket's timeout; records are protected once tx/rx are set."""

    def __init__(self, sock, timeout):
        self.sock = sock
        self.sock.settimeout(timeout)
        self.buf = b''
        self.tx = None
        self.rx = None
        self.eof = False
        self.reset = False
        self.peer_ccs = False

    @classmethod
    def connect(cls, port, timeout):
        s = socket.create_connection(('127.0.0.1', port), timeout=timeout)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(s, timeout)

    def send_raw(self, data):
        try:
            self.sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            # Whatever the peer sent before it closed says why.
            raise Fail('peer closed while we were sending; it sent: '
                       + describe(self.records_to_eof()))

    def send(self, ct, body, version=TLS12):
        if self.tx is not None:
            body = self.tx.seal(ct, body)
        self.send_raw(record(ct, body, version))

    def send_alert(self, level, desc):
        self.send(CT_ALERT, alert(level, desc))

    def _fill(self, n):
        """Reads until buf holds n bytes; False on EOF or reset before that."""
        while len(self.buf) < n and not self.eof:
            try:
                d = self.sock.recv(65536)
            except ConnectionResetError:
                d = b''
                self.reset = True
            except socket.timeout:
                raise Fail('peer neither sent nor closed within %.0f s (%d bytes pending)'
                           % (self.sock.gettimeout(), len(self.buf)))
            if not d:
                self.eof = True
            self.buf += d
        return len(self.buf) >= n

    def peek(self):
        """True once a byte is there, False at EOF before any."""
        return self._fill(1)

    def read_record(self):
        """(content_type, version, plaintext) or None at a clean EOF between
        records. A record cut by EOF fails the test."""
        if not self._fill(5):
            check(not self.buf, 'EOF inside a record header: %s' % self.buf.hex())
            return None
        ct, version, n = struct.unpack('!BHH', self.buf[:5])
        check(self._fill(5 + n), 'EOF inside a record of %d bytes (type %d)' % (n, ct))
        body, self.buf = self.buf[5:5 + n], self.buf[5 + n:]
        if self.rx is not None:
            body = self.rx.open(ct, body)
        elif self.peer_ccs:
            body = Sealed(body)
        self.peer_ccs = self.peer_ccs or ct == CT_CCS
        return ct, version, body

    def records_to_eof(self):
        out = []
        while True:
            try:
                r = self.read_record()
            except Fail as e:
                raise Fail('%s; it sent: %s' % (e, describe(out)))
            if r is None:
                return out
            out.append(r)

    def start_tx(self, key_iv):
        self.tx = GcmState(*key_iv)

    def start_rx(self, key_iv):
        self.rx = GcmState(*key_iv)

    def close(self):
        self.sock.close()


def describe(records):
    """One line per record, for failure messages and logs."""
    out = []
    for ct, _, body in records:
        if isinstance(body, Sealed):
            out.append('encrypted(type %d, %d bytes)' % (ct, len(body)))
        elif ct == CT_ALERT and len(body) == 2:
            out.append('alert(%s %s)' % ({1: 'warning', 2: 'fatal'}.get(body[0], body[0]),
                                         ALERTS.get(body[1], body[1])))
        elif ct == CT_HANDSHAKE and body:
            out.append('handshake(type %d, %d bytes)' % (body[0], len(body)))
        else:
            out.append('record(type %d, %d bytes)' % (ct, len(body)))
    return ', '.join(out) or 'nothing'


def sign_ecdsa(key, data):
    return key.sign(data, ec.ECDSA(hashes.SHA256()))


def random32():
    return os.urandom(32)


# ---- handshake drivers --------------------------------------------------------

MAX_FRAGMENT = 16384  # RFC 5246 §6.2.1: TLSPlaintext.length <= 2^14


class Endpoint:
    """What a hand-driven client and server share: sending handshake
    messages (recorded in the transcript), reading them back across record
    boundaries, and the Finished exchange."""

    def __init__(self, conn, is_client):
        self.conn = conn
        self.s = Session(is_client)
        self.hs_buf = b''
        self.pending = []
        self.seen = []  # every record read, for failure messages

    def send_hs(self, raw, fragment=MAX_FRAGMENT, transcript=True, version=TLS12):
        """Sends one or more handshake messages, fragment bytes per record
        (each record protected on its own once keys are on), in records of
        the given version."""
        if transcript:
            self.s.add(raw)
        for i in range(0, len(raw), fragment):
            self.conn.send(CT_HANDSHAKE, raw[i:i + fragment], version)

    def next_record(self):
        r = self.conn.read_record()
        check(r is not None, 'peer closed; records so far: ' + describe(self.seen))
        self.seen.append(r)
        ct, _, body = r
        if ct == CT_ALERT:
            raise Fail('peer sent %s; records so far: %s' % (describe([r]), describe(self.seen)))
        return r

    def read_hs(self, want):
        """The next handshake message, which must be of type want: (body, raw)."""
        while not self.pending:
            ct, _, body = self.next_record()
            check(ct == CT_HANDSHAKE, 'expected handshake type %d, got %s'
                  % (want, describe([(ct, 0, body)])))
            self.pending, self.hs_buf = parse_handshakes(self.hs_buf + body)
        t, body, raw = self.pending.pop(0)
        check(t == want, 'expected handshake type %d, got %d' % (want, t))
        self.s.add(raw)
        return body, raw

    def send_finished(self, fragment=MAX_FRAGMENT):
        self.conn.send(CT_CCS, b'\x01')
        self.conn.start_tx(self.s.own_keys())
        self.send_hs(handshake(FINISHED, self.s.finished(self.s.is_client)), fragment)

    def read_finished(self):
        ct, _, body = self.next_record()
        check(ct == CT_CCS and body == b'\x01', 'expected ChangeCipherSpec, got '
              + describe([(ct, 0, body)]))
        self.conn.start_rx(self.s.peer_keys())
        expect = self.s.finished(not self.s.is_client)
        body, _ = self.read_hs(FINISHED)
        check(body == expect, 'peer Finished does not verify')

    def read_data(self, n):
        """n bytes of application data (other records fail the test)."""
        got = b''
        while len(got) < n:
            ct, _, body = self.next_record()
            check(ct == CT_APPDATA, 'expected application data, got ' + describe([(ct, 0, body)]))
            got += body
        return got

    def echo(self, data):
        self.conn.send(CT_APPDATA, data)
        check(self.read_data(len(data)) == data, 'echo differs')

    def close_notify(self):
        """RFC 5246 §7.2.1: our close_notify, the peer's, then EOF."""
        self.conn.send_alert(WARNING, ALERT['close_notify'])
        rest = self.conn.records_to_eof()
        check([(ct, b) for ct, _, b in rest] == [(CT_ALERT, alert(WARNING, 0))],
              'expected close_notify then EOF, got ' + describe(rest))


class Client(Endpoint):
    """A TLS 1.2 client driven step by step."""

    def __init__(self, conn, group=SECP256R1):
        super().__init__(conn, True)
        self.share = KeyShare(group)
        self.flight = {}

    def hello(self, fragment=MAX_FRAGMENT, record_version=TLS12, **fields):
        self.s.client_random = random32()
        raw = handshake(CLIENT_HELLO, client_hello_body(self.s.client_random, **fields))
        self.send_hs(raw, fragment, version=record_version)
        return raw

    def read_flight(self):
        """ServerHello .. ServerHelloDone; keeps each body in self.flight."""
        body, _ = self.read_hs(SERVER_HELLO)
        sh = parse_server_hello(body)
        self.flight['server_hello'] = sh
        self.s.server_random = sh['random']
        self.s.ems = EXT_EMS in sh['extensions']
        self.flight['certificate'], _ = self.read_hs(CERTIFICATE)
        self.flight['ske'] = parse_server_key_exchange(self.read_hs(SERVER_KEY_EXCHANGE)[0])
        self.read_hs(SERVER_HELLO_DONE)
        return self.flight

    def key_exchange(self, point=None):
        """RFC 8422 §5.7 ClientKeyExchange: ECPoint ecdh_Yc<1..2^8-1>."""
        _, group, server_point = self.flight['ske']
        check(group == self.share.group, 'server chose group %d' % group)
        raw = handshake(CLIENT_KEY_EXCHANGE, vec8(self.share.public if point is None else point))
        self.send_hs(raw)
        if point is None:
            self.s.derive(self.share.shared(server_point))

    def complete(self, finished_fragment=MAX_FRAGMENT):
        """ClientKeyExchange through the server's Finished."""
        self.key_exchange()
        self.send_finished(finished_fragment)
        self.read_finished()

    def handshake(self, **hello_fields):
        self.hello(**hello_fields)
        self.read_flight()
        self.complete()


class Server(Endpoint):
    """A TLS 1.2 ECDHE-ECDSA server driven step by step."""

    def __init__(self, conn, cert_ders, key):
        super().__init__(conn, False)
        self.cert_ders = cert_ders
        self.key = key
        self.share = KeyShare(SECP256R1)

    def read_client_hello(self):
        body, _ = self.read_hs(CLIENT_HELLO)
        self.ch = parse_client_hello(body)
        self.s.client_random = self.ch['random']
        return self.ch

    def server_hello(self, suite=ECDHE_ECDSA_AES128_GCM, compression=0, version=TLS12):
        """Answers what the client asked for: EMS (RFC 7627 §5.2), the
        renegotiation_info extension (RFC 5746 §3.6), uncompressed points."""
        exts = []
        if EXT_RENEGOTIATION_INFO in self.ch['extensions'] or \
                EMPTY_RENEGOTIATION_INFO_SCSV in self.ch['suites']:
            exts.append(ext_renegotiation_info())
        if EXT_EMS in self.ch['extensions']:
            exts.append(ext_ems())
            self.s.ems = True
        if EXT_POINT_FORMATS in self.ch['extensions']:
            exts.append(ext_point_formats([UNCOMPRESSED]))
        self.s.server_random = random32()
        return handshake(SERVER_HELLO, server_hello_body(self.s.server_random, suite,
                                                         compression, exts, version))

    def server_key_exchange(self, point=None):
        """RFC 8422 §5.4, signed with ecdsa_secp256r1_sha256 over both randoms
        and the params, whatever point they carry."""
        params = ecdh_params(SECP256R1, self.share.public if point is None else point)
        sig = sign_ecdsa(self.key, self.s.client_random + self.s.server_random + params)
        return handshake(SERVER_KEY_EXCHANGE, params + u16(SIG_ECDSA_SHA256) + vec16(sig))

    def flight(self, server_hello=None, ske_point=None, record_version=TLS12):
        """ServerHello, Certificate, ServerKeyExchange, ServerHelloDone as one
        write, in records of record_version."""
        sh = server_hello if server_hello is not None else self.server_hello()
        self.send_hs(sh + handshake(CERTIFICATE, certificate_body(self.cert_ders))
                     + self.server_key_exchange(ske_point) + handshake(SERVER_HELLO_DONE, b''),
                     version=record_version)

    def complete(self, finished_fragment=MAX_FRAGMENT):
        """The client's ClientKeyExchange, CCS and Finished, then ours."""
        body, _ = self.read_hs(CLIENT_KEY_EXCHANGE)
        check(len(body) >= 1 and body[0] == len(body) - 1, 'malformed ClientKeyExchange')
        self.s.derive(self.share.shared(body[1:]))
        self.read_finished()
        self.send_finished(finished_fragment)

    def handshake(self):
        self.read_client_hello()
        self.flight()
        self.complete()
