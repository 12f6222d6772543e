/**
 * TLS material for the simulator: either loaded from PEM files, or a throw-away CA and a
 * serving certificate for 127.0.0.1/localhost generated at start with @peculiar/x509 over
 * WebCrypto ECDSA P-256 keys (no hand-rolled ASN.1). Clients verify the serving certificate
 * against the CA written into the kubeconfig. The generated CA also signs a client certificate
 * (`CN=fleet-attach`, `O=system:masters`, as kubeadm's admin kubeconfig has) that the server
 * accepts instead of the bearer token, as kube-apiserver's x509 authenticator does.
 */
import { webcrypto } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import './reflect-shim.js'; // before @peculiar/x509: its tsyringe dependency needs Reflect metadata at load
import * as x509 from '@peculiar/x509';
import { fleetError } from '../../errors/index.js';

export interface TlsMaterial {
  /** Serving certificate chain, PEM. */
  cert: string;
  /** Serving key, PKCS#8 PEM. */
  key: string;
  /** CA certificate clients should trust, PEM (the serving certificate itself for user-given files). */
  ca: string;
  /** A client certificate and key the server accepts (generated material only), PEM. */
  client?: { cert: string; key: string };
}

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** Generates a CA and a serving certificate valid for `hosts` (IPs and DNS names) for one year. */
export async function generateTls(hosts: readonly string[] = ['127.0.0.1', 'localhost']): Promise<TlsMaterial> {
  const crypto = webcrypto;
  x509.cryptoProvider.set(crypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(Date.now() + 365 * 24 * 3600_000);
  const caKeys = (await crypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const caCert = await x509.X509CertificateGenerator.createSelfSigned({
    name: 'CN=fleet-attach-sim-ca',
    keys: caKeys,
    notBefore,
    notAfter,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  // A leaf certificate the CA signs: a fresh key pair, no CA rights, the given usage.
  const leaf = async (subject: string, usage: number, purpose: string, extra: x509.Extension[] = []) => {
    const keys = (await crypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
    const cert = await x509.X509CertificateGenerator.create({
      subject,
      issuer: caCert.subject,
      publicKey: keys.publicKey,
      signingKey: caKeys.privateKey,
      notBefore,
      notAfter,
      signingAlgorithm: ALG,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(usage, true),
        new x509.ExtendedKeyUsageExtension([purpose]),
        ...extra,
        await x509.AuthorityKeyIdentifierExtension.create(caCert),
      ],
    });
    return { cert, keys };
  };
  const names = hosts.map((h) => ({ type: /^[\d.]+$|:/.test(h) ? ('ip' as const) : ('dns' as const), value: h }));
  const server = await leaf('CN=fleet-attach-sim', x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
    x509.ExtendedKeyUsage.serverAuth, [new x509.SubjectAlternativeNameExtension(names)]);
  const client = await leaf('CN=fleet-attach, O=system:masters', x509.KeyUsageFlags.digitalSignature, x509.ExtendedKeyUsage.clientAuth);
  const eol = (pem: string) => (pem.endsWith('\n') ? pem : `${pem}\n`);
  const pemKey = async (k: webcrypto.CryptoKey) => eol(x509.PemConverter.encode(await crypto.subtle.exportKey('pkcs8', k), 'PRIVATE KEY'));
  return {
    cert: eol(server.cert.toString('pem')),
    key: await pemKey(server.keys.privateKey),
    ca: eol(caCert.toString('pem')),
    client: { cert: eol(client.cert.toString('pem')), key: await pemKey(client.keys.privateKey) },
  };
}

/** Reads a user-given certificate and key; the certificate doubles as the CA clients trust. */
export async function loadTls(certFile: string, keyFile: string): Promise<TlsMaterial> {
  try {
    const [cert, key] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
    return { cert, key, ca: cert };
  } catch (err) {
    throw fleetError('FA_ERR_FLAG_INVALID', `cannot read TLS files --tls-cert-file=${certFile} --tls-private-key-file=${keyFile}: ${(err as Error).message}`, { cause: err });
  }
}
