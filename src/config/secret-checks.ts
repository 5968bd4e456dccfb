// Secrets stay in secret fields. Plans, ledgers, run directories and reports are built from the
// non-secret fields of the playbook and inventory (names, hosts, paths, datastores, URLs) and are
// stored and printed as they are; so a secret value that appears in one of those fields (a guest
// password pasted as a testFile, a datastore name, a password inside a vCenter URL) is refused
// here, at its line, before anything is planned. Messages never repeat the value.
import type { Diagnostic } from '../errors.ts';
import { diagnosticAt, type PathKey, type SourceDoc } from './load.ts';
import type { Secret } from '../input/secrets.ts';

/** A resolved secret and where it is configured (for the message: `sshHosts.guest.password`). */
export interface SecretSource {
  where: string;
  secret: Secret;
}

type Visit = (path: PathKey[], text: string, isKey: boolean) => void;

function walk(value: unknown, path: PathKey[], skip: (path: PathKey[]) => boolean, visit: Visit): void {
  if (skip(path)) return;
  if (typeof value === 'string') visit(path, value, false);
  else if (Array.isArray(value)) value.forEach((v, i) => walk(v, [...path, i], skip, visit));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const at = [...path, k];
      if (skip(at)) continue;
      visit(at, k, true);
      walk(v, at, skip, visit);
    }
  }
}

// scheme://user:password@host — the password part may be empty-looking but the ':' before '@' in
// the authority is what makes it a credential (RFC 3986 §3.2.1 deprecates it for this reason).
// Searched without a backtracking regex: /[a-z][a-z0-9+.-]*:\/\/[^\s/?#@]*:[^\s/?#@]*@/i tries
// every start in a run of letters and scans to its end (quadratic: 11 s for a 60 KB value).
const SCHEME_CHAR = /[a-z0-9+.-]/i;
const USERINFO = /[^\s/?#@]*@/y;
function hasUrlCredential(text: string): boolean {
  for (let i = text.indexOf('://'); i >= 0; i = text.indexOf('://', i + 1)) {
    // a scheme ends here: a letter starts it, within the run of scheme characters before '://'
    let letter = false;
    for (let j = i - 1; j >= 0 && SCHEME_CHAR.test(text[j]!); j--) letter ||= /[a-z]/i.test(text[j]!);
    if (!letter) continue;
    USERINFO.lastIndex = i + 3;
    const userinfo = USERINFO.exec(text)?.[0];
    if (userinfo?.includes(':')) return true;
  }
  return false;
}
// A host field written as `user:password@host` (no scheme), as ssh and NFS URLs spell it: what comes
// before the first '@' (no whitespace) holds a ':'.
const HOST_FIELDS = new Set(['host', 'remoteHost']);
function hasHostCredential(text: string): boolean {
  const end = text.search(/[\s@]/);
  return end >= 0 && text[end] === '@' && text.slice(0, end).includes(':');
}

/**
 * Diagnostics for every non-secret string (value or key) of a validated document that contains a
 * secret value, or a URL with a password. `isSecretField(path)` says which paths hold secret
 * references (skipped). `referenceUrl(path)`: a URL whose password part is a secret reference by
 * design, its literal password refused by its own parser (the inventory's `store:`, config/store.ts):
 * only the leak of a secret's value is looked for there.
 */
export function secretLeakDiagnostics(source: SourceDoc, value: unknown, secrets: readonly SecretSource[], isSecretField: (path: PathKey[]) => boolean, referenceUrl: (path: PathKey[]) => boolean = () => false): Diagnostic[] {
  const diags: Diagnostic[] = [];
  const at = (path: PathKey[], isKey: boolean, message: string) =>
    diags.push(isKey ? diagnosticAt(source, path.slice(0, -1), message, String(path.at(-1))) : diagnosticAt(source, path, message));
  walk(value, [], isSecretField, (path, text, isKey) => {
    const leaked = secrets.find((s) => text.includes(s.secret.reveal()));
    if (leaked) {
      at(path, isKey, `contains the value of the secret ${leaked.where} (${leaked.secret.reference}); a secret may appear only in a secret field (password, passphrase), never in a name, path or URL, which plans, ledgers and reports keep as written`);
    } else if (!isKey && !referenceUrl(path) && (hasUrlCredential(text) || (HOST_FIELDS.has(String(path.at(-1))) && hasHostCredential(text)))) {
      at(path, isKey, `a password inside a URL or host (user:password@) is refused: it would be kept and printed with the URL; give username: and password: \${env:NAME} (or \${file:path}) instead`);
    }
  });
  // A key that holds a secret would repeat it in the key path of every diagnostic under it.
  for (const d of diags) for (const s of secrets) d.path = d.path.split(s.secret.reveal()).join('***');
  return diags;
}
