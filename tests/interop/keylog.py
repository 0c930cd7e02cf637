#!/usr/bin/env python3
"""The key log (sotls_config_set_keylog, SSLKEYLOGFILE in the examples)
against Wireshark's tshark:

    keylog.py --echo-server E --echo-client C --workdir BUILD_DIR

In a private network namespace (unshare -n, so only this test's traffic is on
its loopback) dumpcap records an AES-128-GCM session between sotls-echo-server
and sotls-echo-client, both with SSLKEYLOGFILE. Then:
- each side wrote one NSS line, CLIENT_RANDOM <64 hex> <96 hex>, the same
  line, into a file of mode 0600;
- tshark with that file (-o tls.keylog_file:) decrypts the capture and finds
  the application data, both ways; without it, tshark finds none, and the
  marker is nowhere in the capture's bytes;
- a second session without SSLKEYLOGFILE writes no key log.

And for each example server (echo, event, https, uring and uring-https:
sotls-uring-server echoing and serving files; keyless.py does the keyless
server), with a real peer and no capture:

    keylog.py SERVER --echo-server E --event-server V --https-server H
              --uring-server U ...

the server started with SSLKEYLOGFILE, Python's ssl (OpenSSL) as the client
with its own key log (SSLContext.keylog_filename): the server's file, mode
0600, holds the very CLIENT_RANDOM line OpenSSL wrote for the connection,
client random and master secret, the two ends agreeing.
"""
import argparse
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop import Fail, check  # noqa: E402

PORT = 4433  # the namespace is private: nothing else listens there
PROBE_PORT = 9  # discard: dumpcap's readiness probes
MARKER = b'sotls key log marker 5e1f-9b07'
LINE_RE = re.compile(r'^CLIENT_RANDOM [0-9a-f]{64} [0-9a-f]{96}$')


def listening(port):
    """A socket in LISTEN (state 0A) on port: the previous session's
    TIME_WAIT entry on the same port must not count."""
    with open('/proc/net/tcp') as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if fields[1].upper().endswith(':%04X' % port) and fields[3] == '0A':
                return True
    return False


def session(a, d, srv_env, cli_env, tag):
    """One echo of MARKER between the examples; returns the server's stderr."""
    srv = subprocess.Popen([a.echo_server, '--port', str(PORT), '--once', '--cipher',
                            'AES-128-GCM'], cwd=d, env=srv_env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 20
        while not listening(PORT):
            check(time.time() < deadline and srv.poll() is None, 'the echo server did not listen')
            time.sleep(0.05)
        cli = subprocess.run([a.echo_client, '--port', str(PORT), '--insecure'], cwd=d,
                             env=cli_env, input=MARKER + b'\n', stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, timeout=60)
        out, err = srv.communicate(timeout=30)
    finally:
        if srv.poll() is None:
            srv.kill()
            srv.wait()
    print('[%s server]' % tag, out.decode(errors='replace'), err.decode(errors='replace'))
    print('[%s client]' % tag, cli.stderr.decode(errors='replace'))
    check(cli.returncode == 0 and srv.returncode == 0, '%s: the echo failed' % tag)
    check(MARKER in cli.stdout, '%s: no echo' % tag)
    return err


def decrypted(d, capture, keys):
    """What tshark's TLS follow of stream 0 shows, decrypting with keys."""
    argv = ['tshark', '-r', capture, '-q', '-z', 'follow,tls,ascii,0']
    if keys is not None:
        argv[3:3] = ['-o', 'tls.keylog_file:' + keys]
    r = subprocess.run(argv, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    check(r.returncode == 0, 'tshark failed: ' + r.stderr.decode(errors='replace'))
    return r.stdout


def wait_capturing(dump):
    """dumpcap says "Capturing on" a little before it records anything: UDP
    probes until its packet count (on stderr, every half second) is up."""
    os.set_blocking(dump.stderr.fileno(), False)
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    said, deadline = b'', time.time() + 20
    while not re.search(rb'Packets: [1-9]', said):
        check(time.time() < deadline, 'dumpcap records nothing: %r' % said)
        probe.sendto(b'probe', ('127.0.0.1', PROBE_PORT))
        time.sleep(0.05)
        said += dump.stderr.read() or b''
    probe.close()


def in_netns(a):
    d = tempfile.mkdtemp(prefix='keylog-', dir=a.workdir)
    subprocess.run(['ip', 'link', 'set', 'lo', 'up'], check=True)
    capture = os.path.join(d, 'session.pcapng')
    dump = subprocess.Popen(['dumpcap', '-i', 'lo', '-f',
                             'tcp port %d or udp port %d' % (PORT, PROBE_PORT), '-w', capture],
                            cwd=d, stderr=subprocess.PIPE)
    try:
        wait_capturing(dump)
        srv_err = session(a, d, dict(os.environ, SSLKEYLOGFILE=os.path.join(d, 'server.keys')),
                          dict(os.environ, SSLKEYLOGFILE=os.path.join(d, 'client.keys')),
                          'key log')
        check(b'SSLKEYLOGFILE: logging TLS secrets' in srv_err, 'the server did not say it logs')
        time.sleep(0.5)  # the last segments reach the capture file
    finally:
        dump.terminate()
        dump.wait(timeout=30)

    lines = {}
    for side in ('server', 'client'):
        p = os.path.join(d, side + '.keys')
        check(os.path.exists(p), 'no %s key log' % side)
        check(os.stat(p).st_mode & 0o777 == 0o600, '%s key log mode %o, want 600'
              % (side, os.stat(p).st_mode & 0o777))
        with open(p) as f:
            lines[side] = f.read().splitlines()
        check(len(lines[side]) == 1 and LINE_RE.match(lines[side][0]),
              '%s key log is not one NSS CLIENT_RANDOM line: %r' % (side, lines[side]))
    check(lines['server'] == lines['client'], 'the two sides logged different secrets')

    with open(capture, 'rb') as f:
        check(MARKER not in f.read(), 'the marker is in the capture in clear')
    plain = decrypted(d, capture, os.path.join(d, 'server.keys'))
    check(plain.count(MARKER) == 2, 'tshark with the key log found the marker %d times, want 2 '
          '(request and echo):\n%s' % (plain.count(MARKER), plain.decode(errors='replace')))
    check(MARKER not in decrypted(d, capture, None), 'tshark found the marker without keys')
    print('tshark decrypted the AES-128-GCM session with the key log: the marker both ways')

    # No SSLKEYLOGFILE: no callback, no key log anywhere.
    clean = dict(os.environ)
    clean.pop('SSLKEYLOGFILE', None)
    quiet = os.path.join(d, 'quiet')
    os.mkdir(quiet)
    err = session(a, quiet, clean, clean, 'no key log')
    check(b'SSLKEYLOGFILE' not in err, 'a key log without SSLKEYLOGFILE')
    check(os.listdir(quiet) == [], 'files written without SSLKEYLOGFILE: %s' % os.listdir(quiet))
    print('without SSLKEYLOGFILE nothing was written')
    shutil.rmtree(d, ignore_errors=True)


def check_same_keylog(server_keys, client_keys):
    """The server's key log (mode 0600) holds the line the client's holds
    for their connection: the same client random and master secret."""
    deadline = time.time() + 10
    while not (os.path.exists(server_keys) and os.path.getsize(server_keys) > 0):
        check(time.time() < deadline, 'the server wrote no key log (SSLKEYLOGFILE ignored)')
        time.sleep(0.05)
    mode = os.stat(server_keys).st_mode & 0o777
    check(mode == 0o600, 'server key log mode %o, want 600' % mode)
    with open(server_keys) as f:
        srv = f.read().splitlines()
    with open(client_keys) as f:
        cli = [ln for ln in f.read().splitlines() if ln.startswith('CLIENT_RANDOM ')]
    check(all(LINE_RE.match(ln) for ln in srv), 'not NSS CLIENT_RANDOM lines: %r' % srv)
    check(len(cli) == 1, 'OpenSSL logged %d CLIENT_RANDOM lines, want 1' % len(cli))
    check(cli[0] in srv, 'the server logged %r, OpenSSL %r: another connection or secret'
          % (srv, cli[0]))
    print('the server logged the line OpenSSL did: %s...' % cli[0][:40])


def python_client(keys):
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    c.check_hostname = False
    c.verify_mode = ssl.CERT_NONE
    c.maximum_version = ssl.TLSVersion.TLSv1_2
    c.keylog_filename = keys
    return c


def server_keylog(a, name):
    """SSLKEYLOGFILE in one example server, against Python's ssl."""
    d = tempfile.mkdtemp(prefix='keylog-%s-' % name, dir=a.workdir)
    srv_keys, cli_keys, pf = (os.path.join(d, n) for n in ('server.keys', 'client.keys', 'port'))
    argv = {'echo': [a.echo_server],
            'event': [a.event_server],
            'https': [a.https_server, '--root', d],
            'uring': [a.uring_server],
            'uring-https': [a.uring_server, '--root', d]}[name]
    with open(os.path.join(d, 'index.html'), 'w') as f:
        f.write('sotls key log\n')
    srv = subprocess.Popen(argv + ['--port', '0', '--port-file', pf], cwd=d,
                           env=dict(os.environ, SSLKEYLOGFILE=srv_keys),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 20
        while not os.path.exists(pf):
            check(time.time() < deadline and srv.poll() is None, '%s did not start' % name)
            time.sleep(0.05)
        with open(pf) as f:
            port = int(f.read())
        with socket.create_connection(('127.0.0.1', port), timeout=30) as raw:
            with python_client(cli_keys).wrap_socket(raw) as t:
                if name in ('https', 'uring-https'):
                    t.sendall(b'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
                    page = b''
                    while chunk := t.recv(4096):  # to the close: Connection: close
                        page += chunk
                    check(b'sotls key log' in page, 'no page: %r' % page)
                else:
                    t.sendall(MARKER)
                    echo = b''
                    while len(echo) < len(MARKER) and (chunk := t.recv(100)):
                        echo += chunk
                    check(echo == MARKER, 'no echo')
        check_same_keylog(srv_keys, cli_keys)
    finally:
        srv.kill()
        srv.wait()
    shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('name', nargs='?', default='tshark',
                    choices=['tshark', 'echo', 'event', 'https', 'uring', 'uring-https'])
    ap.add_argument('--echo-server', required=True)
    ap.add_argument('--echo-client')
    ap.add_argument('--event-server')
    ap.add_argument('--https-server')
    ap.add_argument('--uring-server')
    ap.add_argument('--workdir', required=True)
    ap.add_argument('--in-netns', action='store_true')
    a = ap.parse_args()
    if a.name != 'tshark':
        return report(server_keylog, a, a.name)
    if a.echo_client is None:
        ap.error('the tshark test needs --echo-client')
    if not a.in_netns:
        if os.geteuid() != 0:
            print('SKIP: capturing in a private network namespace needs root')
            return 77
        for tool in ('tshark', 'dumpcap', 'unshare', 'ip'):
            if shutil.which(tool) is None:
                print('FAIL: %s is missing (scripts/setup.sh installs tshark)' % tool)
                return 1
        return subprocess.run(['unshare', '-n', sys.executable, *sys.argv, '--in-netns']).returncode
    return report(in_netns, a)


def report(test, *args):
    """Runs test(*args), prints the plain summary line; the exit status."""
    ok = False
    try:
        test(*args)
        ok = True
    except Fail as e:
        print('FAIL: %s' % e)
    except Exception as e:  # noqa: BLE001 - report anything as a failure
        print('FAIL: %r' % e)
    print('1 passed, 0 failed' if ok else '0 passed, 1 failed')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
