/** A pipe table of a Markdown page: its header cells and rows, cells trimmed, as written. */
export interface MarkdownTable {
  /** 1-based line of the header row. */
  line: number;
  header: string[];
  rows: string[][];
}

/** Splits a table row into cells; a `|` inside a code span or escaped (`\|`) belongs to the cell. */
export function tableCells(row: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let inCode = false;
  const text = row.trim().replace(/^\|/, '').replace(/\|$/, '');
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === '\\' && text[i + 1] === '|') {
      cell += '|';
      i++;
    } else if (char === '`') {
      inCode = !inCode;
      cell += char;
    } else if (char === '|' && !inCode) {
      cells.push(cell.trim());
      cell = '';
    } else cell += char;
  }
  cells.push(cell.trim());
  return cells;
}

/** Every pipe table of `markdown` (a header row, a delimiter row of dashes, then rows), outside fenced code. */
export function markdownTables(markdown: string): MarkdownTable[] {
  const lines = markdown.split('\n');
  const tables: MarkdownTable[] = [];
  let fenced = false;
  for (let i = 0; i < lines.length; i++) {
    if (/^\s*(`{3,}|~{3,})/.test(lines[i]!)) fenced = !fenced;
    if (fenced || !lines[i]!.trim().startsWith('|') || !/^\s*\|?\s*:?-{3,}/.test(lines[i + 1] ?? '')) continue;
    const table: MarkdownTable = { line: i + 1, header: tableCells(lines[i]!), rows: [] };
    let j = i + 2;
    for (; j < lines.length && lines[j]!.trim().startsWith('|'); j++) table.rows.push(tableCells(lines[j]!));
    tables.push(table);
    i = j - 1;
  }
  return tables;
}

/** The one table of `markdown` whose header starts with `columns`; throws, naming them, when there is none or several. */
export function tableWithHeader(markdown: string, columns: readonly string[], page: string): MarkdownTable {
  const found = markdownTables(markdown).filter((table) => columns.every((column, i) => table.header[i] === column));
  if (found.length !== 1) throw new Error(`${page} has ${found.length} tables whose header starts with | ${columns.join(' | ')} |; expected one`);
  return found[0]!;
}

/** The code spans of a cell, in order (`a`, `b` for "`a` or `b`"). */
export function codeSpans(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
}
