#!/usr/bin/env python3
"""The peer's identity against real OpenSSL peers: client certificates (none /
optional / required) from `openssl s_client -cert/-key`, the verify callback
overriding the verdict either way, a CA directory, a revoked client
certificate (a CRL made with `openssl ca`), encrypted private keys, and the
sotls client reading `openssl s_server`'s chain (DER, subject and SANs equal
to what `openssl x509` prints). One test per invocation:

    identity.py NAME --peer identity-peer --openssl openssl --workdir DIR

Every certificate, key and CRL is made at test time under DIR.
"""
import argparse
import ipaddress
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop import Env, Fail, check, free_port, run_one, wait_listening  # noqa: E402

TIMEOUT = 60
SERVER_NAME = 'server.test'
# RFC 5246 §7.2: the alert numbers s_client / s_server report.
HANDSHAKE_FAILURE, BAD_CERTIFICATE, CERTIFICATE_REVOKED = 40, 42, 44
CERTIFICATE_UNKNOWN, UNKNOWN_CA, ACCESS_DENIED = 46, 48, 49
# enum sotls_error
ERR_UNSUPPORTED, ERR_KEY_PASSWORD, ERR_CERT_VERIFY = -13, -24, -43


class Certs:
    """A root CA, an intermediate under it, the server's chain (leaf under the
    intermediate), a client under the root, one more client under the root (to
    revoke), a client under an unrelated CA and a self-signed server."""

    def __init__(self, env):
        self.env = env
        self.key('root')
        self.sign('root', '/CN=sotls identity root', None, ca=True)
        self.key('inter')
        self.sign('inter', '/CN=sotls identity intermediate', 'root', ca=True)
        self.key('server')
        self.sign('server', '/C=KR/O=sotls test/CN=' + SERVER_NAME, 'inter',
                  san='DNS:%s,DNS:*.%s,IP:127.0.0.1,IP:2001:db8::1,email:ops@server.test,'
                      'URI:https://server.test/id' % (SERVER_NAME, SERVER_NAME))
        self.key('client')
        self.sign('client', '/O=sotls test/CN=client one', 'root',
                  san='email:client@test.example,URI:spiffe://test.example/client')
        self.key('revoked')
        self.sign('revoked', '/CN=client revoked', 'root', san='DNS:revoked.test')
        self.key('other')
        self.sign('other', '/CN=unrelated CA', None, ca=True)
        self.key('stranger')
        self.sign('stranger', '/CN=stranger', 'other', san='DNS:stranger.test')
        self.key('selfsigned')
        self.sign('selfsigned', '/CN=' + SERVER_NAME, None, san='DNS:' + SERVER_NAME)
        with open(env.path('server-chain.crt'), 'w') as f:
            f.write(open(env.path('server.crt')).read() + open(env.path('inter.crt')).read())

    def key(self, name):
        self.env.run_openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256',
                             '-out', name + '.key')

    def sign(self, name, subj, issuer, ca=False, san=None):
        ext = ['basicConstraints=critical,CA:%s' % ('TRUE' if ca else 'FALSE')]
        if san:
            ext.append('subjectAltName=' + san)
        with open(self.env.path(name + '.ext'), 'w') as f:
            f.write('\n'.join(ext) + '\n')
        self.env.run_openssl('req', '-new', '-key', name + '.key', '-subj', subj, '-out', name + '.csr')
        signer = ['-CA', issuer + '.crt', '-CAkey', issuer + '.key', '-CAcreateserial'] if issuer \
            else ['-signkey', name + '.key']
        self.env.run_openssl('x509', '-req', '-in', name + '.csr', *signer, '-days', '2',
                             '-extfile', name + '.ext', '-out', name + '.crt')

    def p(self, name):
        return self.env.path(name)


def openssl_out(env, *argv):
    return subprocess.run([env.a.openssl, *argv], check=True, cwd=env.dir, capture_output=True,
                          timeout=TIMEOUT).stdout


def der_hex(env, crt):
    return openssl_out(env, 'x509', '-in', crt, '-outform', 'DER').hex()


def subject(env, crt):
    out = openssl_out(env, 'x509', '-in', crt, '-noout', '-subject', '-nameopt',
                      'sep_comma_plus_space').decode().strip()
    return out[len('subject='):]


def sans(env, crt):
    """[(type, value)] as openssl x509 -ext subjectAltName prints them, in the
    certificate's order, IPs normalised."""
    out = openssl_out(env, 'x509', '-in', crt, '-noout', '-ext', 'subjectAltName').decode()
    kinds = {'DNS': 'DNS', 'IP Address': 'IP', 'email': 'EMAIL', 'URI': 'URI'}
    res = []
    for item in out.splitlines()[1].strip().split(', '):
        kind, value = item.split(':', 1)
        if kind == 'IP Address':
            value = str(ipaddress.ip_address(value))
        res.append((kinds[kind], value))
    return res


def parse(out):
    """identity-peer's lines as a dict of lists."""
    res = {}
    for line in out.splitlines():
        tag, _, rest = line.partition(' ')
        res.setdefault(tag, []).append(rest)
    return res


def run_server(env, peer_args, client_args, ca='root.crt'):
    """identity-peer server <peer_args> against openssl s_client <client_args>
    (trusting ca); returns (server lines, server text, s_client stderr, the
    server's exit status)."""
    pf = env.path('port-%d' % len(env.procs))
    srv = env.spawn([env.a.peer, 'server', '--port-file', pf] + peer_args)
    port = env.wait_port_file(pf, srv)
    cli = env.spawn([env.a.openssl, 's_client', '-connect', '127.0.0.1:%d' % port, '-tls1_2',
                     '-CAfile', env.path(ca), '-servername', SERVER_NAME,
                     '-verify_return_error', '-quiet'] + client_args)
    out, _ = srv.communicate(timeout=TIMEOUT)
    _, cerr = cli.communicate(timeout=TIMEOUT)
    text, ctext = out.decode(errors='replace'), cerr.decode(errors='replace')
    print('--- sotls server\n' + text + '--- s_client\n' + ctext)
    return parse(text), text, ctext, srv.returncode


def run_client(env, peer_args, server_args):
    """identity-peer client <peer_args> against openssl s_server <server_args>."""
    port = free_port()
    srv = env.spawn([env.a.openssl, 's_server', '-accept', str(port), '-tls1_2', '-naccept', '1',
                     '-quiet'] + server_args, stdin=subprocess.PIPE)
    wait_listening(port, srv)
    cli = env.spawn([env.a.peer, 'client', '--port', str(port)] + peer_args)
    out, _ = cli.communicate(timeout=TIMEOUT)
    try:
        _, serr = srv.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        srv.kill()
        _, serr = srv.communicate()
    text, stext = out.decode(errors='replace'), serr.decode(errors='replace')
    print('--- sotls client\n' + text + '--- s_server\n' + stext)
    return parse(text), text, stext, cli.returncode


def run_load(env, peer_args):
    """identity-peer server with settings that must fail before it listens:
    returns its output."""
    p = subprocess.run([env.a.peer, 'server', '--port-file', env.path('unused')] + peer_args,
                       cwd=env.dir, capture_output=True, timeout=TIMEOUT)
    text = p.stdout.decode(errors='replace')
    print('--- sotls server (load only)\n' + text)
    check(p.returncode == 3, 'the settings loaded (exit %d)' % p.returncode)
    return text


def server_cert_args(c):
    return ['--cert', c.p('server-chain.crt'), '--key', c.p('server.key')]


def client_cert(c, name):
    return ['-cert', c.p(name + '.crt'), '-key', c.p(name + '.key')]


def expect_identity(env, lines, chain, leaf):
    """The identity sotls reports equals what openssl prints for chain (the
    certificate files, leaf first, up to the trust anchor)."""
    check(lines.get('VERIFIED') == ['1 CHAIN %d' % len(chain)],
          'VERIFIED/CHAIN: %s' % lines.get('VERIFIED'))
    want = ['%d %s' % (i, der_hex(env, f)) for i, f in enumerate(chain)]
    check(lines.get('CERT') == want, 'chain DER differs from openssl x509 -outform DER')
    check(lines.get('SUBJECT') == [subject(env, leaf)],
          'subject %s, openssl: %s' % (lines.get('SUBJECT'), subject(env, leaf)))
    got = [tuple(s.split(' ', 1)) for s in lines.get('SAN', [])]
    check(got == sans(env, leaf), 'SANs %s, openssl: %s' % (got, sans(env, leaf)))


def expect_alert(ctext, alert):
    check('SSL alert number %d' % alert in ctext, 'peer did not get alert %d' % alert)


# ---- client certificates: none / optional / required ------------------------

def mtls_none(env):
    """A server in none sends no CertificateRequest: s_client's certificate is
    not sent, the server reports no peer."""
    c = Certs(env)
    lines, text, _, rc = run_server(env, server_cert_args(c) + ['--mtls', 'none'],
                                    client_cert(c, 'client'))
    check(rc == 0 and 'END ok' in text, 'server failed')
    check(lines.get('VERIFIED') == ['0 CHAIN 0'] and 'CERT' not in lines, 'a peer certificate?')
    check(lines.get('SUBJECT') == [''], 'subject without certificate')


def mtls_optional_without_cert(env):
    """RFC 5246 §7.4.6: the server may go on without client authentication."""
    c = Certs(env)
    lines, text, _, rc = run_server(env, server_cert_args(c) +
                                    ['--ca', c.p('root.crt'), '--mtls', 'optional'], [])
    check(rc == 0 and 'END ok' in text, 'server failed')
    check(lines.get('VERIFIED') == ['0 CHAIN 0'], 'VERIFIED: %s' % lines.get('VERIFIED'))


def mtls_with_cert(env, mode):
    c = Certs(env)
    lines, text, _, rc = run_server(env, server_cert_args(c) +
                                    ['--ca', c.p('root.crt'), '--mtls', mode],
                                    client_cert(c, 'client'))
    check(rc == 0 and 'END ok' in text, 'server failed')
    expect_identity(env, lines, [c.p('client.crt'), c.p('root.crt')], c.p('client.crt'))


def mtls_untrusted_cert(env, mode):
    """A client chain that does not verify fails in optional as in required
    (OpenSSL's SSL_VERIFY_PEER): unknown_ca, RFC 5246 §7.2.2."""
    c = Certs(env)
    lines, text, ctext, rc = run_server(env, server_cert_args(c) +
                                        ['--ca', c.p('root.crt'), '--mtls', mode],
                                        client_cert(c, 'stranger'))
    check(rc == 1 and 'HANDSHAKE-FAILED %d' % ERR_CERT_VERIFY in text, 'server accepted it')
    check('not correctly signed by the trusted CA' in text, 'no reason in the detail')
    expect_alert(ctext, UNKNOWN_CA)


def mtls_required_without_cert(env):
    """RFC 5246 §7.4.6: "... or respond with a fatal handshake_failure alert"."""
    c = Certs(env)
    lines, text, ctext, rc = run_server(env, server_cert_args(c) +
                                        ['--ca', c.p('root.crt'), '--mtls', 'required'], [])
    check(rc == 1 and 'HANDSHAKE-FAILED %d' % ERR_CERT_VERIFY in text, 'server accepted it')
    check('sent no certificate' in text, 'detail: ' + text)
    expect_alert(ctext, HANDSHAKE_FAILURE)


# ---- the verify callback ------------------------------------------------------

def verify_cb_rejects_good_chain(env, verdict, alert):
    c = Certs(env)
    lines, text, ctext, rc = run_server(env, server_cert_args(c) +
                                        ['--ca', c.p('root.crt'), '--mtls', 'required',
                                         '--verify-cb', verdict], client_cert(c, 'client'))
    check(lines.get('CALLBACK') == ['flags=0x0 chain=2 reason='], 'callback: %s' % lines.get('CALLBACK'))
    check(lines.get('CALLBACK-CERT', [''])[0].endswith(der_hex(env, c.p('client.crt'))),
          'callback chain[0] is not the client certificate')
    check(lines.get('CALLBACK-SUBJECT') == [subject(env, c.p('client.crt'))],
          'subject during the callback: %s' % lines.get('CALLBACK-SUBJECT'))
    check(rc == 1 and 'the verify callback rejected' in text, 'server accepted it')
    expect_alert(ctext, alert)


def verify_cb_accepts_self_signed(env):
    """The sotls client pins a self-signed server: the library's verdict is
    not trusted (0x8), the callback accepts, peer_verified is 1."""
    c = Certs(env)
    args = ['--ca', c.p('root.crt'), '--verify', 'required', '--servername', SERVER_NAME]
    srv = ['-cert', c.p('selfsigned.crt'), '-key', c.p('selfsigned.key')]
    lines, text, _, rc = run_client(env, args + ['--verify-cb', 'accept'], srv)
    check(rc == 0 and 'END ok' in text, 'client failed')
    check(lines.get('CALLBACK', [''])[0].startswith('flags=0x8 chain=1 reason='),
          'callback: %s' % lines.get('CALLBACK'))
    expect_identity(env, lines, [c.p('selfsigned.crt')], c.p('selfsigned.crt'))
    # Without the callback the same server is refused with unknown_ca.
    lines, text, stext, rc = run_client(env, args, srv)
    check(rc == 1 and 'HANDSHAKE-FAILED %d' % ERR_CERT_VERIFY in text, 'client accepted it')
    expect_alert(stext, UNKNOWN_CA)


def verify_cb_default_keeps_verdict(env):
    """SOTLS_VERDICT_DEFAULT: the callback sees the failure and sotls decides."""
    c = Certs(env)
    lines, text, ctext, rc = run_server(env, server_cert_args(c) +
                                        ['--ca', c.p('root.crt'), '--mtls', 'optional',
                                         '--verify-cb', 'default'], client_cert(c, 'stranger'))
    check(lines.get('CALLBACK', [''])[0].startswith('flags=0x8 chain=1 '), 'callback: %s' % lines)
    check(rc == 1, 'server accepted it')
    expect_alert(ctext, UNKNOWN_CA)


# ---- CA directory, CRL ----------------------------------------------------------

def ca_dir(env):
    """A hashed directory (openssl rehash) with the root and an unrelated CA,
    plus a plain .pem copy of the root: the client verifies through it."""
    c = Certs(env)
    d = env.path('cadir')
    os.mkdir(d)
    for name in ('root', 'other'):
        with open(os.path.join(d, name + '.pem'), 'w') as f:
            f.write(open(c.p(name + '.crt')).read())
    openssl_out(env, 'rehash', d)
    check(any(len(n) == 10 and n.endswith('.0') for n in os.listdir(d)), 'rehash made no links')
    lines, text, _, rc = run_server(env, server_cert_args(c) + ['--ca-dir', d, '--mtls', 'required'],
                                    client_cert(c, 'client'))
    check(rc == 0 and 'END ok' in text, 'server failed with a CA directory')
    expect_identity(env, lines, [c.p('client.crt'), c.p('root.crt')], c.p('client.crt'))
    # The client side: s_server's chain verified through the same directory.
    lines, text, _, rc = run_client(env, ['--ca-dir', d, '--verify', 'required',
                                          '--servername', SERVER_NAME],
                                    ['-cert', c.p('server.crt'), '-key', c.p('server.key'),
                                     '-cert_chain', c.p('inter.crt')])
    check(rc == 0 and lines.get('VERIFIED') == ['1 CHAIN 3'], 'client failed with a CA directory')
    # An empty directory trusts nothing: refused at load time.
    os.mkdir(env.path('empty'))
    check('LOAD-FAILED ca-dir -22' in run_load(env, ['--ca-dir', env.path('empty')]),
          'empty CA directory accepted')


def crl_revoked(env):
    """A client certificate revoked by the root's CRL (openssl ca -revoke,
    -gencrl) gets certificate_revoked (RFC 5246 §7.2.2); an unrevoked one from
    the same CA still passes."""
    c = Certs(env)
    d = env.path('ca-db')
    os.mkdir(d)
    open(os.path.join(d, 'index.txt'), 'w').close()
    with open(os.path.join(d, 'crlnumber'), 'w') as f:
        f.write('01\n')
    with open(env.path('ca.cnf'), 'w') as f:
        f.write('[ca]\ndefault_ca = root\n[root]\ndatabase = %s/index.txt\n'
                'crlnumber = %s/crlnumber\ncertificate = %s\nprivate_key = %s\n'
                'default_md = sha256\ndefault_crl_days = 2\n'
                % (d, d, c.p('root.crt'), c.p('root.key')))
    openssl_out(env, 'ca', '-config', 'ca.cnf', '-revoke', 'revoked.crt')
    openssl_out(env, 'ca', '-config', 'ca.cnf', '-gencrl', '-out', 'root.crl')
    base = server_cert_args(c) + ['--ca', c.p('root.crt'), '--crl', c.p('root.crl'),
                                  '--mtls', 'required']
    lines, text, ctext, rc = run_server(env, base, client_cert(c, 'revoked'))
    check(rc == 1 and 'HANDSHAKE-FAILED %d' % ERR_CERT_VERIFY in text, 'revoked client accepted')
    check('revoked' in text, 'detail does not say revoked: ' + text)
    expect_alert(ctext, CERTIFICATE_REVOKED)
    lines, text, _, rc = run_server(env, base, client_cert(c, 'client'))
    check(rc == 0 and lines.get('VERIFIED') == ['1 CHAIN 2'], 'unrevoked client refused')
    # A file that is not a CRL is refused at load time.
    check('LOAD-FAILED crl -25' in run_load(env, ['--crl', c.p('root.crt')]),
          'a certificate was taken as a CRL')


# ---- encrypted keys -----------------------------------------------------------

def encrypted_key(env):
    """PKCS#8 encrypted keys (openssl genpkey -aes-256-cbc, EC and RSA): the
    right password (string or callback) serves s_client; a wrong or missing
    one is SOTLS_ERR_KEY_PASSWORD; a legacy Proc-Type PEM is unsupported."""
    c = Certs(env)
    for kt, opts in (('ec', ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256']),
                     ('rsa', ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'])):
        key = 'enc-%s.key' % kt
        env.run_openssl('genpkey', *opts, '-aes-256-cbc', '-pass', 'pass:s3cret', '-out', key)
        check(b'ENCRYPTED PRIVATE KEY' in open(env.path(key), 'rb').read(), 'not PKCS#8 encrypted')
        env.run_openssl('req', '-new', '-x509', '-key', key, '-passin', 'pass:s3cret',
                        '-subj', '/CN=' + SERVER_NAME, '-days', '2', '-out', 'enc-%s.crt' % kt)
        cert = ['--cert', c.p('enc-%s.crt' % kt), '--key', c.p(key)]
        for pw in (['--key-password', 's3cret'], ['--key-password-cb', 's3cret']):
            lines, text, _, rc = run_server(env, pw + cert, [], ca='enc-%s.crt' % kt)
            check(rc == 0 and 'END ok' in text, '%s key with %s failed' % (kt, pw[0]))
        for pw in (['--key-password', 'wrong'], ['--key-password-cb', 'wrong'], []):
            check('LOAD-FAILED cert %d' % ERR_KEY_PASSWORD in run_load(env, pw + cert),
                  '%s key with %s refused otherwise' % (kt, pw))
    env.run_openssl('pkey', '-in', 'enc-ec.key', '-passin', 'pass:s3cret', '-aes256',
                    '-passout', 'pass:s3cret', '-traditional', '-out', 'legacy.key')
    check(b'Proc-Type: 4,ENCRYPTED' in open(env.path('legacy.key'), 'rb').read(), 'not legacy PEM')
    text = run_load(env, ['--key-password', 's3cret', '--cert', c.p('enc-ec.crt'),
                          '--key', c.p('legacy.key')])
    check('LOAD-FAILED cert %d' % ERR_UNSUPPORTED in text, 'legacy PEM not refused as unsupported')


# ---- the client reads s_server's chain ----------------------------------------------

def client_reads_s_server_chain(env):
    """s_server sends leaf + intermediate; the sotls client reports leaf,
    intermediate and the root it trusts, byte for byte, and the leaf's subject
    and SANs (DNS, wildcard DNS, IPv4, IPv6, email, URI) as openssl x509."""
    c = Certs(env)
    lines, text, _, rc = run_client(env, ['--ca', c.p('root.crt'), '--verify', 'required',
                                          '--servername', SERVER_NAME],
                                    ['-cert', c.p('server.crt'), '-key', c.p('server.key'),
                                     '-cert_chain', c.p('inter.crt')])
    check(rc == 0 and 'END ok' in text, 'client failed')
    expect_identity(env, lines, [c.p('server.crt'), c.p('inter.crt'), c.p('root.crt')],
                    c.p('server.crt'))


def client_verify_none_still_reports(env):
    """SOTLS_VERIFY_NONE on a client: an unverifiable chain is accepted and
    reported with peer_verified 0."""
    c = Certs(env)
    lines, text, _, rc = run_client(env, ['--ca', c.p('root.crt'), '--verify', 'none'],
                                    ['-cert', c.p('stranger.crt'), '-key', c.p('stranger.key')])
    check(rc == 0 and 'END ok' in text, 'client failed')
    check(lines.get('VERIFIED') == ['0 CHAIN 1'], 'VERIFIED: %s' % lines.get('VERIFIED'))
    check(lines.get('CERT') == ['0 ' + der_hex(env, c.p('stranger.crt'))], 'chain differs')


# ---- resumption bound to the trust that verified the peer ---------------------

def trust_bound_server(env):
    """Two services share a ticket key file (a fleet's) but trust different
    client CAs: A the root, B the unrelated CA. s_client's ticket from A,
    presented to B with the same client certificate, gets a full handshake
    and B's own verdict, unknown_ca (RFC 5246 §7.2.2); before, B resumed it
    and reported A's client as verified. Another process of A resumes it;
    A with another session context does not, and verifies afresh."""
    from resumption import new_key, write_key_file
    c = Certs(env)
    kf = env.path('fleet.keys')
    write_key_file(kf, [new_key(0)])
    sess = env.path('a.sess')

    def service(ca, *extra):
        return server_cert_args(c) + ['--ca', c.p(ca), '--mtls', 'required',
                                      '--ticket-key-file', kf, *extra]
    me = client_cert(c, 'client')
    lines, text, _, rc = run_server(env, service('root.crt'), me + ['-sess_out', sess])
    check(rc == 0 and lines.get('RESUMED') == ['none'], 'first handshake: %s' % text)
    expect_identity(env, lines, [c.p('client.crt'), c.p('root.crt')], c.p('client.crt'))
    lines, text, ctext, rc = run_server(env, service('other.crt'), me + ['-sess_in', sess])
    check(rc == 1 and 'HANDSHAKE-FAILED %d' % ERR_CERT_VERIFY in text,
          'service B took service A\'s session: %s' % text)
    expect_alert(ctext, UNKNOWN_CA)
    lines, text, _, rc = run_server(env, service('root.crt'), me + ['-sess_in', sess])
    check(rc == 0 and lines.get('RESUMED') == ['ticket'], 'A did not resume its own ticket')
    expect_identity(env, lines, [c.p('client.crt'), c.p('root.crt')], c.p('client.crt'))
    lines, text, _, rc = run_server(env, service('root.crt', '--session-context', 'svc-3'),
                                    me + ['-sess_in', sess])
    check(rc == 0 and lines.get('RESUMED') == ['none'], 'another context resumed: %s' % text)
    expect_identity(env, lines, [c.p('client.crt'), c.p('root.crt')], c.p('client.crt'))


def trust_bound_client(env):
    """A session the sotls client saved while it trusted a self-signed
    server without the name check is not offered by a client that trusts
    only the root CA: a full handshake, failed by its own verdict (before,
    it resumed with the server reported verified). The lax configuration
    resumes it: one s_server for all three, so its ticket keys hold."""
    c = Certs(env)
    port = free_port()
    srv = env.spawn([env.a.openssl, 's_server', '-accept', str(port), '-tls1_2', '-naccept',
                     '3', '-quiet', '-cert', c.p('selfsigned.crt'), '-key',
                     c.p('selfsigned.key')], stdin=subprocess.PIPE)
    wait_listening(port, srv)
    sess = env.path('lax.sess')

    def client(*args):
        p = subprocess.run([env.a.peer, 'client', '--port', str(port), '--servername',
                            SERVER_NAME, *args], cwd=env.dir, capture_output=True,
                           timeout=TIMEOUT)
        text = p.stdout.decode(errors='replace')
        print('--- sotls client', ' '.join(args), '\n' + text)
        return parse(text), text, p.returncode
    lax = ['--ca', c.p('selfsigned.crt'), '--verify', 'chain']
    lines, text, rc = client(*lax, '--sess-out', sess)
    check(rc == 0 and lines.get('RESUMED') == ['none'] and lines.get('VERIFIED') == ['1 CHAIN 1'],
          'first handshake: %s' % text)
    lines, text, rc = client('--ca', c.p('root.crt'), '--verify', 'required', '--sess-in', sess)
    check(rc == 1 and 'HANDSHAKE-FAILED %d' % ERR_CERT_VERIFY in text,
          'a strict client resumed a lax session: %s' % text)
    lines, text, rc = client(*lax, '--sess-in', sess)
    check(rc == 0 and lines.get('RESUMED') == ['ticket'] and lines.get('VERIFIED') == ['1 CHAIN 1'],
          'the lax client did not resume its own session: %s' % text)
    srv.communicate(timeout=TIMEOUT)


TESTS = {
    'mtls-none': mtls_none,
    'mtls-optional-without-cert': mtls_optional_without_cert,
    'mtls-optional-with-cert': lambda e: mtls_with_cert(e, 'optional'),
    'mtls-required-with-cert': lambda e: mtls_with_cert(e, 'required'),
    'mtls-optional-untrusted-cert': lambda e: mtls_untrusted_cert(e, 'optional'),
    'mtls-required-untrusted-cert': lambda e: mtls_untrusted_cert(e, 'required'),
    'mtls-required-without-cert': mtls_required_without_cert,
    'verify-cb-rejects-good-chain':
        lambda e: verify_cb_rejects_good_chain(e, 'reject', CERTIFICATE_UNKNOWN),
    'verify-cb-access-denied':
        lambda e: verify_cb_rejects_good_chain(e, 'access-denied', ACCESS_DENIED),
    'verify-cb-accepts-self-signed': verify_cb_accepts_self_signed,
    'verify-cb-default-keeps-verdict': verify_cb_default_keeps_verdict,
    'ca-dir': ca_dir,
    'crl-revoked': crl_revoked,
    'encrypted-key': encrypted_key,
    'client-reads-s_server-chain': client_reads_s_server_chain,
    'client-verify-none-still-reports': client_verify_none_still_reports,
    'resume-trust-bound-server': trust_bound_server,
    'resume-trust-bound-client': trust_bound_client,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('name')
    ap.add_argument('--peer', required=True)
    ap.add_argument('--openssl', required=True)
    ap.add_argument('--workdir', required=True)
    a = ap.parse_args()
    return run_one(TESTS, a, Env)


if __name__ == '__main__':
    sys.exit(main())
