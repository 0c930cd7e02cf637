#!/usr/bin/env python3
"""max_fragment_length (RFC 6066 §4) against real peers. One test per run:

    maxfraglen.py NAME --peer sotls-peer --echo-server E --https-server H
                  --openssl openssl --workdir BUILD_DIR

- s_client-N: `openssl s_client -maxfraglen N` moves 1 MiB each way through
  sotls-echo-server; every record the server sent (handshake included: the
  certificate is larger than 4096 bytes, so it must be cut) is within N.
- s_server-N: the sotls client asks for N from `openssl s_server`; 1 MiB each
  way; every record s_server received is within N.
- sendfile: a file from sotls-https-server (sotls_sendfile, userspace TX)
  to `s_client -maxfraglen 512`, every record within 512.
- overflow-at-server / overflow-at-client: a hand-made peer (plaintext
  handshake records, no crypto needed) agrees to 512 and then sends a
  600-byte record: sotls answers record_overflow and gives up.
"""
import argparse
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop import Env, Fail, check, free_port, run_one, wait_listening  # noqa: E402

MIB = 1024 * 1024
TIMEOUT = 120
AEAD_EXPANSION = 8 + 16  # explicit nonce + tag of the GCM suites
HEADER_RE = re.compile(r'^(<<<|>>>) .*RecordHeader \[length 0005\]\n\s+([0-9a-f ]+)$', re.M)


class MaxfragEnv(Env):
    def big_cert(self):
        """A self-signed RSA certificate above 4096 bytes (300 DNS names), so
        that every length cuts the server's Certificate message."""
        crt, key = self.path('big.crt'), self.path('big.key')
        if not os.path.exists(crt):
            sans = ','.join('DNS:host%03d.sotls-test.invalid' % i for i in range(300))
            subprocess.run([self.a.openssl, 'req', '-x509', '-newkey', 'rsa:2048', '-nodes',
                            '-keyout', key, '-out', crt, '-subj', '/CN=localhost', '-days', '2',
                            '-addext', 'subjectAltName=DNS:localhost,' + sans],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=60)
        return crt, key


def check_records(msgfile, direction, limit):
    """Every record OpenSSL's -msg log shows in direction ('<<<' received) is
    within limit: plaintext records up to it, sealed ones up to it plus the
    AEAD expansion. Returns (records, largest plaintext-phase record)."""
    with open(msgfile) as f:
        text = f.read()
    n, largest_plain, sealed = 0, 0, False
    for d, hexbytes in HEADER_RE.findall(text):
        if d != direction:
            continue
        b = bytes.fromhex(hexbytes)
        length = b[3] << 8 | b[4]
        allowed = limit + (AEAD_EXPANSION if sealed else 0)
        check(length <= allowed, 'a %s record of %d bytes (type %d) above %d'
              % ('sealed' if sealed else 'plaintext', length, b[0], allowed))
        if not sealed:
            largest_plain = max(largest_plain, length)
        if b[0] == 20:
            sealed = True
        n += 1
    check(n > 0, 'no records in ' + msgfile)
    return n, largest_plain


def pump(proc, data, want):
    """Writes data to proc's stdin while reading want bytes from its stdout,
    then closes stdin. Returns what was read."""
    got = bytearray()
    done = threading.Event()

    def feed():
        try:
            proc.stdin.write(data)
            proc.stdin.flush()
            done.wait(TIMEOUT)
            proc.stdin.close()
        except BrokenPipeError:
            pass
    t = threading.Thread(target=feed)
    t.start()
    deadline = time.time() + TIMEOUT
    while len(got) < want and time.time() < deadline:
        chunk = proc.stdout.read1(65536)
        if not chunk:
            break
        got += chunk
    done.set()
    t.join()
    return bytes(got)


# ---- tests ------------------------------------------------------------------

def s_client_vs_echo_server(env, n):
    crt, key = env.big_cert()
    pf = env.path('port')
    srv = env.spawn([env.a.echo_server, '--port', '0', '--port-file', pf, '--once',
                     '--cert', crt, '--key', key])
    port = env.wait_port_file(pf, srv)
    msgfile = env.path('s_client.msg')
    cli = env.spawn([env.a.openssl, 's_client', '-connect', '127.0.0.1:%d' % port, '-tls1_2',
                     '-maxfraglen', str(n), '-quiet', '-no_ign_eof', '-nocommands', '-msg', '-msgfile', msgfile],
                    stdin=subprocess.PIPE)
    data = os.urandom(MIB)
    echoed = pump(cli, data, len(data))
    cli.wait(timeout=30)
    cli_err = cli.stderr.read().decode(errors='replace')
    out, err = srv.communicate(timeout=30)
    out, err = out.decode(errors='replace'), err.decode(errors='replace')
    print(out, err, cli_err[-2000:])
    check(echoed == data, 'echo differs: %d of %d bytes back' % (len(echoed), len(data)))
    check(cli.returncode == 0, 's_client failed: ' + cli_err[-500:])
    check(srv.returncode == 0 and 'closed with close_notify' in out,
          'the echo server did not end cleanly')
    check('max_fragment_length %d' % n in out, 'the server reports no max_fragment_length %d' % n)
    check('TX userspace (kTLS not tried: max_fragment_length' in out,
          'TX path or its reason is not the max_fragment_length one')
    records, largest = check_records(msgfile, '<<<', n)
    check(largest == n, 'the handshake records were not cut at %d (largest %d)'
          % (n, largest))
    print('s_client -maxfraglen %d: 1 MiB each way, %d records from sotls, all within %d'
          % (n, records, n))


def client_vs_s_server(env, n):
    crt, key = env.big_cert()
    port = free_port()
    msgfile = env.path('s_server.msg')
    srv_out = open(env.path('s_server.out'), 'wb')
    srv = env.spawn([env.a.openssl, 's_server', '-accept', str(port), '-tls1_2',
                     '-cert', crt, '-key', key, '-naccept', '1', '-quiet',
                     '-msg', '-msgfile', msgfile], stdin=subprocess.PIPE, stdout=srv_out)
    wait_listening(port, srv)
    to_client, to_server = os.urandom(MIB), os.urandom(MIB)
    with open(env.path('to-server'), 'wb') as f:
        f.write(to_server)
    cli = env.spawn([env.a.peer, 'client', '--port', str(port), '--max-frag-len', str(n),
                     '--send', env.path('to-server'), '--expect', str(MIB),
                     '--recv', env.path('client.in')])

    def feed():
        try:
            srv.stdin.write(to_client)
            srv.stdin.flush()
        except BrokenPipeError:
            pass
    t = threading.Thread(target=feed)
    t.start()
    out, err = cli.communicate(timeout=TIMEOUT)
    t.join()
    srv.wait(timeout=30)
    srv_out.close()
    out = out.decode(errors='replace')
    print(out, err.decode(errors='replace'))
    check('MAX_FRAGMENT_LENGTH %d' % n in out, 'not negotiated: ' + out)
    check('HANDSHAKE TLS_' in out and ' userspace userspace' in out, 'paths: ' + out)
    check('END close_notify' in out and cli.returncode == 0, 'the sotls client failed')
    with open(env.path('client.in'), 'rb') as f:
        check(f.read() == to_client, 'the client received wrong bytes')
    with open(env.path('s_server.out'), 'rb') as f:
        check(f.read()[:MIB] == to_server, 's_server received wrong bytes')
    records, _ = check_records(msgfile, '<<<', n)
    print('sotls client asking %d from s_server: 1 MiB each way, %d records from sotls, '
          'all within %d' % (n, records, n))


def sendfile_https(env):
    crt, key = env.big_cert()
    root = env.path('www')
    os.mkdir(root)
    body = os.urandom(300 * 1024 + 17)
    with open(os.path.join(root, 'f.bin'), 'wb') as f:
        f.write(body)
    pf = env.path('port')
    srv = env.spawn([env.a.https_server, '--root', root, '--port', '0', '--port-file', pf,
                     '--cert', crt, '--key', key, '--ktls', 'off'])
    port = env.wait_port_file(pf, srv)
    msgfile = env.path('s_client.msg')
    cli = env.spawn([env.a.openssl, 's_client', '-connect', '127.0.0.1:%d' % port, '-tls1_2',
                     '-maxfraglen', '512', '-quiet', '-nocommands', '-msg', '-msgfile', msgfile],
                    stdin=subprocess.PIPE)
    req = b'GET /f.bin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'
    out, err = cli.communicate(req, timeout=TIMEOUT)
    head, _, got = out.partition(b'\r\n\r\n')
    print(head.decode(errors='replace'))
    check(head.startswith(b'HTTP/1.1 200'), 'no 200: %r' % head[:200])
    check(got == body, 'body differs (%d of %d bytes)' % (len(got), len(body)))
    records, _ = check_records(msgfile, '<<<', 512)
    check(records > len(body) // 512, 'fewer records (%d) than 512-byte pieces of the body'
          % records)
    print('sotls_sendfile to s_client -maxfraglen 512: %d bytes in %d records, all within 512'
          % (len(body), records))


# ---- a hand-made peer: plaintext handshake records only -----------------------

def vec(n, data):
    return len(data).to_bytes(n, 'big') + data


def ext(t, data):
    return struct.pack('>H', t) + vec(2, data)


def handshake(msg_type, body):
    return bytes([msg_type]) + vec(3, body)


def record(ct, body, version=b'\x03\x03'):
    return bytes([ct]) + version + vec(2, body)


def read_record(s):
    hdr = recv_exact(s, 5)
    return hdr[0], hdr[3] << 8 | hdr[4], recv_exact(s, hdr[3] << 8 | hdr[4])


def recv_exact(s, n):
    b = b''
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise Fail('the peer closed after %d of %d bytes' % (len(b), n))
        b += c
    return b


# AES-128-GCM with ECDHE-RSA and ECDHE-ECDSA; P-256, X25519; RSA/ECDSA SHA-256/384.
SUITES = struct.pack('>HH', 0xC02F, 0xC02B)
CLIENT_EXTS = (ext(10, vec(2, struct.pack('>HH', 23, 29))) + ext(11, vec(1, b'\x00'))
               + ext(13, vec(2, struct.pack('>HHHH', 0x0401, 0x0403, 0x0501, 0x0503)))
               + ext(0xff01, b'\x00'))


def overflow_at_server(env):
    """A client asks for 512; the sotls server's flight (its certificate is
    above 4096 bytes) must come in records of at most 512; then the client
    sends a 600-byte handshake record: record_overflow."""
    crt, key = env.big_cert()
    pf = env.path('port')
    srv = env.spawn([env.a.peer, 'server', '--port', '0', '--port-file', pf, '--cert', crt,
                     '--key', key])
    port = env.wait_port_file(pf, srv)
    body = (b'\x03\x03' + os.urandom(32) + b'\x00' + vec(2, SUITES) + vec(1, b'\x00')
            + vec(2, ext(1, b'\x01') + CLIENT_EXTS))
    s = socket.create_connection(('127.0.0.1', port), timeout=30)
    s.sendall(record(22, handshake(1, body), b'\x03\x01'))
    stream, records, sizes = b'', 0, []
    while True:
        ct, n, data = read_record(s)
        check(ct == 22, 'record type %d in the server flight' % ct)
        sizes.append(n)
        records += 1
        stream += data
        if len(stream) >= 4 and stream[-4:] == b'\x0e\x00\x00\x00':
            break  # ServerHelloDone
    check(max(sizes) <= 512, 'server flight records %s: one above 512' % sizes)
    check(len(stream) > 4096 and records >= len(stream) // 512,
          'the flight (%d bytes) was not cut: %d records' % (len(stream), records))
    # ServerHello: the extension agreed, code 1.
    check(b'\x00\x01\x00\x01\x01' in stream[:200], 'no max_fragment_length in the ServerHello')
    s.sendall(record(22, handshake(16, b'\x00' * 596)))
    ct, n, alert = read_record(s)
    s.close()
    out, err = srv.communicate(timeout=30)
    print(out.decode(errors='replace'), err.decode(errors='replace'))
    check(ct == 21 and alert == b'\x02\x16', 'not a fatal record_overflow: %d %r' % (ct, alert))
    check(b'record_overflow' in out and srv.returncode != 0, 'the server did not fail')
    print('server flight in %d records of at most %d bytes; a 600-byte record got '
          'record_overflow' % (records, max(sizes)))


def overflow_at_client(env):
    """The sotls client asks for 512; a hand-made server agrees and then sends
    a 600-byte Certificate record: record_overflow."""
    ls = socket.socket()
    ls.bind(('127.0.0.1', 0))
    ls.listen(1)
    port = ls.getsockname()[1]
    cli = env.spawn([env.a.peer, 'client', '--port', str(port), '--max-frag-len', '512'])
    ls.settimeout(30)
    s, _ = ls.accept()
    s.settimeout(30)
    ct, n, hello = read_record(s)
    check(ct == 22 and hello[0] == 1, 'no ClientHello')
    check(b'\x00\x01\x00\x01\x01' in hello, 'the ClientHello does not ask for 512')
    sh = (b'\x03\x03' + os.urandom(32) + b'\x00' + struct.pack('>H', 0xC02F) + b'\x00'
          + vec(2, ext(1, b'\x01') + ext(11, vec(1, b'\x00')) + ext(0xff01, b'\x00')))
    s.sendall(record(22, handshake(2, sh)))
    s.sendall(record(22, handshake(11, b'\x00' * 596)))
    ct, n, alert = read_record(s)
    s.close()
    ls.close()
    out, err = cli.communicate(timeout=30)
    print(out.decode(errors='replace'), err.decode(errors='replace'))
    check(ct == 21 and alert == b'\x02\x16', 'not a fatal record_overflow: %d %r' % (ct, alert))
    check(b'HANDSHAKE-FAILED' in out and b'record_overflow' in out, 'the client did not fail')
    print('a 600-byte record after agreeing to 512 got record_overflow from the sotls client')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('name')
    ap.add_argument('--peer', required=True)
    ap.add_argument('--echo-server', required=True)
    ap.add_argument('--https-server', required=True)
    ap.add_argument('--openssl', required=True)
    ap.add_argument('--workdir', required=True)
    a = ap.parse_args()
    tests = {
        'sendfile': sendfile_https,
        'overflow-at-server': overflow_at_server,
        'overflow-at-client': overflow_at_client,
    }
    for n in (512, 1024, 2048, 4096):
        tests['s_client-%d' % n] = (lambda n: lambda e: s_client_vs_echo_server(e, n))(n)
        tests['s_server-%d' % n] = (lambda n: lambda e: client_vs_s_server(e, n))(n)
    return run_one(tests, a, MaxfragEnv)


if __name__ == '__main__':
    sys.exit(main())
