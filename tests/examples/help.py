#!/usr/bin/env python3
"""Every example program's --help is laid out as a manual page
(examples/help_text.h): exit status 0, the sections NAME, SYNOPSIS,
DESCRIPTION, OPTIONS, EXIT STATUS and EXAMPLES in that order, no line past
79 columns, and every flag the program takes (its getopt table, and any
flag its synopsis names) described under OPTIONS.

    help.py --bin-dir BUILD --src-dir SOURCE
"""
import argparse
import os
import re
import subprocess
import sys

PROGRAMS = ['sotls-echo-server', 'sotls-echo-client', 'sotls-https-server',
            'sotls-event-echo-server', 'sotls-engine-echo-server', 'sotls-keyless-server',
            'sotls-key-server', 'sotls-loadgen', 'sotls-ticket-keys', 'sotls-uring-server']
SECTIONS = ['NAME', 'SYNOPSIS', 'DESCRIPTION', 'OPTIONS', 'EXIT STATUS', 'EXAMPLES']


def sections(text):
    """{section name: its lines}, names being the lines at the margin."""
    out, name = {}, None
    for line in text.splitlines():
        if line and not line[0].isspace():
            name = line
            out[name] = []
        elif name is not None:
            out[name].append(line)
    return out


def own_flags(src):
    """The long options of the program's own getopt table (the shared
    limits and resumption flags are printed by shared code)."""
    with open(src) as f:
        return set(re.findall(r'\{"([a-z][a-z0-9-]*)",\s*(?:required|no)_argument', f.read()))


def check(prog, text, src):
    faults = []
    names = [line for line in text.splitlines() if line and not line[0].isspace()]
    wanted = [n for n in names if n in SECTIONS]
    if wanted != SECTIONS:
        faults.append('sections %s, want %s in this order' % (names, SECTIONS))
    for line in text.splitlines():
        if len(line) > 79:
            faults.append('longer than 79 columns: %r' % line)
    secs = sections(text)
    options = '\n'.join(secs.get('OPTIONS', []))
    described = set(re.findall(r'^\s+--([a-z][a-z0-9-]*)', options, re.M))
    named = set(re.findall(r'--([a-z][a-z0-9-]*)', '\n'.join(secs.get('SYNOPSIS', []))))
    for flag in sorted((own_flags(src) | named) - described):
        faults.append('--%s is not described under OPTIONS' % flag)
    if not any(line.strip().startswith(prog) for line in secs.get('NAME', [])):
        faults.append('NAME does not start with %s' % prog)
    return faults


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--bin-dir', required=True)
    ap.add_argument('--src-dir', required=True)
    a = ap.parse_args()
    failed = 0
    for prog in PROGRAMS:
        p = subprocess.run([os.path.join(a.bin_dir, 'examples', prog), '--help'],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10)
        text = p.stdout.decode(errors='replace')
        faults = ['exit status %d' % p.returncode] if p.returncode != 0 else []
        faults += check(prog, text, os.path.join(a.src_dir, 'examples', prog + '.c'))
        for f in faults:
            print('FAIL: %s --help: %s' % (prog, f))
        if not faults:
            print('ok: %s --help' % prog)
        failed += bool(faults)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
