#!/usr/bin/env python3
"""Server CPU and memory of sotls's example servers against each other and
against nginx (Debian's, OpenSSL), issue #22 item 2. bench/README.md, section
"Servers", says what is measured and how to read it.

    bench_servers.py --build BUILD [--out DIR] [--quick] [--seconds S]
                     [--tests echo,https,wrk,memory] [--conns 1,100,1000]
                     [--threads N] [--idle-conns N] [--no-install]
                     [--uring-server BIN] [--event-server BIN]
                     [--engine-server BIN] [--https-server BIN]
                     [--nginx BIN] [--loadgen BIN]

Only the servers' CPU time counts: utime + stime of the server process (for
nginx, of the master and every worker) read from /proc/PID/stat at the
moments sotls-loadgen --marks prints the measured interval's bounds. Every
server runs from the start of its test, and the cells of one test are
measured in turn for each load (interleaved), so background load on the
shared machine hits every server alike; compare ratios from one run.
"""
import argparse
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

CLK_TCK = os.sysconf('SC_CLK_TCK')
SUITES = {  # sotls name: OpenSSL name (the same suite, ECDHE-ECDSA with P-256)
    'ARIA-128-GCM': 'ECDHE-ECDSA-ARIA128-GCM-SHA256',
    'AES-128-GCM': 'ECDHE-ECDSA-AES128-GCM-SHA256',
}
ECHO_SIZES = [64, 16384]
FILE_SIZES = {'1k.bin': 1024, '1m.bin': 1048576}
MAX_CONNS = '4000'
WRK_CONNS = 100
# Targets of issue #22 item 2: printed met/missed, never a failure.
TARGET_URING_ECHO = 1.3
TARGET_FILES = {'AES-128-GCM': 1.5, 'ARIA-128-GCM': 8.0}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# --- /proc ------------------------------------------------------------------

def proc_stat(pid):
    """(ppid, utime + stime in ticks) of pid, or None once it is gone."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            s = f.read()
    except OSError:
        return None
    # The command name may hold spaces and parentheses: fields start after the last ')'.
    fields = s[s.rindex(')') + 2:].split()
    return int(fields[1]), int(fields[11]) + int(fields[12])


def children(pid):
    out = []
    for d in os.listdir('/proc'):
        if d.isdigit():
            st = proc_stat(int(d))
            if st is not None and st[0] == pid:
                out.append(int(d))
    return out


def family(pid, with_children):
    return [pid] + (children(pid) if with_children else [])


def cpu_seconds(pids):
    return sum((proc_stat(p) or (0, 0))[1] for p in pids) / CLK_TCK


def rss_kib(pids):
    total = 0
    for p in pids:
        try:
            with open('/proc/%d/status' % p) as f:
                for line in f:
                    if line.startswith('VmRSS:'):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def queued_bytes(port):
    """Bytes in the kernel on the connections to port: the server's send
    queues (sealed, not yet taken by the client) and the client's receive
    queues (arrived, not yet read). /proc/net/tcp: local and remote address,
    then tx_queue:rx_queue, in hex."""
    total = 0
    want = ':%04X' % port
    with open('/proc/net/tcp') as f:
        next(f)
        for line in f:
            fields = line.split()
            local, remote, queues = fields[1], fields[2], fields[4]
            tx, rx = (int(x, 16) for x in queues.split(':'))
            if local.endswith(want) and fields[3] == '01':
                total += tx
            elif remote.endswith(want):
                total += rx
    return total


# --- servers ----------------------------------------------------------------

class Server:
    """One server process: sotls's (port from --port-file) or nginx."""

    def __init__(self, name, kind, argv, tmp, port=None, port_file=None, with_children=False):
        self.name, self.kind, self.argv = name, kind, argv
        self.port, self.port_file, self.with_children = port, port_file, with_children
        self.log_path = os.path.join(tmp, name.replace(' ', '_') + '.log')
        self.proc = None

    def start(self):
        self.logf = open(self.log_path, 'w')
        self.proc = subprocess.Popen(self.argv, stdout=self.logf, stderr=subprocess.STDOUT)
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError('%s exited at start (%s)' % (self.name, self.log_path))
            if self.port_file is not None and os.path.exists(self.port_file):
                with open(self.port_file) as f:
                    text = f.read().strip()
                if text:
                    self.port = int(text)
            if self.port is not None and self.listening():
                if not self.with_children or children(self.proc.pid):
                    return
            time.sleep(0.05)
        raise RuntimeError('%s did not start listening (%s)' % (self.name, self.log_path))

    def listening(self):
        try:
            with socket.create_connection(('127.0.0.1', self.port), timeout=1):
                return True
        except OSError:
            return False

    def pids(self):
        return family(self.proc.pid, self.with_children)

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            # nginx: SIGQUIT is its graceful stop; sotls's servers stop on SIGTERM.
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.logf.close()
        self.proc = None


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def nginx_conf(tmp, name, port, suite, threads, www, cert, key):
    d = os.path.join(tmp, name)
    os.makedirs(d, exist_ok=True)
    conf = os.path.join(d, 'nginx.conf')
    # Temp paths in the prefix: nothing of the system's nginx is touched.
    with open(conf, 'w') as f:
        f.write('''daemon off;
master_process on;
worker_processes %(threads)d;
pid %(d)s/nginx.pid;
error_log %(d)s/error.log warn;
events { worker_connections 8192; }
http {
    access_log off;
    sendfile on;
    keepalive_timeout 300;
    keepalive_requests 100000000;
    client_body_temp_path %(d)s/body;
    proxy_temp_path %(d)s/proxy;
    fastcgi_temp_path %(d)s/fastcgi;
    uwsgi_temp_path %(d)s/uwsgi;
    scgi_temp_path %(d)s/scgi;
    types { application/octet-stream bin; }
    server {
        listen 127.0.0.1:%(port)d ssl;
        ssl_certificate %(cert)s;
        ssl_certificate_key %(key)s;
        ssl_protocols TLSv1.2;
        ssl_ciphers %(suite)s;
        root %(www)s;
    }
}
''' % dict(threads=threads, d=d, port=port, cert=cert, key=key, suite=SUITES[suite], www=www))
    return d, conf


class Setup:
    """What every test shares: binaries, the certificate, the files."""

    def __init__(self, a, tmp):
        self.a, self.tmp = a, tmp
        self.cert = os.path.join(tmp, 'cert.pem')
        self.key = os.path.join(tmp, 'key.pem')
        subprocess.run(['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt',
                        'ec_paramgen_curve:P-256', '-nodes', '-keyout', self.key, '-out',
                        self.cert, '-days', '2', '-subj', '/CN=localhost'],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.www = os.path.join(tmp, 'www')
        os.mkdir(self.www)
        for name, size in FILE_SIZES.items():
            with open(os.path.join(self.www, name), 'wb') as f:
                f.write(os.urandom(size))
        # nginx's workers run as nobody: the files and the way to them readable.
        for p in [tmp, self.www] + [os.path.join(self.www, n) for n in FILE_SIZES]:
            os.chmod(p, 0o755 if os.path.isdir(p) else 0o644)

    def have(self, path):
        return path is not None and os.access(path, os.X_OK)

    def echo_servers(self):
        """[(name, Server or the reason it is missing)] for the echo test."""
        a, t = self.a, self.tmp
        out = []
        specs = [
            ('uring', a.uring_server, ['--max-conns', MAX_CONNS, '--threads', str(a.threads)]),
            ('event', a.event_server, ['--max-conns', MAX_CONNS]),
            ('engine', a.engine_server, ['--cert', self.cert, '--key', self.key]),
        ]
        for name, binary, extra in specs:
            label = 'sotls-%s-echo' % name
            if not self.have(binary):
                out.append((label, 'not built'))
                continue
            pf = os.path.join(t, label + '.port')
            out.append((label, Server(label, 'sotls', [binary, '--port', '0', '--port-file', pf]
                                      + extra, t, port_file=pf)))
        return out

    def https_servers(self, suite):
        a, t = self.a, self.tmp
        out = []
        for label, binary, extra in [
                ('sotls-uring-https', a.uring_server, ['--threads', str(a.threads)]),
                ('sotls-https', a.https_server, [])]:
            label = '%s %s' % (label, suite)
            if not self.have(binary):
                out.append((label, 'not built'))
                continue
            pf = os.path.join(t, label.replace(' ', '_') + '.port')
            argv = [binary, '--root', self.www, '--port', '0', '--port-file', pf, '--cert',
                    self.cert, '--key', self.key, '--cipher', suite, '--max-conns', MAX_CONNS,
                    '--quiet'] + extra
            out.append((label, Server(label, 'sotls', argv, t, port_file=pf)))
        label = 'nginx %s' % suite
        if a.nginx is None:
            out.append((label, 'not installed'))
        else:
            port = free_port()
            d, conf = nginx_conf(t, label.replace(' ', '_'), port, suite, a.threads, self.www,
                                 self.cert, self.key)
            out.append((label, Server(label, 'nginx',
                                      [a.nginx, '-p', d, '-c', conf, '-e',
                                       os.path.join(d, 'error.log')],
                                      t, port=port, with_children=True)))
        return out


# --- one measurement ----------------------------------------------------------

def run_loadgen(setup, server, args, seconds, warmup, on_start=None, on_end=None):
    """Runs sotls-loadgen --marks against server; on_start/on_end are called
    when it prints the interval's bounds. Returns (start mark, end mark,
    result) as dicts of the numbers on those lines."""
    argv = [setup.a.loadgen, '--port', str(server.port), '--marks', '--seconds', str(seconds),
            '--warmup', str(warmup)] + args
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    marks, result = {}, None
    for line in p.stdout:
        words = line.split()
        if not words:
            continue
        if words[0] == 'mark':
            # The server's figures first: the bound is now.
            fn = on_start if words[1] == 'start' else on_end
            extra = fn() if fn is not None else {}
            marks[words[1]] = dict(kv(words[2:]), **extra)
        elif words[0] == 'result':
            result = kv(words[1:])
    err = p.stderr.read()
    p.wait()
    if 'start' not in marks or 'end' not in marks or result is None:
        raise RuntimeError('loadgen against %s: no measured interval (status %d): %s'
                           % (server.name, p.returncode, err.strip()[-400:]))
    result['status'] = p.returncode
    result['stderr'] = err.strip()[-400:]
    return marks['start'], marks['end'], result


def kv(words):
    out = {}
    for w in words:
        k, v = w.split('=', 1)
        out[k] = float(v) if '.' in v else int(v)
    return out


def measure(setup, server, args, conns, seconds, count_bytes=None):
    """One cell: server CPU per message over the measured interval.
    count_bytes: for files, requests = (body bytes the client got + the
    change in bytes queued on the connections) / file size, so responses cut
    by the interval's bounds and bytes sealed but still in the kernel count
    at what they are worth."""
    pids = server.pids
    snap = lambda: {'cpu': cpu_seconds(pids()), 'queued': queued_bytes(server.port)
                    if count_bytes else 0, 't': time.monotonic()}
    s, e, r = run_loadgen(setup, server, ['--conns', str(conns)] + args, seconds, 0.5, snap, snap)
    cpu = e['cpu'] - s['cpu']
    wall = e['seconds'] - s['seconds']
    if wall <= 0:
        raise RuntimeError('an empty measured interval: %s' % r['stderr'])
    if count_bytes:
        msgs = (e['bytes'] - s['bytes'] + e['queued'] - s['queued']) / count_bytes
    else:
        msgs = e['messages'] - s['messages']
    row = {'messages': round(msgs, 1), 'completed': e['messages'] - s['messages'],
           'seconds': round(wall, 4), 'server_cpu_s': round(cpu, 3),
           'server_cpu_share': round(cpu / wall, 3) if wall > 0 else None,
           'messages_per_s': round(msgs / wall, 1) if wall > 0 else None,
           'failed': r['failed'], 'loadgen_status': r['status'],
           'served_at_start': s.get('served'), 'ramp_s': round(s['seconds'], 2)}
    if cpu > 0 and msgs > 0:
        row['cpu_us_per_message'] = round(cpu / msgs * 1e6, 2)
        row['messages_per_cpu_s'] = round(msgs / cpu, 1)
    if count_bytes:
        row['queued_change_bytes'] = e['queued'] - s['queued']
    if r['failed']:
        row['loadgen_stderr'] = r['stderr']
    return row


# --- tests --------------------------------------------------------------------

def run_cells(setup, servers, loads, test, extra_fields):
    """Starts every server, then for each load measures every server in
    turn. loads: [(fields, loadgen args, conns, bytes per message or None)]."""
    rows = []
    live = []
    for name, srv in servers:
        if isinstance(srv, str):
            rows.append(dict(test=test, server=name, status=srv, **extra_fields))
            log('  %-28s %s' % (name, srv))
            continue
        try:
            srv.start()
            live.append((name, srv))
        except RuntimeError as ex:
            rows.append(dict(test=test, server=name, status='failed to start', **extra_fields))
            log('  %-28s failed to start: %s' % (name, ex))
    try:
        for fields, args, conns, count_bytes in loads:
            for name, srv in live:
                row = dict(test=test, server=name, conns=conns, status='ok', **extra_fields,
                           **fields)
                try:
                    row.update(measure(setup, srv, args, conns, setup.a.seconds, count_bytes))
                except RuntimeError as ex:
                    row['status'] = 'failed'
                    row['error'] = str(ex)
                rows.append(row)
                log('  ' + cell_line(row))
    finally:
        for _, srv in live:
            srv.stop()
    return rows


def cell_line(r):
    what = r.get('msg_bytes') or r.get('file')
    if r['status'] != 'ok':
        return '%-28s %8s %5s conns  %s %s' % (r['server'], what, r.get('conns'), r['status'],
                                              r.get('error', ''))
    unserved = r['conns'] - (r.get('served_at_start') or 0)
    return ('%-28s %8s %5d conns  %10.1f msg/s  %8s us CPU/msg  %10s msg/CPU-s  CPU %.2f%s%s'
            % (r['server'], what, r['conns'], r['messages_per_s'] or 0,
               r.get('cpu_us_per_message', '-'), r.get('messages_per_cpu_s', '-'),
               r['server_cpu_share'] or 0, '  FAILED %d' % r['failed'] if r['failed'] else '',
               '  (%d conns not yet served at start)' % unserved if unserved > 0 else ''))


def test_echo(setup):
    log('\n-- echo, ARIA-128-GCM, fixed message sizes (server CPU only)')
    loads = [({'msg_bytes': size}, ['--msg', str(size), '--cipher', 'ARIA-128-GCM'], n, None)
             for size in ECHO_SIZES for n in setup.a.conns]
    return run_cells(setup, setup.echo_servers(), loads, 'echo', {'cipher': 'ARIA-128-GCM'})


def test_https(setup):
    rows = []
    for suite in SUITES:
        log('\n-- static files over HTTPS, keep-alive, %s (server CPU only)' % suite)
        loads = [({'file': name, 'file_bytes': size},
                  ['--http', '/' + name, '--cipher', suite], n, size)
                 for name, size in FILE_SIZES.items() for n in setup.a.conns]
        rows += run_cells(setup, setup.https_servers(suite), loads, 'https', {'cipher': suite})
    return rows


def test_wrk(setup):
    """A cross-check with an independent client: wrk (OpenSSL, its default
    cipher list, so AES-128-GCM only), 100 connections, the server's CPU
    over wrk's whole run, handshakes and ramp-up included."""
    wrk = shutil.which('wrk')
    suite = 'AES-128-GCM'
    log('\n-- cross-check: wrk, %s, whole run (handshakes included)' % suite)
    rows = []
    if wrk is None:
        log('  wrk not installed: skipped')
        return [{'test': 'wrk', 'server': 'all', 'status': 'wrk not installed'}]
    servers = setup.https_servers(suite)
    live = []
    for name, srv in servers:
        if isinstance(srv, str):
            rows.append({'test': 'wrk', 'server': name, 'status': srv, 'cipher': suite})
            continue
        try:
            srv.start()
            live.append((name, srv))
        except RuntimeError as ex:
            rows.append({'test': 'wrk', 'server': name, 'status': 'failed to start',
                         'cipher': suite})
            log('  %-28s failed to start: %s' % (name, ex))
    try:
        for fname, size in FILE_SIZES.items():
            for name, srv in live:
                row = {'test': 'wrk', 'server': name, 'cipher': suite, 'file': fname,
                       'file_bytes': size, 'conns': WRK_CONNS, 'status': 'ok'}
                before = cpu_seconds(srv.pids())
                p = subprocess.run([wrk, '-t1', '-c%d' % WRK_CONNS,
                                    '-d%ds' % max(1, round(setup.a.seconds)), '--timeout', '30s',
                                    'https://127.0.0.1:%d/%s' % (srv.port, fname)],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                cpu = cpu_seconds(srv.pids()) - before
                reqs = [l.split()[0] for l in p.stdout.splitlines() if ' requests in ' in l]
                bad = [l.strip() for l in p.stdout.splitlines()
                       if 'Socket errors' in l or 'Non-2xx' in l]
                if p.returncode != 0 or not reqs or int(reqs[0]) == 0:
                    row.update(status='failed', error=p.stdout.strip()[-300:])
                else:
                    n = int(reqs[0])
                    rate = [float(l.split()[1]) for l in p.stdout.splitlines()
                            if l.startswith('Requests/sec:')]
                    wall = n / rate[0] if rate and rate[0] > 0 else None
                    row.update(messages=n, server_cpu_s=round(cpu, 3),
                               messages_per_s=rate[0] if rate else None,
                               server_cpu_share=round(cpu / wall, 3) if wall else None,
                               cpu_us_per_message=round(cpu / n * 1e6, 2) if cpu else None,
                               messages_per_cpu_s=round(n / cpu, 1) if cpu else None,
                               wrk_errors=bad)
                rows.append(row)
                log('  %-28s %8s %5d conns  %s' % (
                    name, fname, WRK_CONNS, '%s requests, %s us CPU/req, %s req/CPU-s%s' % (
                        row.get('messages'), row.get('cpu_us_per_message'),
                        row.get('messages_per_cpu_s'),
                        '  ' + '; '.join(bad) if bad else '') if row['status'] == 'ok'
                    else row['status'] + ' ' + row.get('error', '')))
    finally:
        for _, srv in live:
            srv.stop()
    return rows


def test_memory(setup):
    """Each server fresh: one warm-up connection, then RSS before and after
    --idle-conns connections that completed their handshake and sit idle.
    The server CPU until they are all up is their handshakes' cost."""
    n = setup.a.idle_conns
    log('\n-- memory per idle connection, %d connections after the handshake, ARIA-128-GCM' % n)
    servers = setup.echo_servers() + setup.https_servers('ARIA-128-GCM')
    rows = []
    for name, srv in servers:
        name = name.replace(' ARIA-128-GCM', '')
        if isinstance(srv, str):
            rows.append({'test': 'memory', 'server': name, 'status': srv})
            log('  %-28s %s' % (name, srv))
            continue
        row = {'test': 'memory', 'server': name, 'conns': n, 'status': 'ok'}
        try:
            srv.start()
            run_loadgen(setup, srv, ['--idle', '--conns', '1'], 0.2, 0)
            time.sleep(0.2)
            before = {'rss': rss_kib(srv.pids()), 'cpu': cpu_seconds(srv.pids())}
            snap = lambda: {'rss': rss_kib(srv.pids()), 'cpu': cpu_seconds(srv.pids())}
            s, e, r = run_loadgen(setup, srv, ['--idle', '--conns', str(n), '--cipher',
                                               'ARIA-128-GCM'], 1.0, 0, snap, snap)
            row.update({'rss_before_kib': before['rss'], 'rss_after_kib': e['rss'],
                        'kib_per_conn': round((e['rss'] - before['rss']) / n, 2),
                        'handshake_cpu_us': round((s['cpu'] - before['cpu']) / n * 1e6, 1),
                        'failed': r['failed']})
        except RuntimeError as ex:
            row['status'] = 'failed'
            row['error'] = str(ex)
        finally:
            srv.stop()
        rows.append(row)
        if row['status'] == 'ok':
            log('  %-28s RSS %7d -> %7d KiB: %6.2f KiB per idle connection; handshake %.0f us '
                'server CPU each' % (name, row['rss_before_kib'], row['rss_after_kib'],
                                     row['kib_per_conn'], row['handshake_cpu_us']))
        else:
            log('  %-28s %s %s' % (name, row['status'], row.get('error', '')))
    return rows


# --- report -------------------------------------------------------------------

def find(rows, **want):
    for r in rows:
        if r.get('status') == 'ok' and all(r.get(k) == v for k, v in want.items()):
            return r
    return None


def ratio(a, b, key='messages_per_cpu_s'):
    if a is None or b is None or not a.get(key) or not b.get(key):
        return None
    return a[key] / b[key]


def targets(rows, conns):
    """The issue's targets, as lines and JSON."""
    out = []
    top = max(conns)
    tests = {r['test'] for r in rows}
    for size in ECHO_SIZES if 'echo' in tests else []:
        x = ratio(find(rows, test='echo', server='sotls-uring-echo', msg_bytes=size, conns=top),
                  find(rows, test='echo', server='sotls-event-echo', msg_bytes=size, conns=top))
        out.append({'target': 'echo %d B at %d conns: uring >= %.1fx event (msg per CPU-s)'
                    % (size, top, TARGET_URING_ECHO), 'ratio': x,
                    'met': None if x is None else x >= TARGET_URING_ECHO})
    for suite, want in TARGET_FILES.items() if 'https' in tests else []:
        for srv in ('sotls-uring-https', 'sotls-https'):
            for n in conns:
                x = ratio(find(rows, test='https', server='%s %s' % (srv, suite),
                               file='1m.bin', conns=n),
                          find(rows, test='https', server='nginx %s' % suite,
                               file='1m.bin', conns=n))
                out.append({'target': '1 MiB %s at %d conns: %s >= %.1fx nginx (req per CPU-s)'
                            % (suite, n, srv, want), 'ratio': x,
                            'met': None if x is None else x >= want})
    ng = find(rows, test='memory', server='nginx')
    for r in rows:
        if r['test'] == 'memory' and r['server'] != 'nginx':
            ok = r.get('status') == 'ok' and ng is not None
            x = r['kib_per_conn'] / ng['kib_per_conn'] if ok and ng['kib_per_conn'] > 0 else None
            out.append({'target': 'memory per idle connection: %s <= nginx' % r['server'],
                        'ratio': x,
                        'met': None if not ok else r['kib_per_conn'] <= ng['kib_per_conn']})
    return out


def print_tables(rows, tg):
    if any(r['test'] != 'memory' for r in rows):
        print_cpu_table(rows)
    print_memory_table([r for r in rows if r['test'] == 'memory'])
    print('\nTargets (issue #22 item 2; reported, never failed on)')
    for t in tg:
        verdict = 'n/a (a row is missing)' if t['met'] is None else 'met' if t['met'] else 'missed'
        print('  %-74s %7s  %s' % (t['target'], '%.2fx' % t['ratio'] if t['ratio'] else '-',
                                   verdict))


def print_cpu_table(rows):
    print('\nServer CPU per message (utime+stime of the server only; loadgen not counted)')
    print('| test | server | cipher | size | conns | msg/s | server CPU share | '
          'us CPU/msg | msg per CPU-s | x ref |')
    print('|---|---|---|---:|---:|---:|---:|---:|---:|---:|')
    for r in rows:
        if r['test'] == 'memory':
            continue
        size = r.get('msg_bytes') or r.get('file_bytes') or ''
        if r['status'] != 'ok':
            print('| %s | %s | %s | %s | %s | %s | | | | |' % (
                r['test'], r['server'], r.get('cipher', ''), size, r.get('conns', ''),
                r['status']))
            continue
        ref = 'sotls-event-echo' if r['test'] == 'echo' else 'nginx %s' % r['cipher']
        key = {'msg_bytes': r.get('msg_bytes')} if r['test'] == 'echo' else {'file': r['file']}
        x = ratio(r, find(rows, test=r['test'], server=ref, conns=r['conns'], **key))
        print('| %s | %s | %s | %s | %d | %.0f | %.2f | %s | %s | %s |' % (
            r['test'], r['server'], r.get('cipher', ''), size, r['conns'],
            r.get('messages_per_s') or 0, r.get('server_cpu_share') or 0,
            r.get('cpu_us_per_message', '-'),
            r.get('messages_per_cpu_s', '-'), '%.2fx' % x if x is not None else '-'))


def print_memory_table(mem):
    if mem:
        print('\nMemory per idle connection (server VmRSS, summed over nginx\'s processes)')
        print('| server | conns | RSS before KiB | RSS after KiB | KiB per conn | '
              'handshake CPU us |')
        print('|---|---:|---:|---:|---:|---:|')
        for r in mem:
            if r['status'] != 'ok':
                print('| %s | | %s | | | |' % (r['server'], r['status']))
            else:
                print('| %s | %d | %d | %d | %.2f | %.0f |' % (
                    r['server'], r['conns'], r['rss_before_kib'], r['rss_after_kib'],
                    r['kib_per_conn'], r['handshake_cpu_us']))


def write_dat(rows, out):
    """gnuplot tables for bench/plot_servers.gnuplot: one line per server,
    messages per server-CPU-second per (size, conns)."""
    def table(path, test, servers, cols):
        with open(path, 'w') as f:
            f.write('server ' + ' '.join('%s@%d' % c for c in cols) + '\n')
            for s in servers:
                vals = []
                for c in cols:
                    key = {'msg_bytes': c[0]} if test == 'echo' else {'file': c[0]}
                    r = find(rows, test=test, server=s, conns=c[1], **key)
                    vals.append('%g' % r['messages_per_cpu_s'] if r and
                                r.get('messages_per_cpu_s') else '-')
                missing = [r['status'] for r in rows if r['test'] == test and
                           r['server'] == s and r['status'] != 'ok' and 'conns' not in r]
                label = s + (' (%s)' % missing[0] if missing else '')
                f.write('"%s" %s\n' % (label, ' '.join(vals)))
    conns = sorted({r['conns'] for r in rows if r.get('conns') and r['test'] in ('echo', 'https')})
    echo = [s for s in dict.fromkeys(r['server'] for r in rows if r['test'] == 'echo')]
    if echo:
        table(os.path.join(out, 'servers-echo.dat'), 'echo', echo,
              [(s, n) for s in ECHO_SIZES for n in conns])
    https = [s for s in dict.fromkeys(r['server'] for r in rows if r['test'] == 'https')]
    if https:
        table(os.path.join(out, 'servers-https.dat'), 'https', https,
              [(f, n) for f in FILE_SIZES for n in conns])
    mem = [r for r in rows if r['test'] == 'memory']
    if mem:
        with open(os.path.join(out, 'servers-memory.dat'), 'w') as f:
            f.write('server KiB_per_idle_connection\n')
            for r in mem:
                ok = r['status'] == 'ok'
                f.write('"%s" %s\n' % (r['server'] + ('' if ok else ' (%s)' % r['status']),
                                       '%g' % r['kib_per_conn'] if ok else '-'))
    return conns


# --- set-up -------------------------------------------------------------------

def ensure_tools(a):
    """nginx and wrk from Debian (apt is configured on the machine), as root
    only. A service the package starts would listen on port 80: if there is
    one after the install (the policy may allow it), it is stopped; nothing
    here relies on it."""
    missing = [p for p, b in (('nginx', 'nginx'), ('wrk', 'wrk')) if shutil.which(b) is None]
    if missing and not a.no_install and os.geteuid() == 0:
        log('installing %s (apt-get)' % ' '.join(missing))
        env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
        p = subprocess.run(['apt-get', '-o', 'DPkg::Lock::Timeout=600', 'install', '-y', '-q',
                            '--no-install-recommends'] + missing, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            log('apt-get install failed (%d): %s' % (p.returncode, p.stdout.strip()[-300:]))
        stop_system_nginx()
    if a.nginx is None:
        a.nginx = shutil.which('nginx') or (os.access('/usr/sbin/nginx', os.X_OK)
                                            and '/usr/sbin/nginx' or None)


def stop_system_nginx():
    try:
        with open('/run/nginx.pid') as f:
            pid = int(f.read().strip())
        with open('/proc/%d/comm' % pid) as f:
            if f.read().strip() == 'nginx':
                log('stopping the nginx service the package started (pid %d)' % pid)
                os.kill(pid, signal.SIGQUIT)
    except (OSError, ValueError):
        pass


def wrk_check(a, setup):
    """Whether wrk (OpenSSL, its default cipher list) can negotiate each
    suite with nginx: what decides which client loads the servers."""
    wrk = shutil.which('wrk')
    out = {}
    if wrk is None or a.nginx is None:
        return {'wrk': 'not installed' if wrk is None else 'no nginx'}
    for suite in SUITES:
        (name, srv), = [s for s in setup.https_servers(suite) if s[0].startswith('nginx')]
        try:
            srv.start()
            p = subprocess.run([wrk, '-t1', '-c1', '-d1s', 'https://127.0.0.1:%d/1k.bin'
                                % srv.port], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=30)
            ok = ' 0 requests in' not in p.stdout and 'Socket errors: connect' not in p.stdout
            out[suite] = 'negotiates' if ok else 'cannot negotiate (handshake fails)'
        except (RuntimeError, subprocess.TimeoutExpired) as ex:
            out[suite] = 'not checked: %s' % ex
        finally:
            srv.stop()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--build', required=True)
    ap.add_argument('--out', help='default BUILD/bench')
    ap.add_argument('--quick', action='store_true',
                    help='1 and 100 connections, 2 s cells, 200 idle connections')
    ap.add_argument('--seconds', type=float, help='measured seconds per cell (default 3)')
    ap.add_argument('--tests', default='echo,https,wrk,memory',
                    help='wrk: the cross-check with wrk (AES-128-GCM, 100 connections)')
    ap.add_argument('--conns', help='comma-separated (default 1,100,1000)')
    ap.add_argument('--threads', type=int, default=1,
                    help='sotls-uring-server --threads and nginx worker_processes')
    ap.add_argument('--idle-conns', type=int, help='memory test (default 1000)')
    ap.add_argument('--no-install', action='store_true', help='never apt-get nginx and wrk')
    for name in ('uring', 'event', 'engine', 'https'):
        ap.add_argument('--%s-server' % name)
    ap.add_argument('--nginx')
    ap.add_argument('--loadgen')
    a = ap.parse_args()
    ex = os.path.join(a.build, 'examples')
    a.uring_server = a.uring_server or os.path.join(ex, 'sotls-uring-server')
    a.event_server = a.event_server or os.path.join(ex, 'sotls-event-echo-server')
    a.engine_server = a.engine_server or os.path.join(ex, 'sotls-engine-echo-server')
    a.https_server = a.https_server or os.path.join(ex, 'sotls-https-server')
    a.loadgen = a.loadgen or os.path.join(ex, 'sotls-loadgen')
    a.out = a.out or os.path.join(a.build, 'bench')
    a.seconds = a.seconds or (2 if a.quick else 3)
    a.conns = [int(x) for x in (a.conns or ('1,100' if a.quick else '1,100,1000')).split(',')]
    a.idle_conns = a.idle_conns or (200 if a.quick else 1000)
    tests = a.tests.split(',')
    if not os.access(a.loadgen, os.X_OK):
        log('bench_servers: %s not found; build the examples (-Dexamples=enabled)' % a.loadgen)
        return 1
    os.makedirs(a.out, exist_ok=True)
    # A figure of a test not run this time must not be left from an earlier run.
    for f in os.listdir(a.out):
        if f.startswith('servers-') and (f.endswith('.dat') or f.endswith('.png')):
            os.unlink(os.path.join(a.out, f))
    # A thousand connections at each end, and nginx's worker_connections.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    ensure_tools(a)
    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix='sotls-bench-servers-')
    rows = []
    try:
        setup = Setup(a, tmp)
        wrk = wrk_check(a, setup) if 'https' in tests else {}
        if wrk:
            log('wrk against nginx, default cipher list: %s'
                % ', '.join('%s %s' % kv for kv in wrk.items()))
        if 'echo' in tests:
            rows += test_echo(setup)
        if 'https' in tests:
            rows += test_https(setup)
        if 'wrk' in tests:
            rows += test_wrk(setup)
        if 'memory' in tests:
            rows += test_memory(setup)
    finally:
        if os.environ.get('SOTLS_BENCH_KEEP_TMP'):
            log('temp dir kept: %s' % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    tg = targets(rows, a.conns)
    # The results first: a fault in the report must not lose a 5-minute run.
    with open(os.path.join(a.out, 'servers.json'), 'w') as f:
        json.dump({'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
                   'seconds_per_cell': a.seconds, 'threads': a.threads, 'conns': a.conns,
                   'idle_conns': a.idle_conns, 'cpus': os.cpu_count(),
                   'loadavg': open('/proc/loadavg').read().split()[:3],
                   'nice': os.nice(0), 'wrk_default_ciphers': wrk,
                   'duration_s': round(time.time() - t0, 1), 'rows': rows, 'targets': tg},
                  f, indent=1)
        f.write('\n')
    print_tables(rows, tg)
    conns = write_dat(rows, a.out)
    plot(a.out)
    print('\nbench_servers: %.0f s; results in %s/servers.json (cells of conns %s)'
          % (time.time() - t0, a.out, ','.join(map(str, conns))))
    return 0


def plot(out):
    if shutil.which('gnuplot') is None:
        log('bench_servers: gnuplot not found (apt-get install gnuplot-nox): no plots')
        return
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'plot_servers.gnuplot')
    p = subprocess.run(['gnuplot', '-e', "dir='%s'; stamp='(%s)'"
                        % (out, time.strftime('%Y-%m-%d', time.gmtime())), script],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        log('bench_servers: gnuplot failed: %s' % p.stdout.strip()[-300:])
    else:
        print('plots: %s' % ' '.join(sorted(f for f in os.listdir(out)
                                            if f.startswith('servers-') and f.endswith('.png'))))


if __name__ == '__main__':
    sys.exit(main())
