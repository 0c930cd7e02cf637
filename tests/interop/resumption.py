#!/usr/bin/env python3
"""Session resumption (RFC 5246 §7.3, session tickets RFC 5077) against real
peers: openssl s_client (-reconnect, -sess_out / -sess_in), Python's ssl
(session=) and openssl s_server, with sotls-echo-server, -event-echo-server,
-uring-server, -https-server and sotls-echo-client as the sotls ends. Tickets
that cannot be used (expired, under a retired key, tampered with) and sessions
offered under another server name get full handshakes; two server processes
share tickets (one key file) and sessions (one --session-store directory). One
test per invocation:

    resumption.py NAME --echo-server B --echo-client B --event-server B
                  --https-server B --uring-server B --ticket-keys B --openssl B
                  --workdir DIR

A relay in front of the server (Tap) keeps each connection's bytes, so that a
test sees what the client offered (its ClientHello's session ID and
SessionTicket extension) and whether the server's answer was abbreviated (no
Certificate): a full handshake after a tampered ticket proves nothing unless
the tampered ticket was sent.
"""
import argparse
import base64
import os
import re
import select
import socket
import ssl
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop import Fail, check, free_port, run_one, s_client_converse, wait_listening  # noqa: E402
from server_features import Features  # noqa: E402

TIMEOUT = 30
# SSL_OP_NO_EXTENDED_MASTER_SECRET of OpenSSL 3.0 (ssl.h), which Python's ssl
# module does not name; its options setter passes the bit through.
OP_NO_EXTENDED_MASTER_SECRET = 1
EXT_SESSION_TICKET = 35  # RFC 5077 §3.2
HS_CLIENT_HELLO, HS_CERTIFICATE, HS_NEW_SESSION_TICKET = 1, 11, 4
# The ticket of a sotls server (sotls.h): key name | nonce | AES-256-GCM
# ciphertext | tag.
KEY_NAME, NONCE, TAG = 16, 12, 16


# ---- DER, for OpenSSL's SSL_SESSION ------------------------------------------

def der_read(buf, i):
    """The TLV at buf[i]: (tag, value, index after it). Short and long
    definite lengths (X.690 §8.1.3), all a DER encoder writes."""
    check(i + 2 <= len(buf), 'DER: truncated header')
    tag, n = buf[i], buf[i + 1]
    i += 2
    if n & 0x80:
        k = n & 0x7f
        check(0 < k <= 4 and i + k <= len(buf), 'DER: bad length')
        n = int.from_bytes(buf[i:i + k], 'big')
        i += k
    check(i + n <= len(buf), 'DER: value past the end')
    return tag, buf[i:i + n], i + n


def der_items(buf):
    items, i = [], 0
    while i < len(buf):
        tag, val, i = der_read(buf, i)
        items.append((tag, val))
    return items


def der_write(tag, val):
    n = len(val)
    if n < 0x80:
        length = bytes([n])
    else:
        b = n.to_bytes((n.bit_length() + 7) // 8, 'big')
        length = bytes([0x80 | len(b)]) + b
    return bytes([tag]) + length + val


PEM_SESSION = 'SSL SESSION PARAMETERS'
# OpenSSL's SSL_SESSION_ASN1 (ssl/ssl_asn1.c): SEQUENCE { version INTEGER,
# ssl_version INTEGER, cipher OCTET STRING, session_id OCTET STRING, ...,
# tlsext_tick [10] EXPLICIT OCTET STRING OPTIONAL, ... }.
TAG_SEQUENCE, TAG_OCTET_STRING, TAG_TICKET = 0x30, 0x04, 0xaa


def session_items(path):
    with open(path) as f:
        lines = f.read().splitlines()
    check(lines and lines[0] == '-----BEGIN %s-----' % PEM_SESSION, path + ': not a session')
    der = base64.b64decode(''.join(line for line in lines if not line.startswith('-----')))
    tag, body, end = der_read(der, 0)
    check(tag == TAG_SEQUENCE and end == len(der), path + ': not one SEQUENCE')
    return der_items(body)


def session_id(path):
    tag, val = session_items(path)[3]
    check(tag == TAG_OCTET_STRING, path + ': no session_id')
    return val


def session_ticket(path):
    """The ticket s_client keeps in the session file (b'' if none)."""
    for tag, val in session_items(path):
        if tag == TAG_TICKET:
            inner, ticket, _ = der_read(val, 0)
            check(inner == TAG_OCTET_STRING, path + ': ticket is not an OCTET STRING')
            return ticket
    return b''


def with_ticket(src, dst, ticket):
    """Writes src's session to dst with ticket in place of its own."""
    items = [(tag, der_write(TAG_OCTET_STRING, ticket) if tag == TAG_TICKET else val)
             for tag, val in session_items(src)]
    der = der_write(TAG_SEQUENCE, b''.join(der_write(t, v) for t, v in items))
    b64 = base64.b64encode(der).decode()
    with open(dst, 'w') as f:
        f.write('-----BEGIN %s-----\n' % PEM_SESSION)
        f.write(''.join(b64[i:i + 64] + '\n' for i in range(0, len(b64), 64)))
        f.write('-----END %s-----\n' % PEM_SESSION)


# ---- the wire ------------------------------------------------------------------

def handshake_messages(stream):
    """(type, body) of the handshake messages in the plaintext records at the
    start of stream, up to the first ChangeCipherSpec (RFC 5246 §6.2.1, §7.4)."""
    hs, i = b'', 0
    while i + 5 <= len(stream):
        ctype, n = stream[i], int.from_bytes(stream[i + 3:i + 5], 'big')
        if ctype == 20 or i + 5 + n > len(stream):
            break
        if ctype == 22:
            hs += stream[i + 5:i + 5 + n]
        i += 5 + n
    msgs, j = [], 0
    while j + 4 <= len(hs):
        n = int.from_bytes(hs[j + 1:j + 4], 'big')
        if j + 4 + n > len(hs):
            break
        msgs.append((hs[j], hs[j + 4:j + 4 + n]))
        j += 4 + n
    return msgs


def client_hello_offer(body):
    """(session_id, SessionTicket extension data or None) of a ClientHello
    body (RFC 5246 §7.4.1.2)."""
    i = 2 + 32
    sid = body[i + 1:i + 1 + body[i]]
    i += 1 + body[i]
    i += 2 + int.from_bytes(body[i:i + 2], 'big')
    i += 1 + body[i]
    ticket = None
    if i + 2 <= len(body):
        end = i + 2 + int.from_bytes(body[i:i + 2], 'big')
        i += 2
        while i + 4 <= end:
            t, n = int.from_bytes(body[i:i + 2], 'big'), int.from_bytes(body[i + 2:i + 4], 'big')
            if t == EXT_SESSION_TICKET:
                ticket = body[i + 4:i + 4 + n]
            i += 4 + n
    return sid, ticket


class Tap:
    """A TCP relay to 127.0.0.1:upstream that keeps the first bytes of each
    connection both ways."""

    KEEP = 1 << 16

    def __init__(self, upstream):
        self.ls = socket.socket()
        self.ls.bind(('127.0.0.1', 0))
        self.ls.listen(16)
        self.port = self.ls.getsockname()[1]
        self.upstream = upstream
        self.conns = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.ls.accept()
            except OSError:
                return
            u = socket.create_connection(('127.0.0.1', self.upstream), timeout=TIMEOUT)
            rec = (bytearray(), bytearray())
            self.conns.append(rec)
            for src, dst, buf in ((c, u, rec[0]), (u, c, rec[1])):
                threading.Thread(target=self._pump, args=(src, dst, buf), daemon=True).start()

    def _pump(self, src, dst, buf):
        try:
            while True:
                d = src.recv(65536)
                if not d:
                    break
                if len(buf) < self.KEEP:
                    buf += d
                dst.sendall(d)
        except OSError:
            pass
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def offer(self, k):
        """What connection k's ClientHello offered: (session_id, ticket)."""
        msgs = handshake_messages(bytes(self.conns[k][0]))
        check(msgs and msgs[0][0] == HS_CLIENT_HELLO, 'connection %d: no ClientHello' % k)
        return client_hello_offer(msgs[0][1])

    def abbreviated(self, k):
        """Whether the server answered connection k without a Certificate:
        the abbreviated handshake of RFC 5246 §7.3."""
        types = [t for t, _ in handshake_messages(bytes(self.conns[k][1]))]
        check(types, 'connection %d: no ServerHello' % k)
        return HS_CERTIFICATE not in types

    def new_ticket(self, k):
        """The ticket of the NewSessionTicket the server sent connection k
        (RFC 5077 §3.3: lifetime hint, then the ticket<0..2^16-1>; before the
        ChangeCipherSpec, so in the clear), or None."""
        for t, body in handshake_messages(bytes(self.conns[k][1])):
            if t == HS_NEW_SESSION_TICKET:
                n = int.from_bytes(body[4:6], 'big')
                check(6 + n == len(body), 'connection %d: malformed NewSessionTicket' % k)
                return body[6:]
        return None


# ---- ticket key files ------------------------------------------------------------

def new_key(intro, expiry=0):
    return {'name': os.urandom(KEY_NAME), 'secret': os.urandom(32), 'intro': int(intro),
            'expiry': int(expiry)}


def write_key_file(path, keys):
    """The ticket key file format of sotls.h (newest first), replaced
    atomically, mode 0600 from the start."""
    tmp = path + '.tmp'
    if os.path.exists(tmp):
        os.unlink(tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, 'w') as f:
        f.write('# sotls ticket keys: newest first; name secret intro expiry\n')
        for k in keys:
            f.write('%s %s %d %d\n' % (k['name'].hex(), k['secret'].hex(), k['intro'],
                                       k['expiry']))
    os.replace(tmp, path)


# ---- the environment ---------------------------------------------------------------

class Resume(Features):
    def __init__(self, args):
        super().__init__(args)
        # One leaf for both names: the SNI tests need a server that serves
        # either; the others use a.test.
        self.cert, self.key = self.leaf('ab', 'ec', ['a.test', 'b.test'])

    def echo_server(self, *extra, binary=None):
        """sotls-echo-server (or binary) on the a.test/b.test leaf; returns
        (process, port)."""
        pf = self.path('port-%d' % len(self.procs))
        argv = [binary or self.a.echo_server, '--port', '0', '--port-file', pf, *extra]
        if binary is None:
            argv += ['--cert', self.cert, '--key', self.key]
        srv = self.spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        return srv, self.wait_port_file(pf, srv)

    def s_server(self, *extra):
        """openssl s_server -rev (each line echoed reversed) on the a.test/b.test
        leaf, for many connections; returns (process, port)."""
        port = free_port()
        srv = self.spawn([self.a.openssl, 's_server', '-accept', '127.0.0.1:%d' % port,
                          '-cert', self.cert, '-key', self.key, '-rev', *extra],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
        wait_listening(port, srv)
        return srv, port

    def s_client_echo(self, port, *opts):
        """openssl s_client, TLS 1.2: sends a line, waits for its echo, closes.
        Returns (output, whether the line came back)."""
        token = ('resumption %s\n' % os.urandom(8).hex()).encode()
        text, echoed = s_client_converse(
            self, [self.a.openssl, 's_client', '-connect', '127.0.0.1:%d' % port, '-tls1_2',
                   '-CAfile', self.path('ca.crt'), *opts], token)
        print('$ s_client', ' '.join(opts), '\n', text)
        return text, echoed

    def sotls_client(self, port, name, *extra, data=b'hello resumption\n'):
        """sotls-echo-client in stdin mode: (exit status, stdout, stderr)."""
        p = subprocess.run([self.a.echo_client, '--host', '127.0.0.1', '--port', str(port),
                            '--ca', self.path('ca.crt'), '--servername', name, *extra],
                           input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=TIMEOUT, cwd=self.dir)
        out, err = p.stdout.decode(errors='replace'), p.stderr.decode(errors='replace')
        print('$ sotls-echo-client', name, ' '.join(extra), '\n', out, err)
        return p.returncode, out, err


def handshakes(out):
    """'New' or 'Reused' for each connection s_client made, in order."""
    return [line.split(',')[0] for line in out.splitlines()
            if line.startswith('New, ') or line.startswith('Reused, ')]


def resumed_lines(log):
    """The servers' "resumed: ..." of each connection, in order."""
    return re.findall(r'resumed: (\S+)', log)


def server_log(srv, lines=0, text=None):
    """Stops the server once it has printed `lines` "resumed:" lines and
    text, and returns all it printed. Waiting matters: a server finishes its
    side of an abbreviated handshake after the client (RFC 5246 §7.3: the
    client's Finished comes last), so a client's exit does not mean the
    server's line is out."""
    fd, buf = srv.stdout.fileno(), b''
    deadline = time.time() + TIMEOUT

    def done():
        t = buf.decode(errors='replace')
        return len(resumed_lines(t)) >= lines and (text is None or text in t)
    while not done() and time.time() < deadline and srv.poll() is None:
        if select.select([fd], [], [], 0.2)[0]:
            d = os.read(fd, 65536)
            if not d:
                break
            buf += d
    srv.terminate()
    rest, _ = srv.communicate(timeout=TIMEOUT)
    log = (buf + rest).decode(errors='replace')
    print('--- server ---\n' + log)
    return log


def check_resumed(srv, want, ordered=True):
    """The server's "resumed:" lines are want (in any order if not
    ordered: threads of connections with no data to wait for)."""
    got = resumed_lines(server_log(srv, len(want)))
    check(got == want if ordered else sorted(got) == sorted(want),
          'the server reports %s, wanted %s' % (got, want))


def one_handshake(out, want):
    got = handshakes(out)
    check(got == [want], 'wanted one %s handshake, s_client reports %s' % (want, got))


# ---- s_client ------------------------------------------------------------------------

def check_reconnects(out):
    # RFC 5246 §7.3: "The client sends a ClientHello using the Session ID of
    # the session to be resumed. [...] If a match is found, and the server is
    # willing to re-establish the connection under the specified session
    # state, it will send a ServerHello with the same Session ID value."
    # RFC 5077 §3.1 does the same with the ticket the client presents.
    # s_client -reconnect: the first connection and 5 more with its session.
    check(handshakes(out) == ['New'] + ['Reused'] * 5,
          'connections 2-6 not all resumed: %s' % handshakes(out))


def reconnect_threaded(env, kind):
    """s_client -reconnect against the threaded echo server. By session ID
    the server must have stored the session before the client can come
    straight back on another thread: sotls stores it once the client's
    Finished checks out, before its own Finished goes."""
    srv, port = env.echo_server()
    extra = ['-no_ticket'] if kind == 'session-id' else []
    out = env.s_client(port, '-servername', 'a.test', '-reconnect', *extra)
    check_reconnects(out)
    check(out.count('Verify return code: 0 (ok)') == 6, 'not every connection verified')
    # In any order: one thread per connection, and no data to wait for, so
    # two connections' lines may come either way.
    check_resumed(srv, ['no'] + [kind] * 5, ordered=False)


def reconnect_event_server(env, server_opts, client_opts, binary=None, by='session ID'):
    """s_client -reconnect (by session ID, or by ticket) against an event
    server (the epoll one, or binary: sotls-uring-server, whose rings count
    into one set of statistics), whose statistics count the resumptions."""
    srv, port = env.echo_server(*server_opts, binary=binary or env.a.event_server)
    out = env.s_client(port, '-reconnect', *client_opts)
    check_reconnects(out)
    if by == 'session ID':
        check('TLS session ticket:' not in out, 'a ticket with tickets off')
    # One connection more, with data: once it is echoed, the event loop has
    # also read the last Finished of the reconnects (the client's comes last
    # in an abbreviated handshake, RFC 5246 §7.3).
    _, echoed = env.s_client_echo(port)
    check(echoed, 'event server: no echo')
    log = server_log(srv)  # the statistics come at SIGTERM
    counts = '5 resumed by session ID, 0 by ticket' if by == 'session ID' \
        else '0 resumed by session ID, 5 by ticket'
    check('resumption: 2 full handshakes, ' + counts in log, 'event server statistics: ' + log)


def sess_files(env, no_ticket):
    srv, port = env.echo_server()
    nt = ['-no_ticket'] if no_ticket else []
    sess = env.path('s_client.sess')
    out, echoed = env.s_client_echo(port, '-servername', 'a.test', '-sess_out', sess, *nt)
    one_handshake(out, 'New')
    check(echoed, 'no echo on the full handshake')
    # RFC 5077 §3.4 / RFC 5246 §7.4.1.3: a session ID to resume by, or a
    # ticket; s_client keeps whichever it got.
    check(len(session_id(sess)) > 0 if no_ticket else len(session_ticket(sess)) > 0,
          'the session file has nothing to resume by')
    for _ in range(2):  # separate processes, the same file: resumed each time
        out, echoed = env.s_client_echo(port, '-servername', 'a.test', '-sess_in', sess, *nt)
        one_handshake(out, 'Reused')
        check(echoed, 'no echo on the resumed connection')
    how = 'session-id' if no_ticket else 'ticket'
    check_resumed(srv, ['no', how, how])


# ---- Python ssl ------------------------------------------------------------------------

def python_connect(ctx, port, session=None, name='a.test'):
    """One TLS 1.2 connection: a line echoed, close_notify both ways.
    Returns (session_reused, session)."""
    with socket.create_connection(('127.0.0.1', port), timeout=TIMEOUT) as raw:
        s = ctx.wrap_socket(raw, server_hostname=name, session=session)
        line = b'python %s\n' % os.urandom(8).hex().encode()
        s.sendall(line)
        got = b''
        while len(got) < len(line):
            chunk = s.recv(4096)
            check(chunk, 'the server closed before the echo')
            got += chunk
        check(got == line, 'echo differs')
        reused, sess = s.session_reused, s.session
        s.unwrap()
    return reused, sess


def python_ctx(env, options=0):
    ctx = ssl.create_default_context(cafile=env.path('ca.crt'))
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    ctx.options |= options
    return ctx


def python_session(env, no_ticket):
    srv, port = env.echo_server()
    ctx = python_ctx(env, ssl.OP_NO_TICKET if no_ticket else 0)
    reused, sess = python_connect(ctx, port)
    check(not reused, 'the first connection cannot be resumed')
    check(sess.has_ticket != no_ticket, 'ticket: %s with OP_NO_TICKET %s' % (sess.has_ticket,
                                                                             no_ticket))
    # RFC 5246 §7.4.1.3, ServerHello.session_id: "If a match is found and
    # the server is willing to establish the new connection using the
    # specified session state, the server will respond with the same value as
    # was supplied by the client." (RFC 5077 §3.4 the same with a ticket.)
    for _ in range(3):
        reused, _ = python_connect(ctx, port, sess)
        check(reused, 'Python ssl: session not reused')
    check_resumed(srv, ['no'] + ['session-id' if no_ticket else 'ticket'] * 3)


# ---- the sotls client ------------------------------------------------------------------

def reversed_echo(out, data=b'hello resumption\n'):
    """s_server -rev answers each line reversed."""
    return out == data[:-1][::-1].decode() + '\n'


def client_vs_s_server(env, how):
    """how: 'ticket'; 'session-id' (s_server -no_ticket); 'client-no-tickets'
    (sotls-echo-client --no-tickets, s_server with tickets)."""
    srv, sport = env.s_server(*(['-no_ticket'] if how == 'session-id' else []))
    tap = Tap(sport)
    sess = env.path('sotls.sess')
    nt = ['--no-tickets'] if how == 'client-no-tickets' else []
    rc, out, err = env.sotls_client(tap.port, 'a.test', '--sess-out', sess, *nt)
    check(rc == 0 and reversed_echo(out), 'the full handshake failed')
    check('resumed: no' in err, 'the first connection reports a resumption')
    check(os.stat(sess).st_mode & 0o777 == 0o600, '--sess-out file is not mode 0600')
    rc, out, err = env.sotls_client(tap.port, 'a.test', '--sess-in', sess, *nt)
    check(rc == 0 and reversed_echo(out), 'the resumed connection failed')
    want = 'ticket' if how == 'ticket' else 'session-id'
    check('resumed: %s' % want in err, 'the sotls client did not resume by %s' % want)
    sid, ticket = tap.offer(1)
    if want == 'ticket':
        # RFC 5077 §3.1: the client presents the ticket in the SessionTicket
        # extension of its ClientHello.
        check(ticket, 'no ticket in the ClientHello')
    else:
        check(sid and not ticket, 'no session ID, or a ticket, offered: %r %r' % (sid, ticket))
        if how == 'client-no-tickets':
            # RFC 5077 §3.1: a client that does not want tickets leaves the
            # extension out.
            check(tap.offer(0)[1] is None, '--no-tickets: the client still asked for one')
    check(tap.abbreviated(1), 's_server sent its Certificate: not an abbreviated handshake')
    check(not tap.abbreviated(0), 'the first handshake was no full one')
    srv.kill()


def client_vs_sotls_server(env, no_tickets):
    srv, port = env.echo_server(*(['--no-tickets'] if no_tickets else []))
    sess = env.path('sotls.sess')
    rc, out, err = env.sotls_client(port, 'a.test', '--sess-out', sess)
    check(rc == 0 and out == 'hello resumption\n' and 'resumed: no' in err, 'full handshake')
    rc, out, err = env.sotls_client(port, 'a.test', '--sess-in', sess, '--sess-out', sess)
    how = 'session-id' if no_tickets else 'ticket'
    check(rc == 0 and out == 'hello resumption\n', 'the resumed connection failed')
    check('resumed: %s' % how in err, 'the client did not resume by %s' % how)
    check_resumed(srv, ['no', how])


# ---- tickets that cannot be used ---------------------------------------------------

def fresh_ticket_after(env, port, sess, expected_key=None, resume_after=True):
    """Offers sess: a full handshake (s_client "New") that works and brings a
    new ticket, under expected_key's name if given; with resume_after, the
    new ticket then resumes."""
    old = session_ticket(sess)
    again = env.path('again.sess')
    out, echoed = env.s_client_echo(port, '-servername', 'a.test', '-sess_in', sess,
                                    '-sess_out', again)
    # RFC 5077 §3.1: "If the server cannot or does not want to honor the
    # ticket, then it can initiate a full handshake with the client."
    one_handshake(out, 'New')
    check(echoed, 'the full handshake after the refused ticket does not carry data')
    fresh = session_ticket(again)
    check(fresh and fresh != old, 'no fresh ticket after the refused one')
    if expected_key is not None:
        check(fresh[:KEY_NAME] == expected_key['name'],
              'the fresh ticket is under key %s, not the issuing %s'
              % (fresh[:KEY_NAME].hex(), expected_key['name'].hex()))
    if resume_after:
        out, echoed = env.s_client_echo(port, '-servername', 'a.test', '-sess_in', again)
        one_handshake(out, 'Reused')
        check(echoed, 'the fresh ticket does not resume')


def expired_ticket(env):
    srv, port = env.echo_server('--ticket-lifetime', '1')
    sess = env.path('s_client.sess')
    out, _ = env.s_client_echo(port, '-servername', 'a.test', '-sess_out', sess)
    one_handshake(out, 'New')
    # RFC 5077 §3.3: ticket_lifetime_hint, "the number of seconds" the ticket
    # should be kept; sotls refuses it after its lifetime.
    check('TLS session ticket lifetime hint: 1 (seconds)' in out, 'no lifetime hint of 1 s')
    time.sleep(2.5)
    # Not resumed after: the fresh ticket is good for a second only, too
    # short to count on under a loaded machine's make check.
    fresh_ticket_after(env, port, sess, resume_after=False)
    check_resumed(srv, ['no', 'no'])


def key_file_server(env, keys, *extra):
    kf = env.path('ticket.keys')
    write_key_file(kf, keys)
    return env.echo_server('--ticket-key-file', kf, *extra), kf


def rotated_out_key(env):
    now = time.time()
    k1 = new_key(now - 60)
    (srv, port), kf = key_file_server(env, [k1])
    sess = env.path('s_client.sess')
    out, _ = env.s_client_echo(port, '-servername', 'a.test', '-sess_out', sess)
    one_handshake(out, 'New')
    check(session_ticket(sess)[:KEY_NAME] == k1['name'], 'the ticket is not under the file\'s key')
    out, _ = env.s_client_echo(port, '-servername', 'a.test', '-sess_in', sess)
    one_handshake(out, 'Reused')
    # Only a new key in the file: tickets under the old one no longer open.
    k2 = new_key(time.time() - 1)
    write_key_file(kf, [k2])
    time.sleep(1.5)  # sotls looks at the file at most once a second
    fresh_ticket_after(env, port, sess, k2)
    check_resumed(srv, ['no', 'ticket', 'no', 'ticket'])


def renewed_after_rotation(env):
    now = time.time()
    k1 = new_key(now - 60)
    (srv, sport), kf = key_file_server(env, [k1])
    tap = Tap(sport)
    sess = env.path('s_client.sess')
    out, _ = env.s_client_echo(tap.port, '-servername', 'a.test', '-sess_out', sess)
    one_handshake(out, 'New')
    out, _ = env.s_client_echo(tap.port, '-servername', 'a.test', '-sess_in', sess)
    one_handshake(out, 'Reused')
    check(tap.new_ticket(1) is None, 'a ticket under the issuing key was renewed')
    # A new key issues; the old one still opens until its expiry.
    k2 = new_key(time.time() - 1)
    write_key_file(kf, [k2, dict(k1, expiry=int(now) + 3600)])
    time.sleep(1.5)
    out, echoed = env.s_client_echo(tap.port, '-servername', 'a.test', '-sess_in', sess)
    one_handshake(out, 'Reused')
    check(echoed, 'no echo')
    # RFC 5077 §3.3: in an abbreviated handshake the server may send a new
    # ticket; sotls renews one opened by a key that no longer issues.
    renewed = tap.new_ticket(2)
    check(renewed is not None and renewed[:KEY_NAME] == k2['name'],
          'the ticket was not renewed under the issuing key')
    # s_client writes no -sess_out for a resumed connection: the renewed
    # ticket goes into a copy of the session file (the same master secret).
    again = env.path('renewed.sess')
    with_ticket(sess, again, renewed)
    out, _ = env.s_client_echo(tap.port, '-servername', 'a.test', '-sess_in', again)
    one_handshake(out, 'Reused')
    check(tap.offer(3)[1] == renewed, 'the renewed ticket was not the one offered')
    check_resumed(srv, ['no', 'ticket', 'ticket', 'ticket'])


def tampered_ticket(env):
    srv, sport = env.echo_server()
    tap = Tap(sport)
    sess = env.path('good.sess')
    out, _ = env.s_client_echo(tap.port, '-servername', 'a.test', '-sess_out', sess)
    one_handshake(out, 'New')
    t = session_ticket(sess)
    check(len(t) > KEY_NAME + NONCE + TAG, 'ticket of %d bytes' % len(t))
    out, _ = env.s_client_echo(tap.port, '-servername', 'a.test', '-sess_in', sess)
    one_handshake(out, 'Reused')  # the untouched ticket resumes: the cases below mean something

    def flip(i):
        b = bytearray(t)
        b[i] ^= 0x01
        return bytes(b)
    body = KEY_NAME + NONCE
    cases = {
        'key name': flip(3),
        'nonce': flip(KEY_NAME + 5),
        'ciphertext': flip(body + (len(t) - body - TAG) // 2),
        'tag': flip(len(t) - 1),
        'truncated by a byte': t[:-1],
        'truncated to name and nonce': t[:body],
    }
    conn = 2
    for what, bad in cases.items():
        p = env.path('bad.sess')
        with_ticket(sess, p, bad)
        out, echoed = env.s_client_echo(tap.port, '-servername', 'a.test', '-sess_in', p)
        check(tap.offer(conn)[1] == bad, '%s: the ClientHello did not carry it' % what)
        # RFC 5077 §4: the ticket is authenticated; one that fails to open is
        # not used (§3.1: a full handshake), and sotls.h: never an error.
        one_handshake(out, 'New')
        check(echoed, '%s: the full handshake does not carry data' % what)
        check(not tap.abbreviated(conn) and tap.new_ticket(conn) is not None,
              '%s: no full handshake with a new ticket' % what)
        check(srv.poll() is None, '%s: the server died' % what)
        conn += 1
    out, echoed = env.s_client_echo(tap.port, '-servername', 'a.test', '-sess_in', sess)
    one_handshake(out, 'Reused')
    check(echoed, 'the server stopped serving')
    check_resumed(srv, ['no', 'ticket'] + ['no'] * len(cases) + ['ticket'])


# ---- fleets: two server processes ----------------------------------------------------

def key_names(path):
    """The key names of a ticket key file, newest first."""
    with open(path) as f:
        return [bytes.fromhex(line.split()[0]) for line in f
                if line.strip() and not line.startswith('#')]


def fleet_key_file(env):
    """Two servers on one file that sotls-ticket-keys makes and rotates."""
    kf = env.path('fleet.keys')

    def tool(*argv):
        p = subprocess.run([env.a.ticket_keys, *argv, kf], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=TIMEOUT)
        print('$ sotls-ticket-keys', ' '.join(argv), '\n', p.stdout.decode(errors='replace'))
        check(p.returncode == 0, 'sotls-ticket-keys %s failed' % argv[0])
    tool('new')
    first, p1 = env.echo_server('--ticket-key-file', kf)
    second, p2 = env.echo_server('--ticket-key-file', kf)
    alone, p3 = env.echo_server()  # keys of its own
    tap = Tap(p2)
    sess = env.path('s_client.sess')
    out, _ = env.s_client_echo(p1, '-servername', 'a.test', '-sess_out', sess)
    one_handshake(out, 'New')
    check(session_ticket(sess)[:KEY_NAME] == key_names(kf)[0], 'not under the issuing key')
    out, echoed = env.s_client_echo(tap.port, '-servername', 'a.test', '-sess_in', sess)
    one_handshake(out, 'Reused')
    check(echoed, 'no echo on the second server')
    out, _ = env.s_client_echo(p3, '-servername', 'a.test', '-sess_in', sess)
    one_handshake(out, 'New')  # the control: without the shared keys, no resumption
    # The cron job's rotation: a new key issues at once, the old one opens.
    tool('rotate')
    time.sleep(1.5)  # sotls looks at the file at most once a second
    out, _ = env.s_client_echo(tap.port, '-servername', 'a.test', '-sess_in', sess)
    one_handshake(out, 'Reused')
    renewed = tap.new_ticket(1)
    check(renewed is not None and renewed[:KEY_NAME] == key_names(kf)[0],
          'the second server did not renew the ticket under the rotated-in key')
    again = env.path('renewed.sess')
    with_ticket(sess, again, renewed)
    out, _ = env.s_client_echo(p1, '-servername', 'a.test', '-sess_in', again)
    one_handshake(out, 'Reused')  # the first server opens what the second sealed
    check_resumed(second, ['ticket', 'ticket'])
    check_resumed(first, ['no', 'ticket'])
    check_resumed(alone, ['no'])


def store_dir(env):
    d = env.path('sessions')
    os.mkdir(d, 0o700)
    return d


def store_files(d):
    return sorted(f for f in os.listdir(d) if '.tmp.' not in f)


def fleet_session_store(env):
    d = store_dir(env)
    first, p1 = env.echo_server('--session-store', d)
    second, p2 = env.echo_server('--session-store', d)
    alone, p3 = env.echo_server()
    sess = env.path('s_client.sess')
    out, _ = env.s_client_echo(p1, '-servername', 'a.test', '-sess_out', sess, '-no_ticket')
    one_handshake(out, 'New')
    sid = session_id(sess)
    check(store_files(d) == [sid.hex()], 'store holds %s, not the session %s'
          % (store_files(d), sid.hex()))
    check(os.stat(os.path.join(d, sid.hex())).st_mode & 0o777 == 0o600, 'session file mode')
    out, echoed = env.s_client_echo(p2, '-servername', 'a.test', '-sess_in', sess, '-no_ticket')
    one_handshake(out, 'Reused')
    check(echoed, 'no echo on the second server')
    out, _ = env.s_client_echo(p3, '-servername', 'a.test', '-sess_in', sess, '-no_ticket')
    one_handshake(out, 'New')
    check_resumed(second, ['session-id'])
    check_resumed(first, ['no'])
    check_resumed(alone, ['no'])


def session_store_stale(env):
    d = store_dir(env)
    srv, port = env.echo_server('--session-store', d)
    sess = env.path('s_client.sess')
    out, _ = env.s_client_echo(port, '-servername', 'a.test', '-sess_out', sess, '-no_ticket')
    one_handshake(out, 'New')
    name = session_id(sess).hex()
    path = os.path.join(d, name)
    with open(path, 'r+b') as f:  # examples/session_store_dir.c: magic, expiry, data
        head = f.read(16)
        check(head[:8] == b'sotlsss1', 'not a session file: %r' % head[:8])
        f.seek(8)
        f.write(int(time.time() - 10).to_bytes(8, 'big'))
    out, echoed = env.s_client_echo(port, '-servername', 'a.test', '-sess_in', sess, '-no_ticket')
    one_handshake(out, 'New')
    check(echoed, 'no echo')
    check(name not in store_files(d), 'the stale file was not removed')
    check(len(store_files(d)) == 1, 'the new session is not stored: %s' % store_files(d))
    check_resumed(srv, ['no', 'no'])


def session_store_refuses_open_dir(env):
    d = store_dir(env)
    os.chmod(d, 0o755)
    pf = env.path('port-open-dir')
    p = subprocess.run([env.a.echo_server, '--port', '0', '--port-file', pf, '--cert', env.cert,
                        '--key', env.key, '--session-store', d],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT)
    out = p.stdout.decode(errors='replace')
    print(out)
    check(p.returncode == 2 and 'chmod 700' in out, 'a directory others may enter was taken')
    check(not os.path.exists(pf), 'the server listened anyway')


def cache_off(env):
    srv, port = env.echo_server('--session-cache', '0', '--no-tickets')
    out = env.s_client(port, '-servername', 'a.test', '-reconnect', '-no_ticket')
    # RFC 5246 §7.3: "If a Session ID match is not found, the server
    # generates a new session ID, and the TLS client and server perform a
    # full handshake."
    check(handshakes(out) == ['New'] * 6, 'resumed without a cache: %s' % handshakes(out))
    check_resumed(srv, ['no'] * 6)


# ---- server names ----------------------------------------------------------------------

def sni_mismatch_s_client(env, no_ticket):
    srv, sport = env.echo_server()
    tap = Tap(sport)
    nt = ['-no_ticket'] if no_ticket else []
    sess = env.path('a.sess')
    out, _ = env.s_client_echo(tap.port, '-servername', 'a.test', '-sess_out', sess, *nt)
    one_handshake(out, 'New')
    out, _ = env.s_client_echo(tap.port, '-servername', 'a.test', '-sess_in', sess, *nt)
    one_handshake(out, 'Reused')
    out, echoed = env.s_client_echo(tap.port, '-servername', 'b.test', '-sess_in', sess,
                                    '-verify_hostname', 'b.test', *nt)
    sid, ticket = tap.offer(2)
    if no_ticket:
        check(sid == session_id(sess), 's_client did not offer the session ID under b.test')
    else:
        check(ticket == session_ticket(sess), 's_client did not offer the ticket under b.test')
    # RFC 6066 §3: "A server that implements this extension MUST NOT accept
    # the request to resume the session if the server_name extension contains
    # a different name. Instead, it proceeds with a full handshake to
    # establish a new session."
    one_handshake(out, 'New')
    check(echoed and 'Verify return code: 0 (ok)' in out, 'the full handshake for b.test failed')
    check_resumed(srv, ['no', 'session-id' if no_ticket else 'ticket', 'no'])


def sni_mismatch_sotls_client(env, no_ticket):
    srv, sport = env.s_server(*(['-no_ticket'] if no_ticket else []))
    tap = Tap(sport)
    sess = env.path('a.sess')
    rc, out, err = env.sotls_client(tap.port, 'a.test', '--sess-out', sess)
    check(rc == 0 and 'resumed: no' in err, 'full handshake for a.test')
    rc, out, err = env.sotls_client(tap.port, 'a.test', '--sess-in', sess)
    how = 'session-id' if no_ticket else 'ticket'
    check(rc == 0 and 'resumed: %s' % how in err, 'the session does not resume under a.test')
    offered_sid, offered_ticket = tap.offer(1)
    rc, out, err = env.sotls_client(tap.port, 'b.test', '--sess-in', sess)
    check(rc == 0 and reversed_echo(out), 'the connection to b.test failed')
    check('resumed: no' in err, 'resumed under b.test')
    sid, ticket = tap.offer(2)
    # sotls.h: a session is offered only to the server name it was made for
    # (the server side of RFC 6066 §3 would refuse it anyway).
    if no_ticket:
        check(offered_sid and sid != offered_sid, 'the session ID was offered under b.test')
    else:
        check(offered_ticket and not ticket, 'the ticket was offered under b.test: %r' % ticket)
    check(not tap.abbreviated(2), 'b.test: not a full handshake')
    srv.kill()


# ---- ALPN ----------------------------------------------------------------------------------

def alpn_on_resumption(env):
    srv, port = env.https([(env.cert, env.key)])
    sess = env.path('alpn.sess')
    # A first connection without ALPN ...
    out = env.s_client(port, '-servername', 'a.test', '-sess_out', sess)
    check(handshakes(out) == ['New'] and 'No ALPN negotiated' in out, 'first connection')
    # RFC 7301 §3.1: "Unlike many other TLS extensions, this extension does
    # not establish properties of the session, only of the connection. When
    # session resumption or session tickets [RFC5077] are used, the previous
    # contents of this extension are irrelevant, and only the values in the
    # new handshake messages are considered."
    for _ in range(2):
        out = env.s_client(port, '-servername', 'a.test', '-sess_in', sess, '-alpn', 'http/1.1')
        check(handshakes(out) == ['Reused'], 'not resumed: %s' % handshakes(out))
        check('ALPN protocol: http/1.1' in out, 'the resumed connection has no ALPN protocol')
    # ... and the policy holds on resumption too (RFC 7301 §3.2: nothing in
    # common, no_application_protocol).
    out = env.s_client(port, '-servername', 'a.test', '-sess_in', sess, '-alpn', 'h2')
    check('alert number 120' in out, 'an h2-only client resumed without the alert')
    log = server_log(srv, 3, '(sent no_application_protocol)')
    check(len(re.findall(r'alpn=http/1\.1 server_name=a\.test cert=-?\d+ resumed: ticket', log))
          == 2, 'server log lacks ALPN on the resumed connections')
    check('alpn=- server_name=a.test cert=0 resumed: no' in log, 'server log: first connection')


# ---- extended master secret ------------------------------------------------------------------

def no_ems(env):
    """Python's ssl without the extended master secret (RFC 7627): every
    connection works and none resumes, with and without tickets."""
    srv, port = env.echo_server()
    for opts in (0, ssl.OP_NO_TICKET):
        ctx = python_ctx(env, OP_NO_EXTENDED_MASTER_SECRET | opts)
        reused, sess = python_connect(ctx, port)
        check(not reused, 'first connection')
        # sotls.h: only sessions with the extended master secret are kept
        # (RFC 7627 §5.4 lets a server refuse the others).
        for _ in range(2):
            reused, _ = python_connect(ctx, port, sess)
            check(not reused, 'a session without the extended master secret was resumed')
    check_resumed(srv, ['no'] * 6)


def ems_dropped_on_resumption(env):
    """A session made with the extended master secret, offered in a
    ClientHello without the extension."""
    srv, port = env.echo_server()
    ctx = python_ctx(env)
    _, sess = python_connect(ctx, port)
    ctx.options |= OP_NO_EXTENDED_MASTER_SECRET  # for connections made from now on
    # RFC 7627 §5.3: "If the original session used the
    # "extended_master_secret" extension but the new ClientHello does not
    # contain it, the server MUST abort the abbreviated handshake."
    try:
        python_connect(ctx, port, sess)
        raise Fail('the connection without the extended master secret went through')
    except ssl.SSLError as e:
        print('Python ssl:', e)
        check('HANDSHAKE_FAILURE' in str(e).upper(), 'not a handshake_failure: %s' % e)
    log = server_log(srv, 1, '(sent handshake_failure)')
    check('extended master secret' in log, 'the server does not report why')


def python_server(env, options, connections):
    """A Python ssl TLS 1.2 server (OpenSSL) on the a.test/b.test leaf that
    echoes a line per connection; returns (port, thread, whether each
    connection was resumed)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    ctx.options |= options
    ctx.load_cert_chain(env.cert, env.key)
    ls = socket.socket()
    ls.bind(('127.0.0.1', 0))
    ls.listen(4)
    reused = []

    def serve():
        for _ in range(connections):
            raw, _ = ls.accept()
            raw.settimeout(TIMEOUT)
            with ctx.wrap_socket(raw, server_side=True) as s:
                reused.append(s.session_reused)
                line = b''
                while not line.endswith(b'\n'):
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    line += chunk
                s.sendall(line)
                try:
                    s.unwrap()
                except (ssl.SSLError, OSError):
                    pass
        ls.close()
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return ls.getsockname()[1], t, reused


def client_session_without_ems(env):
    """The sotls client keeps no session of a handshake without the extended
    master secret (sotls.h; RFC 7627 §5.3), from a Python ssl server that
    does not do it; the same server with it: kept and resumed."""
    sess = env.path('sotls.sess')
    port, t, _ = python_server(env, OP_NO_EXTENDED_MASTER_SECRET, 1)
    rc, out, err = env.sotls_client(port, 'a.test', '--sess-out', sess)
    t.join(TIMEOUT)
    check(out == 'hello resumption\n', 'the connection without the extended master secret failed')
    check(rc == 1 and '--sess-out' in err, 'the client did not refuse to keep the session')
    check(not os.path.exists(sess), 'a session without the extended master secret was written')
    port, t, reused = python_server(env, 0, 2)  # the control
    rc, _, err = env.sotls_client(port, 'a.test', '--sess-out', sess)
    check(rc == 0 and os.path.exists(sess), 'no session with the extended master secret')
    rc, _, err = env.sotls_client(port, 'a.test', '--sess-in', sess)
    t.join(TIMEOUT)
    check(rc == 0 and 'resumed: ticket' in err and reused == [False, True],
          'the session with the extended master secret did not resume: %s' % reused)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('name')
    ap.add_argument('--echo-server', required=True)
    ap.add_argument('--echo-client', required=True)
    ap.add_argument('--event-server', required=True)
    ap.add_argument('--https-server', required=True)
    ap.add_argument('--uring-server', required=True)
    ap.add_argument('--ticket-keys', required=True)
    ap.add_argument('--openssl', required=True)
    ap.add_argument('--workdir', required=True)
    a = ap.parse_args()
    tests = {
        's_client-reconnect-ticket': lambda e: reconnect_threaded(e, 'ticket'),
        's_client-reconnect-session-id': lambda e: reconnect_threaded(e, 'session-id'),
        's_client-reconnect-session-id-event-server':
            lambda e: reconnect_event_server(e, [], ['-no_ticket']),
        's_client-sess-file-ticket': lambda e: sess_files(e, False),
        's_client-sess-file-session-id': lambda e: sess_files(e, True),
        'python-ticket': lambda e: python_session(e, False),
        'python-session-id': lambda e: python_session(e, True),
        'sotls-client-vs-s_server-ticket': lambda e: client_vs_s_server(e, 'ticket'),
        'sotls-client-vs-s_server-session-id': lambda e: client_vs_s_server(e, 'session-id'),
        'sotls-client-no-tickets-vs-s_server':
            lambda e: client_vs_s_server(e, 'client-no-tickets'),
        'sotls-client-vs-sotls-server-ticket': lambda e: client_vs_sotls_server(e, False),
        'sotls-client-vs-sotls-server-session-id': lambda e: client_vs_sotls_server(e, True),
        'expired-ticket': expired_ticket,
        'rotated-out-key': rotated_out_key,
        'renewed-after-rotation': renewed_after_rotation,
        'tampered-ticket': tampered_ticket,
        'fleet-ticket-key-file': fleet_key_file,
        'fleet-session-store': fleet_session_store,
        'session-store-stale-file': session_store_stale,
        'session-store-refuses-open-dir': session_store_refuses_open_dir,
        'session-cache-off': cache_off,
        # -reconnect asks for tickets; the server issues none and resumes by ID.
        'event-server-no-tickets-reconnect':
            lambda e: reconnect_event_server(e, ['--no-tickets'], []),
        's_client-reconnect-session-id-uring-server':
            lambda e: reconnect_event_server(e, [], ['-no_ticket'], e.a.uring_server),
        's_client-reconnect-ticket-uring-server':
            lambda e: reconnect_event_server(e, [], [], e.a.uring_server, by='ticket'),
        'uring-server-no-tickets-reconnect':
            lambda e: reconnect_event_server(e, ['--no-tickets'], [], e.a.uring_server),
        'sni-mismatch-s_client-ticket': lambda e: sni_mismatch_s_client(e, False),
        'sni-mismatch-s_client-session-id': lambda e: sni_mismatch_s_client(e, True),
        'sni-mismatch-sotls-client-ticket': lambda e: sni_mismatch_sotls_client(e, False),
        'sni-mismatch-sotls-client-session-id': lambda e: sni_mismatch_sotls_client(e, True),
        'alpn-on-resumption': alpn_on_resumption,
        'no-ems-not-resumed': no_ems,
        'ems-dropped-on-resumption': ems_dropped_on_resumption,
        'sotls-client-no-ems-session-not-kept': client_session_without_ems,
    }
    return run_one(tests, a, Resume)


if __name__ == '__main__':
    sys.exit(main())
