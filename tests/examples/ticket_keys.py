#!/usr/bin/env python3
"""sotls-ticket-keys (examples/sotls-ticket-keys.c) run as an operator and a
cron job would run it. The file is read back here with its own parser, and
which key issues and which open follow the rules of sotls.h (the issuing key:
the latest intro among keys that have come in and not expired; a key opens
until its expiry), computed here independently of the tool. Schedules run on
a simulated clock (--now), the concurrent reader on the real one.

    ticket_keys.py CASE --bin-dir BUILD --workdir DIR
"""
import argparse
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from datetime import datetime, timezone

A = None
T0 = 1_800_000_000
OUTPUTS = []  # everything the tool printed, searched for secrets at the end
SECRETS = set()  # every secret read_keys saw


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def tool(*args, expect=0):
    argv = [os.path.join(A.bin_dir, 'examples', 'sotls-ticket-keys')] + [str(a) for a in args]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    OUTPUTS.append(p.stdout + p.stderr)
    check(p.returncode == expect,
          f'{argv[1:]}: exit {p.returncode}, expected {expect}\n{p.stdout}{p.stderr}')
    return p.stdout, p.stderr


def workdir():
    return tempfile.mkdtemp(dir=A.workdir)


class Key:
    def __init__(self, name, secret, intro, expiry):
        self.name, self.secret, self.intro, self.expiry = name, secret, intro, expiry

    def opens(self, t):
        return self.expiry == 0 or t < self.expiry


def read_keys(path):
    """The file as the format describes it, checked field by field."""
    check(stat.S_IMODE(os.stat(path).st_mode) == 0o600, f'{path}: mode not 0600')
    keys = []
    lines = open(path).read().split('\n')
    check(lines[-1] == '', 'no newline at the end')
    for line in lines[:-1]:
        if line.startswith('#') or line == '':
            continue
        name, secret, intro, expiry = line.split(' ')
        check(len(name) == 32 and len(secret) == 64, line)
        check(all(c in '0123456789abcdef' for c in name + secret), line)
        keys.append(Key(name, secret, int(intro), int(expiry)))
        SECRETS.add(secret)
    check(len({k.name for k in keys}) == len(keys), 'duplicate names')
    return keys


def issuing(keys, t):
    best = None
    for k in keys:
        if k.intro <= t and k.opens(t) and (best is None or k.intro > best.intro):
            best = k
    return best


def iso(t):
    return datetime.fromtimestamp(t, timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')


def show(path, now, expect=0):
    out, _ = tool('show', path, '--now', now, expect=expect)
    lines = out.splitlines()
    check(lines[0] == f'now {iso(now)}', lines[0])
    check(lines[1].split() == ['name', 'intro', 'expiry', 'state'], lines[1])
    return [line.split() for line in lines[2:]]


def check_show(path, now):
    """show's rows against the file and the rules."""
    keys = read_keys(path)
    rows = show(path, now, expect=0 if issuing(keys, now) else 1)
    check(len(rows) == len(keys), rows)
    want_issuing = issuing(keys, now)
    for k, row in zip(keys, rows):
        state = ('issues' if k is want_issuing else 'expired' if not k.opens(now)
                 else 'pending' if k.intro > now else 'opens')
        check(row == [k.name, iso(k.intro), 'never' if k.expiry == 0 else iso(k.expiry), state],
              f'{row} for {k.name} {k.intro} {k.expiry} at {now}')
    check(sum(r[3] == 'issues' for r in rows) == (1 if want_issuing else 0), rows)
    return rows


# ---- cases ----

def case_new_show():
    d = workdir()
    f = os.path.join(d, 'keys')
    tool('new', f, '--now', T0)
    k = read_keys(f)
    check(len(k) == 2, 'default --keys 2')
    check((k[0].intro, k[0].expiry) == (T0, 0), 'the newest issues from now, no end')
    check((k[1].intro, k[1].expiry) == (T0 - 43200, T0 + 7200),
          'the older one came in a period before and opens a lifetime past the newest')
    rows = check_show(f, T0)
    check([r[3] for r in rows] == ['issues', 'opens'], rows)
    check(open(f).readline() == '# sotls ticket keys: newest first; name secret intro expiry\n',
          'header')

    # new refuses an existing file, and leaves it as it was.
    before = open(f).read()
    _, err = tool('new', f, '--now', T0, expect=1)
    check(f in err and 'exists' in err and '--force' in err, err)
    check(open(f).read() == before, 'new changed an existing file')
    link = os.path.join(d, 'dangling')
    os.symlink(os.path.join(d, 'nowhere'), link)
    tool('new', link, expect=1)
    tool('new', f, '--now', T0, '--force')
    check({x.name for x in read_keys(f)}.isdisjoint({x.name for x in k}),
          '--force: fresh keys')

    # More keys: each older one a period earlier, opening until a lifetime
    # after the next one came in; all open now, one issues.
    g = os.path.join(d, 'three')
    tool('new', g, '--now', T0, '--keys', 3, '--period', 100, '--lifetime', 250)
    k = read_keys(g)
    check([(x.intro, x.expiry) for x in k] == [(T0, 0), (T0 - 100, T0 + 250),
                                               (T0 - 200, T0 + 150)],
          [(x.intro, x.expiry) for x in k])
    check([r[3] for r in check_show(g, T0)] == ['issues', 'opens', 'opens'], 'states')
    check([r[3] for r in check_show(g, T0 + 150)] == ['issues', 'opens', 'expired'], 'aged')
    check(len({x.secret for x in k}) == 3, 'secrets differ')
    # A key that would be expired from the start is refused.
    _, err = tool('new', os.path.join(d, 'four'), '--now', T0, '--keys', 4, '--period', 100,
                  '--lifetime', 200, expect=2)
    check('at most 3' in err, err)
    check(not os.path.exists(os.path.join(d, 'four')), 'nothing written')


def run_schedule(period, lifetime, delay, rounds, keep=4):
    """new, then rotate every period on the simulated clock. Returns the
    states: (from, keys) for each file, the times they were current."""
    f = os.path.join(workdir(), 'keys')
    tool('new', f, '--now', T0, '--keys', 1, '--period', period, '--lifetime', lifetime)
    states = [(T0, read_keys(f))]
    for r in range(1, rounds + 1):
        now = T0 + r * period
        before = states[-1][1]
        _, err = tool('rotate', f, '--now', now, '--delay', delay, '--lifetime', lifetime,
                      '--keep', keep)
        check(err == '', err)
        after = read_keys(f)
        new = after[0]
        check((new.intro, new.expiry) == (now + delay, 0), 'the new key')
        check(new.name not in {k.name for k in before}, 'a fresh name')
        # The key that had no end ends a lifetime after the new one comes in.
        old = {k.name: k for k in before}
        prev = next(k for k in after if k.name == before[0].name)
        check(prev.expiry == new.intro + lifetime, 'previous newest expiry')
        # The rest are the keys still open now, in their order, unchanged.
        kept = [k.name for k in before if k.opens(now)]
        check([k.name for k in after[1:]] == kept, 'expired keys go, the others stay')
        # What stays open: the new key and 1 + ceil((delay + lifetime) / period)
        # before it (fewer in the first rounds), when --keep allows them.
        steady = 1 + -(-(delay + lifetime) // period)
        if keep >= steady:
            check(len(after) == 1 + min(r, steady - 1), f'round {r}: {len(after)} keys')
        for k in after[1:]:
            if k is not prev:
                check((k.intro, k.expiry) == (old[k.name].intro, old[k.name].expiry), 'unchanged')
            check(k.opens(now), 'no expired key kept')
        states.append((now, after))
    return f, states


def current(states, t):
    return [keys for start, keys in states if start <= t][-1]


def check_schedule(states, period, lifetime, end):
    """Over the whole simulated run: a key issues at every second, and a
    ticket it issues opens in every file current until a lifetime later."""
    starts = sorted({s for s, _ in states} | {k.intro for _, ks in states for k in ks})
    samples = set()
    for s in starts:
        samples |= {s - 1, s, s + 1}
    samples |= set(range(T0, end, max(1, period // 7)))
    for t in sorted(x for x in samples if T0 <= x < end):
        k = issuing(current(states, t), t)
        check(k is not None, f'no key issues at {t}')
        for dt in (0, lifetime // 3, lifetime // 2, lifetime - 1):
            if t + dt >= end:
                continue
            later = {x.name: x for x in current(states, t + dt)}
            check(k.name in later and later[k.name].opens(t + dt),
                  f'a ticket of {k.name} issued at {t} does not open at {t + dt}')


def case_rotate_schedule():
    # lifetime < period, no delay: two keys after each rotation, the one
    # before the previous gone.
    f, states = run_schedule(3600, 600, 0, 8)
    check(all(len(ks) == 2 for _, ks in states[1:]), [len(ks) for _, ks in states])
    check_schedule(states, 3600, 600, T0 + 9 * 3600)
    for s, _ in states[1:]:
        check_show(f, s)
    # lifetime > period with a fleet delay: keys pile up to 1 pending, 1
    # issuing and those whose tickets may still be out (4 here, the default
    # --keep: nothing has to go early).
    f, states = run_schedule(3600, 7200, 300, 8)
    check([len(ks) for _, ks in states[-4:]] == [4, 4, 4, 4], [len(ks) for _, ks in states])
    check_schedule(states, 3600, 7200, T0 + 9 * 3600)
    now = states[-1][0]
    rows = check_show(f, now)
    check([r[3] for r in rows] == ['pending', 'issues', 'opens', 'opens'], rows)
    # At the new key's intro the oldest one's last tickets are a lifetime old.
    check([r[3] for r in check_show(f, now + 300)] == ['issues', 'opens', 'opens', 'expired'],
          'after the delay')
    # The delay longer than a period: several keys pending at once.
    f, states = run_schedule(600, 900, 1500, 10, keep=10)
    check_schedule(states, 600, 900, T0 + 11 * 600)
    rows = check_show(f, states[-1][0])
    check([r[3] for r in rows][:3] == ['pending', 'pending', 'pending'], rows)


def case_keep():
    d = workdir()
    f = os.path.join(d, 'keys')
    # lifetime 10 periods: keys stay open long; --keep 4 cuts them, oldest
    # first, and says so.
    tool('new', f, '--now', T0, '--keys', 1, '--period', 100, '--lifetime', 1000)
    for r in range(1, 8):
        before = read_keys(f)
        _, err = tool('rotate', f, '--now', T0 + 100 * r, '--lifetime', 1000, '--keep', 4)
        after = read_keys(f)
        check(len(after) == min(r + 1, 4), f'round {r}: {len(after)} keys')
        if r + 1 > 4:
            gone = before[-1]
            check(f'dropped key {gone.name}' in err and iso(gone.expiry) in err, err)
            check([k.name for k in after[1:]] == [k.name for k in before[:-1]], 'oldest went')
        else:
            check(err == '', err)
        check(issuing(after, T0 + 100 * r) is after[0], 'no delay: the new key issues')
    # --keep 1 with a delay: the key that issues until the new one comes in
    # stays, beyond --keep.
    _, err = tool('rotate', f, '--now', T0 + 800, '--delay', 50, '--keep', 1)
    k = read_keys(f)
    check(len(k) == 2 and err.count('dropped key') == 3, err)
    check([r[3] for r in check_show(f, T0 + 800)] == ['pending', 'issues'], 'kept the issuer')
    check([r[3] for r in check_show(f, T0 + 850)] == ['issues', 'opens'], 'then the new one')


def case_refusals():
    d = workdir()
    f = os.path.join(d, 'keys')
    tool('new', f, '--now', T0)
    tool('rotate', f, '--now', T0, '--delay', 500)
    before = open(f).read()
    # A new key that would come in before a pending one: refused.
    _, err = tool('rotate', f, '--now', T0, '--delay', 10, expect=1)
    check(f in err and '--delay 500 or more' in err, err)
    check(open(f).read() == before, 'unchanged')
    tool('rotate', f, '--now', T0, '--delay', 500)
    rows = check_show(f, T0 + 500)
    check(rows[0][3] == 'issues', 'the same intro: the newer one issues')

    # Errors name the file and the reason.
    bad = os.path.join(d, 'bad')
    open(bad, 'w').write('not a key\n')
    os.chmod(bad, 0o600)
    for cmd in ('show', 'rotate'):
        _, err = tool(cmd, bad, expect=1)
        check(bad in err and 'malformed' in err, err)
    os.chmod(f, 0o640)
    _, err = tool('show', f, expect=1)
    check(f'chmod 600 {f}' in err and '0640' in err, err)
    os.chmod(f, 0o600)
    _, err = tool('rotate', os.path.join(d, 'missing'), expect=1)
    check('No such file or directory' in err, err)
    _, err = tool('new', os.path.join(d, 'none', 'keys'), expect=1)
    check('cannot write' in err and 'No such file or directory' in err, err)
    # No key issues now: show says so with exit status 1.
    g = os.path.join(d, 'future')
    tool('new', g, '--now', T0 + 1000, '--keys', 1)
    rows = check_show(g, T0)
    check([r[3] for r in rows] == ['pending'], rows)

    # Usage: exit status 2.
    for args in ([], ['frob', f], ['show'], ['show', f, f], ['show', f, '--keys', 2],
                 ['new', f, '--keys', 0], ['new', f, '--keys', 65], ['rotate', f, '--keep', 'x'],
                 ['rotate', f, '--delay', '-1'], ['rotate', f, '--lifetime', 0],
                 ['rotate', f, '--delay'], ['rotate', f, '--bogus'], ['new', f, '--force=1']):
        _, err = tool(*args, expect=2)
        check(err.startswith('sotls-ticket-keys'), err)
    out, _ = tool('--help')
    check('rotate FILE' in out and 'cron' in out, out)


def case_concurrent():
    """A server re-reading the file while rotate replaces it: every read
    parses (the reader would fail on a partial file)."""
    d = workdir()
    f = os.path.join(d, 'keys')
    stop = os.path.join(d, 'stop')
    tool('new', f)
    reader = subprocess.Popen([os.path.join(A.bin_dir, 'tests', 'examples', 'ticket-keys-reader'),
                               f, stop], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rotations = 150
    try:
        for _ in range(rotations):
            tool('rotate', f, '--keep', 3)
    finally:
        open(stop, 'w').close()
        out, err = reader.communicate(timeout=30)
    print(out.strip())
    check(reader.returncode == 0, f'the reader failed: {out}{err}')
    reads, changes = int(out.split()[1]), int(out.split()[3])
    check(changes >= 1 and reads > changes, 'the reads did not overlap the rotations')
    check(len(read_keys(f)) == 3, '--keep 3')
    check(sorted(os.listdir(d)) == ['keys', 'stop'], f'left behind: {os.listdir(d)}')


def check_no_secret(secrets):
    text = '\n'.join(OUTPUTS)
    for s in secrets:
        for i in range(0, len(s) - 16 + 1):
            check(s[i:i + 16] not in text, 'a secret was printed')


CASES = {'new-show': case_new_show, 'rotate-schedule': case_rotate_schedule, 'keep': case_keep,
         'refusals': case_refusals, 'concurrent': case_concurrent}


def main():
    global A
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('case', choices=sorted(CASES))
    ap.add_argument('--bin-dir', required=True, help='the build directory')
    ap.add_argument('--workdir', required=True, help='emptied first')
    A = ap.parse_args()
    shutil.rmtree(A.workdir, ignore_errors=True)
    os.makedirs(A.workdir)
    CASES[A.case]()
    # Every key the case saw, against all the tool printed.
    check(SECRETS, 'no key to check for printed secrets')
    check_no_secret(SECRETS)
    print(f'{A.case}: all ok ({len(OUTPUTS)} runs, none printed any of {len(SECRETS)} secrets)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
