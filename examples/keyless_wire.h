/*
 * What sotls-keyless-server and sotls-key-server say to each other over a
 * UNIX SOCK_SEQPACKET socket (one message per datagram, so neither side
 * frames anything). The key server holds the private key; the TLS server
 * holds only the certificate and asks for ServerKeyExchange signatures.
 *   request:  id (4 bytes, big-endian), sigalg (2, the TLS 1.2
 *             SignatureAndHashAlgorithm), digest length (1), digest
 *   response: id (4), status (1: 0 signed, 1 refused), then the signature,
 *             or for a refusal why, in text (no NUL)
 * The key server signs only a digest exactly as long as the hash the
 * sigalg names (32, 48 or 64 bytes), and serves only the uid it allows.
 * The id lets the TLS server drop the answer to a request it gave up on
 * (a connection freed while its signature was pending).
 */
#ifndef SOTLS_EXAMPLES_KEYLESS_WIRE_H
#define SOTLS_EXAMPLES_KEYLESS_WIRE_H

#define KEYLESS_REQ_HEAD 7
#define KEYLESS_RESP_HEAD 5
#define KEYLESS_MAX_DIGEST 64
#define KEYLESS_MAX_SIG 1024
#define KEYLESS_STATUS_OK 0
#define KEYLESS_STATUS_REFUSED 1

#endif
