// Terminal-safe text: every character that a terminal would act on instead of showing is replaced
// by a visible escape, so nothing from input (a playbook name, an axis value, a host's fault text,
// an imported file) can clear the screen, set a hyperlink (OSC 8), move the cursor, rewrite a line
// or reorder what is shown. A leaf module: it imports nothing, so every layer may use it.
//
// What is made visible, and how:
//   C0 controls U+0000–U+001F (ESC, NUL, BEL, BS, lone CR, …) → `\x1b`, `\x00`, … ; DEL → `\x7f`
//   C1 controls U+0080–U+009F (U+009B is a one-byte CSI on some terminals) → `\x9b`
//   bidi embeddings/overrides U+202A–U+202E, isolates U+2066–U+2069 and the marks U+200E, U+200F,
//   U+061C (they reorder text: "Trojan Source", CVE-2021-42574) → `\u202e`
//   line/paragraph separators U+2028, U+2029 → `\u2028`
//   lone UTF-16 surrogates (not printable, mangled to U+FFFD on write) → `\ud800`
// Because ESC itself becomes `\x1b`, every CSI/OSC/DCS sequence is neutralised whole.
//
// Two variants: `visible` is for a value placed inside one line (a name, an axis value, a reason);
// it also shows `\n`, `\r` and `\t`. `visibleText` is for a whole multi-line text we compose (a
// report, a diagnostic list, an error message): it keeps `\n`, `\t` and a CR that ends a line
// (`\r\n`, as in RFC 4180 CSV) and shows a lone `\r`, which would let a later text overwrite a line.
// A backslash is not doubled: this is for display only (Windows paths stay readable), not a
// reversible encoding.

// eslint-disable-next-line no-control-regex
const ONE_LINE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
// eslint-disable-next-line no-control-regex
const MULTI_LINE = /\r(?!\n)|[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
// A quick test before the replace (newline and tab are kept there): most texts have none of these.
// eslint-disable-next-line no-control-regex
const ANY = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]/;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeOne(ch: string): string {
  const named = NAMED[ch];
  if (named) return named;
  const code = ch.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** A value shown inside one line: every control character (newline and tab too) made visible. */
export function visible(value: unknown): string {
  const s = typeof value === 'string' ? value : String(value);
  return s.replace(ONE_LINE, escapeOne);
}

/** A multi-line text: like `visible`, but `\n`, `\t` and `\r\n` line ends are kept. */
export function visibleText(text: string): string {
  return ANY.test(text) ? text.replace(MULTI_LINE, escapeOne) : text;
}

/** True when `visibleText` would change nothing (no character a terminal acts on). */
export function isTerminalSafe(text: string): boolean {
  return visibleText(text) === text;
}

// Inside JSON text (from JSON.stringify, which already escapes C0 and lone surrogates) these can
// only occur within strings, where `\uXXXX` is the same value: lossless, and terminal-safe.
const JSON_UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const JSON_UNSAFE_ANY = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** JSON text with DEL, C1, bidi controls and line separators written as `\uXXXX` escapes (same data). */
export function visibleJson(json: string): string {
  if (!JSON_UNSAFE_ANY.test(json)) return json;
  return json.replace(JSON_UNSAFE, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
