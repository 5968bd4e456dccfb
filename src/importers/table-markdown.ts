// A results table as a paper or a README prints it: a Markdown (GitHub) pipe table. It is read as
// the CSV table it shows (table-csv.ts), line for line, so a refusal names the Markdown file's line.
//
//   | test                    | MiB/s  | IOPS  | samples |
//   |-------------------------|-------:|------:|--------:|
//   | 32k 100% read 0% random | 312.5  | 10000 | 3       |

const SEPARATOR_CELL = /^:?-{3,}:?$/;

/** The cells of one pipe row (`\|` is a literal pipe). */
function pipeCells(line: string): string[] {
  const t = line.trim().replace(/^\|/, '').replace(/(?<!\\)\|$/, '');
  return t.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
}

function isSeparator(line: string | undefined): boolean {
  if (line === undefined || !line.trim().startsWith('|')) return false;
  const cells = pipeCells(line);
  return cells.length > 0 && cells.every((c) => SEPARATOR_CELL.test(c));
}

const csvCell = (c: string) => (/[",;]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c);

/**
 * The text as the CSV table it shows when it holds a Markdown pipe table (a `|` header row followed
 * by a `|---|` row); null otherwise. Lines outside the table become blank, so line numbers stay.
 */
export function markdownTableAsCsv(text: string): string | null {
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\n|\r/);
  const head = lines.findIndex((l, i) => l.trim().startsWith('|') && isSeparator(lines[i + 1]));
  if (head < 0) return null;
  let end = head;
  while (end + 1 < lines.length && lines[end + 1]!.trim().startsWith('|')) end++;
  return lines
    .map((l, i) => (i < head || i > end || i === head + 1 ? '' : pipeCells(l).map(csvCell).join(',')))
    .join('\n');
}
