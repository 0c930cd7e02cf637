#!/usr/bin/env python3
"""Every numeric flag of every example program refuses what is not exactly a
number in its range (examples/parse_number.h): exit status 2 and a message
naming the flag, at once, never a server started on what atoi made of it
("--port abc" listened on a random port).

    flags.py --bin-dir BUILD --workdir DIR

Each program is run with one bad value for one flag (the flag first, so it
is the first thing refused) and whatever else it needs to get that far; a
program still running after 3 s took the value and started. Eight run at
once: on a tree that takes bad values, most of them start and wait.
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import tempfile

# What atoi/strtol/strtod take in part or whole and a strict parser must not.
# Each program's --port and one seconds flag get them all; the other flags,
# which share their parser, a few (the ASan build runs each as a process).
WHOLE = ['abc', '12abc', ' 5', '0x10', '', '99999999999999999999999']
NEG = WHOLE + ['-1']
SECONDS = ['abc', '1s', ' 1', '0x10', '1e3', 'inf', '-1', '']
PORT = NEG + ['65536']
FEW = ['abc', '5x', '', '-1']
FEW_SECONDS = FEW + ['1e3']

LIMIT_FLAGS = {'max-conns': FEW + ['0'], 'handshake-timeout': SECONDS,
               'idle-timeout': FEW_SECONDS, 'header-timeout': FEW_SECONDS,
               'send-timeout': FEW_SECONDS, 'event-budget': FEW + ['0']}
RESUME_FLAGS = {'ticket-lifetime': FEW + ['0'], 'session-cache': FEW}


def limits(*names):
    return {n: LIMIT_FLAGS[n] for n in names}


def programs(a, d):
    """(binary, the other arguments it needs, {flag: bad values})."""
    ex = os.path.join(a.bin_dir, 'examples')
    key = os.path.join(d, 'missing.key')
    return [
        (os.path.join(ex, 'sotls-echo-server'), [],
         {'port': PORT, **limits('max-conns', 'handshake-timeout', 'idle-timeout',
                                 'send-timeout'), **RESUME_FLAGS}),
        (os.path.join(ex, 'sotls-https-server'), ['--root', d],
         {'port': PORT, **limits('max-conns', 'handshake-timeout', 'idle-timeout',
                                 'header-timeout', 'send-timeout'), **RESUME_FLAGS}),
        (os.path.join(ex, 'sotls-event-echo-server'), [],
         {'port': PORT, **limits('max-conns', 'handshake-timeout', 'idle-timeout',
                                 'send-timeout', 'event-budget'), **RESUME_FLAGS}),
        (os.path.join(ex, 'sotls-uring-server'), [],
         {'port': PORT, 'threads': FEW + ['0', '257'], 'zc-min': FEW + ['0'],
          'drain-timeout': FEW_SECONDS + ['0'],
          **limits('max-conns', 'handshake-timeout', 'idle-timeout', 'header-timeout',
                   'send-timeout', 'event-budget'), **RESUME_FLAGS}),
        (os.path.join(ex, 'sotls-keyless-server'),
         ['--cert', key, '--key-socket', os.path.join(d, 'ks')],
         {'port': PORT, **limits('max-conns', 'handshake-timeout', 'send-timeout')}),
        (os.path.join(ex, 'sotls-key-server'), ['--key', key, '--socket', os.path.join(d, 'ks')],
         {'allow-uid': NEG + ['4294967295'], **limits('max-conns', 'send-timeout'),
          'idle-timeout': SECONDS}),
        (os.path.join(ex, 'sotls-echo-client'), ['--insecure'],
         {'port': PORT + ['0'], 'bytes': NEG + ['0', '5T', 'k', '-1k'],
          'max-frag-len': FEW}),
        (os.path.join(ex, 'sotls-loadgen'), [],
         {'port': PORT + ['0'], 'conns': FEW + ['0'], 'seconds': SECONDS + ['0'],
          'max-msg': FEW + ['0', '65537'], 'server-pid': FEW + ['0'], 'stalled': FEW,
          'slowloris': FEW, 'interval': FEW_SECONDS + ['0'], 'honest': FEW,
          'honest-max': FEW_SECONDS + ['0'], 'expect-drop': FEW_SECONDS + ['0'],
          'drop-slack': FEW_SECONDS, 'msg': FEW + ['0', '65537'],
          'warmup': FEW_SECONDS}),
    ]


def ticket_keys(a, d):
    tool = os.path.join(a.bin_dir, 'examples', 'sotls-ticket-keys')
    f = os.path.join(d, 'keys')
    return [(tool, ['rotate', '--' + flag], [f], {flag: FEW})
            for flag in ('keys', 'period', 'lifetime', 'delay', 'keep', 'now')]


def run(argv):
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=3)
    except subprocess.TimeoutExpired:
        return None, ''
    return p.returncode, p.stderr.decode(errors='replace')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--bin-dir', required=True)
    ap.add_argument('--workdir', required=True)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    d = tempfile.mkdtemp(dir=a.workdir)
    cases = [(b, [], rest, flags) for b, rest, flags in programs(a, d)] + ticket_keys(a, d)
    runs = []
    for binary, before, rest, flags in cases:
        for flag, bads in flags.items():
            for bad in bads:
                if before:  # sotls-ticket-keys: the command, then its flags
                    argv = [binary, before[0], before[1], bad] + rest
                else:
                    argv = [binary, '--' + flag, bad] + rest
                runs.append((os.path.basename(binary), flag, bad, argv))
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda r: run(r[3]), runs))
    passed, failed = 0, []
    for (name, flag, bad, _), (rc, err) in zip(runs, results):
        if rc == 2 and '--' + flag in err:
            passed += 1
            continue
        what = 'still running after 3 s: it took the value' if rc is None else \
            'status %d, stderr %r' % (rc, err.strip()[:200])
        failed.append('%s --%s %r: %s' % (name, flag, bad, what))
    for f in failed:
        print('FAIL: ' + f)
    print('%d bad values refused with status 2 naming the flag' % passed)
    print('%d passed, %d failed' % (passed, len(failed)))
    return 0 if not failed else 1


if __name__ == '__main__':
    sys.exit(main())
