// Secrets only by reference: `${env:NAME}` or `${file:path}` (relative to the inventory file).
// A resolved secret is a Secret object: it prints and serializes as its reference, never its value,
// so it cannot leak into plans, logs, results or reports by accident. Plans and ledgers are built
// from non-secret fields only, and `validate` refuses a secret value pasted into one (config/
// index.ts), so they never need scrubbing. Every revealed value is also registered with the
// redactor, which masks it in *messages* (errors, log events, stderr) — never in data such as raw
// tool output, which is stored byte for byte (docs/decisions.md, "Secrets").
import path from 'node:path';
import { z } from 'zod';
import { InputTooLarge, NotARegularFile } from '../errors.ts';
import { readInputFile } from './read-input.ts';
import { visible } from '../text/visible.ts';

export const SECRET_REF = /^\$\{(env|file):([^}]+)\}$/;

export const secretRefSchema = z
  .string()
  .regex(SECRET_REF, { error: 'expected a secret reference like ${env:NAME} or ${file:path}; plaintext secrets are not accepted' })
  .describe('A secret by reference: ${env:NAME} or ${file:path}');

/**
 * Shorter secrets are refused when resolved: a short value matches ordinary words in messages, so
 * masking it would both garble messages and point at the secret (docs/decisions.md, "Secrets").
 */
// 7: the shortest password ESXi's default policy (pam_passwdqc min=disabled,disabled,disabled,7,7)
// and Windows' default domain policy accept; a lab must be able to use the hosts' own passwords.
export const MIN_SECRET_LENGTH = 7;

/** What a masked secret becomes: the same text for every secret, whatever its length. */
export const SECRET_MASK = '***';

const registry = new Set<string>();

export class Secret {
  readonly #value: string;
  constructor(
    readonly reference: string,
    value: string,
  ) {
    this.#value = value;
    registerSecretValue(value);
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return this.reference;
  }
  toJSON(): string {
    return this.reference;
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `Secret(${this.reference})`;
  }
}

export type SecretResolution = { ok: true; secret: Secret } | { ok: false; message: string };

export function resolveSecret(reference: string, baseDir: string, env: NodeJS.ProcessEnv): SecretResolution {
  const m = SECRET_REF.exec(reference);
  if (!m) return { ok: false, message: `"${reference}" is not a secret reference (expected \${env:NAME} or \${file:path})` };
  const [, kind, name] = m as unknown as [string, 'env' | 'file', string];
  let value: string;
  if (kind === 'env') {
    const v = env[name];
    if (v === undefined || v === '') return { ok: false, message: `secret ${reference}: environment variable ${name} is not set` };
    value = v;
  } else {
    const file = path.resolve(baseDir, name);
    try {
      value = readInputFile(file, 'secret').toString('utf8').replace(/\r?\n$/, '');
    } catch (err) {
      if (err instanceof InputTooLarge || err instanceof NotARegularFile) return { ok: false, message: `secret ${reference}: ${visible(file)}: ${err.details.reason}` };
      return { ok: false, message: `secret ${reference}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
    }
  }
  const short = shortSecretMessage(value);
  if (short) return { ok: false, message: `secret ${reference}: ${short}` };
  return { ok: true, secret: new Secret(reference, value) };
}

/** Why a secret value is refused for its length (the message tells neither its length nor content), or null. */
export function shortSecretMessage(value: string): string | null {
  return [...value].length < MIN_SECRET_LENGTH
    ? `the value is shorter than ${MIN_SECRET_LENGTH} characters; storsweep refuses short secrets because it cannot keep them out of messages reliably (use a longer password or passphrase)`
    : null;
}

/** Register a secret value that did not come through resolveSecret (e.g. GOVC_PASSWORD). */
export function registerSecretValue(value: string): void {
  if (value !== '') registry.add(value);
}

/** Every registered secret value (longest first), for the config checks that refuse one in a non-secret field. */
export function registeredSecretValues(): string[] {
  return [...registry].sort((a, b) => b.length - a.length);
}

const WORD = /[\p{L}\p{N}_]/u;
const isWord = (ch: string | undefined) => ch !== undefined && WORD.test(ch);

/**
 * Masks every known secret value in a message, as a whole token: an occurrence is masked unless it
 * is glued to letters or digits on a side where the secret itself starts/ends with one (a password
 * "readonly9" is masked in "pw=readonly9 failed", not inside "xreadonly99"). Every mask is the same
 * `***`, so it tells neither the length nor any character of the secret. For messages, logs and
 * errors only: data (raw tool output, plans) is never passed through here.
 */
export function redact(text: string): string {
  if (registry.size === 0 || text === '') return text;
  let out = text;
  for (const s of registeredSecretValues()) {
    if (!out.includes(s)) continue;
    const wordStart = isWord(s[0]);
    const wordEnd = isWord(s[s.length - 1]);
    let result = '';
    let from = 0;
    for (let i = out.indexOf(s); i >= 0; i = out.indexOf(s, i + 1)) {
      if (i < from) continue;
      const leftOk = !wordStart || !isWord(out[i - 1]);
      const rightOk = !wordEnd || !isWord(out[i + s.length]);
      if (!leftOk || !rightOk) continue;
      result += out.slice(from, i) + SECRET_MASK;
      from = i + s.length;
    }
    out = result + out.slice(from);
  }
  return out;
}

export function redactDeep<T>(value: T): T {
  if (typeof value === 'string') return redact(value) as T;
  if (Array.isArray(value)) return value.map(redactDeep) as T;
  if (value instanceof Secret) return value.reference as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(v)])) as T;
  }
  return value;
}
