// Which text encoding a file's bytes are in, from its byte order mark or, without one, from NUL
// bytes interleaved with ASCII (Windows tools such as PowerShell 5's `Out-File` and Notepad's
// "Unicode" write UTF-16LE; some editors write it without a BOM).
export type Utf16 = 'utf-16le' | 'utf-16be';

export interface Detected {
  encoding: 'utf-8' | Utf16 | 'utf-32le' | 'utf-32be';
  /** bytes of byte order mark to skip */
  bom: number;
}

export function detectEncoding(buf: Uint8Array): Detected {
  const b = (i: number) => buf[i];
  if (b(0) === 0xff && b(1) === 0xfe && b(2) === 0 && b(3) === 0) return { encoding: 'utf-32le', bom: 4 };
  if (b(0) === 0 && b(1) === 0 && b(2) === 0xfe && b(3) === 0xff) return { encoding: 'utf-32be', bom: 4 };
  if (b(0) === 0xff && b(1) === 0xfe) return { encoding: 'utf-16le', bom: 2 };
  if (b(0) === 0xfe && b(1) === 0xff) return { encoding: 'utf-16be', bom: 2 };
  if (b(0) === 0xef && b(1) === 0xbb && b(2) === 0xbf) return { encoding: 'utf-8', bom: 3 };
  // No BOM: ASCII text in UTF-16 has a NUL in every other byte (odd offsets for LE, even for BE).
  const probe = buf.subarray(0, 200);
  if (probe.length >= 8) {
    let odd = 0;
    let even = 0;
    for (let i = 0; i < probe.length; i++) {
      if (probe[i] !== 0) continue;
      if (i % 2) odd++;
      else even++;
    }
    const half = probe.length / 2;
    if (odd >= half / 2 && odd > even) return { encoding: 'utf-16le', bom: 0 };
    if (even >= half / 2 && even > odd) return { encoding: 'utf-16be', bom: 0 };
  }
  return { encoding: 'utf-8', bom: 0 };
}
