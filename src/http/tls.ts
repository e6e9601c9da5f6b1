import { createPrivateKey, X509Certificate } from "node:crypto";
import { unwatchFile, watchFile } from "node:fs";
import { readUtf8File } from "../utf8";

export interface TlsPair {
  cert: string;
  key: string;
  /** The certificate's subject and expiry, for the log. */
  summary: string;
}

/**
 * How often the certificate and key files are checked for a change. Polled
 * (stat), not fs.watch: renewal tools replace files by rename or swap a
 * symlink, which an inotify watch on the old inode never reports.
 */
export const TLS_POLL_MS = 1000;

/** Reads and checks a certificate and its key; a clear Error when either is missing, not PEM, or they do not belong together. */
export function readTlsPair(certPath: string, keyPath: string): TlsPair {
  const read = (path: string, what: string) => {
    try {
      return readUtf8File(path);
    } catch (e) {
      throw new Error(`cannot read the TLS ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  };
  const cert = read(certPath, "certificate (tls.cert)");
  const key = read(keyPath, "key (tls.key)");
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch {
    throw new Error(`${certPath} (tls.cert) holds no PEM certificate`);
  }
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new Error(`${keyPath} (tls.key) holds no unencrypted PEM private key`);
  }
  if (!x509.checkPrivateKey(privateKey)) throw new Error(`${keyPath} (tls.key) is not the key of the certificate in ${certPath} (tls.cert)`);
  return { cert, key, summary: `${x509.subject.replace(/\n/g, ", ")}, valid until ${new Date(x509.validTo).toISOString()}` };
}

/** A renewal writes the certificate and the key one after the other: wait this long after the last change before reading both. */
const SETTLE_MS = 300;

/**
 * Calls `onPair` with the new pair once the files changed and the two match
 * again; a half-written or broken pair is reported through `onError` (once per
 * distinct problem) and the pair in use stays. Returns the function that stops watching.
 */
export function watchTlsPair(
  certPath: string,
  keyPath: string,
  current: TlsPair,
  onPair: (pair: TlsPair) => void,
  onError: (message: string) => void,
  pollMs = TLS_POLL_MS,
): () => void {
  let inUse = current;
  let lastError = "";
  let timer: ReturnType<typeof setTimeout> | null = null;
  const check = () => {
    timer = null;
    let pair: TlsPair;
    try {
      pair = readTlsPair(certPath, keyPath);
    } catch (e) {
      const message = (e as Error).message;
      if (message !== lastError) onError(message);
      lastError = message;
      return;
    }
    lastError = "";
    if (pair.cert === inUse.cert && pair.key === inUse.key) return;
    inUse = pair;
    onPair(pair);
  };
  const changed = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(check, SETTLE_MS);
  };
  watchFile(certPath, { interval: pollMs, persistent: false }, changed);
  watchFile(keyPath, { interval: pollMs, persistent: false }, changed);
  return () => {
    if (timer) clearTimeout(timer);
    unwatchFile(certPath, changed);
    unwatchFile(keyPath, changed);
  };
}
