// A value from input echoed in a message: terminal-safe (see visible.ts) and cut to a readable
// length, saying how much was left out, so a 1 MB scalar or line never floods a terminal or a log.
import { visible } from './visible.ts';

export const EXCERPT_CHARS = 80;

/** `value` made visible, cut after `max` characters with "… (N more)". */
export function excerpt(value: unknown, max = EXCERPT_CHARS): string {
  const s = typeof value === 'string' ? value : String(value);
  if (s.length <= max) return visible(s);
  let cut = max;
  // never split a surrogate pair
  const last = s.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut--;
  return `${visible(s.slice(0, cut))}… (${(s.length - cut).toLocaleString('en-US')} more)`;
}

/**
 * Every run of more than 256 non-space characters in a composed message cut like `excerpt` (to 80):
 * a guard for messages that quote input through a lower layer's wording (a 1 MB profile name inside
 * "workload "…" is not …"). Our own words and lists are never that long without a space; a path
 * of up to 256 characters stays whole.
 */
export function shortenLongRuns(text: string): string {
  if (text.length <= 256) return text;
  // from one space to the next, not /\S{257,}/g: V8's regex overflows the stack on a run of tens
  // of millions of characters (issue 26)
  const space = /\s/g;
  let out = '';
  let copied = 0;
  let run = 0;
  for (;;) {
    const m = space.exec(text);
    const end = m ? m.index : text.length;
    if (end - run > 256) {
      out += text.slice(copied, run) + excerpt(text.slice(run, end));
      copied = end;
    }
    if (!m) break;
    run = end + 1;
  }
  return out + text.slice(copied);
}
