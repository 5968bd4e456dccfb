// Secrets only by reference: `${env:NAME}` or `${file:path}` (relative to the inventory file).
// A resolved secret is a Secret object: it prints and serializes as its reference, never its value,
// so it cannot leak into plans, logs, results or reports by accident. Every revealed value is also
// registered with the redactor, which scrubs it from any text we persist (stderr, fault messages).
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

export const SECRET_REF = /^\$\{(env|file):([^}]+)\}$/;

export const secretRefSchema = z
  .string()
  .regex(SECRET_REF, { error: 'expected a secret reference like ${env:NAME} or ${file:path}; plaintext secrets are not accepted' })
  .describe('A secret by reference: ${env:NAME} or ${file:path}');

const registry = new Set<string>();

export class Secret {
  readonly #value: string;
  constructor(
    readonly reference: string,
    value: string,
  ) {
    this.#value = value;
    if (value.length >= 3) registry.add(value);
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

export function resolveSecret(reference: string, baseDir: string, env: NodeJS.ProcessEnv = process.env): SecretResolution {
  const m = SECRET_REF.exec(reference);
  if (!m) return { ok: false, message: `"${reference}" is not a secret reference (expected \${env:NAME} or \${file:path})` };
  const [, kind, name] = m as unknown as [string, 'env' | 'file', string];
  if (kind === 'env') {
    const v = env[name];
    if (v === undefined || v === '') return { ok: false, message: `secret ${reference}: environment variable ${name} is not set` };
    return { ok: true, secret: new Secret(reference, v) };
  }
  const file = path.resolve(baseDir, name);
  try {
    return { ok: true, secret: new Secret(reference, fs.readFileSync(file, 'utf8').replace(/\r?\n$/, '')) };
  } catch (err) {
    return { ok: false, message: `secret ${reference}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  }
}

/** Register a secret value that did not come through resolveSecret (e.g. GOVC_PASSWORD). */
export function registerSecretValue(value: string): void {
  if (value.length >= 3) registry.add(value);
}

/** Replace every known secret value in `text` with `***`. */
export function redact(text: string): string {
  let out = text;
  for (const s of registry) if (out.includes(s)) out = out.split(s).join('***');
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
