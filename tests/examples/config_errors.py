#!/usr/bin/env python3
"""What an operator reads when a server's configuration is wrong: each
example server, given a bad key or ticket key file, exits 1 with a line
that names the file and the reason (sotls_config_error_detail), and
sotls-https-server says the same on a SIGHUP reload, keeps serving with the
configuration it had, and takes the repaired files on the next SIGHUP.

    config_errors.py --bin-dir BUILD --workdir DIR
"""
import argparse
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time

TIMEOUT = 30


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)


def openssl(workdir, *args):
    subprocess.run(['openssl', *args], cwd=workdir, check=True, capture_output=True)


def make_pair(workdir, name):
    openssl(workdir, 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256',
            '-nodes', '-days', '2', '-subj', '/CN=localhost', '-keyout', name + '.key',
            '-out', name + '.crt')
    return os.path.join(workdir, name + '.crt'), os.path.join(workdir, name + '.key')


def run_server(argv, as_nobody=False):
    """A server that must refuse to start: (exit status, stderr)."""
    if as_nobody:
        argv = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', *argv]
    p = subprocess.run(argv, capture_output=True, timeout=TIMEOUT)
    err = p.stderr.decode(errors='replace')
    print('$', ' '.join(argv), '->', p.returncode, '\n' + err)
    return p.returncode, err


def expect(argv, *words, as_nobody=False):
    rc, err = run_server(argv, as_nobody)
    if rc != 1:
        fail('%s: exit %d, want 1' % (argv[0], rc))
    for w in words:
        if w not in err:
            fail('%s: %r not in its error line: %s' % (os.path.basename(argv[0]), w, err))


def wait_port(path, proc):
    deadline = time.time() + TIMEOUT
    while time.time() < deadline:
        if proc.poll() is not None:
            fail('the server exited with %d' % proc.returncode)
        try:
            with open(path) as f:
                return int(f.read())
        except (FileNotFoundError, ValueError):
            time.sleep(0.05)
    fail('no port file')


def handshake(port):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with socket.create_connection(('127.0.0.1', port), timeout=TIMEOUT) as s:
        with ctx.wrap_socket(s) as t:
            return t.getpeercert(binary_form=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--bin-dir', required=True)
    ap.add_argument('--workdir', required=True)
    a = ap.parse_args()
    w = os.path.abspath(a.workdir)
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)
    os.chmod(w, 0o755)  # the unreadable-key case runs as nobody
    ex = os.path.join(a.bin_dir, 'examples')
    crt, key = make_pair(w, 'good')
    crt2, key2 = make_pair(w, 'other')
    garbage = os.path.join(w, 'garbage.key')
    with open(garbage, 'w') as f:
        f.write('not a key\n')
    secret = os.path.join(w, 'secret.key')
    shutil.copy(key, secret)
    os.chmod(secret, 0o600)
    for p in (crt, key2, garbage):
        os.chmod(p, 0o644)

    echo = os.path.join(ex, 'sotls-echo-server')
    https = os.path.join(ex, 'sotls-https-server')
    root = os.path.join(w, 'root')
    os.makedirs(root)
    servers = [[echo, '--port', '0'], [https, '--root', root, '--port', '0']]
    for base in servers:
        expect(base + ['--cert', crt, '--key', key2], key2,
               'does not match the public key of the leaf in ' + crt)
        expect(base + ['--cert', crt, '--key', garbage], garbage, 'PK - ')
        expect(base + ['--cert', crt, '--key', os.path.join(w, 'missing.key')],
               'missing.key: No such file or directory')
        if os.geteuid() == 0:
            expect(base + ['--cert', crt, '--key', secret], secret + ': Permission denied',
                   as_nobody=True)
        keys = os.path.join(w, 'ticket.keys')
        with open(keys, 'w') as f:
            f.write('# no key yet\n')
        os.chmod(keys, 0o644)
        expect(base + ['--cert', crt, '--key', key, '--ticket-key-file', keys], keys,
               'group or others may read or write it')
        os.chmod(keys, 0o600)
        expect(base + ['--cert', crt, '--key', key, '--ticket-key-file', keys], keys,
               'no key in it')

    # SIGHUP: a key replaced by a mismatched one is refused with the same
    # words; the server keeps its certificate, then takes the fixed pair.
    live_crt, live_key = os.path.join(w, 'live.crt'), os.path.join(w, 'live.key')
    shutil.copy(crt, live_crt)
    shutil.copy(key, live_key)
    pf = os.path.join(w, 'port')
    log = open(os.path.join(w, 'https.log'), 'w+')
    srv = subprocess.Popen([https, '--root', root, '--port', '0', '--port-file', pf,
                            '--cert', live_crt, '--key', live_key], stdout=log, stderr=log)
    try:
        port = wait_port(pf, srv)
        first = handshake(port)
        shutil.copy(key2, live_key)
        srv.send_signal(signal.SIGHUP)
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            log.seek(0)
            text = log.read()
            if 'reload failed' in text:
                break
            time.sleep(0.05)
        print(text)
        for want in ('reload failed', live_key + ': the key does not match the public key of '
                     'the leaf in ' + live_crt):
            if want not in text:
                fail('after SIGHUP: %r not in the log' % want)
        if handshake(port) != first:
            fail('a failed reload changed the certificate in use')
        shutil.copy(crt2, live_crt)
        srv.send_signal(signal.SIGHUP)
        deadline = time.time() + TIMEOUT
        while time.time() < deadline and handshake(port) == first:
            time.sleep(0.05)
        if handshake(port) == first:
            fail('the repaired pair was not taken on the next SIGHUP')
    finally:
        srv.terminate()
        srv.wait(timeout=TIMEOUT)
    print('every bad input named with its file and reason, at start and on reload')


if __name__ == '__main__':
    main()
